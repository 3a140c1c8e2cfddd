"""What a failed call says it may have written, where an earlier part or attempt was applied."""

from typing import Any

import fakeredis
import pytest
import redis

from chat_memory import (
    Durability,
    ImportResult,
    MemoryService,
    Message,
    MessageIdConflictError,
    NotReplicatedError,
    PartialWriteError,
    PermissionDeniedError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
)
from chat_memory._durability import RefusedUnconfirmed, confirmed
from chat_memory._errors import script_error


class _Refusing(fakeredis.FakeRedis):
    """A client that refuses, with ``error``, every command ``refused(args)`` picks while armed."""

    def __init__(self, *args: Any, refused: Any, error: Exception, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.refused, self.error, self.armed = refused, error, True

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if self.armed and self.refused(args):
            raise self.error
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def _holding(text: str) -> Any:
    """Pick the commands one of whose arguments holds ``text`` (an append of that message)."""
    return lambda args: any(text.encode() in a for a in args if isinstance(a, bytes))


@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.ReadOnlyError("READONLY You can't write against a read only replica."),
        redis.exceptions.ClusterDownError("CLUSTERDOWN The cluster is down"),
    ],
    ids=["read-only replica", "cluster down"],
)
def test_a_clear_refused_as_after_a_failover_may_have_happened(error: Exception) -> None:
    client = _Refusing(refused=lambda args: args[0] == "DEL", error=error)
    memory = MemoryService(client)
    memory.add_message("ada", "user", "hello")
    with pytest.raises(WriteOutcomeUnknownError, match="may or may not have happened") as failed:
        memory.clear("ada")  # a resend may reach a replica that never saw the applied first try
    assert failed.value.may_have_written


@pytest.mark.parametrize(
    ("refused", "error", "call"),
    [
        # Only a write can have been applied by an earlier attempt: a read refused
        # as after a failover is unavailable storage, not an outcome unknown.
        ("LRANGE", redis.exceptions.ClusterDownError("CLUSTERDOWN The cluster is down"), "read"),
        ("DEL", redis.exceptions.ResponseError("ERR some other refusal"), "clear"),
    ],
    ids=["read refused by a cluster down", "clear refused for another reason"],
)
def test_a_call_refused_before_anything_ran_says_nothing_was_changed(
    refused: str, error: Exception, call: str
) -> None:
    client = _Refusing(refused=lambda args: args[0] == refused, error=error)
    memory = MemoryService(client)
    memory.add_message("ada", "user", "hello")
    with pytest.raises(StorageUnavailableError, match="nothing was changed") as failed:
        memory.get_messages("ada") if call == "read" else memory.clear("ada")
    assert not isinstance(failed.value, WriteOutcomeUnknownError)
    client.armed = False
    assert [m.content for m in memory.get_messages("ada")] == ["hello"]


def _export(count: int) -> str:
    source = MemoryService(fakeredis.FakeRedis(), max_history=count)  # the export holds them all
    source.add_messages("s", [Message("user", f"m{n}") for n in range(count)])
    return source.export_session("s")


def test_an_import_refused_after_its_first_batch_says_part_may_be_stored() -> None:
    refusal = redis.exceptions.OutOfMemoryError("command not allowed when used memory")
    client = _Refusing(refused=_holding('"m25"'), error=refusal)  # the second batch
    memory = MemoryService(client)
    with pytest.raises(WriteOutcomeUnknownError, match="append=True") as failed:
        memory.import_session("t", _export(30))  # two batches: the retry window is 20
    assert failed.value.may_have_written
    assert [m.content for m in memory.get_messages("t")] == [f"m{n}" for n in range(20)]
    client.armed = False  # memory freed: what the error says to do stores nothing twice
    memory.import_session("t", _export(30), append=True)
    assert [m.content for m in memory.get_messages("t")] == [f"m{n}" for n in range(10, 30)]


def test_an_import_refused_before_anything_was_stored_says_nothing_was_written() -> None:
    refusal = redis.exceptions.OutOfMemoryError("command not allowed when used memory")
    client = _Refusing(refused=_holding('"m5"'), error=refusal)  # the first batch
    with pytest.raises(StorageUnavailableError, match="nothing was written"):
        MemoryService(client).import_session("t", _export(30))


