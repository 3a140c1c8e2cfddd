-- Append messages to one session, atomically, at most once per message id.
--
-- KEYS     the session's keys this call declares, named by ARGV[6], one letter a key:
--          h  the history list (always first)      s  its hash: message id -> fingerprint
--          i  its list of remembered ids, oldest first (only with a retry window longer
--             than the history)                     m  its metadata hash
--          x  the user's index of sessions
--          A key the session does not have yet may be left out (a cluster slot being
--          migrated refuses a script that declares a missing key with others): the
--          history is created, the rest is then not kept up by this call.
-- ARGV[1]  max_history                       ARGV[2]  TTL in milliseconds, '0' for none
-- ARGV[3]  how many ids to remember, '0': the ids of the messages in the history
-- ARGV[4]  now, in milliseconds since the epoch
-- ARGV[5]  the session's member in the index ARGV[6]  the letters of KEYS
-- ARGV[7..] triples: id, fingerprint ("<digest> <created_at>"), entry
--
-- Every check comes before the first write, so an error reply means nothing was
-- written: CHATMEM_WRONGTYPE <key number> <type>, CHATMEM_NOPERM <command>,
-- CHATMEM_CONFLICT <message number> (an id already stored with another digest).
-- Each key is first read (which refuses a key of another type); on Redis 7 the
-- user's permission for every write after the first is asked in advance, and the
-- first write itself is refused whole.
-- Returns one element per message: 1 if appended, else the stored fingerprint of
-- its id ('' for an id found only in the history or the ids list).

local roles = ARGV[6]
local key, number = {}, {}
for n = 1, #roles do
  local role = string.sub(roles, n, n)
  key[role], number[role] = KEYS[n], n
end
local H, S, I, M, X = key.h, key.s, key.i, key.m, key.x
local ttl, window = ARGV[2], tonumber(ARGV[3])

-- A refusal of a read or of the first write: nothing was written.
local function refused(reply, role, command)
  local message = tostring(reply.err or '')
  if string.find(message, '^WRONGTYPE') then
    local found = redis.call('TYPE', key[role])['ok']
    return redis.error_reply('CHATMEM_WRONGTYPE ' .. number[role] .. ' ' .. found)
  end
  if string.find(message, '^NOPERM') or string.find(message, "can't run this command") then
    return redis.error_reply('CHATMEM_NOPERM ' .. string.lower(command))
  end
  return redis.error_reply(message)
end

local function read(role, command, ...)
  local reply = redis.pcall(command, ...)
  if type(reply) == 'table' and reply.err then return nil, refused(reply, role, command) end
  return reply
end

-- The id of a stored entry: a cheap match for this library's own format, else JSON.
local function id_of(entry)
  local id = string.match(entry, '^{"v":1,"id":"([^"\\]*)"')
  if id then return id end
  local ok, decoded = pcall(cjson.decode, entry)
  if ok and type(decoded) == 'table' and type(decoded.id) == 'string' then return decoded.id end
  return nil
end

