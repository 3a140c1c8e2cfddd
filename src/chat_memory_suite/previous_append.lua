-- Append messages to one session, atomically, at most once per message id.
--
-- KEYS[1]  the session's history list        KEYS[2]  its list of remembered message ids
-- KEYS[3]  its hash: message id -> fingerprint ("<digest> <created_at>")
-- KEYS[4]  its metadata hash                 KEYS[5]  the user's index of sessions, if any
-- ARGV[1]  max_history                       ARGV[2]  TTL in milliseconds, '0' for none
-- ARGV[3]  how many ids to remember          ARGV[4]  now, in milliseconds since the epoch
-- ARGV[5]  the session's member in the index ARGV[6..] triples: id, fingerprint, entry
--
-- A session of a user is in its user's index, scored by its last activity, and
-- its metadata hash holds its created_at; the index lives as long as the user's
-- longest-lived session.
--
-- Every check comes before the first write, so an error reply means nothing was
-- written: CHATMEM_WRONGTYPE <key number> <type>, CHATMEM_NOPERM <command>,
-- CHATMEM_CONFLICT <message number> (an id already stored with another digest).
-- Returns one element per message: 1 if appended, else the stored fingerprint of
-- its id ('' for an id remembered before fingerprints existed).

-- Commands take their values in chunks, within the Lua stack's limit for unpack.
local function chunked(command, key, values)
  for first = 1, #values, 1000 do
    redis.call(command, key, unpack(values, first, math.min(first + 999, #values)))
  end
end

-- Redis 7 can tell in advance whether this user may run every command below.
if redis.acl_check_cmd then
  local checks = {
    {'TYPE', KEYS[1]}, {'TYPE', KEYS[2]}, {'TYPE', KEYS[3]}, {'TYPE', KEYS[4]},
    {'HGET', KEYS[3], 'id'}, {'HLEN', KEYS[3]}, {'LLEN', KEYS[2]}, {'LPOS', KEYS[2], 'id'},
    {'RPUSH', KEYS[1], 'entry'}, {'RPUSH', KEYS[2], 'id'}, {'HSET', KEYS[3], 'id', 'fp'},
    {'LTRIM', KEYS[1], '0', '-1'}, {'LRANGE', KEYS[2], '0', '-1'}, {'LTRIM', KEYS[2], '0', '-1'},
    {'HDEL', KEYS[3], 'id'},
  }
  for i = 1, #KEYS do
    if ARGV[2] == '0' then
      checks[#checks + 1] = {'PERSIST', KEYS[i]}
    else
      checks[#checks + 1] = {'PEXPIRE', KEYS[i], ARGV[2]}
    end
  end
  if KEYS[5] then
    checks[#checks + 1] = {'HSETNX', KEYS[4], 'created_at', '0'}
    checks[#checks + 1] = {'ZADD', KEYS[5], '0', 'member'}
    checks[#checks + 1] = {'PTTL', KEYS[5]}
  end
  for _, check in ipairs(checks) do
    if not redis.acl_check_cmd(unpack(check)) then
      return redis.error_reply('CHATMEM_NOPERM ' .. string.lower(check[1]))
    end
  end
end

local types = {'list', 'list', 'hash', 'hash', 'zset'}
for i = 1, #KEYS do
  local found = redis.call('TYPE', KEYS[i])['ok']
  if found ~= 'none' and found ~= types[i] then
    return redis.error_reply('CHATMEM_WRONGTYPE ' .. i .. ' ' .. found)
  end
end

-- Ids written by 0.1 (which trims the ids list with the history) are only in the
-- list; while the list and the hash disagree, an id missing from the hash is
-- looked up in the list too.
local unfingerprinted = redis.call('LLEN', KEYS[2]) ~= redis.call('HLEN', KEYS[3])
local outcome, entries, ids, seen = {}, {}, {}, {}
for i = 6, #ARGV, 3 do
  local id, fingerprint = ARGV[i], ARGV[i + 1]
  local stored = redis.call('HGET', KEYS[3], id)
  if stored then
    -- The digest is everything before the first space.
    if string.match(stored, '^%S+') ~= string.match(fingerprint, '^%S+') then
      return redis.error_reply('CHATMEM_CONFLICT ' .. ((i - 3) / 3))
    end
    outcome[#outcome + 1] = stored
  elseif unfingerprinted and redis.call('LPOS', KEYS[2], id) then
    outcome[#outcome + 1] = ''
  else
    outcome[#outcome + 1] = 1
    entries[#entries + 1] = ARGV[i + 2]
    ids[#ids + 1] = id
    seen[#seen + 1] = id
    seen[#seen + 1] = fingerprint
  end
end

if #entries > 0 then
  chunked('RPUSH', KEYS[1], entries)
  chunked('RPUSH', KEYS[2], ids)
  chunked('HSET', KEYS[3], seen)
  redis.call('LTRIM', KEYS[1], '-' .. ARGV[1], '-1')
  local excess = redis.call('LLEN', KEYS[2]) - tonumber(ARGV[3])
  if excess > 0 then
    chunked('HDEL', KEYS[3], redis.call('LRANGE', KEYS[2], 0, excess - 1))
    redis.call('LTRIM', KEYS[2], excess, -1)
  end
  local index_ttl
  if KEYS[5] then
    redis.call('HSETNX', KEYS[4], 'created_at', ARGV[4])
    index_ttl = redis.call('PTTL', KEYS[5])
    redis.call('ZADD', KEYS[5], ARGV[4], ARGV[5])
  end
  -- Only a call that appended is a write: a retry of stored messages changes nothing.
  for i = 1, 4 do
    if ARGV[2] == '0' then
      redis.call('PERSIST', KEYS[i])
    else
      redis.call('PEXPIRE', KEYS[i], ARGV[2])
    end
  end
  -- The index outlives every session in it: it never expires while one session
  -- never does, and otherwise expires with the session that expires last.
  if KEYS[5] then
    if ARGV[2] == '0' then
      redis.call('PERSIST', KEYS[5])
    elseif index_ttl == -2 or (index_ttl >= 0 and index_ttl < tonumber(ARGV[2])) then
      redis.call('PEXPIRE', KEYS[5], ARGV[2])
    end
  end
end
return outcome
