-- planted-token-bucket-whole-seconds: algos.TokenBucket, call for call,
-- when told the time; a body for lua.FromSource, run after the shared
-- prelude. Stored: tokens (scaled), last, 0.
--
-- PLANTED BUG: told nothing (ARGV[1] empty or negative), it reads Redis
-- TIME itself and keeps only the whole seconds, as a script that takes
-- TIME's first element and drops the second does: now = seconds · 10^6.
-- Every call within one second then decides at its start, and stores it as
-- last: the bucket refills only when the second turns, and a Reset or a
-- Retry-After is counted from up to a second before the call. Told the
-- time it is token-bucket.lua, line for line, so only the store-clock path
-- can tell the two apart. It is kept to show that Differential runs that
-- path; never use it to limit anything.

local told = tonumber(ARGV[1])
if told == nil or told < 0 then
  now = tonumber(redis.call('TIME')[1]) * 1000000 -- PLANTED: TIME[2] dropped
end

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
