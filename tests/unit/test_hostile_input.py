"""Hypothesis properties: any input is stored exactly or refused whole; any bad entry is named.

Text strategies include lone surrogates (category Cs), which Python strings can
hold and UTF-8 cannot: they must be refused, never half-written.
"""

import json
from typing import Any

import fakeredis
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from redis.crc import key_slot

from chat_memory import (
    CorruptEntryError,
    InvalidInputError,
    MemoryService,
    Message,
    ToolCall,
)

any_text = st.text(st.characters(exclude_categories=()), max_size=200)
ids = st.text(st.characters(exclude_categories=()), min_size=1, max_size=128)
session_ids = st.text(st.characters(exclude_categories=()), min_size=1, max_size=256)
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _memory(decode: bool = False) -> tuple[fakeredis.FakeRedis, MemoryService]:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=decode)
    return client, MemoryService(client)


def _is_utf8(*texts: str | None) -> bool:
    try:
        for text in texts:
            if text is not None:
                text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@fast
@given(content=any_text, message_id=ids, name=st.none() | ids, decode=st.booleans())
def test_any_message_round_trips_exactly_or_is_refused_with_nothing_written(
    content: str, message_id: str, name: str | None, decode: bool
) -> None:
    client, memory = _memory(decode)
    try:
        stored = memory.add_message("s", "user", content, message_id=message_id, name=name)
    except InvalidInputError:
        assert not _is_utf8(content, message_id, name)
        assert client.keys() == []
        return
    assert _is_utf8(content, message_id, name)
    assert memory.get_messages("s") == [stored]
    assert (stored.content, stored.id, stored.name) == (content, message_id, name)


@fast
@given(call_id=ids, tool=ids, arguments=any_text)
def test_any_tool_call_round_trips_exactly_or_is_refused(
    call_id: str, tool: str, arguments: str
) -> None:
    client, memory = _memory()
    call = ToolCall(call_id, tool, arguments)
    try:
        memory.add_message("s", "assistant", None, tool_calls=[call])
    except InvalidInputError:
        assert not _is_utf8(call_id, tool, arguments)
        assert client.keys() == []
        return
    assert memory.get_messages("s")[0].tool_calls == (call,)


@fast
@given(first=session_ids, second=session_ids)
def test_sessions_never_collide_and_keys_stay_in_their_namespace_and_hash_tag(
    first: str, second: str
) -> None:
    _, memory = _memory()
    try:
        keys = memory.keys.all(first)
    except InvalidInputError:
        assert not _is_utf8(first)
        return
    for key in keys:
        assert key.startswith("chat:session:{")
        tag = key[len("chat:session:{") : key.index("}")]
        assert "{" not in tag
        assert key.endswith(("}:history", "}:ids", "}:seen", "}:meta"))
        assert key.count("}") == 1
    memory.add_message(first, "user", "first")
    if second != first and _is_utf8(second):
        memory.add_message(second, "user", "second")
        assert memory.get_context(first) == [{"role": "user", "content": "first"}]
        assert memory.get_context(second) == [{"role": "user", "content": "second"}]


corrupt_entries = st.one_of(
    st.binary().filter(lambda b: not _decodes_to_object(b)),
    st.binary(min_size=1).map(lambda b: b'{"role":"user","content":"' + b"\xff" + b + b'"}'),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=6,
    ).map(lambda value: json.dumps(value).encode()),
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "wizard", 42]), "content": st.integers() | st.none()}
    ).map(lambda value: json.dumps(value).encode()),
)


def _decodes_to_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw.decode("utf-8")), dict)
    except ValueError:
        return False


@fast
@given(entry=corrupt_entries, decode=st.booleans(), before=st.integers(0, 3))
def test_every_kind_of_corrupt_entry_is_named_by_session_and_position(
    entry: bytes, decode: bool, before: int
) -> None:
    client, memory = _memory(decode)
    for n in range(before):
        memory.add_message("s", "user", str(n))
    assume(not _valid_plain_entry(entry))
    client.rpush(memory.keys.history("s"), entry)
    with pytest.raises(CorruptEntryError) as corrupt:
        memory.get_messages("s")
    assert (corrupt.value.session_id, corrupt.value.position) == ("s", before)


def _valid_plain_entry(raw: bytes) -> bool:
    """Whether ``raw`` happens to be a well-formed entry of the earlier plain shape."""
    try:
        data: Any = json.loads(raw)
        Message(role=data["role"], content=data["content"])
    except (ValueError, TypeError, KeyError, InvalidInputError):
        return False
    return set(data) == {"role", "content"}


@pytest.mark.parametrize("decode", [False, True])
def test_a_lone_surrogate_in_a_session_id_is_refused(decode: bool) -> None:
    client, memory = _memory(decode)
    with pytest.raises(InvalidInputError):
        memory.add_message("ada\udc00", "user", "hi")
    assert client.keys() == []


@fast
@given(first=session_ids, second=session_ids, session=session_ids)
def test_users_never_share_keys_and_forgetting_one_leaves_the_other_whole(
    first: str, second: str, session: str
) -> None:
    assume(first != second and _is_utf8(first, second, session))
    client, memory = _memory()
    for user in (first, second):
        memory.for_user(user).add_message(session, "user", f"I am {user}")
    keys = {
        user: [k for k in client.scan_iter() if user_prefix(memory, user) in k]
        for user in (first, second)
    }
    for own in keys.values():
        assert len(own) == 4  # history, seen, meta and the index
        assert len({key_slot(k) for k in own}) == 1  # one script can change them all
    assert not set(keys[first]) & set(keys[second])
    removed = memory.forget_user(first)
    # the session's 3 keys, and the index
    assert (removed.sessions, removed.keys_deleted) == ([session], 4)
    assert memory.for_user(first).list_sessions() == []
    assert [s.session_id for s in memory.for_user(second).list_sessions()] == [session]
    context = memory.for_user(second).get_context(session)
    assert context == [{"role": "user", "content": f"I am {second}"}]
    assert sorted(client.scan_iter()) == sorted(keys[second])


def user_prefix(memory: MemoryService, user: str) -> bytes:
    return memory.for_user(user).keys.session_prefix().rsplit(":session:", 1)[0].encode() + b":"
