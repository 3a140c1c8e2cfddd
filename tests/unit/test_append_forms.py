"""The append script's short form (the usual call) does what its long form does (issue 24).

The usual call, one message of a plain session, is sent five arguments and takes the
script's short way; the long form of the same call takes the general way. For every
state a session can be in, both must answer the same and leave the same keys behind.
"""

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import fakeredis
import pytest
import redis

from chat_memory import MemoryService, Message
from chat_memory._core import APPEND_LUA

_TTL_SECONDS = 60


def _clock() -> float:
    return 1796205600.0  # both runs stamp the same times


def _entry(message_id: str, text: str) -> str:
    return f'{{"v":1,"id":"{message_id}","role":"user","content":"{text}","created_at":1.0}}'


def _at_limit(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    for n in range(3):
        memory.add_message("s", "user", f"message {n}", message_id=f"m-{n}")


def _over_limit(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    # Written by a memory with a longer limit: the next append drops more than one entry.
    wider = MemoryService(
        client, max_history=6, idempotency_window=6, ttl=_TTL_SECONDS, clock=_clock
    )
    for n in range(6):
        wider.add_message("s", "user", f"message {n}", message_id=f"m-{n}")


def _unreadable_ids(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    _at_limit(client, memory)
    client.lpush(memory.keys.history("s"), "plain text, no id", '{"role":"user","content":"x"}')


def _without_marker(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    # 0.1's layout: entries and a list of their ids, no hash.
    client.rpush(memory.keys.history("s"), _entry("m-0", "hi"))
    client.rpush(memory.keys.ids("s"), "m-0")


def _retried(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    memory.add_message("s", "user", "hello", message_id="m-new")


def _conflicting(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    memory.add_message("s", "user", "other words", message_id="m-new")


def _metadata(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    memory.set_metadata("s", {"title": "Paris"})
    _at_limit(client, memory)


def _metadata_without_marker(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    memory.set_metadata("s", {"title": "Paris"})
    _without_marker(client, memory)
    for key in client.keys("*"):  # every key's expiry must be set again by the append
        client.pexpire(key, 5000)


def _history_of_another_type(client: fakeredis.FakeRedis, memory: MemoryService) -> None:
    client.set(memory.keys.history("s"), "another service's value")


STATES: dict[str, Callable[[fakeredis.FakeRedis, MemoryService], None]] = {
    "a new session": lambda client, memory: None,
    "a session at its limit": _at_limit,
    "a session over its limit by three": _over_limit,
    "entries without an id": _unreadable_ids,
    "a session 0.1 wrote": _without_marker,
    "a retry": _retried,
    "an id stored with other content": _conflicting,
    "a session with metadata": _metadata,
    "a session 0.1 wrote, with metadata": _metadata_without_marker,
    "a history of another type": _history_of_another_type,
}


def _run(ttl: int | None, state: str, long_form: bool) -> tuple[Any, dict[bytes | str, Any]]:
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, max_history=3, idempotency_window=3, ttl=ttl, clock=_clock)
    STATES[state](client, memory)
    call = memory.core.plan_append("s", [Message("user", "hello", id="m-new", created_at=2.0)])
    args = call.args if long_form else replace(call, checked=True).sent
    try:
        reply: Any = client.eval(APPEND_LUA, len(call.keys), *call.keys, *args)
    except redis.ResponseError as refusal:  # the refusal itself is compared
        reply = str(refusal)
    if reply == 1 and not long_form:  # the short way's bare answer: appended
        reply = [1]
    stored: dict[bytes | str, Any] = {}
    for key in sorted(client.keys("*")):
        kind = client.type(key)
        if kind == b"list":
            value: Any = client.lrange(key, 0, -1)
        elif kind == b"hash":
            value = client.hgetall(key)
        else:
            value = client.get(key)
        left = client.pttl(key)
        stored[key] = (value, left if left < 0 else left > _TTL_SECONDS * 1000 // 2)
    return reply, stored


def test_the_usual_call_is_sent_in_the_short_form_and_others_in_the_long_one() -> None:
    memory = MemoryService(fakeredis.FakeRedis(), max_history=3, idempotency_window=3)
    memory.add_message("s", "user", "the first append asks every permission")
    one = memory.core.plan_append("s", [Message("user", "hi")])
    assert len(one.sent) == 5
    assert one.sent == [one.args[0], one.args[1], *one.args[6:]]
    two = memory.core.plan_append("s", [Message("user", "a"), Message("user", "b")])
    assert two.sent == two.args
    user = memory.for_user("ada").core.plan_append("s", [Message("user", "hi")])
    assert user.sent == user.args
    window = MemoryService(fakeredis.FakeRedis(), max_history=3, idempotency_window=50)
    assert window.core.plan_append("s", [Message("user", "hi")]).sent[5] == b"hsim"


@pytest.mark.parametrize("ttl", [_TTL_SECONDS, None], ids=["ttl", "no expiry"])
@pytest.mark.parametrize("state", sorted(STATES))
def test_the_short_form_answers_and_stores_what_the_long_form_does(
    state: str, ttl: int | None
) -> None:
    short = _run(ttl, state, long_form=False)
    long = _run(ttl, state, long_form=True)
    assert short == long


def test_the_first_append_that_writes_takes_the_general_way_which_asks_every_permission() -> None:
    # The short way asks no permission in advance (append.lua): a service sends the long
    # form until an append has written through the general way, which asks them all.
    memory = MemoryService(fakeredis.FakeRedis(), max_history=3, idempotency_window=3)
    first = memory.core.plan_append("s", [Message("user", "hi", id="m-1")])
    assert first.sent == first.args
    memory.add_message("s", "user", "hi", message_id="m-1")
    memory.add_message("s", "user", "hi", message_id="m-1")  # a retry: it wrote nothing
    assert len(memory.core.plan_append("s", [Message("user", "hi")]).sent) == 5


def test_a_retry_that_writes_nothing_does_not_count_as_the_check() -> None:
    client = fakeredis.FakeRedis()
    MemoryService(client, max_history=3, idempotency_window=3).add_message(
        "s", "user", "hi", message_id="m-1"
    )
    memory = MemoryService(client, max_history=3, idempotency_window=3)
    memory.add_message("s", "user", "hi", message_id="m-1")
    assert memory.core.plan_append("s", [Message("user", "hi")]).sent[5] == b"hsm"


def test_an_append_that_declared_only_some_keys_does_not_count_as_the_check() -> None:
    # Written in steps while a cluster slot migrates, the general way asked only about the
    # keys it declared: the permissions on the hash and the metadata are still unknown.
    memory = MemoryService(fakeredis.FakeRedis(), max_history=3, idempotency_window=3)
    call = memory.core.plan_append("s", [Message("user", "hi")])
    memory.core.finish_append(call.declaring([memory.keys.history("s")]), [1])
    assert not memory.core.checked
    memory.core.finish_append(call, [1])
    assert memory.core.checked


def test_a_short_form_append_does_not_count_as_the_check() -> None:
    # Its short way asks nothing: after a failed append reset the flag, an append planned
    # earlier (another task's) must not set it again.
    memory = MemoryService(fakeredis.FakeRedis(), max_history=3, idempotency_window=3)
    memory.add_message("s", "user", "the check")
    call = memory.core.plan_append("s", [Message("user", "hi")])
    assert call.short
    memory.core.checked = False
    memory.core.finish_append(call, [1])
    assert not memory.core.checked


def test_the_short_ways_acl_test_is_the_general_ways() -> None:
    # append.lua tells an ACL refusal by its wording in two places: the short way's undo
    # (copied there, so that the usual append builds no function) and refused().
    tests = re.findall(r"if (string\.find\(\w+, '\^NOPERM'\).*?) then", APPEND_LUA, re.DOTALL)
    assert len(tests) == 2
    short, general = (re.sub(r"\b(why|message)\b", "text", " ".join(t.split())) for t in tests)
    assert short == general
    assert "'ACL failure'" in short
    assert '"can\'t run this command"' in short
