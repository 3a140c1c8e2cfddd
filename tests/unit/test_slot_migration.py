"""Appends while a session's cluster slot is migrated (issue 24): what the client and script do.

On a real cluster, features/production/cluster.feature holds a slot half-way
between two nodes. These pin the parts underneath: after redis-py gives up on
TRYAGAIN ("TTL exhausted."), the append declares only the keys the session has,
and the script refuses, writing nothing, a session with history whose hash it
was not given.
"""

from typing import Any

import fakeredis
import pytest
import redis

from chat_memory import MemoryService, Message, StorageUnavailableError
from chat_memory import _ops as ops
from chat_memory._core import APPEND_LUA
from chat_memory._errors import script_error


def _drive(operation: Any, answer: Any) -> list[Any]:
    """Run an operation, answering each request with ``answer(request)``; return the requests."""
    requests: list[Any] = []
    reply = None
    failure: Exception | None = None
    while True:
        try:
            request = operation.throw(failure) if failure else operation.send(reply)
        except StopIteration:
            return requests
        requests.append(request)
        failure = None
        try:
            reply = answer(request)
        except redis.exceptions.RedisError as exc:
            reply, failure = None, exc


def test_after_tryagain_the_append_declares_only_the_keys_the_session_has() -> None:
    memory = MemoryService(fakeredis.FakeRedis(), max_history=20)
    history, _, seen, meta = memory.keys.all("s")
    scripts: list[tuple[str, ...]] = []

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            scripts.append(request.keys)
            if len(scripts) == 1:
                raise redis.exceptions.ClusterError("TTL exhausted.")
            return [1]
        assert request.args[0] == "EXISTS"
        return 1 if request.args[1] == seen else 0

    requests = _drive(ops.add_messages(memory.core, "s", [Message("user", "hi")]), answer)
    assert scripts == [(history, seen, meta), (history, seen)]
    assert [r.args for r in requests if isinstance(r, ops.Command)] == [
        ("EXISTS", seen),
        ("EXISTS", meta),
    ]
    narrowed = requests[-1]
    assert narrowed.args[5] == b"hs"


def test_a_second_tryagain_says_nothing_was_written() -> None:
    memory = MemoryService(fakeredis.FakeRedis())

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            raise redis.exceptions.ClusterError("TTL exhausted.")
        return 1

    with pytest.raises(StorageUnavailableError, match="nothing was written"):
        _drive(ops.add_messages(memory.core, "s", [Message("user", "hi")]), answer)


def _append(client: fakeredis.FakeRedis, memory: MemoryService, text: str, *keep: str) -> Any:
    call = memory.core.plan_append("s", [Message("user", text)])
    call = call.declaring(keep)
    return client.eval(APPEND_LUA, len(call.keys), *call.keys, *call.args)


def test_a_new_session_is_written_with_its_history_alone_and_its_hash_made_later() -> None:
    client = fakeredis.FakeRedis()
    memory = MemoryService(client)
    assert _append(client, memory, "first") == [1]
    stored = memory.get_messages("s")
    assert not client.exists(memory.keys.seen("s"))
    memory.add_messages("s", stored)  # the hash is made from the history: a retry is known
    memory.add_message("s", "user", "second")
    assert [m["content"] for m in memory.get_context("s")] == ["first", "second"]


def test_a_session_with_history_is_refused_without_its_hash_and_nothing_is_written() -> None:
    client = fakeredis.FakeRedis()
    memory = MemoryService(client)
    memory.add_message("s", "user", "first")
    with pytest.raises(redis.ResponseError, match="CHATMEM_MOVING") as refused:
        _append(client, memory, "second")
    error = script_error(refused.value, keys=(), messages=())
    assert isinstance(error, StorageUnavailableError)
    assert "nothing was written" in str(error)
    assert [m["content"] for m in memory.get_context("s")] == ["first"]
