// The pace governor's windows shared by every process: one script call per operation (one round trip), the same rule
// as @keel/core's PaceGovernor (see PaceStore there). Time is the caller's (`nowMs`), so every process, and a test's
// fake clock, places the window on its own clock.
//
// KEYS[1] the window (a hash): rr requests remaining, rra requests reset at, tr tokens remaining, tra tokens reset at,
//         next no call before, rl request limit, wms the window's length as guessed, served calls admitted
// KEYS[2] the calls waiting (a hash): call id -> `priority|since|expires at|tenant`
// KEYS[3] each tenant's last turn (a hash): tenant -> the `served` count at its last admitted call
// KEYS[4] the calls in flight (a sorted set): call id scored by when it was admitted; `observe` takes the oldest off
//         (the count matters, not which call), and a call admitted ARGV[4] ms ago or more stops counting at every
//         operation (its answer never told: its process died, its admit timed out on the client, its observe failed)
// ARGV[1] operation: admit | observe | refused; ARGV[2] now (ms); ARGV[3] time to live of the keys (ms);
// ARGV[4] the longest a call counts in flight (ms)
// admit:   ARGV[5] tokens, ARGV[6] call id, ARGV[7] tenant, ARGV[8] priority, ARGV[9] a claim's grace (ms)
// observe: ARGV[5] requests remaining, ARGV[6] requests reset in (ms), ARGV[7] request limit, ARGV[8] tokens remaining,
//          ARGV[9] tokens reset in (ms): each '' when the answer did not say (all '' for no headers)
// refused: ARGV[5] Retry-After (ms)
// Answers: admit the wait in ms (0: admitted, counted as sent); observe and refused 0.
export const PACE_SCRIPT = `
local op = ARGV[1]
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local names = { 'rr', 'rra', 'tr', 'tra', 'next', 'rl', 'wms', 'served' }
local w = redis.call('HMGET', KEYS[1], unpack(names))
local rr, rra, tr, tra = tonumber(w[1]), tonumber(w[2]) or 0, tonumber(w[3]), tonumber(w[4]) or 0
local nextAt, rl = tonumber(w[5]) or 0, tonumber(w[6])
local wms, served = tonumber(w[7]) or 0, tonumber(w[8]) or 0
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[4]))

local function save()
  local values = { rr, rra, tr, tra, nextAt, rl, wms, served }
  local set, unset = {}, {}
  for i = 1, #names do
    if values[i] == nil then
      unset[#unset + 1] = names[i]
    else
      set[#set + 1] = names[i]
      set[#set + 1] = string.format('%.3f', values[i])
    end
  end
  if #unset > 0 then redis.call('HDEL', KEYS[1], unpack(unset)) end
  redis.call('HSET', KEYS[1], unpack(set))
  redis.call('PEXPIRE', KEYS[1], ttl)
end

if op == 'observe' then
  redis.call('ZPOPMIN', KEYS[4])
  local remaining = tonumber(ARGV[5])
  if remaining ~= nil then
    local resetIn = tonumber(ARGV[6])
    rr = math.max(0, remaining - redis.call('ZCARD', KEYS[4]))
    rra = now + (resetIn or 60000)
    wms = math.max(wms, resetIn or 0)
    local limit = tonumber(ARGV[7])
    if limit ~= nil then rl = limit end
  end
  local tokensRemaining = tonumber(ARGV[8])
  if tokensRemaining ~= nil then
    tr = tokensRemaining
    tra = now + (tonumber(ARGV[9]) or 60000)
  end
  save()
  return 0
end
if op == 'refused' then
  nextAt = math.max(nextAt, now + tonumber(ARGV[5]))
  save()
  return 0
end

local tokens, callId, tenant = tonumber(ARGV[5]), ARGV[6], ARGV[7]
local priority, grace = tonumber(ARGV[8]), tonumber(ARGV[9])
-- A window whose reset has passed: the next one starts with the provider's limit, or is forgotten.
if rr ~= nil and now >= rra then
  if rl ~= nil and wms > 0 then
    rra = rra + (math.floor((now - rra) / wms) + 1) * wms
    rr = rl
  else
    rr = nil
  end
end
if tr ~= nil and now >= tra then tr = nil end

local since = now
local others = {}
local entries = redis.call('HGETALL', KEYS[2])
for i = 1, #entries, 2 do
  local id = entries[i]
  local p, s, e, t = string.match(entries[i + 1], '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if tonumber(e) <= now then
    redis.call('HDEL', KEYS[2], id)
  elseif id == callId then
    since = tonumber(s)
  else
    others[#others + 1] = { id = id, priority = tonumber(p), since = tonumber(s), tenant = t }
  end
end

local function claim(wait)
  redis.call('HSET', KEYS[2], callId, string.format('%d|%.3f|%.3f|%s', priority, since, now + wait + grace, tenant))
  redis.call('PEXPIRE', KEYS[2], ttl)
  save()
  return wait
end

local ready = math.max(now, nextAt)
if rr ~= nil and rr <= 0 then ready = math.max(ready, rra) end
if tr ~= nil and tr < tokens then ready = math.max(ready, tra) end
if ready > now then return claim(math.ceil(ready - now)) end

if rr ~= nil then
  -- Slots are counted: the slot goes to the call first in line (priority, then the tenant served least recently,
  -- then the oldest), which may be another one, waiting. A call behind others asks again about when its turn should
  -- come (a slot per call ahead of it), not at every slot.
  local turns = {}
  local function turnOf(name)
    if turns[name] == nil then turns[name] = tonumber(redis.call('HGET', KEYS[3], name)) or 0 end
    return turns[name]
  end
  local own = turnOf(tenant)
  local ahead = 0
  for _, other in ipairs(others) do
    local turn = turnOf(other.tenant)
    local before
    if other.priority ~= priority then before = other.priority > priority
    elseif turn ~= own then before = turn < own
    elseif other.since ~= since then before = other.since < since
    else before = other.id < callId end
    if before then ahead = ahead + 1 end
  end
  if ahead > 0 then return claim(math.max(1, math.ceil((rra - now) / math.max(1, rr) * ahead))) end
end

redis.call('HDEL', KEYS[2], callId)
redis.call('ZADD', KEYS[4], now, callId)
redis.call('PEXPIRE', KEYS[4], ttl)
served = served + 1
redis.call('HSET', KEYS[3], tenant, served)
redis.call('PEXPIRE', KEYS[3], ttl)
if rr ~= nil then
  local spacing = (rra - now) / rr
  rr = rr - 1
  nextAt = now + spacing
end
if tr ~= nil then tr = tr - tokens end
save()
return 0
`;
