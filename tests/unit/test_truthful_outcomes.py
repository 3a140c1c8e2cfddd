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
    NotReplicatedError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
)


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
