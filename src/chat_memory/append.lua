-- Append messages to one session, atomically, at most once per message id.
--
-- KEYS     the session's keys this call declares, named by ARGV[6], a letter a key:
--          h  the history list (always first)      s  its hash: message id -> fingerprint
--          i  its list of remembered ids, oldest first (a retry window longer than the
--             history only)                         m  its metadata hash
--          x  the user's index of sessions
--          In a cluster slot being migrated, Redis refuses a script that declares a
--          missing key beside others; the caller then declares only the keys that exist.
--          Without the hash (or the ids list, with a window longer than the history),
--          only a session with no history yet is written.
-- ARGV[1]  max_history                       ARGV[2]  TTL in milliseconds, '0' for none
-- ARGV[3]  how many ids to remember; '0': those of the messages in the history
-- ARGV[4]  now, in milliseconds since the epoch
-- ARGV[5]  the session's member in the index ARGV[6]  the letters of KEYS
-- ARGV[7..] triples: id, fingerprint ("<digest> <created_at>"), entry
-- The usual call, one message of a plain session with the history as its retry window
-- (KEYS h, s, m), comes in a short form of five: ARGV[1] max_history, ARGV[2] TTL,
-- ARGV[3] id, ARGV[4] fingerprint, ARGV[5] entry. Each argument costs the server a
-- tenth of a microsecond before the script even starts.
--
-- The hash's field '' (no message id is empty) says that it holds the id of every
-- entry of the history (and of the ids list, which is then as long as the hash less
-- that field). A session written otherwise (by 0.1, whose ids are in the list only,
-- or before the hash could be declared) lacks it: its entries are read once, their
-- ids added to the hash (fingerprint '': unknown), and the field set.
--
-- Every refusal of the general way comes before its first write, so an error reply
-- means nothing was written: CHATMEM_WRONGTYPE <key number> <type>, CHATMEM_NOPERM
-- <command>, CHATMEM_CONFLICT <message number> (an id already stored with another
-- digest), CHATMEM_MOVING (a session with history whose hash, or whose ids list holding
-- a longer retry window, could not be declared). A key of another type is refused by
-- the read each key gets first, or by the first write; on Redis 7 the permission of
-- each write after the first is asked before the first (whose own refusal writes
-- nothing). The one reply that follows a write is the short way's CHATMEM_PARTIAL
-- <command> (below).
-- Returns one element per message: 1 if appended, else the stored fingerprint of
-- its id ('' when only the id is known); the short way answers a message it
-- appended with a bare 1, not {1} (a table reply costs the server a tenth of the
-- append: Redis looks it over for seven special fields before it reads it).
--
-- Most calls append one message to a plain session whose hash is complete. They take
-- the short way at the top: one HMGET, RPUSH, HSET, LPOP when over the limit, HDEL of
-- the dropped ids, the three TTLs, and nothing else. What a script costs the server
-- is mostly its Lua and its calls: the short way runs before the general way's
-- functions are even defined, which took about a fifth off the usual append, and asks
-- no permission in advance, which took 5 to 10% more.
-- docs/benchmarks.md measures it against the minimal script and its bare commands.

