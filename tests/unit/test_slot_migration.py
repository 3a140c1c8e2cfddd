"""Appends while a session's cluster slot is migrated (issue 24): what the client and script do.

On a real cluster, features/production/cluster.feature holds a slot half-way
between two nodes. These pin the parts underneath: after redis-py gives up on
TRYAGAIN ("TTL exhausted."), the append declares only the keys the session has
(a brand-new or a user's session: in steps, one node's keys each), and the
script refuses, writing nothing, a session with history whose hash it was not
given.
"""

import json
import re
from collections.abc import Mapping
from typing import Any

import fakeredis
import pytest
import redis

from chat_memory import (
    ChatMemoryError,
    MemoryService,
    Message,
    MessageIdConflictError,
    NotReplicatedError,
    PermissionDeniedError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
    WrongKeyTypeError,
)
from chat_memory import _ops as ops
from chat_memory._core import APPEND_LUA
from chat_memory._errors import script_error
from chat_memory_suite.previous import previous_append
from chat_memory_suite.servers import ThrowawayServer


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


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
        except (redis.exceptions.RedisError, NotReplicatedError) as exc:
            reply, failure = None, exc  # what the shells throw into an operation


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
        assert request.args[0] == "TYPE"
        return {history: "list", seen: "hash"}.get(request.args[1], "none")

    requests = _drive(ops.add_messages(memory.core, "s", [Message("user", "hi")]), answer)
    assert scripts == [(history, seen, meta), (history, seen)]
    assert [r.args for r in requests if isinstance(r, ops.Command)] == [
        ("TYPE", history),
        ("TYPE", seen),
        ("TYPE", meta),
    ]
    narrowed = requests[-1]
    assert narrowed.args[5] == b"hs"


def test_a_second_tryagain_says_the_write_may_have_happened_and_hands_back_the_messages() -> None:
    memory = MemoryService(fakeredis.FakeRedis())

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            raise redis.exceptions.ClusterError("TTL exhausted.")
        return "list" if request.args[1].endswith(":history") else "hash"

    with pytest.raises(WriteOutcomeUnknownError, match="migrated") as failed:
        _drive(ops.add_messages(memory.core, "s", [Message("user", "hi", id="m-1")]), answer)
    assert [m.id for m in failed.value.messages] == ["m-1"]


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
    assert not isinstance(error, PermissionDeniedError)  # no permission is missing: retry
    assert "split between two nodes; nothing was written: try again shortly" in str(error)
    assert [m["content"] for m in memory.get_context("s")] == ["first"]


def test_a_call_of_thousands_of_messages_is_stored_and_recognised_when_retried(
    server: ThrowawayServer,
) -> None:
    # Review of issue 24: one HMGET of 9,000 ids is more than Lua can unpack (on a real
    # server); the reads are made in chunks, as the writes are.
    memory = MemoryService(server.admin(), max_history=10_000)
    turn = [Message("user", f"m{n}", id=f"id-{n}") for n in range(9000)]
    assert len(memory.add_messages("s", turn).appended) == 9000
    again = memory.add_messages("s", turn)
    assert (len(again.appended), len(again.already_stored)) == (0, 9000)


def test_a_users_session_keeps_its_index_and_metadata_when_the_call_is_narrowed() -> None:
    # Review of issue 24: narrowed to its history alone, a user's new session was written
    # without its index entry, so listing and erasure never saw it.
    memory = MemoryService(fakeredis.FakeRedis()).for_user("ada")
    call = memory.core.plan_append("paris", [Message("user", "hi")]).declaring([])
    assert call.roles == "hmx"


