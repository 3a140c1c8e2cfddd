-- The operations on a user's sessions and on session metadata, each atomic.
--
-- ARGV[1] names the operation; every key it touches shares the hash tag of the
-- session or of the user (the user's sessions are found from the index: the
-- key prefix ARGV[2] followed by a member of the index is a session's prefix).
--
-- list    KEYS[1] index; ARGV[2] prefix, ARGV[3] offset, ARGV[4] limit, ARGV[5] '1' on
--         a cluster
--         Drops from the index the sessions whose keys are gone (expired), then
--         returns, most recently active first, for each listed session:
--         member, last activity (ms), created_at (ms), message count, metadata doc.
-- forget  KEYS[1] index; ARGV[2] prefix, ARGV[3] how many sessions at most, ARGV[4] '1'
--         on a cluster
--         Deletes that many of the user's sessions, every key, and their index
--         entries; returns {number of keys deleted, sessions left, member...}.
--         Both refuse (CHATMEM_RESHARDING, nothing done) while this node imports or
--         exports the user's hash slot: the sessions may be on the other node. On a
--         cluster whose node will not say (CLUSTER NODES or KEYSLOT refused to this
--         user), both refuse (CHATMEM_UNSURE <command refused>, nothing done): a session
--         out of sight could not be told from an expired one.
-- clear   KEYS[1..4] the session's keys, KEYS[5] the index if any; ARGV[2] member
--         Deletes the session's keys and its index entry; returns keys deleted.
-- export  KEYS[1..4] the session's keys: returns {entries, metadata doc}, one snapshot.
-- compact KEYS[1..4] the session's keys; ARGV[3] TTL, ARGV[4] ids to remember ('0': the
--         ids of the messages in the history, without a list of ids),
--         ARGV[5] the history's length when read, ARGV[6] its first entry, ARGV[7] its
--         last, ARGV[8] how many entries to fold, ARGV[9..11] the summary's id,
--         fingerprint and entry. Replaces the first entries with the summary only if
--         the history is unchanged since it was read; returns 1, or 0 if it changed.
-- pop     KEYS[1..4] the session's keys; ARGV[2] the newest entry as read, ARGV[3] its id
--         ('' for none). Only if that entry is still the newest: removes it and forgets
--         its id (so the same message can be stored again); returns 1, else 0.
-- meta    KEYS[1..4] the session's keys, KEYS[5] the index if any; ARGV[2] member,
--         ARGV[3] TTL in ms ('0' for none), ARGV[4] now (ms), ARGV[5] the JSON doc
--         Stores the metadata doc with the session: the session's keys get its
--         TTL, and a user's session is listed from now on.
-- enlist  KEYS[1] the user's index alone; ARGV[2] member, ARGV[3] TTL in ms ('0' for
--         none), ARGV[4] now (ms). While the user's hash slot migrates, Redis refuses
--         (TRYAGAIN) a script that declares keys missing on a node beside ones it has;
--         an append so refused is then made in steps, each declaring keys that one
--         node holds: enlist, 'created' and enlist again (a brand-new session), the
--         append without the index, 'remember' and 'ids' (a brand-new session), enlist
--         again. The index lists the session before anything else of it is written
--         (and again once its metadata exists, which listing takes as alive); its score
--         only grows (last activity); the last enlist gives it a TTL no shorter than the
--         session's.
-- created KEYS[1] the session's metadata hash alone; ARGV[2] TTL, ARGV[3] now (ms), or
--         '' for a session without a user: sets its created_at unless set, and its TTL.
-- remember KEYS[1] the session's hash of ids alone; ARGV[2] TTL, ARGV[3..] pairs: id,
--         fingerprint. Adds the ids of messages written with the history alone,
--         without the field '': the next append reads the history once and
--         completes the hash. A brand-new session's next message can then declare
--         the hash beside the history.
-- ids     KEYS[1] the session's list of ids alone (a retry window longer than the
--         history); ARGV[2] TTL, ARGV[3] the window, ARGV[4..] the same ids, in order:
--         pushed, the list trimmed to the window.

