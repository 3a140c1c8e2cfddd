"""Steps about the storage contract: the exact keys and entries other services rely on.

These are the only steps that look at Redis directly; everywhere else the
scenarios go through the memory's public API.

Usage::

    Then the session's history is stored under the key "chat:session:{alice}:history"
    Then stored entry 1 of the session is:
      \"\"\"
      {"v":1,"id":"m-1","role":"user","content":"hi","created_at":1796205600.0}
      \"\"\"
    Given another service stored this entry for the session:
      \"\"\"
      {"role": "user", "content": "hi"}
      \"\"\"
    Then the session's keys expire in 1800 seconds
    Then nothing is stored
    Given the previous version stored message "m-1" saying "Book a table for two."
    When the previous version sends message "m-2" saying "Friday at eight, please."
    Given version 0.1 stored message "m-1" saying "Book a table for two."
    Given a broken writer cut off the stored message "My booking reference is K7Q2."
    Given another service overwrote the stored message "My booking reference is K7Q2." with another kind of value
    Then the message is refused or stored apart, and the other service's value stays
    Then taking back the newest message fails, and the damaged message stays

The steps about damaged data work on any store (``readable_storage``): they find
the value holding a message's text among the scenario's keys, whatever the
store's layout, and damage it there.

Key names in these steps use the default namespace ``chat``. On a shared real
server each scenario has a namespace of its own; the steps then read the
expected key with that namespace in place of ``chat`` (and nothing else).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence

import pytest
import redis
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    DEFAULT_NAMESPACE,
    CorruptEntryError,
    MemoryService,
    Message,
    WrongKeyTypeError,
)
from chat_memory._codec import encode_for_storage
from chat_memory_suite.adapter import AdaptedMemory, requires
from chat_memory_suite.backends import RedisClient, scenario_keys
from chat_memory_suite.damage import (
    StoredValue,
    as_text,
    cut_off,
    holds,
    left_as_it_was,
    not_utf8,
    overwrite_with_other_kind,
    rewrite,
    values_holding,
)
from chat_memory_suite.previous import previous_append
from chat_memory_suite.tables import reads_table, rows

from .conversation import Attempt

REQUIRES = ("storage_contract",)
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""


def _in_scenario_namespace(key: str, namespace: str) -> str:
    prefix = f"{DEFAULT_NAMESPACE}:"
    assert key.startswith(prefix), f"contract keys start with the default namespace: {key!r}"
    return f"{namespace}:{key.removeprefix(prefix)}"


def _remembered(redis_client: RedisClient, seen_key: str) -> list[str]:
    """The message ids in the session's hash (its field '' says it holds every entry's)."""
    return [field for field in map(as_text, redis_client.hkeys(seen_key)) if field]


@given("another service stored this entry for the session:")
def another_service_stored(
    redis_client: RedisClient, memory: MemoryService, session_id: str, docstring: str
) -> None:
    """Write an entry the way another service (or an older version) would, byte for byte.

    Given another service stored this entry for the session:
    """
    redis_client.rpush(memory.keys.history(session_id), docstring.encode("utf-8"))


@given(parsers.parse('version 0.1 stored message "{message_id}" saying "{text}"'))
def version_0_1_stored(
    redis_client: RedisClient,
    memory: MemoryService,
    session_id: str,
    sent: list[Message],
    message_id: str,
    text: str,
) -> None:
    """A session as chat-memory 0.1 left it: the entry, and its id in a list (no hash of ids).

    Given version 0.1 stored message "m-1" saying "Book a table for two."
    """
    message = Message("user", text, id=message_id, created_at=time.time())
    history, ids, _, _ = memory.keys.all(session_id)
    redis_client.rpush(history, encode_for_storage(message).entry)
    redis_client.rpush(ids, message_id.encode("utf-8"))
    sent.append(message)


@given(parsers.parse('the previous version stored message "{message_id}" saying "{text}"'))
@when(parsers.parse('the previous version sends message "{message_id}" saying "{text}"'))
def previous_version_stores(
    redis_client: RedisClient,
    memory: MemoryService,
    session_id: str,
    sent: list[Message],
    message_id: str,
    text: str,
) -> None:
    """A server still running the previous version stores the user's message (a rolling upgrade).

    That version remembered 1,000 ids in a list beside the hash of fingerprints;
    the entry is the same. A message it sends again is the same message, time included.

    Given the previous version stored message "m-1" saying "Book a table for two."
    When the previous version sends message "m-2" saying "Friday at eight, please."
    """
    earlier = [m for m in sent if m.id == message_id]
    message = (
        earlier[0] if earlier else Message("user", text, id=message_id, created_at=time.time())
    )
    if not earlier:
        sent.append(message)
    previous_append(
        redis_client,
        memory.keys,
        session_id,
        [message],
        max_history=memory.max_history,
        ttl_ms=memory.core.ttl_ms,
        now=time.time(),
    )


@given(parsers.parse('another service stored the text "{text}" under the session\'s history key'))
def another_service_stored_text(
    redis_client: RedisClient, memory: MemoryService, session_id: str, text: str
) -> None:
    """Another service wrote a plain text value where the session's history belongs.

    Given another service stored the text "hello" under the session's history key
    """
    redis_client.set(memory.keys.history(session_id), text.encode("utf-8"))


@given("the other service's value was deleted")
def other_service_value_deleted(
    redis_client: RedisClient, memory: MemoryService, session_id: str
) -> None:
    """What another service wrote under the session's keys is gone again.

    Given the other service's value was deleted
    """
    redis_client.delete(*memory.keys.all(session_id))


@then(parsers.parse('the session\'s history key still holds the text "{text}"'))
def history_key_still_holds(
    redis_client: RedisClient, memory: MemoryService, session_id: str, text: str
) -> None:
    """The other service's value is untouched, and the session has no other key.

    Then the session's history key still holds the text "hello"
    """
    history, *others = memory.keys.all(session_id)
    assert redis_client.get(history) == text.encode("utf-8")
    assert redis_client.exists(*others) == 0


@given(parsers.parse("another service stored a {kind} under the session's {which} key"))
def another_service_stored_kind(
    redis_client: RedisClient, memory: MemoryService, session_id: str, kind: str, which: str
) -> None:
    """Another service wrote a value of another Redis type under one of the session's keys.

    Given another service stored a hash under the session's ids key
    """
    key = _session_key(memory, session_id, which)
    writers = {
        "string": lambda: redis_client.set(key, b"x"),
        "hash": lambda: redis_client.hset(key, b"f", b"x"),
        "list": lambda: redis_client.rpush(key, b"x"),
        "set": lambda: redis_client.sadd(key, b"x"),
    }
    assert kind in writers, f"the kind is one of {', '.join(writers)}, not {kind!r}"
    writers[kind]()


def _session_key(memory: MemoryService, session_id: str, which: str) -> str:
    keys = dict(zip(("history", "ids", "seen", "meta"), memory.keys.all(session_id), strict=True))
    assert which in keys, f"a session's keys are {', '.join(keys)}, not {which!r}"
    return keys[which]


def _names_key(error: BaseException | None, key: str, kind: str) -> None:
    assert isinstance(error, WrongKeyTypeError), f"not a wrong-type error: {error!r}"
    assert (error.key, error.key_type) == (key, kind), f"the error names {error.key!r}: {error}"


@then(parsers.parse("the refusal names the session's {which} key as holding a {kind}"))
def refusal_names_key(
    attempt: Attempt, memory: MemoryService, session_id: str, which: str, kind: str
) -> None:
    """The write was refused naming exactly the key that holds another type, and that type.

    Then the refusal names the session's ids key as holding a hash
    """
    _names_key(attempt.error, _session_key(memory, session_id, which), kind)


@then(
    parsers.parse("loading the context fails, naming the session's {which} key as holding a {kind}")
)
def load_names_key(memory: MemoryService, session_id: str, which: str, kind: str) -> None:
    """Reading the session fails, naming exactly the key that holds another type, and that type.

    Then loading the context fails, naming the session's history key as holding a string
    """
    with pytest.raises(WrongKeyTypeError) as failure:
        memory.get_context(session_id)
    _names_key(failure.value, _session_key(memory, session_id, which), kind)


@then(
    parsers.parse(
        "taking back the newest message fails, naming the session's {which} key as holding a {kind}"
    )
)
@requires("pop_message")
def take_back_names_key(memory: MemoryService, session_id: str, which: str, kind: str) -> None:
    """Taking back fails the same way, and removes nothing.

    Then taking back the newest message fails, naming the session's history key as holding a string
    """
    with pytest.raises(WrongKeyTypeError) as failure:
        memory.pop_message(session_id)
    _names_key(failure.value, _session_key(memory, session_id, which), kind)


@then(
    parsers.re(
        r"(?P<action>exporting the session|reading the session's metadata) fails, naming the"
        r" session's (?P<which>history|ids|seen|meta) key as holding a"
        r" (?P<kind>string|hash|list|set)"
    )
)
@requires("export")
def export_names_key(
    memory: MemoryService, session_id: str, action: str, which: str, kind: str
) -> None:
    """Exporting the session, or reading its metadata, fails naming the key and its type.

    Then exporting the session fails, naming the session's meta key as holding a string
    """
    read = memory.export_session if action == "exporting the session" else memory.get_metadata
    with pytest.raises(WrongKeyTypeError) as failure:
        read(session_id)
    _names_key(failure.value, _session_key(memory, session_id, which), kind)


@given("another service stored an entry that is not UTF-8 for the session")
def another_service_stored_non_utf8(
    redis_client: RedisClient, memory: MemoryService, session_id: str
) -> None:
    """An entry whose bytes are not UTF-8 text (e.g. written as Latin-1 by another service).

    Given another service stored an entry that is not UTF-8 for the session
    """
    entry = '{"role": "user", "content": "café"}'.encode("latin-1")
    redis_client.rpush(memory.keys.history(session_id), entry)


@then(parsers.parse('the session\'s history is stored under the key "{key}"'))
def history_is_stored_under(
    redis_client: RedisClient, memory: MemoryService, session_id: str, namespace: str, key: str
) -> None:
    """The session's entries are under exactly this key, as a list.

    Then the session's history is stored under the key "chat:session:{alice}:history"
    """
    expected = _in_scenario_namespace(key, namespace)
    assert memory.keys.history(session_id) == expected
    assert as_text(redis_client.type(expected)) == "list"


@then(parsers.parse("stored entry {number:d} of the session is:"))
def stored_entry_is(
    redis_client: RedisClient, memory: MemoryService, session_id: str, number: int, docstring: str
) -> None:
    """The session's entry at this position (1 is the oldest) is exactly this text.

    Then stored entry 1 of the session is:
    """
    entry = redis_client.lindex(memory.keys.history(session_id), number - 1)
    assert entry is not None, f"the session has no entry {number}"
    assert as_text(entry) == docstring


@then(parsers.parse('the session remembers the id "{message_id}" under the key "{key}" as:'))
def id_remembered_as(
    redis_client: RedisClient,
    memory: MemoryService,
    session_id: str,
    namespace: str,
    message_id: str,
    key: str,
    docstring: str,
) -> None:
    """The session's hash of remembered ids holds this fingerprint for the id, exactly.

    Then the session remembers the id "m-1" under the key "chat:session:{alice}:seen" as:
    """
    expected = _in_scenario_namespace(key, namespace)
    assert memory.keys.seen(session_id) == expected
    stored = redis_client.hget(expected, message_id)
    assert stored is not None, f"the id {message_id!r} is not remembered"
    assert as_text(stored) == docstring


@then(parsers.re(r'the session remembers exactly the ids (?P<ids>"[^"]+"(?:(?:, | and )"[^"]+")*)'))
def remembers_exactly_ids(
    redis_client: RedisClient, memory: MemoryService, session_id: str, ids: str
) -> None:
    """The session's remembered ids are exactly these, oldest first, each with a fingerprint.

    With the default retry window they are the ids of the messages in the history; with a
    longer one, the session's list of ids.

    Then the session remembers exactly the ids "m-2" and "m-3"
    """
    expected = ids.strip('"').replace('" and "', '", "').split('", "')
    history, ids_key, seen_key, _ = memory.keys.all(session_id)
    if memory.core.keeps_id_list:  # a retry window longer than the history: listed in order
        listed = [as_text(i) for i in redis_client.lrange(ids_key, 0, -1)]
    else:  # the history is the window: the ids are its entries'
        listed = [json.loads(entry)["id"] for entry in redis_client.lrange(history, 0, -1)]
    assert listed == expected
    assert sorted(_remembered(redis_client, seen_key)) == sorted(expected)


@then("the session remembers the ids of exactly the messages it holds, and keeps no list of ids")
def remembers_ids_of_its_messages(
    redis_client: RedisClient, memory: MemoryService, session_id: str
) -> None:
    """The session's hash of ids holds the id of each stored entry, and no other; no ids list.

    Then the session remembers the ids of exactly the messages it holds, and keeps no list of ids
    """
    history, ids_key, seen_key, _ = memory.keys.all(session_id)
    held = sorted(json.loads(entry)["id"] for entry in redis_client.lrange(history, 0, -1))
    assert sorted(_remembered(redis_client, seen_key)) == held
    assert not redis_client.exists(ids_key), "the session keeps a list of ids"


@then(parsers.parse("the session's keys expire in {seconds:d} seconds"))
def keys_expire_in(
    redis_client: RedisClient, memory: MemoryService, session_id: str, seconds: int
) -> None:
    """Every key of the session carries this time to live on the server.

    Then the session's keys expire in 1800 seconds
    """
    keys = _stored_keys(redis_client, memory, session_id)
    remaining = [int(redis_client.pttl(key)) / 1000 for key in keys]
    assert remaining == [pytest.approx(seconds, abs=1)] * len(keys)


@then("the session's keys never expire")
def keys_never_expire(redis_client: RedisClient, memory: MemoryService, session_id: str) -> None:
    """The session's keys exist and carry no time to live.

    Then the session's keys never expire
    """
    keys = _stored_keys(redis_client, memory, session_id)
    assert [int(redis_client.pttl(key)) for key in keys] == [-1] * len(keys)


def _stored_keys(redis_client: RedisClient, memory: MemoryService, session_id: str) -> list[str]:
    """The session's keys that exist (``meta`` only once metadata was set); at least history."""
    keys = [key for key in memory.keys.all(session_id) if redis_client.exists(key)]
    assert memory.keys.history(session_id) in keys, f'session "{session_id}" has no history'
    return keys