def test_a_session_the_previous_version_wrote_sheds_its_old_ids_on_its_next_append() -> None:
    # Review of issue 24: the previous version remembered 1,000 ids; its sessions kept them
    # all after the upgrade, at ~180 bytes an id (hex ids). The first append forgets those the
    # history no longer holds.
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, max_history=20)
    previous_append(
        client, memory.keys, "s",
        [Message("user", f"m{n}", id=f"id-{n}", created_at=1.0) for n in range(100)],
        max_history=20, ttl_ms=None, now=1.0,
    )  # fmt: skip
    seen = memory.keys.seen("s")
    assert client.hlen(seen) == 100
    memory.add_message("s", "user", "new", message_id="new")
    held = {json.loads(entry)["id"] for entry in client.lrange(memory.keys.history("s"), 0, -1)}
    assert {_text(k) for k in client.hkeys(seen)} == held | {""}
    again = memory.add_messages("s", [Message("user", "m99", id="id-99")])
    assert again.already_stored
    assert not again.appended


def test_a_session_healed_with_an_ids_list_keeps_the_list_in_step() -> None:
    # With a retry window longer than the history, ids added to the hash by the repair go
    # into the list too, so that the next append finds them in step (HLEN == LLEN + 1).
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, max_history=3, idempotency_window=10)
    history, ids, seen, _ = memory.keys.all("s")
    for n in range(3):  # written by another program: entries only
        entry = {"v": 1, "id": f"old-{n}", "role": "user", "content": str(n), "created_at": 1.0}
        client.rpush(history, json.dumps(entry, separators=(",", ":")))
    memory.add_message("s", "user", "new", message_id="new")
    assert [_text(i) for i in client.lrange(ids, 0, -1)] == ["old-0", "old-1", "old-2", "new"]
    assert client.hlen(seen) == client.llen(ids) + 1


