-- Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
--
-- bloomery_metrics.lua: the module's health for Prometheus through redis_exporter, which runs
-- this script on every scrape (`redis_exporter --script bloomery_metrics.lua`) and exports each
-- returned name and value as `redis_script_values{key="name"}` (docs/OPERATING.md, "Alerts").
-- redis_exporter reads only the INFO fields it knows, and Redis 7.0 leaves a module's INFO
-- section out of `INFO` and `INFO all`, so `INFO bf` reaches Prometheus this way.
--
-- Returns, as [name, value, ...]:
--   bf_filters, bf_bytes, bf_filters_near_limit, bf_filters_over_limit, bf_worst_fpr_ratio:
--     INFO bf's totals over every BF.* and BFW.* filter (kept by the module: O(1)).
--   bf_near_limit:KEY and bf_over_limit:KEY, value the filter's FPR over planned: one for each
--     filter not ok, found by SCAN ... TYPE bloomeryf / bloomeryw, only when the totals count one
--     (so a server whose filters are all ok pays INFO bf alone). KEY is the key's bytes, printable
--     ASCII as is, any other byte and the backslash as \xHH (a label value must be UTF-8). The
--     scan covers the script's database (the totals, every database).
--   bf_scan_complete: 1 when the scan went over the whole keyspace (or had no need to run), 0
--     when it stopped after MAX_SCANS calls of SCAN for a type (about MAX_SCANS * SCAN_COUNT
--     keys): then the per-key series name only the filters found so far; the totals stay exact.
--
-- Cost: a script blocks the server while it runs. With every filter ok: one INFO bf. Otherwise,
-- two SCANs of the keyspace (one a type; each 100,000 keys at most) and, for each filter,
-- BF.INFO key HEALTH (the filter's Health(): ~1 ms at most, a 1 MiB sample of a large filter) or
-- BFW.INFO key (reads the whole live window), plus BF.INFO key FPRRATIO for a BF.* filter not ok.
-- Scrape no more often than the health changes (15 s or more is plenty).

local SCAN_COUNT = 1000  -- keys one SCAN call goes over (about)
local MAX_SCANS = 100  -- SCAN calls a type at most, each scrape

local out = {}
local function put(name, value)
  out[#out + 1] = name
  out[#out + 1] = tostring(value)
end

-- INFO bf: "# bf\r\nbf_filters:2\r\n...".
local totals = {}
for name, value in string.gmatch(redis.call('INFO', 'bf'), '(bf_[%w_]+):([^\r\n]*)') do
  if tonumber(value) then  -- bf_bloomery_version is not a number
    totals[name] = value
    put(name, value)
  end
end

local function label(key)
  return (string.gsub(key, '.', function(c)
    local byte = string.byte(c)
    if byte < 32 or byte > 126 or byte == 92 then return string.format('\\x%02x', byte) end
  end))
end

-- A reply's value as a string: a status reply ("+ok") reaches Lua as {ok = 'ok'}.
local function text(value)
  if type(value) == 'table' then return value['ok'] end
  return tostring(value)
end

-- A command's reply, or nil for a key half-way through BF.LOADCHUNK (no filter yet): that key
-- does not fail the scrape. Any other error does (a user without BF.INFO or BFW.INFO under ACLs):
-- a scrape that names no key over must mean none is.
local function call(...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply['err'] then
    if string.find(reply['err'], 'still being loaded', 1, true) then return nil end
    error(reply)
  end
  return reply
end

-- BFW.INFO's reply of alternating field names and values, as a table.
local function fields(reply)
  local t = {}
  for i = 1, #reply - 1, 2 do t[text(reply[i])] = text(reply[i + 1]) end
  return t
end

local not_ok = (tonumber(totals['bf_filters_near_limit']) or 0) +
               (tonumber(totals['bf_filters_over_limit']) or 0)
local complete = 1
if not_ok > 0 then
  for _, type_name in ipairs({'bloomeryf', 'bloomeryw'}) do
    local cursor, scans = '0', 0
    repeat
      if scans == MAX_SCANS then
        complete = 0
        break
      end
      scans = scans + 1
      local reply = redis.call('SCAN', cursor, 'COUNT', SCAN_COUNT, 'TYPE', type_name)
      cursor = reply[1]
      for _, key in ipairs(reply[2]) do
        local state, ratio
        if type_name == 'bloomeryf' then
          -- BF.INFO key FIELD answers [value].
          local health = call('BF.INFO', key, 'HEALTH')
          state = health and text(health[1])
          if state and state ~= 'ok' then
            local fpr_ratio = call('BF.INFO', key, 'FPRRATIO')
            ratio = fpr_ratio and text(fpr_ratio[1])
          end
        else
          local info = call('BFW.INFO', key)
          if info then
            info = fields(info)
            state, ratio = info['Health'], info['FPR over planned']
          end
        end
        if state and state ~= 'ok' and ratio then
          put('bf_' .. state .. ':' .. label(key), ratio)
        end
      end
    until cursor == '0'
  end
end
put('bf_scan_complete', complete)
return out