def session_keys(
    redis_client: RedisClient, memory: MemoryService, namespace: str, session_id: str
) -> list[str]:
    """The keys the session is stored under now: chat-memory's by name, another store's found.

    Another store's are the scenario's keys whose names hold the session id, whole (not
    as part of a longer id: "user-1" is not in "user-10").
    """
    if not isinstance(memory, AdaptedMemory):
        return [key for key in memory.keys.all(session_id) if redis_client.exists(key)]
    whole = re.compile(rf"(?<![\w.-]){re.escape(session_id)}(?![\w.-])")
    found = [as_text(key) for key in scenario_keys(redis_client, namespace)]
    return [key for key in found if whole.search(key)]


def _held_keys(
    redis_client: RedisClient, memory: MemoryService, namespace: str, session_id: str
) -> list[str]:
    """The keys the session is stored under, some at least (chat-memory's history among them)."""
    if not isinstance(memory, AdaptedMemory):
        return _stored_keys(redis_client, memory, session_id)
    keys = session_keys(redis_client, memory, namespace, session_id)
    assert keys, f'session "{session_id}" is stored under no key that names it'
    return keys


@then(parsers.parse('the key "{key}" holds the hash:'))
@reads_table("field", "value")
def key_holds_hash(
    redis_client: RedisClient, namespace: str, key: str, datatable: Sequence[Sequence[str]]
) -> None:
    """The key is a hash with exactly these fields and values.

    Then the key "chat:session:{alice}:meta" holds the hash:
    """
    stored = redis_client.hgetall(_in_scenario_namespace(key, namespace))
    actual = {as_text(field): as_text(value) for field, value in stored.items()}
    assert actual == {r["field"]: r["value"] for r in rows(datatable, ("field", "value"))}


