// The circuit breaker's state machine as one Lua script, run atomically by Redis: the same rules as core's
// MemoryBreakerStore (strategies, open periods, probes and their deadlines, isolation, snapshot restore), applied
// to state every process shares. Each call reads the hash, applies the operation, writes the hash back, refreshes its
// TTL (none while isolated; counted from the end of the period while open), publishes what changed on a channel named
// like the key, and answers with the state as JSON.
//
// KEYS[1]  the breaker's hash, `keel:<namespace>:breaker:<name>`
// ARGV[1]  operation: admit | report | renew | isolate | release | reset | sync
// ARGV[2]  now in epoch milliseconds, or '' for the server's clock (TIME)
// ARGV[3]  the rules as JSON: { strategy: { kind, options }, openDuration, halfOpenMaxProbes, probeSuccessesToClose,
//          probeTimeoutMs, probeSlotTtlMs? }
// ARGV[4]  the key's time to live after its last use, in milliseconds (refreshed by every call)
// ARGV[5]  a snapshot (BreakerSnapshot JSON) to seed the state from if it does not exist, or ''
// ARGV[6]  the generation the caller's copy is at, or '': the answer lists the transitions made since (from a log of
//          the last 16), so that a copy that jumps ahead by an answer never misses a transition whose message is late
// report:  ARGV[7] ticket kind (closed | probe), ARGV[8] the ticket's generation, ARGV[9] probe id, ARGV[10] outcome
//          (success | failure | ignored | cancelled), ARGV[11] the failure as serialised JSON or ''
// renew:   ARGV[7] 'probe', ARGV[8] the ticket's generation, ARGV[9] probe id: its holder still runs the probe
//
// Probe slots: a slot is `{ id, deadline, leaseUntil }`. With `probeSlotTtlMs` in the rules, a slot is held only
// until `leaseUntil` (the admission plus probeSlotTtlMs, never past the deadline) unless its holder renews it; a slot
// whose lease lapses before its deadline is freed (no transition: nobody may be probing, an admission whose answer was
// lost, or a holder that died), and another process may take it. A slot held to its deadline times out as before
// (`probe-timed-out`). Without `probeSlotTtlMs` (a process of an older keel) a slot is held until its deadline.
//
// Generations: `gen` grows by one with every transition and every reset, so that a process can tell a newer state
// from an older one and a ticket issued under an earlier state. A new state starts at the current time in ms, so that
// a state recreated after its key expired is still newer than anything seen before.
export const BREAKER_SCRIPT = `
local key = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
if not now or now ~= now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local rules = cjson.decode(ARGV[3])
local ttl = tonumber(ARGV[4])
local slotTtl = tonumber(rules.probeSlotTtlMs)
local strategy = rules.strategy
local options = strategy.options

local function newWindow()
  if strategy.kind == 'consecutive' then return { failures = 0, calls = 0 } end
  if strategy.kind == 'count-window' then return { outcomes = '' } end
  return { bucketMs = options.windowMs / options.buckets, buckets = {} }
end

-- Keeps a saved window only when it has the shape this strategy expects, as core's windows do.
local function sane(window)
  if type(window) ~= 'table' then return false end
  if strategy.kind == 'consecutive' then
    return type(window.failures) == 'number' and type(window.calls) == 'number'
  end
  if strategy.kind == 'count-window' then
    return type(window.outcomes) == 'string' and string.find(window.outcomes, '^[sf]*$') ~= nil
  end
  return window.bucketMs == options.windowMs / options.buckets and type(window.buckets) == 'table'
end

local fields = redis.call('HMGET', key, 'state', 'gen', 'openUntil', 'opens', 'probeSuccesses', 'probes',
  'nextProbe', 'holds', 'window', 'cause', 'lastReason', 'lastAt', 'lastOpenFor', 'log')
local existed = fields[1] ~= false
local s = {
  state = fields[1] or 'closed',
  gen = tonumber(fields[2]) or now,
  openUntil = tonumber(fields[3]) or 0,
  opens = tonumber(fields[4]) or 0,
  probeSuccesses = tonumber(fields[5]) or 0,
  probes = fields[6] and cjson.decode(fields[6]) or {},
  nextProbe = tonumber(fields[7]) or now,
  holds = tonumber(fields[8]) or 0,
  window = fields[9] and cjson.decode(fields[9]) or nil,
  cause = fields[10] or nil,
  lastReason = fields[11] or nil,
  lastAt = tonumber(fields[12]),
  lastOpenFor = tonumber(fields[13]),
}
-- The log of recent transitions is only decoded when it is needed (a transition, or a copy that is behind).
local logJson = fields[14] or '[]'
local log = nil
local function recentTransitions()
  if log == nil then log = cjson.decode(logJson) end
  return log
end
if not sane(s.window) then s.window = newWindow() end

local transitions = {}
local changed = not existed
-- Only the strategy's window changed (an outcome counted while closed): one field to write.
local windowChanged = false
local freed = false
local opened = false

local function transition(from, to, reason, at, openFor)
  s.gen = s.gen + 1
  s.lastReason = reason
  s.lastAt = at
  s.lastOpenFor = openFor
  local move = { gen = s.gen, from = from, to = to, reason = reason, atMs = at, openForMs = openFor }
  transitions[#transitions + 1] = move
  local recent = recentTransitions()
  recent[#recent + 1] = move
  if #recent > 16 then table.remove(recent, 1) end
  changed = true
end

local function openPeriod(opens)
  local d = rules.openDuration
  if d.initialMs == 0 or d.factor == 1 or d.initialMs >= d.maxMs then return math.min(d.initialMs, d.maxMs) end
  local exponent = math.max(0, opens - 1)
  if exponent >= math.log(d.maxMs / d.initialMs) / math.log(d.factor) then return d.maxMs end
  return math.min(d.maxMs, d.initialMs * d.factor ^ exponent)
end

local function leave()
  s.probes = {}
  s.probeSuccesses = 0
  s.window = newWindow()
end

local function open(reason, at, cause)
  local from = s.state
  leave()
  s.opens = s.opens + 1
  local openFor = openPeriod(s.opens)
  s.state = 'open'
  s.openUntil = at + openFor
  -- A probe that timed out brings no error of its own: the failure from before stays the best explanation.
  if cause then s.cause = cause end
  opened = true
  transition(from, 'open', reason, at, openFor)
end

local function close(reason, at)
  local from = s.state
  leave()
  s.cause = nil
  s.state = 'closed'
  s.opens = 0
  s.holds = 0
  transition(from, 'closed', reason, at, nil)
end

local function earliestProbe()
  local earliest = nil
  for _, probe in ipairs(s.probes) do
    if earliest == nil or probe[2] < earliest[2] then earliest = probe end
  end
  return earliest
end

-- When a slot may be taken again: its lease's end when that comes first, else its deadline.
local function slotEnd(probe)
  if probe[3] ~= nil and probe[3] < probe[2] then return probe[3] end
  return probe[2]
end

local function earliestSlotEnd()
  local earliest = nil
  for _, probe in ipairs(s.probes) do
    local ends = slotEnd(probe)
    if earliest == nil or ends < earliest then earliest = ends end
  end
  return earliest
end

-- Frees the slots whose lease lapsed before their deadline: their holder did not renew them.
local function dropLapsed()
  local kept = {}
  for _, probe in ipairs(s.probes) do
    if probe[3] ~= nil and probe[3] < probe[2] and now >= probe[3] then
      freed = true
      changed = true
    else
      kept[#kept + 1] = probe
    end
  end
  if #kept ~= #s.probes then s.probes = kept end
end

local function latestProbe()
  local latest = nil
  for _, probe in ipairs(s.probes) do
    if latest == nil or probe[2] > latest[2] then latest = probe end
  end
  return latest
end

-- Time-driven changes, each dated when it fell due: a reopened period counts from the probe's deadline, so it may
-- itself have ended by now (hence the loop).
local function applyDue()
  while true do
    if s.state == 'open' and now >= s.openUntil then
      s.state = 'half-open'
      s.probeSuccesses = 0
      transition('open', 'half-open', 'open-elapsed', s.openUntil, nil)
    else
      local probe = nil
      if s.state == 'half-open' then
        dropLapsed()
        probe = earliestProbe()
      end
      if probe ~= nil and now >= probe[2] then
        open('probe-timed-out', probe[2], nil)
      else
        return
      end
    end
  end
end

-- The time window's bucket for now, dropping buckets that have left the window.
local function currentBucket()
  local w = s.window
  local current = math.floor(now / w.bucketMs)
  local live = {}
  local found = nil
  for _, bucket in ipairs(w.buckets) do
    if bucket[1] > current - options.buckets then
      live[#live + 1] = bucket
      if bucket[1] == current then found = bucket end
    end
  end
  if found == nil then
    found = { current, 0, 0 }
    live[#live + 1] = found
  end
  w.buckets = live
  return found
end

-- The strategy's window: success, and failure (true when the breaker should open).
local function windowSuccess()
  local w = s.window
  if strategy.kind == 'consecutive' then
    w.failures = 0
    if w.calls < options.minimumCalls then w.calls = w.calls + 1 end
  elseif strategy.kind == 'count-window' then
    w.outcomes = string.sub(w.outcomes .. 's', -options.size)
  else
    local bucket = currentBucket()
    bucket[2] = bucket[2] + 1
  end
end

local function windowFailure()
  local w = s.window
  if strategy.kind == 'consecutive' then
    w.failures = w.failures + 1
    if w.calls < options.minimumCalls then w.calls = w.calls + 1 end
    return w.failures >= options.threshold and w.calls >= options.minimumCalls
  end
  if strategy.kind == 'count-window' then
    w.outcomes = string.sub(w.outcomes .. 'f', -options.size)
    local count = #w.outcomes
    local _, failures = string.gsub(w.outcomes, 'f', '')
    return count >= options.minimumCalls and failures >= options.failureRateThreshold * count
  end
  local bucket = currentBucket()
  bucket[3] = bucket[3] + 1
  local calls, failures = 0, 0
  for _, live in ipairs(w.buckets) do
    calls = calls + live[2] + live[3]
    failures = failures + live[3]
  end
  return calls >= options.minimumCalls and failures >= options.failureRateThreshold * calls
end

-- A snapshot restored into a missing state, by the rules of core's BreakerStore ("Restoring a snapshot").
local function seed(snapshot)
  s.state = snapshot.state
  s.openUntil = tonumber(snapshot.openUntilMs) or 0
  s.opens = snapshot.consecutiveOpens
  if snapshot.strategy == strategy.kind and sane(snapshot.window) then s.window = snapshot.window end
  if snapshot.state == 'half-open' then
    local probesUntil = snapshot.probesUntilMs
    -- Without the field (an older snapshot) nobody knows: assume a probe was admitted just now.
    if probesUntil == nil then probesUntil = now + rules.probeTimeoutMs end
    if probesUntil ~= cjson.null and probesUntil > now then
      s.state = 'open'
      s.openUntil = probesUntil
    else
      s.probeSuccesses = snapshot.probeSuccesses
    end
  end
  if (s.state == 'open' or s.state == 'half-open') and type(snapshot.cause) == 'table' then
    s.cause = cjson.encode(snapshot.cause)
  end
end

local reply = {}
if not existed and ARGV[5] ~= '' then seed(cjson.decode(ARGV[5])) end

if op == 'sync' then
  applyDue()
  reply.cause = s.cause
  reply.lastReason = s.lastReason
  reply.lastAt = s.lastAt
  reply.lastOpenFor = s.lastOpenFor
elseif op == 'admit' then
  if s.state ~= 'closed' then applyDue() end
  if s.state == 'closed' then
    reply.ticket = { kind = 'closed' }
  elseif s.state == 'open' then
    reply.rejection = { state = 'open', remainingMs = s.openUntil - now }
    reply.cause = s.cause
  elseif s.state == 'isolated' then
    reply.rejection = { state = 'isolated' }
  elseif #s.probes < rules.halfOpenMaxProbes then
    local id = s.nextProbe
    s.nextProbe = id + 1
    local deadline = now + rules.probeTimeoutMs
    if slotTtl ~= nil then
      s.probes[#s.probes + 1] = { id, deadline, math.min(now + slotTtl, deadline) }
    else
      s.probes[#s.probes + 1] = { id, deadline }
    end
    changed = true
    reply.ticket = { kind = 'probe', probeId = id }
  else
    reply.rejection = { state = 'half-open', remainingMs = earliestSlotEnd() - now }
    reply.cause = s.cause
  end
elseif op == 'report' then
  local kind, ticketGen, probeId, outcome = ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10]
  local cause = ARGV[11] ~= '' and ARGV[11] or nil
  if kind == 'closed' then
    if s.state == 'closed' and ticketGen == s.gen then
      if outcome == 'success' then
        windowSuccess()
        windowChanged = true
      elseif outcome == 'failure' then
        if windowFailure() then open('failure-threshold', now, cause) end
        windowChanged = true
      end
    end
  else
    -- A probe past its deadline has already been counted as failed, whatever it reports now.
    applyDue()
    local index = nil
    for position, probe in ipairs(s.probes) do
      if probe[1] == probeId then index = position end
    end
    if index ~= nil then
      table.remove(s.probes, index)
      changed = true
      if outcome == 'success' then
        s.probeSuccesses = s.probeSuccesses + 1
        if s.probeSuccesses >= rules.probeSuccessesToClose then close('probe-succeeded', now) else freed = true end
      elseif outcome == 'failure' then
        open('probe-failed', now, cause)
      else
        freed = true
      end
    end
  end
elseif op == 'renew' then
  applyDue()
  local probeId = tonumber(ARGV[9])
  for _, probe in ipairs(s.probes) do
    if probe[1] == probeId and probe[3] ~= nil and slotTtl ~= nil then
      probe[3] = math.min(now + slotTtl, probe[2])
      changed = true
      reply.renewed = true
    end
  end
elseif op == 'isolate' then
  s.holds = s.holds + 1
  changed = true
  if s.state ~= 'isolated' then
    local from = s.state
    leave()
    s.cause = nil
    s.state = 'isolated'
    transition(from, 'isolated', 'isolated', now, nil)
  end
elseif op == 'release' then
  if s.holds > 0 then
    s.holds = s.holds - 1
    changed = true
  end
  if s.holds == 0 and s.state == 'isolated' then close('isolation-released', now) end
elseif op == 'reset' then
  s.holds = 0
  if s.state ~= 'closed' then
    close('reset', now)
  else
    -- Closed tickets issued before the reset must not count: a new generation, and no transition.
    s.window = newWindow()
    s.gen = s.gen + 1
  end
  changed = true
else
  return redis.error_reply('keel breaker script: unknown operation ' .. tostring(op))
end

local function number(value)
  if value == nil then return '' end
  return string.format('%.17g', value)
end

if changed then
  redis.call('HSET', key, 'state', s.state, 'gen', number(s.gen), 'openUntil', number(s.openUntil),
    'opens', number(s.opens), 'probeSuccesses', number(s.probeSuccesses), 'probes', cjson.encode(s.probes),
    'nextProbe', number(s.nextProbe), 'holds', number(s.holds), 'window', cjson.encode(s.window),
    'lastReason', s.lastReason or '', 'lastAt', number(s.lastAt), 'lastOpenFor', number(s.lastOpenFor))
  if log ~= nil then redis.call('HSET', key, 'log', cjson.encode(log)) end
  if s.cause then redis.call('HSET', key, 'cause', s.cause) else redis.call('HDEL', key, 'cause') end
elseif windowChanged then
  redis.call('HSET', key, 'window', cjson.encode(s.window))
end
-- Every use keeps the state alive for another ttl, with two exceptions, because processes answer from their copies
-- without a round trip and so without refreshing the key: an isolated state never expires (an operator's hold lasts
-- until released or reset, however long, and the last release or a reset gives the key its expiry back), and an open
-- one lives for ttl after its period ends (whatever period it was seeded with or the rules of other processes give).
if s.state == 'isolated' then
  redis.call('PERSIST', key)
elseif s.state == 'open' and s.openUntil > now then
  redis.call('PEXPIRE', key, ttl + math.ceil(s.openUntil - now))
else
  redis.call('PEXPIRE', key, ttl)
end

reply.now = now
reply.gen = s.gen
reply.state = s.state
reply.openUntil = s.openUntil
reply.opens = s.opens
reply.probeSuccesses = s.probeSuccesses
local earliest, latest = earliestSlotEnd(), latestProbe()
if earliest then reply.earliestProbe = earliest end
if latest then reply.probesUntil = latest[2] end
local known = tonumber(ARGV[6])
if known ~= nil and s.gen > known then
  local missed = {}
  for _, move in ipairs(recentTransitions()) do
    if move.gen > known then missed[#missed + 1] = move end
  end
  if #missed > 0 then reply.transitions = missed end
elseif #transitions > 0 then
  reply.transitions = transitions
end
if opened then reply.cause = s.cause end
if freed then reply.freed = true end

if #transitions > 0 or freed or op == 'reset' then
  local message = {
    gen = reply.gen, state = reply.state, openUntil = reply.openUntil, opens = reply.opens,
    probeSuccesses = reply.probeSuccesses, earliestProbe = reply.earliestProbe, probesUntil = reply.probesUntil,
    transitions = #transitions > 0 and transitions or nil, cause = reply.cause, freed = reply.freed, now = now,
  }
  redis.call('PUBLISH', key, cjson.encode(message))
end
return cjson.encode(reply)
`;