local op = ARGV[1]

-- Redis 6 with lua-replicate-commands off would refuse a write after CLUSTER NODES (a
-- random command): replicate this script's effects. Redis 7 always does.
if redis.replicate_commands then redis.replicate_commands() end

local function keys_of(prefix, member)
  local p = prefix .. member
  return {p .. ':history', p .. ':ids', p .. ':seen', p .. ':meta'}
end

-- The expiry command of one key: PEXPIRE, or PERSIST when ttl is '0'.
local function expiry(key, ttl)
  if ttl == '0' then return {'PERSIST', key} end
  return {'PEXPIRE', key, ttl}
end

-- The commands that give the session's keys (and the index) the TTL ttl ('0': none).
local function expiry_commands(commands, ttl)
  for i = 1, #KEYS do commands[#commands + 1] = expiry(KEYS[i], ttl) end
  return commands
end

-- Gives the user's index a TTL no shorter than ttl ('0': none, and then never again
-- one while that session lives), given index_ttl, the index's PTTL before this write.
local function expire_index(index, ttl, index_ttl)
  if ttl == '0' then
    redis.call('PERSIST', index)
  elseif index_ttl == -2 or (index_ttl >= 0 and index_ttl < tonumber(ttl)) then
    redis.call('PEXPIRE', index, ttl)
  end
end

-- Gives the session's keys the TTL ttl ('0': none). With index_ttl (the index's
-- PTTL before this write), the user's index gets a TTL no shorter than any of
-- its sessions', and none while one of them never expires.
local function expire(ttl, index_ttl)
  for i = 1, 4 do redis.call(unpack(expiry(KEYS[i], ttl))) end
  if KEYS[5] and index_ttl then expire_index(KEYS[5], ttl, index_ttl) end
end

local function check(types)
  for i, wanted in ipairs(types) do
    if KEYS[i] then
      local found = redis.call('TYPE', KEYS[i])['ok']
      if found ~= 'none' and found ~= wanted then
        return redis.error_reply('CHATMEM_WRONGTYPE ' .. i .. ' ' .. found)
      end
    end
  end
end

local function allowed(commands)
  if not redis.acl_check_cmd then
    return nil
  end
  for _, command in ipairs(commands) do
    if not redis.acl_check_cmd(unpack(command)) then
      return redis.error_reply('CHATMEM_NOPERM ' .. string.lower(command[1]))
    end
  end
end

-- The refusal while this node imports or exports the hash slot of key (a resharding), on
-- a cluster (cluster: '1'): the user's sessions may then be on the other node, out of this
-- script's sight, where a listing would take them for expired and an erasure would miss
-- them. When the node will not say (to this user), the refusal names the command refused.
-- nil when the slot stays.
local function resharding(key, cluster)
  if cluster ~= '1' then return nil end
  local nodes = redis.pcall('CLUSTER', 'NODES')
  if type(nodes) ~= 'string' then return redis.error_reply('CHATMEM_UNSURE cluster|nodes') end
  local slot = redis.pcall('CLUSTER', 'KEYSLOT', key)
  if type(slot) ~= 'number' then return redis.error_reply('CHATMEM_UNSURE cluster|keyslot') end
  for line in string.gmatch(nodes, '[^\n]+') do  -- <id> <address> <flags> ...
    local flags = string.match(line, '^%S+ %S+ (%S+)')
    if flags and string.find(',' .. flags .. ',', ',myself,', 1, true) then
      -- [<slot>->-<id>] migrating, [<slot>-<-<id>] importing; slot ranges have no '['
      if string.find(line, '[' .. slot .. '-', 1, true) then
        return redis.error_reply('CHATMEM_RESHARDING')
      end
      return nil
    end
  end
  return nil
end