@then(parsers.parse('the key "{key}" holds the sorted set:'))
@reads_table("member", "score")
def key_holds_sorted_set(
    redis_client: RedisClient, namespace: str, key: str, datatable: Sequence[Sequence[str]]
) -> None:
    """The key is a sorted set with exactly these members and scores, lowest score first.

    Then the key "chat:user:{ada@example.com}:sessions" holds the sorted set:
    """
    stored: list[tuple[bytes, float]] = redis_client.zrange(  # type: ignore[assignment]
        _in_scenario_namespace(key, namespace), 0, -1, withscores=True
    )
    actual = [{"member": as_text(member), "score": f"{score:.0f}"} for member, score in stored]
    assert actual == rows(datatable, ("member", "score"))


@then("nothing is stored")
def nothing_is_stored(redis_client: RedisClient, namespace: str) -> None:
    """No key at all was written for the scenario.

    Then nothing is stored
    """
    assert scenario_keys(redis_client, namespace) == []


@then("those sessions are stored on every node of the cluster")
@requires()  # any store: its keys are found by the session's id
def sessions_on_every_node(
    redis_client: RedisClient, memory: MemoryService, namespace: str, crowd_sessions: list[str]
) -> None:
    """The sessions' keys are spread over several hash slots and every primary node.

    Then those sessions are stored on every node of the cluster
    """
    assert isinstance(redis_client, redis.RedisCluster), "this step needs a Redis Cluster"
    keys = [_held_keys(redis_client, memory, namespace, session)[0] for session in crowd_sessions]
    slots = {redis_client.keyslot(key) for key in keys}
    nodes = {redis_client.get_node_from_key(key).name for key in keys}
    assert len(slots) > 1
    assert nodes == {node.name for node in redis_client.get_primaries()}