-- The short way: the short form's message, for a session whose hash holds the id of
-- every entry of its history. It builds no table and no function. A key of another
-- type, or a hash without the field '', goes on to the general way, which reads again
-- and refuses; nothing was written before that.
-- It asks no permission in advance: the service sends its first append in the long
-- form, to the general way, which asks about every write (Redis 7). A permission
-- missing on another server, or revoked since, is found by the write it refuses:
-- - the push refused: nothing was written, and the general way refuses the call;
-- - the id's HSET refused: the push is undone (RPOP), so nothing was written, and the
--   refusal is answered (CHATMEM_NOPERM hset for a permission, as the general way says it);
--   if the undo is refused too, CHATMEM_PARTIAL hset: the message is stored, its id is
--   not (sent again, it would be stored twice), and nothing else was written;
-- - a later write refused (the trim, the forgetting of dropped ids, a TTL): the message
--   is stored and its id remembered, so sending it again is safe; the other writes
--   still run, and CHATMEM_PARTIAL <command> names the first one refused.
if #ARGV == 5 then
  local H, S, M, ttl = KEYS[1], KEYS[2], KEYS[3], ARGV[2]
  local found = redis.pcall('HMGET', S, '', ARGV[3])
  if found[1] then  -- an error reply has no [1]
    local stored = found[2]
    if stored then
      if stored ~= '' and string.match(stored, '^%S+') ~= string.match(ARGV[4], '^%S+') then
        return redis.error_reply('CHATMEM_CONFLICT 1')
      end
      return {stored}
    end
    local length = redis.pcall('RPUSH', H, ARGV[5])
    if type(length) == 'number' then
      local reply = redis.pcall('HSET', S, ARGV[3], ARGV[4])
      if type(reply) == 'number' then
        local excess, dropped, refused = length - tonumber(ARGV[1]), nil, nil
        -- One over the limit, the usual case: LPOP without a count is the cheaper call.
        if excess == 1 then
          reply = redis.pcall('LPOP', H)
          dropped = {reply}
        elseif excess > 0 then
          reply = redis.pcall('LPOP', H, excess)
          dropped = reply
        end
        if type(reply) == 'table' and reply.err then
          dropped, refused = nil, 'lpop'
        end
        if dropped then
          for n = 1, #dropped do
            local entry = dropped[n]
            local id = string.match(entry, '^{"v":1,"id":"([^"\\]*)"')
            if not id then
              local ok, decoded = pcall(cjson.decode, entry)
              if ok and type(decoded) == 'table' and type(decoded.id) == 'string' then
                id = decoded.id
              end
            end
            if id and id ~= '' and type(redis.pcall('HDEL', S, id)) ~= 'number' then
              refused = refused or 'hdel'
            end
          end
        end
        local h, s, m
        if ttl == '0' then
          h, s, m = redis.pcall('PERSIST', H), redis.pcall('PERSIST', S), redis.pcall('PERSIST', M)
        else
          h, s, m = redis.pcall('PEXPIRE', H, ttl), redis.pcall('PEXPIRE', S, ttl),
            redis.pcall('PEXPIRE', M, ttl)
        end
        if type(h) ~= 'number' or type(s) ~= 'number' or type(m) ~= 'number' then
          refused = refused or (ttl == '0' and 'persist' or 'pexpire')
        end
        if refused then return redis.error_reply('CHATMEM_PARTIAL ' .. refused) end
        return 1
      end
      if type(redis.pcall('RPOP', H)) == 'table' then
        return redis.error_reply('CHATMEM_PARTIAL hset')
      end
      -- Undone: nothing was written. Never the general way now: on Redis 6, which cannot
      -- ask in advance, it would push again and be refused after the push. Redis 7 says
      -- NOPERM; Redis 6 and Valkey word an ACL failure in a script their own way. The
      -- same test as refused() below, copied (a unit test keeps the two alike): a
      -- function defined before the short way would be built on every append.
      local why = tostring(reply.err)
      if string.find(why, '^NOPERM') or string.find(why, "can't run this command")
        or string.find(why, 'ACL failure') or string.find(why, 'no permissions') then
        return redis.error_reply('CHATMEM_NOPERM hset')
      end
      return redis.error_reply(why)
    end
  end
end

-- The general way takes the call in its long form (the short form is one message of
-- a plain session, whose index arguments it does not need).
local A = ARGV
if #ARGV == 5 then A = {ARGV[1], ARGV[2], '0', '0', '', 'hsm', ARGV[3], ARGV[4], ARGV[5]} end
local roles = A[6]
local H, S, I, M, X
local letters = #roles
if roles == 'hsm' then  -- a plain session with the history as its retry window
  H, S, M, letters = KEYS[1], KEYS[2], KEYS[3], 0
end
for n = 1, letters do  -- bytes, not one-letter strings: this runs on every append
  local role = string.byte(roles, n)
  if role == 104 then H = KEYS[n]
  elseif role == 115 then S = KEYS[n]
  elseif role == 105 then I = KEYS[n]
  elseif role == 109 then M = KEYS[n]
  elseif role == 120 then X = KEYS[n] end
end
local ttl = A[2]

-- The number of the key a role letter names, and the key.
local function numbered(role)
  local n = string.find(roles, role, 1, true)
  return n, KEYS[n]
end