class _Migrating(fakeredis.FakeRedis):
    """A client of a slot being migrated, as redis-py sees it until the slot has moved.

    The keys in ``moved`` are on the new node, the others on the old one. A script
    declaring a missing key beside others, or keys of both nodes, ends as redis-py's
    TRYAGAIN retries do, every time; one declaring a single key is served.
    """

    def __init__(self, moved: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.moved = set(moved)
        self.migrating = True
        self.refusals = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if self.migrating and args[0] == "EVALSHA" and int(args[2]) > 1:
            declared = [_text(k) for k in args[3 : 3 + int(args[2])]]
            nodes = {key in self.moved for key in declared}
            for key in declared:
                if not super().execute_command("EXISTS", key):  # type: ignore[no-untyped-call]
                    nodes.add(None)  # type: ignore[arg-type]
            if len(nodes) > 1:
                self.refusals += 1
                raise redis.exceptions.ClusterError("TTL exhausted.")
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_a_users_new_session_is_written_one_key_at_a_time_after_tryagain() -> None:
    # Issue 24: the index exists on a node and the new session's keys do not, so any script
    # declaring both is refused until the slot has moved. Each key is written on its own,
    # the index first, so that a session is never stored where listing cannot find it.
    memory = MemoryService(fakeredis.FakeRedis(), ttl=60).for_user("ada")
    index = memory.keys.index()
    history, _, seen, meta = memory.keys.all("cv")
    scripts: list[tuple[tuple[str, ...], bytes]] = []

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            scripts.append((request.keys, request.args[0]))
            if len(scripts) == 1:
                raise redis.exceptions.ClusterError("TTL exhausted.")
            return [1] if request.script == "append" else 1
        return "zset" if request.args[1] == index else "none"

    requests = _drive(ops.add_messages(memory.core, "cv", [Message("user", "hi")]), answer)
    assert [keys for keys, _ in scripts] == [
        (history, seen, meta, index),
        (index,),
        (meta,),
        (index,),  # again: a listing in between found no metadata, and dropped it
        (history,),
        (seen,),
        (index,),
    ]
    assert [op for _, op in scripts] == [
        b"20",
        b"enlist",
        b"created",
        b"enlist",
        b"20",
        b"remember",
        b"enlist",
    ]
    assert requests[-3].args[5] == b"h"


def test_a_users_new_session_written_one_key_at_a_time_is_listed_and_expires_whole() -> None:
    client = _Migrating()
    memory = MemoryService(client, ttl=60).for_user("ada")
    memory.add_message("paris", "user", "Plan my Paris trip")
    refusals = client.refusals
    memory.add_message("cv", "user", "Help me with my CV")
    assert client.refusals > refusals
    assert [m["content"] for m in memory.get_context("cv")] == ["Help me with my CV"]
    listed = {s.session_id: s for s in memory.list_sessions()}
    assert sorted(listed) == ["cv", "paris"]
    assert listed["cv"].created_at is not None
    assert listed["cv"].message_count == 1
    history, _, _, meta = memory.keys.all("cv")
    index = memory.keys.index()
    assert index is not None
    assert 0 < client.pttl(history) <= 60_000
    assert 0 < client.pttl(meta) <= 60_000
    assert client.pttl(index) >= client.pttl(meta)


def test_a_users_new_session_without_expiry_leaves_its_index_without_one() -> None:
    client = _Migrating()
    memory = MemoryService(client, ttl=60).for_user("ada")
    memory.add_message("paris", "user", "Plan my Paris trip")
    forever = MemoryService(client, ttl=None).for_user("ada")
    refusals = client.refusals
    forever.add_message("cv", "user", "Help me with my CV")
    assert client.refusals > refusals
    index = memory.keys.index()
    assert index is not None
    assert client.pttl(index) == -1
    assert client.pttl(memory.keys.meta("cv")) == -1


def test_a_new_session_written_in_steps_knows_its_ids_and_completes_its_hash() -> None:
    # Its first message is written with the history alone, then its ids alone: its next
    # message can declare the hash beside the history, and a resent first message is known,
    # with its fingerprint (so that another message under its id is still refused).
    client = _Migrating()
    memory = MemoryService(client, ttl=60)
    first = memory.add_message("s", "user", "hello", message_id="m-1")
    assert client.refusals > 0
    seen = memory.keys.seen("s")
    assert {_text(k) for k in client.hkeys(seen)} == {"m-1"}  # without '': read once later
    assert 0 < client.pttl(seen) <= 60_000
    memory.add_message("s", "user", "again")
    assert client.hget(seen, "") is not None  # the hash completed by that next append
    resent = memory.add_messages("s", [first])
    assert resent.already_stored == [first]
    with pytest.raises(MessageIdConflictError):
        memory.add_message("s", "user", "something else", message_id="m-1")
    assert [m["content"] for m in memory.get_context("s")] == ["hello", "again"]


def test_a_new_session_written_in_steps_keeps_its_metadata_alive() -> None:
    client = _Migrating()
    client.migrating = False  # set before the slot began to move
    MemoryService(client, ttl=60).set_metadata("s", {"title": "Paris"})
    client.migrating = True
    memory = MemoryService(client, ttl=600)
    memory.add_message("s", "user", "hello")  # the metadata exists, the history does not
    assert client.refusals > 0
    meta = memory.keys.meta("s")
    assert client.pttl(meta) > 60_000
    assert memory.get_metadata("s") == {"title": "Paris"}
    assert {_text(k) for k in client.hkeys(meta)} == {"doc"}  # no created_at without a user
    assert [m["content"] for m in memory.get_context("s")] == ["hello"]


def test_a_users_session_whose_index_is_on_the_other_node_keeps_taking_messages() -> None:
    memory = MemoryService(fakeredis.FakeRedis(), ttl=60).for_user("ada")
    index = memory.keys.index()
    assert index is not None
    client = _Migrating(moved=(index,))
    memory = MemoryService(client, ttl=60).for_user("ada")
    memory.add_message("paris", "user", "Plan my Paris trip")  # everything on one node
    before, refusals = client.zscore(index, "paris"), client.refusals
    memory.add_message("paris", "user", "Which museums?")
    assert client.refusals > refusals  # the index on the other node: written in steps
    assert [m["content"] for m in memory.get_context("paris")] == [
        "Plan my Paris trip",
        "Which museums?",
    ]
    assert (client.zscore(index, "paris") or 0) >= (before or 0)
    assert client.pttl(index) >= client.pttl(memory.keys.history("paris"))


@pytest.mark.parametrize("failing", [b"remember", b"enlist"])
def test_a_step_after_the_append_that_fails_says_the_messages_were_stored(failing: bytes) -> None:
    # The history is written: an error there must not say "nothing was written". It is a
    # write of unknown outcome, whose resend is safe.
    memory = MemoryService(fakeredis.FakeRedis()).for_user("ada")
    index = memory.keys.index()
    seen: list[bytes] = []

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            seen.append(request.args[0])
            if len(seen) == 1:
                raise redis.exceptions.ClusterError("TTL exhausted.")
            if request.args[0] == failing and seen.count(b"20") == 2:  # after the append
                raise redis.exceptions.ResponseError("CHATMEM_NOPERM hset")
            return [1] if request.script == "append" else 1
        return "zset" if request.args[1] == index else "none"

    with pytest.raises(WriteOutcomeUnknownError, match="the messages were stored") as failed:
        _drive(ops.add_messages(memory.core, "cv", [Message("user", "hi", id="m-1")]), answer)
    assert [m.id for m in failed.value.messages] == ["m-1"]


def test_a_new_session_with_a_longer_retry_window_keeps_its_ids_in_order_while_migrating() -> None:
    # Review of issue 24: its ids went to the hash only, the next append (without the list)
    # took the history as the window and forgot them: the first five, resent, were stored
    # again, after the sixth.
    client = _Migrating()
    memory = MemoryService(client, max_history=3, idempotency_window=20)
    first = [Message("user", f"m{n}", id=f"m{n}") for n in range(1, 6)]
    memory.add_messages("s", first)
    memory.add_message("s", "user", "m6", message_id="m6")
    assert client.refusals > 0
    again = memory.add_messages("s", first)
    assert (again.appended, len(again.already_stored)) == ([], 5)
    assert [m["content"] for m in memory.get_context("s")] == ["m4", "m5", "m6"]
    _, ids, seen, _ = memory.keys.all("s")
    assert [_text(i) for i in client.lrange(ids, 0, -1)] == [f"m{n}" for n in range(1, 7)]
    assert client.hlen(seen) == client.llen(ids) + 1  # in step: the hash is complete


def test_a_session_without_its_longer_windows_ids_list_is_refused_and_nothing_is_written() -> None:
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, max_history=3, idempotency_window=20)
    memory.add_message("s", "user", "first")
    call = memory.core.plan_append("s", [Message("user", "second")])
    seen = memory.keys.seen("s")
    call = call.declaring([seen])  # the ids list left out, as while a slot migrates
    assert "i" not in call.roles
    with pytest.raises(redis.ResponseError, match="CHATMEM_MOVING"):
        client.eval(APPEND_LUA, len(call.keys), *call.keys, *call.args)
    assert [m["content"] for m in memory.get_context("s")] == ["first"]