@then("all of the session's keys are in one hash slot")
@requires()  # any store: its keys are found by the session's id
def keys_in_one_slot(
    redis_client: RedisClient, memory: MemoryService, namespace: str, session_id: str
) -> None:
    """The server puts every key of the session in the same slot, as one script needs.

    Then all of the session's keys are in one hash slot
    """
    keys = _held_keys(redis_client, memory, namespace, session_id)
    slots = {int(redis_client.execute_command("CLUSTER KEYSLOT", key)) for key in keys}
    assert len(slots) == 1


@pytest.fixture
def damaged() -> list[StoredValue]:
    """What a broken writer or another service left where the store keeps a message."""
    return []


@given(
    parsers.re(
        r"a broken writer (?P<how>cut off|put bytes that are not UTF-8 into|replaced)"
        r' the stored message "(?P<text>[^"]+)"(?: with "(?P<other>[^"]*)")?'
    )
)
@requires("readable_storage")
def broken_writer_damaged(
    redis_client: RedisClient,
    namespace: str,
    damaged: list[StoredValue],
    how: str,
    text: str,
    other: str | None,
) -> None:
    """A writer with a bug (or one stopped halfway) damaged a message where the store keeps it.

    Given a broken writer cut off the stored message "My booking reference is K7Q2."
    Given a broken writer put bytes that are not UTF-8 into the stored message "My booking reference is K7Q2."
    Given a broken writer replaced the stored message "A table for two, please." with "hello"
    """
    assert (other is None) == (how != "replaced"), "only a replaced message is replaced with text"
    for found in values_holding(redis_client, namespace, text):
        if how == "cut off":
            new = cut_off(found, text)
        elif how == "replaced":
            new = (other or "").encode("utf-8")
        else:
            new = not_utf8(found, text)
        damaged.append(rewrite(redis_client, found, new))


