-- simredis's Lua 5.1 compatibility prelude, run once in each Lua state of
-- the pool (see lua.go), before the globals are protected. It is joined
-- into one line, after dropping these comment lines, so that a position in
-- it reads as line 1. It is called with fast.go's fastFormat, replaces
-- tostring, string.format, table.concat, redis.call and redis.pcall for
-- every script the state runs, and returns four functions: handler, for
-- xpcall, which turns an error into the error reply Redis 7 gives;
-- set(sha, lines), whose upvalues lua.go sets before each script to the
-- SHA-1 of the script as the client sent it and its number of lines;
-- finish(ok, res), which makes xpcall's outcome the script's reply; and
-- str2num, what tonumber (fast.go's newTonumber) reads as strtod would
-- where gopher-lua's tonumber reads nothing.
local fastformat = ...
local rawtostring, rawtonumber = tostring, tonumber
local rawformat, rawconcat = string.format, table.concat
local rawpcall, errorreply = redis.pcall, redis.error_reply
local type, select, error, pcall, unpack, ipairs = type, select, error, pcall, unpack, ipairs
local sha, lines = '', 1
local inf = 1/0
local last, lastline = nil, nil
local function num2str(x)
  if x ~= x then return '-nan' end
  if x == inf then return 'inf' end
  if x == -inf then return '-inf' end
  return rawformat('%.14g', x)
end
tostring = function(...)
  if select('#', ...) > 0 and type((...)) == 'number' then
    return num2str((...))
  end
  return rawtostring(...)
end
local function outofrange(sign, e)
  if e > 0 then
    if sign == '-' then return -inf end
    return inf
  end
  if sign == '-' then return -0.0 end
  return 0
end
local function str2num(s)
  s = s:match('^%s*(.-)%s*$')
  local sign, hex = s:match('^([+-]?)0[xX](%x+)$')
  if hex then
    local n = rawtonumber(hex, 16)
    if n == nil then return nil end
    if sign == '-' then return -n end
    return n
  end
  local low = s:lower()
  local ssign, word = low:match('^([+-]?)(%a+)$')
  if word == 'inf' or word == 'infinity' then
    if ssign == '-' then return -inf end
    return inf
  end
  if word == 'nan' then return 0/0 end
  local msign, int, frac, exp = s:match('^([+-]?)(%d*)%.?(%d*)(.*)$')
  if msign == nil or (int == '' and frac == '') then return nil end
  local e = 0
  if exp ~= '' then
    local es = exp:match('^[eE]([+-]?%d+)$')
    if es == nil then return nil end
    e = rawtonumber(es)
  end
  if int == '' then int = '0' end
  if frac == '' then frac = '0' end
  local v = rawtonumber(msign .. int .. '.' .. frac .. 'e' .. e)
  if v ~= nil then return v end
  if (int .. frac):match('^0*$') then return 0 end
  return outofrange(msign, e)
end
local function u64(x, conv)
  if x >= 0 or x ~= x or x == -inf then return nil end
  x = x - x % 1
  local hi = math.floor(x / 4294967296)
  local lo = x - hi * 4294967296
  hi = hi + 4294967296
  if conv == 'o' then return nil end
  if conv == 'X' then return rawformat('%X%08X', hi, lo) end
  return rawformat('%x%08x', hi, lo)
end
-- oneconv[f]: whether format f has one %d, %i or %f and nothing else to
-- convert (a pattern, which gopher-lua compiles on every call, read once
-- for each format; the cache is cleared when it passes 256 formats).
local oneconv, nconv = {}, 0
local function simple(f)
  if type(f) ~= 'string' then
    return f:find('^[^%%]*%%[-+ #0]*%d*%.?%d*[dfi][^%%]*$')
  end
  local s = oneconv[f]
  if s == nil then
    s = f:find('^[^%%]*%%[-+ #0]*%d*%.?%d*[dfi][^%%]*$') ~= nil
    if nconv >= 256 then oneconv, nconv = {}, 0 end
    oneconv[f], nconv = s, nconv + 1
  end
  return s
end
string.format = function(f, ...)
  local s = fastformat(f, ...)
  if s ~= nil then return s end
  if type(f) ~= 'string' and type(f) ~= 'number' then return rawformat(f, ...) end
  if select('#', ...) == 1 and simple(f) then
    local x = ...
    if type(x) == 'number' and x == x and x ~= inf and x ~= -inf then return rawformat(f, x) end
  end
  f = rawtostring(f)
  local n = select('#', ...)
  local args = {...}
  local out, i, a = {}, 1, 0
  while true do
    local p = f:find('%', i, true)
    if p == nil then out[#out + 1] = f:sub(i) break end
    out[#out + 1] = f:sub(i, p - 1)
    if f:sub(p + 1, p + 1) == '%' then
      out[#out + 1] = '%%'
      i = p + 2
    else
      local flags, width, dot, prec, conv, q = f:match('^([-+ #0]*)(%d*)(%.?)(%d*)(.)()', p + 1)
      if conv == nil or conv == '' then return rawformat(f, ...) end
      a = a + 1
      if a > n then
        error("bad argument #" .. (a + 1) .. " to 'format' (no value)", 2)
      end
      local x = args[a]
      local spec = flags .. width .. dot .. prec
      if conv == 's' and type(x) == 'number' then
        args[a] = num2str(x)
      elseif conv == 'q' then
        local s = rawtostring(x)
        if type(x) == 'number' then s = num2str(x) end
        s = s:gsub('[\\"\n\r%z]', function(c)
          if c == '\n' then return '\\\n' end
          if c == '\r' then return '\\r' end
          if c == '\0' then return '\\000' end
          return '\\' .. c
        end)
        args[a] = '"' .. s .. '"'
        conv, spec = 's', ''
      elseif ('eEfgG'):find(conv, 1, true) and type(x) == 'number' and (x ~= x or x == inf or x == -inf) then
        local s = num2str(x)
        if x == inf and flags:find('+', 1, true) then s = '+inf' end
        args[a] = s
        conv, spec = 's', flags:gsub('[0#+ ]', '') .. width
      elseif (conv == 'g' or conv == 'G') and dot == '' then
        spec = spec .. '.6'
      elseif (conv == 'x' or conv == 'X') and type(x) == 'number' then
        local s = u64(x, conv)
        if s then args[a], conv, spec = s, 's', flags:gsub('[0#+ ]', '') .. width end
      end
      out[#out + 1] = '%' .. spec .. conv
      i = q
    end
  end
  return rawformat(rawconcat(out), unpack(args, 1, n))
end
table.concat = function(t, ...)
  if type(t) ~= 'table' then return rawconcat(t, ...) end
  local sep, i, j = ...
  i = i or 1
  j = j or #t
  local c = {}
  for k = i, j do
    local v = t[k]
    if type(v) == 'number' then v = num2str(v) end
    c[k - i + 1] = v
  end
  return rawconcat(c, sep, 1, j - i + 1)
end
local function rediserr(e)
  if e:find("^ERR wrong number of arguments for '") then
    return 'ERR Wrong number of args calling Redis command from script'
  end
  if e:find('^Unknown Redis command called from script') or e:find('^ERR Unknown Redis command called from script') then
    return 'ERR Unknown Redis command called from script'
  end
  if e:find('^This Redis command is not allowed from script') then
    return 'ERR This Redis command is not allowed from script'
  end
  local cmd = e:match('^ERR invalid expire time in (%a+)$')
  if cmd then return "ERR invalid expire time in '" .. cmd .. "' command" end
  return e
end
-- rawpcall answers a second value, true, with an error reply {err = ...}.
redis.pcall = function(...)
  local r, failed = rawpcall(...)
  if failed then r.err = rediserr(r.err) end
  return r
end
redis.call = function(...)
  local r, failed = rawpcall(...)
  if failed then
    last = rediserr(r.err)
    local _, where = pcall(error, '', 4)
    lastline = tonumber(where:match('^:(%d+):') or 1)
    if lastline > lines then lastline = lines end
    error(last, 0)
  end
  return r
end
local libmsgs = {'^Lua redis lib command arguments must be strings or integers', '^Please specify at least one argument for this redis lib call', '^This Redis command is not allowed from script', '^Write commands are not allowed'}
local function handler(e)
  local _, where = pcall(error, '', 4)
  local line = (type(where) == 'string' and where:match('^:(%d+):')) or '1'
  local function reply(msg, at)
    return msg .. ' script: ' .. sha .. ', on @user_script:' .. (at or line) .. '.'
  end
  if type(e) == 'table' then
    if type(e.err) == 'string' then return reply(e.err) end
    return reply('ERR ' .. rawtostring(e))
  end
  if type(e) == 'string' and e == last then return reply(e, lastline) end
  if type(e) == 'number' then return reply('ERR user_script:' .. line .. ': ' .. num2str(e)) end
  if type(e) ~= 'string' then return reply('ERR ' .. rawtostring(e)) end
  local n, msg = e:match('^:(%d+): (.*)$')
  if n == nil then return reply('ERR ' .. e) end
  if msg:find('^Script attempted to access nonexistent global variable') or msg:find('^Script attempted to create global variable') then
    local _, at = pcall(error, '', 6)
    n = (type(at) == 'string' and at:match('^:(%d+):')) or n
    if msg:find('^Script attempted to create') then msg = 'Attempt to modify a readonly table' end
  end
  for _, lib in ipairs(libmsgs) do
    if msg:find(lib) then
      msg = msg:gsub(' script: %x+, &c%.?$', '')
      return reply('ERR ' .. msg, n)
    end
  end
  return reply('ERR user_script:' .. n .. ': ' .. msg, n)
end
local function set(s, n)
  sha, lines, last, lastline = s, n, nil, nil
end
local function finish(ok, res)
  if ok then return res end
  return errorreply(res)
end
return handler, set, finish, str2num