def test_a_wrong_typed_key_is_refused_before_any_step_of_a_users_new_session() -> None:
    # Review of issue 24: the index was written, then the metadata step refused, and every
    # later listing failed on the wrong-typed key while the error said nothing was written.
    memory = MemoryService(fakeredis.FakeRedis()).for_user("ada")
    index, meta = memory.keys.index(), memory.keys.meta("cv")
    scripts: list[bytes] = []

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            scripts.append(request.args[0])
            raise redis.exceptions.ClusterError("TTL exhausted.")
        return {index: "zset", meta: "string"}.get(request.args[1], "none")

    with pytest.raises(WrongKeyTypeError, match="meta"):
        _drive(ops.add_messages(memory.core, "cv", [Message("user", "hi")]), answer)
    assert scripts == [b"20"]  # the first attempt only: no step ran


def test_a_step_the_replicas_did_not_confirm_does_not_stop_the_write() -> None:
    # Review of issue 24: with a durability setting, the metadata step (redirected, so its
    # WAIT asked another connection) raised NotReplicatedError before the history was
    # written, and said the write was stored.
    memory = MemoryService(fakeredis.FakeRedis()).for_user("ada")
    index = memory.keys.index()
    scripts: list[bytes] = []

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            scripts.append(request.args[0])
            if len(scripts) == 1:
                raise redis.exceptions.ClusterError("TTL exhausted.")
            if request.args[0] == b"created":
                raise NotReplicatedError(confirmed=0, wanted=1, timeout=0.1, reply=1)
            return [1] if request.script == "append" else 1
        return "zset" if request.args[1] == index else "none"

    with pytest.raises(NotReplicatedError) as short:
        _drive(ops.add_messages(memory.core, "cv", [Message("user", "hi", id="m-1")]), answer)
    assert scripts == [b"20", b"enlist", b"created", b"enlist", b"20", b"remember", b"enlist"]
    assert [m.id for m in short.value.messages] == ["m-1"]


