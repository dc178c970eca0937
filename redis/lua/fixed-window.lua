-- fixed-window: algos.FixedWindow, call for call. Stored: window index,
-- count, 0. A different index (later, or earlier from a clock behind)
-- restarts the count.
--
-- TTL: the rest of the current window (the reset) + margin. After it every
-- caller is in another window, which restarts the count as an absent key does.

local idx = floordiv(now, window)
local w_idx, count, c = load3()
if w_idx == nil or w_idx ~= idx then
  w_idx, count, c = idx, 0, 0
end

local window_end = (idx + 1) * window - now
local allowed, retry = false, 0
if count < rate then
  count = count + 1
  allowed = true
else
  retry = window_end
end
local remaining = rate - count
local reset = window_end

store3(w_idx, count, c, reset)
return reply(allowed, remaining, retry, reset, {w_idx, count, c})
