-- gcra: algos.GCRA, call for call. Stored: TAT in whole µs, TAT's remainder
-- in 1/refill µs, 0. TAT only moves forward.
--
-- TTL: ⌈TAT - now⌉ (the reset) + margin. Once TAT is in the past an admit
-- sets TAT = now + T, exactly what an absent key would do.

local r = refill
local tat, frac, c = load3()
if tat == nil then
  tat, frac, c = now, 0, 0
end

local function reset_of()
  if tat < now then
    return 0
  end
  local reset = tat - now
  if frac > 0 then
    reset = reset + 1
  end
  return reset
end

local tau_ticks = (burst - 1) * unit
local allow_at = tat - quo(tau_ticks, r)
if frac > rem(tau_ticks, r) then
  allow_at = allow_at + 1
end

local allowed, remaining, retry = false, 0, 0
if now < allow_at then
  retry = allow_at - now
else
  allowed = true
  if tat < now then
    tat, frac = now, 0
  end
  frac = frac + rem(unit, r)
  tat = tat + quo(unit, r) + quo(frac, r)
  frac = rem(frac, r)
  local ahead = (tat - now) * r + frac
  remaining = math.max(0, quo(burst * unit - ahead, unit))
end
local reset = reset_of()

store3(tat, frac, c, reset)
return reply(allowed, remaining, retry, reset, {tat, frac, c})
