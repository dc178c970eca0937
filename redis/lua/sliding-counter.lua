-- sliding-counter: algos.SlidingCounter, call for call. Stored: window index,
-- current count, previous count. Admits while prev·(W-elapsed) + cur·W < L·W,
-- all in integers, so Go and Lua agree exactly.
--
-- TTL: the reset + margin: 2W - elapsed while the current window has admits
-- (they still weigh on the next window), W - elapsed while only the previous
-- one has. After that every caller restarts the counts as an absent key does.

local w = window
local idx = floordiv(now, w)
local s_idx, cur, prev = load3()
if s_idx == nil then
  s_idx, cur, prev = idx, 0, 0
elseif s_idx == idx - 1 then
  s_idx, cur, prev = idx, 0, cur
elseif s_idx ~= idx then
  s_idx, cur, prev = idx, 0, 0
end

-- the exact wait until prev·(W-e) + cur·W < L·W: later in this window, else
-- in the next one, where cur becomes prev.
local function retry_of(elapsed)
  if cur < rate and prev > 0 then
    local x = quo((rate - cur) * w - 1, prev)
    local e = w - x
    if e < w then
      return e - elapsed
    end
  end
  local e = 0
  if cur > 0 then
    e = math.max(0, w - quo(rate * w - 1, cur))
  end
  return w - elapsed + e
end

local elapsed = now - idx * w
local weighted = prev * (w - elapsed)
local allowed, retry = false, 0
if weighted + cur * w < rate * w then
  cur = cur + 1
  allowed = true
else
  retry = retry_of(elapsed)
end
local remaining = math.max(0, ceildiv(rate * w - weighted, w) - cur)
local reset = 0
if cur > 0 then
  reset = 2 * w - elapsed
elseif prev > 0 then
  reset = w - elapsed
end

store3(s_idx, cur, prev, reset)
return reply(allowed, remaining, retry, reset, {s_idx, cur, prev})