@given(
    parsers.parse(
        'another service overwrote the stored message "{text}" with another kind of value'
    )
)
@requires("readable_storage")
def another_service_overwrote(
    redis_client: RedisClient, namespace: str, damaged: list[StoredValue], text: str
) -> None:
    """Another service wrote a value of another Redis type over the key holding a message.

    Given another service overwrote the stored message "My booking reference is K7Q2." with another kind of value
    """
    keys = {found.key for found in values_holding(redis_client, namespace, text)}
    damaged += [overwrite_with_other_kind(redis_client, key) for key in sorted(keys)]


@then("the message is refused or stored apart, and the other service's value stays")
@requires("readable_storage")
def refused_or_apart_and_other_value_stays(
    redis_client: RedisClient,
    memory: MemoryService,
    namespace: str,
    attempt: Attempt,
    damaged: list[StoredValue],
) -> None:
    """The other service's value is still there, and still never expires; the message is not lost.

    chat-memory refuses the message, naming the key (WrongKeyTypeError). Another store
    refuses it with its own error, or, keeping messages under keys of their own, stores
    it apart: its text is then under one of the scenario's keys.

    Then the message is refused or stored apart, and the other service's value stays
    """
    changed = [value for value in damaged if not left_as_it_was(redis_client, value)]
    assert not changed, f"the other service's values were overwritten or set to expire: {changed}"
    if attempt.error is None and isinstance(memory, AdaptedMemory):
        for message in attempt.messages:  # neither refused nor kept would be a silent loss
            values_holding(redis_client, namespace, message.content or "")
        return
    attempt.failure(memory, WrongKeyTypeError)


@then("taking back the newest message fails, and the damaged message stays")
@requires("pop_message", "readable_storage")
def taking_back_damaged_fails(
    redis_client: RedisClient,
    memory: MemoryService,
    session_id: str,
    damaged: list[StoredValue],
) -> None:
    """A newest message that cannot be read is reported, and stays: never removed unread.

    Then taking back the newest message fails, and the damaged message stays
    """
    attempt = Attempt()
    attempt.make(lambda: memory.pop_message(session_id), memory=memory)
    attempt.failure(memory, CorruptEntryError)
    gone = [value for value in damaged if not holds(redis_client, value)]
    assert not gone, f"taking back removed the damaged message unread: {gone}"