def test_an_import_no_replica_confirms_stores_every_batch_and_hands_back_its_result() -> None:
    client = fakeredis.FakeRedis()  # no WAIT: every write is unconfirmed
    durable = MemoryService(client, durability=Durability(1, 0.05))
    with pytest.raises(NotReplicatedError) as failed:
        durable.import_session("t", _export(30))  # two batches
    assert isinstance(failed.value.reply, ImportResult)
    assert len(failed.value.reply.imported) == 30
    stored = MemoryService(client).get_messages("t")
    assert [m.content for m in stored] == [f"m{n}" for n in range(10, 30)]


@pytest.mark.parametrize(
    ("command", "consequence"),
    [
        ("lpop", "over its limit"),
        ("hdel", "still remembered"),
        ("pexpire", "expiry was not refreshed"),
        ("persist", "expiry was not refreshed"),
    ],
)
def test_a_refusal_after_the_short_way_stored_the_message_says_it_is_stored(
    command: str, consequence: str
) -> None:
    # What append.lua's short way answers when a permission revoked since the service's
    # first append refuses a write after the push and the id (the scenarios run it on a
    # real server; fakeredis scripts know no ACL).
    message = Message("user", "hi", id="m-1", created_at=1.0)
    refusal = redis.exceptions.ResponseError(f"CHATMEM_PARTIAL {command}")
    error = script_error(refusal, keys=["h", "s", "m"], messages=[message])
    assert isinstance(error, PartialWriteError)
    assert (error.command, error.messages, error.may_have_written) == (command, [message], True)
    assert error.retry_is_safe
    assert f"refused '{command}'" in str(error)
    assert "stored and its id remembered, so sending it again is safe" in str(error)
    assert consequence in str(error)


def test_a_message_stored_without_its_id_says_a_resend_would_store_it_twice() -> None:
    message = Message("user", "hi", id="m-1", created_at=1.0)
    refusal = redis.exceptions.ResponseError("CHATMEM_PARTIAL hset")
    error = script_error(refusal, keys=["h", "s", "m"], messages=[message])
    assert isinstance(error, PartialWriteError)
    assert not error.retry_is_safe
    assert "its id is not remembered" in str(error)
    assert "would store it twice" in str(error)


def test_a_partial_write_no_replica_confirmed_says_both() -> None:
    # With a durability setting, the (script, WAIT) pipeline's replies: the script stored
    # the message, then a write was refused; the WAIT counted no replica.
    durability = Durability(replicas=1, timeout=0.2)
    refusal = redis.exceptions.ResponseError("CHATMEM_PARTIAL pexpire")
    with pytest.raises(redis.exceptions.ResponseError) as raised:
        confirmed(durability, [refusal, 0])
    error = script_error(raised.value, keys=["h", "s", "m"], messages=[Message("user", "hi")])
    assert isinstance(error, PartialWriteError)
    assert error.command == "pexpire"
    assert error.unconfirmed == "confirmed by 0 of 1 replica(s) within 0.2 s"
    assert str(error).endswith(
        "; the write is confirmed by 0 of 1 replica(s) within 0.2 s: a failover now could lose it"
    )


def test_a_partial_write_the_replicas_confirmed_says_nothing_of_them() -> None:
    durability = Durability(replicas=1, timeout=0.2)
    refusal = redis.exceptions.ResponseError("CHATMEM_PARTIAL lpop")
    with pytest.raises(redis.exceptions.ResponseError) as raised:
        confirmed(durability, [refusal, 1])
    assert raised.value is refusal
    error = script_error(refusal, keys=["h", "s", "m"], messages=[Message("user", "hi")])
    assert isinstance(error, PartialWriteError)
    assert error.unconfirmed is None
    assert str(error).endswith(
        "so sending it again is safe, but the history is over its limit until an append may trim it"
    )


