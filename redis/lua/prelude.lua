-- overshoot prelude, prepended to every limiter script when it is loaded
-- (the six here, and a user's own through lua.FromSource, whose doc lists
-- what this prelude gives the script that follows it).
--
-- KEYS[1]  the limited key's state.
-- KEYS[2]  optional: a counter INCRed on every call, so that callers learn
--          the strict order in which Redis ran their calls (TIME alone ties).
-- ARGV     now (µs; empty or negative: read Redis TIME), rate, window (µs),
--          burst, unit, refill -- the fields of algos.Limit.
-- Returns  {allowed (0/1), remaining, retry_after, reset, redis_time, seq,
--           stored...}: the decision, Redis TIME when the script ran (µs),
--          the counter (0 without KEYS[2]), then the values the key holds
--          after the call, in the order algos.State.Stored() lists them.
--
-- Lua numbers are doubles. Every value here is an integer below 2^53
-- (algos.NewLimit keeps products below 2^52), so + - * are exact; division
-- is not, hence floordiv/quo below. Values are written with %.0f, because
-- tostring would switch to exponent form past 14 digits.

local MARGIN_MS = 1000

-- floordiv is floor(a/b) for b > 0. fl(a/b) can round across an integer
-- when |a| is large, so the quotient is corrected with an exact remainder.
local function floordiv(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then
    q = q - 1
  elseif r >= b then
    q = q + 1
  end
  return q
end

-- quo and rem are Go's / and % on int64 (truncated toward zero), b > 0.
local function quo(a, b)
  local q = floordiv(a, b)
  if a < 0 and q * b ~= a then
    q = q + 1
  end
  return q
end

local function rem(a, b)
  return a - quo(a, b) * b
end

-- ceildiv is algos' ceilDiv, written as Go writes it.
local function ceildiv(a, b)
  return quo(a + b - 1, b)
end

local function fmt(x)
  return string.format('%.0f', x)
end

-- ttl is the key's expiry in ms: the µs until the key is idle again
-- (the decision's reset, in the caller's clock), rounded up, plus a margin
-- that covers clocks disagreeing by up to that much.
local function ttl(reset)
  return fmt(ceildiv(math.max(reset, 0), 1000) + MARGIN_MS)
end

local KEY = KEYS[1]

local clock = redis.call('TIME')
local redis_time = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local now = tonumber(ARGV[1])
if now == nil or now < 0 then
  now = redis_time
end

local rate, window, burst = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local unit, refill = tonumber(ARGV[5]), tonumber(ARGV[6])
if not (rate and window and burst and unit and refill)
    or rate < 1 or window < 1 or burst < 1 or unit < 1 or refill < 1 then
  return redis.error_reply('overshoot: ARGV must be now, rate, window, burst, unit, refill (positive integers)')
end

local seq = 0
if KEYS[2] then
  seq = redis.call('INCR', KEYS[2])
end

local function reply(allowed, remaining, retry, reset, stored)
  local r = {allowed and 1 or 0, remaining, retry, reset, redis_time, seq}
  for i = 1, #stored do
    r[6 + i] = stored[i]
  end
  return r
end

-- load3 returns the key's three integers, or nil when the key is absent
-- (the zero algos.State).
local function load3()
  local v = redis.call('GET', KEY)
  if not v then
    return nil
  end
  local a, b, c = string.match(v, '^(%-?%d+):(%-?%d+):(%-?%d+)$')
  if not a then
    error('overshoot: ' .. KEY .. ' does not hold three integers: ' .. v)
  end
  return tonumber(a), tonumber(b), tonumber(c)
end

local function store3(a, b, c, reset)
  redis.call('SET', KEY, fmt(a) .. ':' .. fmt(b) .. ':' .. fmt(c), 'PX', ttl(reset))
end

-- end of prelude
