// A rate limiter shared by every process, as GCRA (the generic cell rate algorithm) in one Lua script: the key holds
// the theoretical arrival time (TAT) of the next call; a call may start at TAT - tolerance, and each call pushes TAT
// on by one emission interval (1 / rate). It is the token bucket of core's rateLimiter in one number: capacity
// `bucketSize` is a tolerance of (bucketSize - 1) intervals. Waiting ('wait' mode) is a reservation: the call's turn is
// booked in the same step, and the process sleeps until then. The key expires 10 s after the bucket would be full
// again.
//
// KEYS[1]  the limiter's key, `keel:<namespace>:rate-limiter:<name>`
// ARGV[1]  operation: acquire | release
// ARGV[2]  now in epoch milliseconds, or '' for the server's clock (TIME, to the microsecond)
// ARGV[3]  the emission interval, in milliseconds (1 / rate)
// ARGV[4]  the tolerance, in milliseconds ((bucketSize - 1) × interval)
// ARGV[5]  acquire: the longest wait allowed, in milliseconds ('0' refuses any wait, '' allows any)
//
// Answers { outcome, waitMs, tatMs }: outcome 'granted' (start after waitMs, 0 for now) or 'refused' (waitMs is when
// a call could start); tatMs is TAT - now after the call, for the caller's estimate of tokens left. Numbers are
// strings, since Redis would cut Lua numbers to integers.
export const RATE_LIMITER_SCRIPT = `
local key = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
if not now or now ~= now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
end
local interval = tonumber(ARGV[3])
local tolerance = tonumber(ARGV[4])

local tat = tonumber(redis.call('GET', key)) or now
if tat < now then tat = now end

-- The key lives until its bucket would be full again, and 10 s more: a TAT in the past reads as now, so the margin
-- changes nothing but absorbs the difference between a caller's clock and Redis's expiry (timeSource: 'clock').
local function store(value)
  redis.call('SET', key, string.format('%.3f', value), 'PX', math.ceil(value - now) + 10000)
end

local function answer(outcome, waitMs, tatMs)
  return { outcome, string.format('%.3f', waitMs), string.format('%.3f', tatMs) }
end

if op == 'release' then
  local released = math.max(now, tat - interval)
  store(released)
  return answer('released', 0, released - now)
end

-- A call due now may compute a hair above 0 in floating point: a microsecond of slack.
local waitMs = tat - tolerance - now
if waitMs <= 0.001 then
  store(tat + interval)
  return answer('granted', 0, tat + interval - now)
end
local maxWait = tonumber(ARGV[5])
if maxWait == nil or waitMs <= maxWait then
  store(tat + interval)
  return answer('granted', waitMs, tat + interval - now)
end
return answer('refused', waitMs, tat - now)
`;
