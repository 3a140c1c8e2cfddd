-- Append messages to one session, atomically, at most once per message id.
-- KEYS[1]  the session's history list      KEYS[2]  its list of message ids
-- ARGV[1]  max_history (>= 1)              ARGV[2]  TTL in milliseconds, 0 for none
-- ARGV[3..] pairs: message id, encoded entry
-- Returns the number of messages appended (ids already stored are skipped).
for i = 1, 2 do
  local kind = redis.call('TYPE', KEYS[i])['ok']
  if kind ~= 'none' and kind ~= 'list' then
    return redis.error_reply('WRONGTYPE chat-memory key ' .. KEYS[i] .. ' holds a ' .. kind)
  end
end
local max_history = tonumber(ARGV[1])
local ttl_ms = tonumber(ARGV[2])
local appended = 0
for i = 3, #ARGV, 2 do
  if not redis.call('LPOS', KEYS[2], ARGV[i]) then
    redis.call('RPUSH', KEYS[1], ARGV[i + 1])
    redis.call('RPUSH', KEYS[2], ARGV[i])
    appended = appended + 1
  end
end
redis.call('LTRIM', KEYS[1], -max_history, -1)
redis.call('LTRIM', KEYS[2], -max_history, -1)
if ttl_ms > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl_ms)
  redis.call('PEXPIRE', KEYS[2], ttl_ms)
end
return appended
