"""The acceptance suite fails loudly when the memory service is broken.

Each case copies the library, breaks it in one way a real regression would
(a renamed key, a changed serializer, an off-by-one trim, ...), and runs
``pytest features/`` against the broken copy: the suite must fail. A run on the
unbroken copy must pass, so a failure is the break's doing and not the harness's.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Each test re-runs the acceptance suite against a broken library: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "src" / "chat_memory"

BREAKS = {
    "renamed key": ("_keys.py", ':history"', ':hist"'),
    "ASCII-escaping serializer": ("_codec.py", "ensure_ascii=False", "ensure_ascii=True"),
    "trim one too many": ("append.lua", "local excess = length - tonumber(A[1])", "local excess = length - tonumber(A[1]) + 1"),
    "trim one too few": ("append.lua", "local excess = length - tonumber(A[1])", "local excess = length - tonumber(A[1]) - 1"),
    "trim from the wrong end": ("append.lua", "return excess > 0 and redis.call('LPOP', H, excess) or {}", "return excess > 0 and redis.call('RPOP', H, excess) or {}"),
    "missing TTL": ("append.lua", "    redis.call('PEXPIRE', target, ttl)", "    redis.call('PERSIST', target)"),
    "TTL in the wrong unit": ("_core.py", "round(seconds * 1000)", "round(seconds)"),
    "TTL not refreshed": ("append.lua", "    redis.call('PEXPIRE', target, ttl)", "    if redis.call('PTTL', target) < 0 then redis.call('PEXPIRE', target, ttl) end"),
    "reversed order": ("_core.py", "messages.append(decode(raw))", "messages.insert(0, decode(raw))"),
    "dropped write": ("append.lua", "for i = 7, #A, 3 do ids[#ids + 1] = A[i] end", "for i = 10, #A, 3 do ids[#ids + 1] = A[i] end"),
    "duplicated write": ("append.lua", "local length = redis.pcall('RPUSH', H, unpack(entries, 1, first))", "redis.call('RPUSH', H, unpack(entries, 1, first)) local length = redis.pcall('RPUSH', H, unpack(entries, 1, first))"),
    "retry stored twice": ("append.lua", "  for n = 1, math.min(#ids, 999) do stored[n] = found[n + 1] end", "  for n = 1, math.min(#ids, 999) do stored[n] = false end"),
    "retry of a trimmed message stored twice": ("append.lua", "local over = remembered + #unlisted + #fresh - tonumber(A[3])", "local over = remembered + #unlisted + #fresh - tonumber(A[1])"),
    "no TTL left in place after ttl=None": ("append.lua", "    redis.call('PERSIST', target)", "    -- no PERSIST"),
    # Hand mutants of the append script itself (issues 14 and 24): each must fail the scenarios.
    "script: ids pushed to the front": ("append.lua", "chunked('RPUSH', I, fresh)", "chunked('LPUSH', I, fresh)"),
    "script: ids never trimmed": ("append.lua", "    redis.call('LTRIM', I, over, -1)\n", ""),
    "script: history pushed to the front": ("append.lua", "local length = redis.pcall('RPUSH', H, unpack(", "local length = redis.pcall('LPUSH', H, unpack("),
    "short way: history pushed to the front": ("append.lua", "local length = redis.pcall('RPUSH', H, ARGV[5])", "local length = redis.pcall('LPUSH', H, ARGV[5])"),
    "short way: trim one too many": ("append.lua", "local excess, dropped, refused = length - tonumber(ARGV[1]),", "local excess, dropped, refused = length - tonumber(ARGV[1]) + 1,"),
    "short way: trim one too few": ("append.lua", "local excess, dropped, refused = length - tonumber(ARGV[1]),", "local excess, dropped, refused = length - tonumber(ARGV[1]) - 1,"),
    "short way: trim from the wrong end": ("append.lua", "reply = redis.pcall('LPOP', H)\n", "reply = redis.pcall('RPOP', H)\n"),
    "short way: trim from the wrong end, several over the limit": ("append.lua", "reply = redis.pcall('LPOP', H, excess)", "reply = redis.pcall('RPOP', H, excess)"),
    "short way: one over the limit not trimmed": ("append.lua", "          reply = redis.pcall('LPOP', H)\n          dropped = {reply}", "          dropped = {}"),
    "short way: TTL not refreshed": ("append.lua", "redis.pcall('PEXPIRE', H, ttl), redis.pcall('PEXPIRE', S, ttl),", "0, redis.pcall('PEXPIRE', S, ttl),"),
    "short way: only the history gets the TTL": ("append.lua", "redis.pcall('PEXPIRE', H, ttl), redis.pcall('PEXPIRE', S, ttl),", "redis.pcall('PEXPIRE', H, ttl), 0,"),
    "short way: the metadata's TTL not refreshed": ("append.lua", "            redis.pcall('PEXPIRE', M, ttl)\n", "            0\n"),
    "short way: a TTL left in place after ttl=None": ("append.lua", "redis.pcall('PERSIST', H), redis.pcall('PERSIST', S)", "0, redis.pcall('PERSIST', S)"),
    "short way: ids of dropped messages never forgotten": ("append.lua", "if id and id ~= '' and type(redis.pcall('HDEL', S, id)) ~= 'number' then", "if false then"),
    "short way: conflicting content accepted": ("append.lua", "if stored ~= '' and string.match(stored, '^%S+') ~= string.match(ARGV[4], '^%S+') then", "if false then"),
    "short way: a hash without its field taken as complete": ("append.lua", "if found[1] then  -- an error reply has no [1]", "if found[1] ~= nil then"),
    "script: key type checks dropped": ("append.lua", "if string.find(message, 'WRONGTYPE', 1, true) then", "if false then"),
    "script: only the history gets the TTL": ("append.lua", "  if S then expire(S) end\n", ""),
    "script: history trimmed to the ids window": ("append.lua", "local excess = length - tonumber(A[1])", "local excess = length - tonumber(A[3])"),
    "script: ids of dropped messages never forgotten": ("append.lua", "  if #gone > 0 then chunked('HDEL', S, gone) end", ""),
    "short way: a retry stored twice": ("append.lua", "    if stored then\n", "    if false then\n"),
    "short way: the id not remembered": ("append.lua", "local reply = redis.pcall('HSET', S, ARGV[3], ARGV[4])", "local reply = 0"),
    "script: a hash without its field taken as complete": ("append.lua", "  complete = found[1] ~= false", "  complete = true"),
    "script: ids of older entries not added to the hash": ("append.lua", "    for _, value in ipairs(heal) do seen[#seen + 1] = value end", ""),
    "users: the append script leaves the index alone": ("append.lua", "  redis.call('ZADD', X, A[4], A[5])\n", ""),
    "users: expired sessions still listed": ("sessions.lua", "if redis.call('EXISTS', keys[4]) == 0 then", "if false then"),
    "users: erasure leaves the metadata behind": ("sessions.lua", "return {p .. ':history', p .. ':ids', p .. ':seen', p .. ':meta'}", "return {p .. ':history', p .. ':ids', p .. ':seen'}"),
    # Equivalent, so not a break: clearing a user's session without its ZREM still never lists
    # it, because every listing drops the index entries of sessions whose keys are gone.
    "compaction without its optimistic check": ("sessions.lua", "    return 0\n", ""),
    "import overwrites a session in use": ("_ops.py", "if (entries or doc) and not append:", "if False:"),
    "metadata never expires": ("sessions.lua", "  expire(ARGV[3], index_ttl)\n", "  expire('0', index_ttl)\n"),
    "script: conflicting content accepted": ("append.lua", "  return stored ~= '' and string.match(stored, '^%S+') ~= string.match(fingerprint, '^%S+')", "  return false"),
    "dict id dropped": ("_message.py", "        id=data.get(\"id\"),", "        id=None,"),
    "leak between sessions": ("_keys.py", "return quote(value,", "return quote(value.lower(),"),
    "corrupt entry skipped": ("_core.py", "raise CorruptEntryError(session_id, position, str(exc)) from exc", "continue"),
    "bad role accepted": ("_message.py", "message.role not in ROLES", "message.role not in ROLES | {'wizard', 'User', 'developer'}"),
    "prompt drops the oldest remembered message": ("_chat.py", "[m.to_chat() for m in history]", "[m.to_chat() for m in history[1:]]"),
    "prompt reorders the history": ("_chat.py", "[m.to_chat() for m in history]", "[m.to_chat() for m in history[::-1]]"),
    "prompt lets another session in": ("_chat.py", "ops.get_messages(self.memory, session_id)", "ops.get_messages(self.memory, 'alice')"),
    "turn half-stored before the model answers": ("_chat.py", "        answer = yield ops.Ask(", "        yield from ops.add_messages(self.memory, session_id, [user])\n        answer = yield ops.Ask("),
    "system prompt left out of the budget": ("_chat.py", "budget = self.max_prompt_tokens - sum(self.count(m) for m in fixed)", "budget = self.max_prompt_tokens"),
    "tool call split from its result": ("_budget.py", "        if answers_open_call:", "        if False:"),
    "orphan tool result kept": ("_budget.py", "message.tool_call_id not in calls:", "False:"),
}  # fmt: skip


# The barrier a retry writes before its WAIT runs only with a durability setting, which
# fakeredis cannot confirm: its breaks must fail the unit tests of a primary and its
# replica (tests/unit/test_durability.py), on a throwaway redis-server. One more break,
# a barrier that writes nothing, only Valkey's WAIT notices (see that file).
BARRIER_BREAKS = {
    "barrier: the index's expiry not extended": ("append.lua", "    if ttl == '0' or (left >= 0 and left < tonumber(ttl)) then\n", "    if ttl == '0' then\n"),
    "barrier: the index's expiry cut short": ("append.lua", "if ttl == '0' or (left >= 0 and left < tonumber(ttl)) then", "if ttl == '0' or (left >= 0) then"),
    "barrier: the retry window's expiry not written": ("append.lua", "again('h', H) or (S and again('s', S))", "again('h', H) or (S and nil)"),
    "barrier: left expiring when PERSIST is refused": ("append.lua", "command, reply = 'PERSIST', redis.pcall('PERSIST', target)\n      if", "command, reply = 'PERSIST', 1\n      if"),
    "barrier: written without a durability setting": ("_service.py", "                if self._durability is None:\n                    return None\n", ""),
    "barrier: written without a durability setting (asyncio)": ("_async.py", "                if self._durability is None:\n                    return None\n", ""),
}  # fmt: skip


def run_tests(library: Path, target: str = "features") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEST_REDIS_")}
    env["PYTHONPATH"] = str(library.parent)
    return subprocess.run(
        [sys.executable, "-m", "pytest", target, "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip


def copy_library(tmp_path: Path) -> Path:
    copy = tmp_path / "src" / "chat_memory"
    shutil.copytree(LIBRARY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def broken_copy(tmp_path: Path, name: str, filename: str, old: str, new: str) -> Path:
    library = copy_library(tmp_path)
    source = (library / filename).read_text(encoding="utf-8")
    assert source.count(old) == 1, f"the break {name!r} no longer applies to {filename}"
    (library / filename).write_text(source.replace(old, new), encoding="utf-8")
    return library


DURABILITY_TESTS = str(Path(__file__).with_name("test_durability.py"))
TARGETS = {"the acceptance suite": "features", "the durability tests": DURABILITY_TESTS}
# Each break, with the tests that must catch it.
CAUGHT_BY = {
    **{name: ("features", *spec) for name, spec in BREAKS.items()},
    **{name: (DURABILITY_TESTS, *spec) for name, spec in BARRIER_BREAKS.items()},
}
assert len(CAUGHT_BY) == len(BREAKS) + len(BARRIER_BREAKS), "a break's name is used twice"


@pytest.mark.parametrize("target", list(TARGETS.values()), ids=list(TARGETS))
def test_the_unbroken_library_passes(tmp_path: Path, target: str) -> None:
    result = run_tests(copy_library(tmp_path), target)
    assert result.returncode == 0, result.stdout[-3000:]


@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_the_tests_fail_when_the_library_is_broken(tmp_path: Path, name: str) -> None:
    target, *spec = CAUGHT_BY[name]
    result = run_tests(broken_copy(tmp_path, name, *spec), target)
    assert result.returncode == 1, f"the tests did not catch: {name}\n{result.stdout[-3000:]}"
    assert " failed" in result.stdout
