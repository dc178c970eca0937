-- token-bucket: algos.TokenBucket, call for call. Stored: tokens (scaled),
-- last, 0. last = now on every call, even when now is behind last: that is
-- the weakness being measured, so it stays.
--
-- TTL: the time to refill fully (the reset) + margin. A full bucket and an
-- absent key decide alike and store alike, at any later time.

local capacity = burst * unit

local function refill_to(level, elapsed)
  local room = capacity - level
  if elapsed <= 0 or room <= 0 then
    return level
  end
  if elapsed >= ceildiv(room, refill) then
    return capacity
  end
  return level + elapsed * refill
end

local tokens, last, c = load3()
if tokens == nil then
  tokens, last, c = capacity, now, 0
end

tokens = refill_to(tokens, now - last)
last = now
local allowed, retry = false, 0
if tokens >= unit then
  tokens = tokens - unit
  allowed = true
else
  retry = ceildiv(unit - tokens, refill)
end
local remaining = quo(tokens, unit)
local reset = ceildiv(capacity - tokens, refill)

store3(tokens, last, c, reset)
return reply(allowed, remaining, retry, reset, {tokens, last, c})
