-- user-fixed-window: a user's own limiter, as a user might write it, to show
-- that lua.FromSource and lua.Differential hold any script to its Go twin
-- (userFixedWindow in the root redis_test.go).
--
-- A fixed window that never goes back: a hash holds the window's index (w)
-- and its count (n). A caller whose clock is behind, in a window before the
-- stored one, is counted in the stored window instead of restarting it
-- (algos.FixedWindow restarts it). Counting is HINCRBY and the expiry
-- PEXPIRE, rather than the prelude's load3/store3. Stored, as the twin's
-- algos.State lists it: window index, count, 0.

local idx = floordiv(now, window)
local w = tonumber(redis.call('HGET', KEY, 'w'))
if w == nil or w < idx then
  w = idx
  redis.call('HSET', KEY, 'w', fmt(w), 'n', 0)
end
local count = tonumber(redis.call('HGET', KEY, 'n'))

local window_end = (w + 1) * window - now
local allowed, retry = false, 0
if count < rate then
  count = redis.call('HINCRBY', KEY, 'n', 1)
  allowed = true
else
  retry = window_end
end

redis.call('PEXPIRE', KEY, ttl(window_end))
return reply(allowed, rate - count, retry, window_end, {w, count, 0})