if op == 'list' then
  local refused = allowed({{'ZREM', KEYS[1], 'm'}}) or check({'zset'})
    or resharding(KEYS[1], ARGV[5])
  if refused then return refused end
  local prefix, skip, limit = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
  local out, position = {}, 0
  while #out < 5 * limit do
    local page = redis.call('ZREVRANGE', KEYS[1], position, position + 99, 'WITHSCORES')
    if #page == 0 then break end
    for i = 1, #page, 2 do
      local member, score = page[i], page[i + 1]
      local keys = keys_of(prefix, member)
      if redis.call('EXISTS', keys[4]) == 0 then
        redis.call('ZREM', KEYS[1], member)
      elseif skip > 0 then
        skip = skip - 1
        position = position + 1
      else
        position = position + 1
        local meta = redis.call('HMGET', keys[4], 'created_at', 'doc')
        out[#out + 1] = member
        out[#out + 1] = score
        out[#out + 1] = meta[1] or ''
        out[#out + 1] = redis.call('LLEN', keys[1])
        out[#out + 1] = meta[2] or ''
        if #out == 5 * limit then break end
      end
    end
  end
  return out
end

if op == 'forget' then
  local refused = allowed({{'DEL', KEYS[1]}, {'ZREM', KEYS[1], 'm'}}) or check({'zset'})
    or resharding(KEYS[1], ARGV[4])
  if refused then return refused end
  local members = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
  local deleted = 0
  for _, member in ipairs(members) do
    deleted = deleted + redis.call('DEL', unpack(keys_of(ARGV[2], member)))
    redis.call('ZREM', KEYS[1], member)
  end
  local left = redis.call('ZCARD', KEYS[1])
  -- Redis deletes a sorted set with its last member: that is the index, one key more.
  if #members > 0 and left == 0 then deleted = deleted + 1 end
  local out = {deleted, left}
  for _, member in ipairs(members) do out[#out + 1] = member end
  return out
end

local types = {'list', 'list', 'hash', 'hash', 'zset'}

if op == 'clear' then
  local refused = allowed({{'DEL', KEYS[1]}, {'ZREM', KEYS[5] or KEYS[1], 'm'}}) or check(types)
  if refused then return refused end
  local deleted = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  if KEYS[5] then redis.call('ZREM', KEYS[5], ARGV[2]) end
  return deleted
end

if op == 'enlist' then
  local commands = {{'ZADD', KEYS[1], 'GT', '0', 'm'}, {'PTTL', KEYS[1]}, expiry(KEYS[1], ARGV[3])}
  local refused = allowed(commands) or check({'zset'})
  if refused then return refused end
  local index_ttl = redis.call('PTTL', KEYS[1])
  redis.call('ZADD', KEYS[1], 'GT', ARGV[4], ARGV[2])
  expire_index(KEYS[1], ARGV[3], index_ttl)
  return 1
end

if op == 'created' or op == 'remember' then
  local set = op == 'created' and {'HSETNX', KEYS[1], 'created_at', ARGV[3]}
    or {'HSET', KEYS[1], 'id', 'fp'}
  local refused = allowed({set, expiry(KEYS[1], ARGV[2])}) or check({'hash'})
  if refused then return refused end
  if op == 'created' then
    if ARGV[3] ~= '' then redis.call(unpack(set)) end
  else  -- in chunks, within the Lua stack's limit for unpack
    for first = 3, #ARGV, 1000 do
      redis.call('HSET', KEYS[1], unpack(ARGV, first, math.min(first + 999, #ARGV)))
    end
  end
  redis.call(unpack(expiry(KEYS[1], ARGV[2])))
  return 1
end

if op == 'ids' then
  local refused = allowed({
    {'RPUSH', KEYS[1], 'id'}, {'LTRIM', KEYS[1], '0', '-1'}, expiry(KEYS[1], ARGV[2]),
  }) or check({'list'})
  if refused then return refused end
  for first = 4, #ARGV, 1000 do  -- in chunks, within the Lua stack's limit for unpack
    redis.call('RPUSH', KEYS[1], unpack(ARGV, first, math.min(first + 999, #ARGV)))
  end
  redis.call('LTRIM', KEYS[1], -tonumber(ARGV[3]), -1)
  redis.call(unpack(expiry(KEYS[1], ARGV[2])))
  return 1
end

if op == 'meta' then
  local commands = expiry_commands({{'HSET', KEYS[4], 'doc', 'd'}}, ARGV[3])
  if KEYS[5] then
    commands[#commands + 1] = {'ZADD', KEYS[5], 'NX', '0', 'm'}
    commands[#commands + 1] = {'HSETNX', KEYS[4], 'created_at', '0'}
    commands[#commands + 1] = {'PTTL', KEYS[5]}
  end
  local refused = allowed(commands) or check(types)
  if refused then return refused end
  redis.call('HSET', KEYS[4], 'doc', ARGV[5])
  local index_ttl
  if KEYS[5] then
    redis.call('HSETNX', KEYS[4], 'created_at', ARGV[4])
    index_ttl = redis.call('PTTL', KEYS[5])
    redis.call('ZADD', KEYS[5], 'NX', ARGV[4], ARGV[2])
  end
  expire(ARGV[3], index_ttl)
  return 1
end

if op == 'export' then
  local refused = check(types)
  if refused then return refused end
  return {redis.call('LRANGE', KEYS[1], 0, -1), redis.call('HGET', KEYS[4], 'doc') or ''}
end

if op == 'pop' then
  local refused = allowed({
    {'LINDEX', KEYS[1], '-1'}, {'RPOP', KEYS[1]}, {'LREM', KEYS[2], '-1', 'id'},
    {'HDEL', KEYS[3], 'id'},
  }) or check(types)
  if refused then return refused end
  if redis.call('LINDEX', KEYS[1], -1) ~= ARGV[2] then return 0 end
  redis.call('RPOP', KEYS[1])
  if ARGV[3] ~= '' then
    redis.call('LREM', KEYS[2], -1, ARGV[3])
    redis.call('HDEL', KEYS[3], ARGV[3])
  end
  return 1
end

if op == 'compact' then
  local commands = expiry_commands({
    {'LTRIM', KEYS[1], '0', '-1'}, {'LPUSH', KEYS[1], 'e'}, {'RPUSH', KEYS[2], 'id'},
    {'HSET', KEYS[3], 'id', 'fp'}, {'LTRIM', KEYS[2], '0', '-1'}, {'HDEL', KEYS[3], 'id'},
  }, ARGV[3])
  local refused = allowed(commands) or check(types)
  if refused then return refused end
  -- The optimistic check: the history is still exactly as it was read.
  local length = tonumber(ARGV[5])
  if redis.call('LLEN', KEYS[1]) ~= length
    or redis.call('LINDEX', KEYS[1], 0) ~= ARGV[6]
    or redis.call('LINDEX', KEYS[1], -1) ~= ARGV[7] then
    return 0
  end
  local folded = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[8]) - 1)
  redis.call('LTRIM', KEYS[1], tonumber(ARGV[8]), -1)
  redis.call('LPUSH', KEYS[1], ARGV[11])
  redis.call('HSET', KEYS[3], ARGV[9], ARGV[10])
  if ARGV[4] == '0' then
    -- The retry window is the history: the folded messages' ids are forgotten.
    local gone = {}
    for _, entry in ipairs(folded) do
      local id = string.match(entry, '^{"v":1,"id":"([^"\\]*)"')
      if not id then
        local ok, decoded = pcall(cjson.decode, entry)
        if ok and type(decoded) == 'table' and type(decoded.id) == 'string' then id = decoded.id end
      end
      if id then gone[#gone + 1] = id end
    end
    for first = 1, #gone, 1000 do
      redis.call('HDEL', KEYS[3], unpack(gone, first, math.min(first + 999, #gone)))
    end
  else
    redis.call('RPUSH', KEYS[2], ARGV[9])
    local excess = redis.call('LLEN', KEYS[2]) - tonumber(ARGV[4])
    if excess > 0 then
      redis.call('HDEL', KEYS[3], unpack(redis.call('LRANGE', KEYS[2], 0, excess - 1)))
      redis.call('LTRIM', KEYS[2], excess, -1)
    end
  end
  expire(ARGV[3], nil)
  return 1
end

return redis.error_reply('CHATMEM_UNKNOWN_OPERATION ' .. tostring(op))