-- A refusal of a read or of the first write: nothing was written.
local function refused(reply, role, command)
  local message = tostring(reply.err or '')
  -- Redis 6 puts the script's line before the error's own code: found anywhere.
  if string.find(message, 'WRONGTYPE', 1, true) then
    local n, target = numbered(role)
    local found = redis.call('TYPE', target)['ok']
    return redis.error_reply('CHATMEM_WRONGTYPE ' .. n .. ' ' .. found)
  end
  -- Redis 7 says NOPERM; Redis 6 and Valkey word an ACL failure in a script their own way.
  if string.find(message, '^NOPERM') or string.find(message, "can't run this command")
    or string.find(message, 'ACL failure') or string.find(message, 'no permissions') then
    return redis.error_reply('CHATMEM_NOPERM ' .. string.lower(command))
  end
  if string.find(message, 'OOM command not allowed', 1, true) then
    return redis.error_reply("OOM command not allowed when used memory > 'maxmemory'")
  end
  return redis.error_reply(message)
end

local function read(role, command, ...)
  local reply = redis.pcall(command, ...)
  if type(reply) == 'table' and reply.err then return nil, refused(reply, role, command) end
  return reply
end

-- A call without messages (the long form's six arguments) is the barrier of a retry
-- whose messages were all stored, sent with a durability setting only: the WAIT after
-- a call that wrote nothing would count the replicas holding nothing of this
-- connection's. It writes every key's expiry again as an append would (the index only
-- ever extended, as finish() below does), which the replicas receive after every
-- earlier write of the session; without a TTL, each key is given an expiry for an
-- instant (2^40 ms), then none, which leaves it as it was. Nothing else is written. A
-- refusal never leaves the instant's expiry behind: without a TTL, PERSIST is asked
-- first (it changes only a key that had an expiry, as an append without TTL would).
if #A == 6 then
  local function again(role, target)
    local command, reply = 'PEXPIRE', nil
    if ttl ~= '0' then
      reply = redis.pcall('PEXPIRE', target, ttl)
    else
      command, reply = 'PERSIST', redis.pcall('PERSIST', target)
      if type(reply) == 'number' then
        command, reply = 'PEXPIRE', redis.pcall('PEXPIRE', target, '1099511627776')
      end
      if type(reply) == 'number' then command, reply = 'PERSIST', redis.pcall('PERSIST', target) end
    end
    if type(reply) == 'table' then return refused(reply, role, command) end
  end
  local refusal = again('h', H) or (S and again('s', S)) or (I and again('i', I))
    or (M and again('m', M))
  if refusal then return refusal end
  if X then
    local left
    left, refusal = read('x', 'PTTL', X)
    if refusal then return refusal end
    if ttl == '0' or (left >= 0 and left < tonumber(ttl)) then
      refusal = again('x', X)
      if refusal then return refusal end
    end
  end
  return {}
end

-- The id of a stored entry: a cheap match for this library's own format, else JSON.
local function id_of(entry)
  local id = string.match(entry, '^{"v":1,"id":"([^"\\]*)"')
  if not id then
    local ok, decoded = pcall(cjson.decode, entry)
    if ok and type(decoded) == 'table' and type(decoded.id) == 'string' then id = decoded.id end
  end
  if id ~= '' then return id end
end

-- Commands take their values in chunks, within the Lua stack's limit for unpack.
local function chunked(command, target, values)
  for first = 1, #values, 1000 do
    redis.call(command, target, unpack(values, first, math.min(first + 999, #values)))
  end
end

-- A read of many fields, in chunks, as one list of replies (or nil and the refusal).
local function fields(role, target, wanted)
  local all = {}
  for first = 1, #wanted, 1000 do
    local part, refusal = read(role, 'HMGET', target,
      unpack(wanted, first, math.min(first + 999, #wanted)))
    if refusal then return nil, refusal end
    for n = 1, #part do all[#all + 1] = part[n] end
  end
  return all
end

-- The writes of the general way (the short way above makes the same ones inline).

-- Redis 7 tells in advance whether this user may run each write of this call (the
-- push first, so that a user missing several commands hears of the first one). Asked
-- one by one, without a table of commands: this runs on every append. Returns the
-- refusal, or nil.
local expiry = ttl == '0' and 'PERSIST' or 'PEXPIRE'
local function no(command, ...)
  return not redis.acl_check_cmd(command, ...)
end
local function expires(target)
  if ttl == '0' then return no('PERSIST', target) end
  return no('PEXPIRE', target, ttl)
end
local function denied()
  if not redis.acl_check_cmd then return nil end
  local command = (no('RPUSH', H, 'e') and 'RPUSH') or (no('LPOP', H, '1') and 'LPOP')
    or (expires(H) and expiry) or (no('RPOP', H) and 'RPOP')  -- the short way's undo
    or (S and ((no('HSET', S, 'id', 'fp') and 'HSET') or (no('HDEL', S, 'id') and 'HDEL')
      or (expires(S) and expiry)))
    or (I and ((no('RPUSH', I, 'id') and 'RPUSH') or (no('LPUSH', I, 'id') and 'LPUSH')
      or (no('LTRIM', I, '0', '-1') and 'LTRIM') or (expires(I) and expiry)))
    or (M and expires(M) and expiry)
    or (X and ((no('HSETNX', M, 'created_at', '0') and 'HSETNX')
      or (no('ZADD', X, '0', 'member') and 'ZADD') or (no('PTTL', X) and 'PTTL')
      or (expires(X) and expiry)))
  if command then return redis.error_reply('CHATMEM_NOPERM ' .. string.lower(command)) end
end

-- The first write: refused whole (a key of another type, a missing permission), or done.
-- Returns the history's new length, or nil and the refusal.
local function push(entries)
  local first = math.min(#entries, 1000)
  local length = redis.pcall('RPUSH', H, unpack(entries, 1, first))
  if type(length) == 'table' then return nil, refused(length, 'h', 'RPUSH') end
  for chunk = first + 1, #entries, 1000 do
    length = redis.call('RPUSH', H, unpack(entries, chunk, math.min(chunk + 999, #entries)))
  end
  return length
end

-- The history's limit: drops its oldest entries, and returns them.
local function trim(length)
  local excess = length - tonumber(A[1])
  return excess > 0 and redis.call('LPOP', H, excess) or {}
end

-- The retry window is the history: forget the ids of the entries it dropped.
local function forget(dropped)
  local gone = {}
  for _, entry in ipairs(dropped) do gone[#gone + 1] = id_of(entry) end
  if #gone > 0 then chunked('HDEL', S, gone) end
end

-- Whether a stored fingerprint names other content than this one: the digest is
-- everything before the first space; '' is an id known without it.
local function conflicts(stored, fingerprint)
  return stored ~= '' and string.match(stored, '^%S+') ~= string.match(fingerprint, '^%S+')
end

local function expire(target)
  if ttl == '0' then
    redis.call('PERSIST', target)
  else
    redis.call('PEXPIRE', target, ttl)
  end
end

-- A user's index and the session's metadata, then every TTL: the writes after the append.
local function finish()
  local index_ttl
  if X then
    redis.call('HSETNX', M, 'created_at', A[4])
    index_ttl = redis.call('PTTL', X)
    redis.call('ZADD', X, A[4], A[5])
  end
  expire(H)
  if S then expire(S) end
  if I then expire(I) end
  if M then expire(M) end
  -- The index outlives every session in it: it never expires while one session
  -- never does, and otherwise expires with the session that expires last.
  if X then
    if ttl == '0' then
      redis.call('PERSIST', X)
    elseif index_ttl == -2 or (index_ttl >= 0 and index_ttl < tonumber(ttl)) then
      redis.call('PEXPIRE', X, ttl)
    end
  end
end

local ids = {}
for i = 7, #A, 3 do ids[#ids + 1] = A[i] end

local stored, complete, refusal = {}, true, nil
if S then
  local found
  found, refusal = fields('s', S, {'', unpack(ids, 1, math.min(#ids, 999))})
  if refusal then return refusal end
  complete = found[1] ~= false
  for n = 1, math.min(#ids, 999) do stored[n] = found[n + 1] end
  if #ids > 999 then
    local rest = {}
    for n = 1000, #ids do rest[#rest + 1] = ids[n] end
    found, refusal = fields('s', S, rest)
    if refusal then return refusal end
    for n = 1, #rest do stored[999 + n] = found[n] end
  end
end
-- Without the hash, or without the ids list that holds a retry window longer than the
-- history (keys not declared while a slot migrates), only a session with no history
-- yet is written: the ids of the others would not all be found.
if not S or (not I and A[3] ~= '0') then
  local length
  length, refusal = read('h', 'LLEN', H)
  if refusal then return refusal end
  if length > 0 then return redis.error_reply('CHATMEM_MOVING') end
end
local remembered = 0
if I then
  remembered, refusal = read('i', 'LLEN', I)
  if refusal then return refusal end
  -- The list and the hash are kept in step; a writer of 0.1 adds to the list only.
  if complete and S then complete = redis.call('HLEN', S) == remembered + 1 end
end
if X then
  local kind
  kind, refusal = read('m', 'TYPE', M)
  if refusal then return refusal end
  if kind['ok'] ~= 'none' and kind['ok'] ~= 'hash' then
    return redis.error_reply('CHATMEM_WRONGTYPE ' .. numbered('m') .. ' ' .. kind['ok'])
  end
  local _
  _, refusal = read('x', 'ZSCORE', X, A[5])
  if refusal then return refusal end
end

-- Without the field '', the ids the hash lacks: those of the ids list and of the history.
-- They are added to the hash (and those of the history to the list, which is kept in step);
-- with the history as the window, fields of entries long gone (the previous version kept
-- 1,000 ids) are forgotten.
local missing, heal, unlisted, stale = nil, {}, {}, {}
local function lacked()
  if missing then return missing end
  missing = {}
  local listed, held = {}, {}
  if I then
    listed, refusal = read('i', 'LRANGE', I, 0, -1)
    if refusal then return nil end
  end
  held, refusal = read('h', 'LRANGE', H, 0, -1)
  if refusal then return nil end
  local in_list, held_ids, candidates = {}, {}, {}
  for _, id in ipairs(listed) do
    in_list[id] = true
    candidates[#candidates + 1] = id
  end
  for _, entry in ipairs(held) do
    local id = id_of(entry)
    if id then
      held_ids[#held_ids + 1] = id
      candidates[#candidates + 1] = id
    end
  end
  if #candidates > 0 then
    local known
    known, refusal = fields('s', S, candidates)
    if refusal then return nil end
    for n, id in ipairs(candidates) do
      if not known[n] and not missing[id] then
        missing[id] = true
        heal[#heal + 1] = id
        heal[#heal + 1] = ''
        if I and not in_list[id] then unlisted[#unlisted + 1] = id end
      end
    end
  end
  if not I then
    local keep, all = {[''] = true}, nil
    for _, id in ipairs(held_ids) do keep[id] = true end
    all, refusal = read('s', 'HKEYS', S)
    if refusal then return nil end
    for _, field in ipairs(all) do
      if not keep[field] then stale[#stale + 1] = field end
    end
  end
  return missing
end

local outcome, entries, fresh, seen = {}, {}, {}, {}
for n, id in ipairs(ids) do
  local fingerprint, found = A[5 + 3 * n], stored[n]
  if not found and not complete then
    local elsewhere = lacked()
    if elsewhere == nil then return refusal end
    if elsewhere[id] then found = '' end
  end
  if found then
    if conflicts(found, fingerprint) then return redis.error_reply('CHATMEM_CONFLICT ' .. n) end
    outcome[n] = found
  else
    outcome[n] = 1
    entries[#entries + 1] = A[6 + 3 * n]
    fresh[#fresh + 1] = id
    seen[#seen + 1] = id
    seen[#seen + 1] = fingerprint
  end
end
-- Only a call that appended is a write: a retry of stored messages changes nothing.
if #entries == 0 then return outcome end
refusal = denied()
if refusal then return refusal end
local length
length, refusal = push(entries)
if refusal then return refusal end
local dropped = trim(length)
if S then
  if not complete then
    for _, value in ipairs(heal) do seen[#seen + 1] = value end
    seen[#seen + 1] = ''
    seen[#seen + 1] = '1'
  end
  chunked('HSET', S, seen)
  if #stale > 0 then chunked('HDEL', S, stale) end
  if not I then forget(dropped) end
end
if I then
  if #unlisted > 0 then  -- older than this call's: pushed at the head, oldest first
    local reversed = {}
    for n = #unlisted, 1, -1 do reversed[#reversed + 1] = unlisted[n] end
    chunked('LPUSH', I, reversed)
  end
  chunked('RPUSH', I, fresh)
  local over = remembered + #unlisted + #fresh - tonumber(A[3])
  if over > 0 then
    if S then chunked('HDEL', S, redis.call('LRANGE', I, 0, over - 1)) end
    redis.call('LTRIM', I, over, -1)
  end
end
finish()
return outcome