-- Commands take their values in chunks, within the Lua stack's limit for unpack.
local function chunked(command, target, values)
  for first = 1, #values, 1000 do
    redis.call(command, target, unpack(values, first, math.min(first + 999, #values)))
  end
end

local ids = {}
for i = 7, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end

local length, err = read('h', 'LLEN', H)
if err then return err end
local stored = {}
if S then
  stored, err = read('s', 'HMGET', S, unpack(ids))
  if err then return err end
end
local remembered = 0
if I then
  remembered, err = read('i', 'LLEN', I)
  if err then return err end
end
if M then
  local kind, refusal = read('m', 'TYPE', M)
  if refusal then return refusal end
  local found = kind['ok']
  if found ~= 'none' and found ~= 'hash' then
    return redis.error_reply('CHATMEM_WRONGTYPE ' .. number.m .. ' ' .. found)
  end
end
if X then
  local _, refusal = read('x', 'ZSCORE', X, ARGV[5])
  if refusal then return refusal end
end

-- An id the hash does not hold may still be stored: written by 0.1 (ids list
-- only), by a write that could not declare the hash, or by another program.
-- Those are looked up in the ids list or the history itself, only when the hash
-- holds fewer ids than there are entries.
local lookup
local function stored_elsewhere(id)
  if lookup == nil then
    lookup = {}
    local covered, listed, held, refusal = 0, {}, {}, nil
    if S then
      covered, refusal = read('s', 'HLEN', S)
      if refusal then return nil, refusal end
    end
    if I and remembered ~= covered then
      listed, refusal = read('i', 'LRANGE', I, 0, -1)
      if refusal then return nil, refusal end
    end
    if length > covered then
      held, refusal = read('h', 'LRANGE', H, 0, -1)
      if refusal then return nil, refusal end
    end
    for _, known in ipairs(listed) do lookup[known] = true end
    for _, entry in ipairs(held) do
      local known = id_of(entry)
      if known then lookup[known] = true end
    end
  end
  return lookup[id]
end

local outcome, entries, fresh, seen = {}, {}, {}, {}
for n, id in ipairs(ids) do
  local fingerprint = ARGV[5 + 3 * n]
  local found = stored[n]
  if found then
    -- The digest is everything before the first space.
    if string.match(found, '^%S+') ~= string.match(fingerprint, '^%S+') then
      return redis.error_reply('CHATMEM_CONFLICT ' .. n)
    end
    outcome[n] = found
  else
    local elsewhere, refusal = stored_elsewhere(id)
    if refusal then return refusal end
    if elsewhere then
      outcome[n] = ''
    else
      outcome[n] = 1
      entries[#entries + 1] = ARGV[6 + 3 * n]
      fresh[#fresh + 1] = id
      seen[#seen + 1] = id
      seen[#seen + 1] = fingerprint
    end
  end
end
-- Only a call that appended is a write: a retry of stored messages changes nothing.
if #entries == 0 then return outcome end

local max_history = tonumber(ARGV[1])
local excess = length + #entries - max_history
local dropped = {}
if S and not I and excess > 0 then
  dropped = redis.call('LRANGE', H, 0, excess - 1)
end

local expiring = {H}
if S then expiring[#expiring + 1] = S end
if I then expiring[#expiring + 1] = I end
if M then expiring[#expiring + 1] = M end

-- Redis 7 can tell in advance whether this user may run each write of this call.
if redis.acl_check_cmd then
  local checks = {{'RPUSH', H, 'e'}, {'LTRIM', H, '0', '-1'}}
  if S then
    checks[#checks + 1] = {'HSET', S, 'id', 'fp'}
    checks[#checks + 1] = {'HDEL', S, 'id'}
  end
  if I then
    checks[#checks + 1] = {'RPUSH', I, 'id'}
    checks[#checks + 1] = {'LTRIM', I, '0', '-1'}
  end
  if X then
    checks[#checks + 1] = {'HSETNX', M, 'created_at', '0'}
    checks[#checks + 1] = {'ZADD', X, '0', 'member'}
    checks[#checks + 1] = {'PTTL', X}
  end
  for _, target in ipairs(X and {X, unpack(expiring)} or expiring) do
    if ttl == '0' then
      checks[#checks + 1] = {'PERSIST', target}
    else
      checks[#checks + 1] = {'PEXPIRE', target, ttl}
    end
  end
  for _, check in ipairs(checks) do
    if not redis.acl_check_cmd(unpack(check)) then
      return redis.error_reply('CHATMEM_NOPERM ' .. string.lower(check[1]))
    end
  end
end

-- The first write: refused whole (a missing permission), or done.
local first = math.min(#entries, 1000)
local pushed = redis.pcall('RPUSH', H, unpack(entries, 1, first))
if type(pushed) == 'table' and pushed.err then return refused(pushed, 'h', 'RPUSH') end
if #entries > first then
  chunked('RPUSH', H, {unpack(entries, first + 1)})
end
if excess > 0 then redis.call('LTRIM', H, excess, -1) end
if S then
  chunked('HSET', S, seen)
  local gone = {}
  for _, entry in ipairs(dropped) do
    local id = id_of(entry)
    if id then gone[#gone + 1] = id end
  end
  if #gone > 0 then chunked('HDEL', S, gone) end
end
if I then
  chunked('RPUSH', I, fresh)
  local over = remembered + #fresh - window
  if over > 0 then
    if S then chunked('HDEL', S, redis.call('LRANGE', I, 0, over - 1)) end
    redis.call('LTRIM', I, over, -1)
  end
end
local index_ttl
if X then
  redis.call('HSETNX', M, 'created_at', ARGV[4])
  index_ttl = redis.call('PTTL', X)
  redis.call('ZADD', X, ARGV[4], ARGV[5])
end
for _, target in ipairs(expiring) do
  if ttl == '0' then
    redis.call('PERSIST', target)
  else
    redis.call('PEXPIRE', target, ttl)
  end
end
-- The index outlives every session in it: it never expires while one session
-- never does, and otherwise expires with the session that expires last.
if X then
  if ttl == '0' then
    redis.call('PERSIST', X)
  elseif index_ttl == -2 or (index_ttl >= 0 and index_ttl < tonumber(ttl)) then
    redis.call('PEXPIRE', X, ttl)
  end
end
return outcome
