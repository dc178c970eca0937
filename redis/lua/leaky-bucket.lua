-- leaky-bucket: algos.LeakyBucket, call for call. Stored: level (scaled),
-- last, 0, with last = max(last, now), so a clock behind cannot rewind it;
-- the caller behind waits its gap too (in retry and reset).
--
-- TTL: the reset (the gap behind plus the time to drain) + margin. An empty
-- bucket whose last is not ahead of any caller decides like an absent key.

local capacity = burst * unit

local function drain(level, elapsed)
  if elapsed <= 0 then
    return level
  end
  if elapsed >= ceildiv(level, refill) then
    return 0
  end
  return level - elapsed * refill
end

local level, last, c = load3()
if level == nil then
  level, last, c = 0, now, 0
end

level = drain(level, now - last)
last = math.max(last, now)
local behind = last - now
local allowed, retry = false, 0
if level + unit <= capacity then
  level = level + unit
  allowed = true
else
  retry = behind + ceildiv(level + unit - capacity, refill)
end
local remaining = quo(capacity - level, unit)
local reset = behind + ceildiv(level, refill)

store3(level, last, c, reset)
return reply(allowed, remaining, retry, reset, {level, last, c})