def test_a_failed_append_makes_the_next_one_ask_about_permissions_again() -> None:
    # Another server may answer it: a replica promoted by a failover, with its own ACL.
    client = _Refusing(refused=lambda args: True, error=redis.exceptions.ConnectionError("gone"))
    memory = MemoryService(client, max_history=3, idempotency_window=3)
    memory.core.checked = True
    with pytest.raises(WriteOutcomeUnknownError):
        memory.add_message("s", "user", "hello")
    assert not memory.core.checked
    assert memory.core.plan_append("s", [Message("user", "hi")]).sent[5] == b"hsm"


class _MovedCluster(redis.RedisCluster):
    """A cluster client whose slot has just moved: the node it asks answers ASK, then the
    client itself, redirected, runs the append and gets ``answer`` (what
    `MemoryService._send` sees mid-migration; the scenarios hold a slot half-way on a
    real cluster, without revoking a permission there).
    """

    def __init__(self, answer: Exception) -> None:  # no nodes to discover
        self.node = _Answering([redis.exceptions.AskError("1234 127.0.0.1:7001"), 0])
        self.answer = answer

    def get_encoder(self) -> Any:
        return redis.Redis().get_encoder()  # a client of no server: its default encoder

    def get_node_from_key(self, key: str, replica: bool = False) -> None:
        return None

    def get_redis_connection(self, node: object) -> Any:
        return self.node

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        raise self.answer

    def close(self) -> None:
        pass

    def __del__(self) -> None:
        pass


class _Answering:
    """A node's client and pipeline that answer every pipeline with ``replies``."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies

    def pipeline(self, transaction: bool = False) -> "_Answering":
        return self

    def execute_command(self, *args: Any, **kwargs: Any) -> None:
        pass

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        return self.replies


def test_a_partial_write_redirected_mid_migration_says_no_replica_confirmed_it() -> None:
    # Issue 24's last review: the redirected append ran on another connection than the
    # WAIT, so no replica count covers it, and the error must say so.
    refusal = redis.exceptions.ResponseError("CHATMEM_PARTIAL pexpire")  # stored, then refused
    memory = MemoryService(_MovedCluster(refusal), durability=Durability(1, timeout=0.2))
    with pytest.raises(PartialWriteError) as failed:
        memory.add_message("s", "user", "hi", message_id="m-1")
    assert failed.value.command == "pexpire"
    assert [m.id for m in failed.value.messages] == ["m-1"]
    assert failed.value.unconfirmed == (
        "confirmed by 0 of 1 replica(s) within 0.2 s (the slot of 'chat:session:{s}:history' moved)"
    )


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (redis.exceptions.ResponseError("CHATMEM_CONFLICT 1"), MessageIdConflictError),
        (redis.exceptions.ResponseError("CHATMEM_NOPERM rpush"), PermissionDeniedError),
        (redis.exceptions.ConnectionError("reset"), WriteOutcomeUnknownError),
    ],
)
def test_any_other_answer_to_a_redirected_durable_append_is_what_it_says(
    answer: Exception, error: type[Exception]
) -> None:
    memory = MemoryService(_MovedCluster(answer), durability=Durability(1, timeout=0.2))
    with pytest.raises(error):
        memory.add_message("s", "user", "hi", message_id="m-1")


def test_a_partial_write_whose_wait_failed_says_why_no_replica_confirmed_it() -> None:
    durability = Durability(replicas=2, timeout=1)
    refusal = redis.exceptions.ResponseError("CHATMEM_PARTIAL hdel")
    failed_wait = redis.exceptions.ResponseError("WAIT cannot be used with replica instances")
    with pytest.raises(RefusedUnconfirmed) as raised:
        confirmed(durability, [refusal, failed_wait])
    assert raised.value.__cause__ is refusal
    assert (raised.value.short.confirmed, raised.value.short.wanted) == (0, 2)
    error = script_error(raised.value, keys=["h", "s", "m"], messages=[Message("user", "hi")])
    assert isinstance(error, PartialWriteError)
    assert error.unconfirmed == (
        "confirmed by 0 of 2 replica(s) within 1 s (WAIT cannot be used with replica instances)"
    )


def test_what_the_replicas_confirmed_reads_as_the_error_says_it() -> None:
    short = NotReplicatedError(confirmed=1, wanted=2, timeout=0.5)
    assert short.confirmation == "confirmed by 1 of 2 replica(s) within 0.5 s"
    assert short.confirmation in str(short)