def test_a_listing_refused_while_the_users_slot_is_resharded_says_nothing_was_done() -> None:
    error = script_error(redis.ResponseError("CHATMEM_RESHARDING"), keys=(), messages=())
    assert isinstance(error, StorageUnavailableError)
    assert "nothing was read or written" in str(error)


@pytest.mark.parametrize(
    "refusal",
    ["CHATMEM_RESHARDING", "CHATMEM_UNSURE cluster|nodes"],
    ids=["the slot began to move", "the node will not say"],
)
def test_an_erasure_refused_after_earlier_batches_says_what_was_erased(refusal: str) -> None:
    # Review of issue 24: a batch refused mid-erasure (the slot began to move) said
    # "nothing was read or written" though the batches before it had erased sessions.
    memory = MemoryService(fakeredis.FakeRedis()).for_user("ada")
    replies = iter([[4, 1, b"paris"]])

    def answer(request: Any) -> Any:
        reply = next(replies, None)
        if reply is None:
            raise redis.ResponseError(refusal)
        return reply

    with pytest.raises(WriteOutcomeUnknownError, match="after 1 session"):
        _drive(ops.forget_user(memory.core, batch=1), answer)


def _on_a_node_that_will_not_say() -> tuple[MemoryService, fakeredis.FakeRedis, str]:
    """A memory told it is on a cluster whose node refuses CLUSTER NODES (as fakeredis does),
    with user ada's sessions paris and rome, and paris out of the node's sight."""
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, ttl=1800)
    memory.core.on_cluster = True
    ada = memory.for_user("ada")
    ada.add_message("paris", "user", "Plan my Paris trip")
    ada.add_message("rome", "user", "And Rome")
    client.delete(*memory.keys.for_user("ada").all("paris"))
    index = memory.keys.for_user("ada").index()
    assert index is not None
    return memory, client, index


def test_a_listing_on_a_node_that_will_not_say_is_refused_and_drops_nothing() -> None:
    # A user without +cluster|nodes: the listing cannot tell a session still on the other
    # node (mid-migration) from an expired one; it dropped it from the index.
    memory, client, index = _on_a_node_that_will_not_say()
    with pytest.raises(PermissionDeniedError, match=re.escape("'cluster|nodes'")) as refused:
        memory.for_user("ada").list_sessions()
    assert not refused.value.may_have_written
    assert client.zscore(index, "paris") is not None


def test_an_erasure_on_a_node_that_will_not_say_is_refused_and_erases_nothing() -> None:
    memory, client, _ = _on_a_node_that_will_not_say()
    keys = set(client.keys())
    with pytest.raises(PermissionDeniedError, match=re.escape("'cluster|nodes'")) as refused:
        memory.forget_user("ada")
    assert not refused.value.may_have_written
    assert set(client.keys()) == keys


