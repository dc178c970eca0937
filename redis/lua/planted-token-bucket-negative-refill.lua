-- planted-token-bucket-negative-refill: algos.PlantedTokenBucketNegativeRefill,
-- call for call; a body for lua.FromSource, run after the shared prelude.
-- Stored: tokens (scaled, negative while owed), last, 0.
--
-- PLANTED BUG: the refill is tokens + (now - last) * refill with no
-- max(0, ...), so a caller whose clock is behind last drains the bucket and
-- leaves it owing tokens. It is kept for the caller-clock trials; never use
-- it to limit anything.
--
-- Every value stays an integer below 2^53, as in the Go twin: the level is
-- never stored below min_owed, so capacity - tokens < 2^52, and elapsed is
-- bounded before it is multiplied (see algos' owedElapsed).

local capacity = burst * unit
-- algos' minOwedLevel: capacity - (2^52 - 1).
local min_owed = capacity - 4503599627370495

local tokens, last, c = load3()
if tokens == nil then
  tokens, last, c = capacity, now, 0
end

-- Not the bug: past these bounds min() or the floor decides anyway, and the
-- product below would leave the integers a double holds exactly.
local elapsed = now - last
local up = ceildiv(capacity - tokens, refill)
local down = quo(tokens - min_owed, refill)
if elapsed > up then
  elapsed = up
elseif elapsed < 0 - down then
  elapsed = 0 - down -- 0 - down, not -down: -0 would be stored as "-0"
end

tokens = math.min(capacity, tokens + elapsed * refill) -- PLANTED: no max(0, elapsed)
last = now
local allowed, retry = false, 0
if tokens >= unit then
  tokens = tokens - unit
  allowed = true
else
  retry = ceildiv(unit - tokens, refill)
end
-- While tokens are owed, remaining is 0, never below.
local remaining = math.max(0, quo(tokens, unit))
local reset = ceildiv(capacity - tokens, refill)

store3(tokens, last, c, reset)
return reply(allowed, remaining, retry, reset, {tokens, last, c})
