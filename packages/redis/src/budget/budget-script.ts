// Token and cost budgets shared by every process: counters in Redis, reserved and settled by one script call each
// (one round trip). A reservation takes from all its counters or from none: the script checks every counter, then
// adds to every one, and Redis runs a script to its end before any other command.
//
// KEYS     the counters, `keel:<namespace>:budget:<budget>:<scope>:<scope id>:<period>:<unit>`
// ARGV[1]  operation: reserve | settle | read
// reserve: ARGV[2 + 3(i - 1)] the limit of KEYS[i], then the amount to take, then its time to live in ms (0: none)
// settle:  ARGV[2 + 3(i - 1)] the change to KEYS[i] (an integer, negative to give back), then its time to live, then ''
//
// Answers: reserve { 1 } when granted, { 0, index from 0, used } when KEYS[index + 1] has no room; settle { 1 };
// read { used of each key }. Amounts are integers (tokens, millionths of a dollar): INCRBY keeps them exact.
export const BUDGET_SCRIPT = `
local op = ARGV[1]
if op == 'read' then
  local used = {}
  for i = 1, #KEYS do used[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
  return used
end
if op == 'reserve' then
  for i = 1, #KEYS do
    local base = 2 + (i - 1) * 3
    local used = tonumber(redis.call('GET', KEYS[i]) or '0')
    if used + tonumber(ARGV[base + 1]) > tonumber(ARGV[base]) then return { 0, i - 1, used } end
  end
  for i = 1, #KEYS do
    local base = 2 + (i - 1) * 3
    redis.call('INCRBY', KEYS[i], ARGV[base + 1])
    local ttl = tonumber(ARGV[base + 2])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
  return { 1 }
end
for i = 1, #KEYS do
  local base = 2 + (i - 1) * 3
  local after = redis.call('INCRBY', KEYS[i], ARGV[base])
  if after < 0 then redis.call('SET', KEYS[i], '0') end
  local ttl = tonumber(ARGV[base + 1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return { 1 }
`;