def test_off_a_cluster_the_listing_still_drops_the_sessions_that_expired() -> None:
    client = fakeredis.FakeRedis()
    memory = MemoryService(client)
    ada = memory.for_user("ada")
    ada.add_message("paris", "user", "Plan my Paris trip")
    client.delete(*memory.keys.for_user("ada").all("paris"))
    index = memory.keys.for_user("ada").index()
    assert index is not None
    assert ada.list_sessions() == []
    assert client.zcard(index) == 0


def test_a_key_read_that_fails_after_tryagain_says_the_write_may_have_happened() -> None:
    memory = MemoryService(fakeredis.FakeRedis())

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            raise redis.exceptions.ClusterError("TTL exhausted.")
        raise redis.exceptions.ConnectionError("the node went away")

    with pytest.raises(WriteOutcomeUnknownError, match="may or may not have happened") as failed:
        _drive(ops.add_messages(memory.core, "s", [Message("user", "hi", id="m-1")]), answer)
    assert failed.value.may_have_written
    assert [m.id for m in failed.value.messages] == ["m-1"]


def _in_steps_failing(
    errors: Mapping[int, Exception],
) -> tuple[ChatMemoryError, list[tuple[Any, ...]]]:
    """A user's new session (a retry window longer than its history) appended in steps, each
    step numbered in ``errors`` (1: the first after TRYAGAIN) raising its error; return what
    the append raised and the steps run, with their arguments."""
    memory = MemoryService(fakeredis.FakeRedis(), max_history=3, idempotency_window=10)
    ada = memory.for_user("ada")
    index = ada.keys.index()
    steps: list[tuple[Any, ...]] = []

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            steps.append((request.keys, *request.args))
            if len(steps) == 1:
                raise redis.exceptions.ClusterError("TTL exhausted.")
            if len(steps) - 1 in errors:
                raise errors[len(steps) - 1]
            return [1] if request.script == "append" else 1
        return "zset" if request.args[1] == index else "none"

    turn = [Message("user", "hi", id="m-1")]
    with pytest.raises(ChatMemoryError) as failed:
        _drive(ops.add_messages(ada.core, "cv", turn), answer)
    return failed.value, steps[1:]


_STEPS = ["enlist", "created", "enlist", "append", "remember", "ids", "enlist"]


@pytest.mark.parametrize("failing", range(1, len(_STEPS) + 1), ids=_STEPS)
def test_each_step_the_replicas_did_not_confirm_lets_the_others_run(failing: int) -> None:
    unconfirmed = NotReplicatedError(confirmed=0, wanted=1, timeout=0.1, reply=1)
    if _STEPS[failing - 1] == "append":
        unconfirmed = NotReplicatedError(confirmed=0, wanted=1, timeout=0.1, reply=[1])
    short, steps = _in_steps_failing({failing: unconfirmed})
    assert isinstance(short, NotReplicatedError)
    assert [m.id for m in short.messages] == ["m-1"]
    assert len(steps) == len(_STEPS)


@pytest.mark.parametrize("failing", range(1, len(_STEPS) + 1), ids=_STEPS)
def test_each_step_that_fails_says_whether_the_messages_were_stored(failing: int) -> None:
    lost = redis.exceptions.ConnectionError("Connection reset by peer")
    failed, steps = _in_steps_failing({failing: lost})
    assert isinstance(failed, WriteOutcomeUnknownError)
    assert [m.id for m in failed.messages] == ["m-1"]
    stored = failing > _STEPS.index("append") + 1
    assert ("the messages were stored" in str(failed)) is stored
    if failing <= _STEPS.index("append"):  # stopped before the history was written
        assert len(steps) == failing
    else:  # from the append on, the index's TTL all the same
        assert steps[-1][:2] == (steps[0][0], b"enlist")  # the index
        assert len(steps) == failing + (failing < len(_STEPS))


def test_an_index_that_fails_after_the_step_that_failed_leaves_that_steps_error() -> None:
    lost = redis.exceptions.ConnectionError("Connection reset by peer")
    remember = _STEPS.index("remember") + 1
    failed, steps = _in_steps_failing(dict.fromkeys(range(remember, len(_STEPS) + 1), lost))
    assert isinstance(failed, WriteOutcomeUnknownError)
    assert "(remember)" in str(failed)
    assert steps[-1][:2] == (steps[0][0], b"enlist")  # the index


