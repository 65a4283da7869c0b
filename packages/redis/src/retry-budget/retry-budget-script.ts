// A retry budget shared by every process: core's retryBudget counts (retries spent over the budget's life, and
// requests and retries per tenth of the window) in one Redis hash, changed atomically by one script call. The limits
// are checked by each process on its copy of these counts (see RedisRetryBudgetStore): the script records what
// happened, and answers the counts as they now stand.
//
// KEYS[1]  the budget's hash, `keel:<namespace>:retry-budget:<name>`
// ARGV[1]  operation: request | acquire | release | sync
// ARGV[2]  now in epoch milliseconds, or '' for the server's clock (TIME)
// ARGV[3]  the window, in milliseconds
// ARGV[4]  the key's time to live, in milliseconds (refreshed by every call)
// ARGV[5]  '1' when the budget counts per window (a ratio is set), '0' for a plain count of retries
// ARGV[6]  sync: retries already spent, to seed a budget that does not exist yet
//
// Answers JSON { now, spent, slots: [[slotId, requests, retries], ...] } with the slots still inside the window.
export const RETRY_BUDGET_SCRIPT = `
local key = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
if not now or now ~= now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local windowMs = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local windowed = ARGV[5] == '1'
local SLOTS = 10
local slotId = math.floor(now / (windowMs / SLOTS))
local index = slotId % SLOTS

local names = { 'spent' }
for slot = 0, SLOTS - 1 do
  names[#names + 1] = 'i' .. slot
  names[#names + 1] = 'q' .. slot
  names[#names + 1] = 'r' .. slot
end
local values = redis.call('HMGET', key, unpack(names))
local existed = values[1] ~= false
local spent = tonumber(values[1]) or 0
local ids, requests, retries = {}, {}, {}
for slot = 0, SLOTS - 1 do
  ids[slot] = tonumber(values[2 + slot * 3]) or -1
  requests[slot] = tonumber(values[3 + slot * 3]) or 0
  retries[slot] = tonumber(values[4 + slot * 3]) or 0
end
if ids[index] ~= slotId then
  ids[index] = slotId
  requests[index] = 0
  retries[index] = 0
end

if op == 'sync' then
  if not existed then spent = tonumber(ARGV[6]) or 0 end
elseif op == 'request' then
  requests[index] = requests[index] + 1
elseif op == 'acquire' then
  spent = spent + 1
  if windowed then retries[index] = retries[index] + 1 end
elseif op == 'release' then
  if spent > 0 then
    spent = spent - 1
    if windowed then
      -- The newest slot in the window that counted a retry: where this one was counted, unless the window moved on.
      local newest = -1
      for slot = 0, SLOTS - 1 do
        if ids[slot] > slotId - SLOTS and retries[slot] > 0 and (newest == -1 or ids[slot] > ids[newest]) then
          newest = slot
        end
      end
      if newest ~= -1 then retries[newest] = retries[newest] - 1 end
    end
  end
else
  return redis.error_reply('keel retry budget script: unknown operation ' .. tostring(op))
end

local writes = { 'spent', string.format('%d', spent) }
local slots = {}
for slot = 0, SLOTS - 1 do
  writes[#writes + 1] = 'i' .. slot
  writes[#writes + 1] = string.format('%d', ids[slot])
  writes[#writes + 1] = 'q' .. slot
  writes[#writes + 1] = string.format('%d', requests[slot])
  writes[#writes + 1] = 'r' .. slot
  writes[#writes + 1] = string.format('%d', retries[slot])
  -- Slot ids are never negative: -1 marks a slot never used.
  if ids[slot] >= 0 and ids[slot] > slotId - SLOTS then
    slots[#slots + 1] = { ids[slot], requests[slot], retries[slot] }
  end
end
redis.call('HSET', key, unpack(writes))
redis.call('PEXPIRE', key, ttl)
return cjson.encode({ now = now, spent = spent, slots = slots })
`;
