-- sliding-log: algos.SlidingLog, call for call, in a sorted set scored by
-- admitted time. Drops times at or before now - W, counts the rest (even
-- times a clock ahead wrote in the future), inserts now. Two admits in the
-- same µs are both kept: the member is "time:n", n counting the members
-- already at that score, and since removal is by score, those are always
-- exactly "time:0".."time:n-1".
--
-- TTL: the reset (until the newest time is W old) + margin. After it the
-- next call drops every time, as an absent key holds none.

redis.call('ZREMRANGEBYSCORE', KEY, '-inf', fmt(now - window))
local live = redis.call('ZCARD', KEY)

local function score_at(i)
  local e = redis.call('ZRANGE', KEY, i, i, 'WITHSCORES')
  return tonumber(e[2])
end

local allowed, retry = false, 0
if live < rate then
  local n = redis.call('ZCOUNT', KEY, fmt(now), fmt(now))
  redis.call('ZADD', KEY, fmt(now), fmt(now) .. ':' .. n)
  live = live + 1
  allowed = true
else
  retry = score_at(-rate) + window - now
end
local remaining = math.max(0, rate - live)
local reset = 0
if live > 0 then
  reset = math.max(0, score_at(-1) + window - now)
end

local log = {}
local all = redis.call('ZRANGE', KEY, 0, -1, 'WITHSCORES')
for i = 2, #all, 2 do
  log[#log + 1] = tonumber(all[i])
end
if live > 0 then
  redis.call('PEXPIRE', KEY, ttl(reset))
end
return reply(allowed, remaining, retry, reset, log)