def test_of_two_steps_the_replicas_did_not_confirm_the_first_is_reported() -> None:
    unconfirmed = {
        n: NotReplicatedError(confirmed=0, wanted=1, timeout=0.1, reply=_STEPS[n - 1])
        for n in (_STEPS.index("created") + 1, _STEPS.index("remember") + 1)
    }
    short, _ = _in_steps_failing(unconfirmed)
    assert isinstance(short, NotReplicatedError)
    assert short.reply == "created"
    assert [m.id for m in short.messages] == ["m-1"]


def test_a_new_sessions_ids_step_keeps_the_retry_window() -> None:
    # The last step fails only for the helper to hand back the steps run.
    _, steps = _in_steps_failing({len(_STEPS): redis.exceptions.ConnectionError("lost")})
    ids = next(step for step in steps if step[1] == b"ids")
    assert ids[3] == b"10"  # the window, after the TTL
    assert ids[4:] == (b"m-1",)


def test_a_users_session_with_history_appended_in_steps_moves_its_activity_on_only() -> None:
    # Not new: its metadata has its created_at already; the index is written before and after.
    memory = MemoryService(fakeredis.FakeRedis()).for_user("ada")
    index = memory.keys.index()
    history, _, seen, meta = memory.keys.all("cv")
    scripts: list[tuple[tuple[str, ...], bytes]] = []

    def answer(request: Any) -> Any:
        if isinstance(request, ops.RunScript):
            scripts.append((request.keys, request.args[0]))
            if len(scripts) == 1:
                raise redis.exceptions.ClusterError("TTL exhausted.")
            return [1] if request.script == "append" else 1
        return {index: "zset", history: "list", seen: "hash", meta: "hash"}[request.args[1]]

    _drive(ops.add_messages(memory.core, "cv", [Message("user", "hi")]), answer)
    assert scripts[1:] == [
        ((index,), b"enlist"),
        ((history, seen, meta), b"20"),
        ((index,), b"enlist"),
    ]


def test_a_longer_windows_call_narrowed_without_its_ids_list_is_never_sent_short() -> None:
    # Review of issue 24: narrowed to "hsm" while its ids list was out of sight, the call of
    # a service whose earlier append was checked went in the short form, which leaves the
    # window out: the script took the history as the window and forgot ids a resend needs.
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, max_history=2, idempotency_window=10)
    for n in range(1, 4):
        memory.add_message("s", "user", f"m{n}", message_id=f"m-{n}")
    memory.set_metadata("s", {"title": "Paris"})
    assert memory.core.checked
    _, _, seen, meta = memory.keys.all("s")
    call = memory.core.plan_append("s", [Message("user", "m4", id="m-4")]).declaring([seen, meta])
    assert call.roles == "hsm"
    assert not call.short
    with pytest.raises(redis.ResponseError, match="CHATMEM_MOVING"):
        client.eval(APPEND_LUA, len(call.keys), *call.keys, *call.sent)
    assert client.hexists(seen, "m-1")
    assert [m["content"] for m in memory.get_context("s")] == ["m2", "m3"]


def test_a_call_narrowed_to_the_keys_the_session_has_keeps_the_short_form() -> None:
    # The short form (the default window, one message, a service whose earlier append was
    # checked) costs the server less: narrowing a call while a slot migrates keeps it.
    memory = MemoryService(fakeredis.FakeRedis())
    memory.add_message("s", "user", "m1")
    memory.set_metadata("s", {"title": "Paris"})
    _, _, seen, meta = memory.keys.all("s")
    call = memory.core.plan_append("s", [Message("user", "m2")])
    assert call.roles == "hsm"
    assert call.short
    assert call.declaring([seen, meta]).short
