"""pop_message: the newest message taken back, atomically, never a newer one."""

from typing import Any

import fakeredis
import pytest

from chat_memory import (
    AsyncMemoryService,
    CorruptEntryError,
    Durability,
    MemoryService,
    Message,
    NotReplicatedError,
    SessionChangedError,
)


class WriterBetween(fakeredis.FakeRedis):
    """A client after whose first reads of a history another writer appends a message."""

    def __init__(self, *args: Any, writes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writes = writes

    def execute_command(self, *args: Any, **options: Any) -> Any:
        reply = super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        if args[0] == "LRANGE" and self.writes > 0:
            self.writes -= 1
            other = MemoryService(
                fakeredis.FakeRedis(server=self.connection_pool.connection_kwargs["server"])
            )
            other.add_message("ada", "user", f"newer {self.writes}")
        return reply


def test_a_message_stored_between_reading_and_removing_is_never_removed() -> None:
    server = fakeredis.FakeServer()
    memory = MemoryService(WriterBetween(server=server, writes=1))
    memory.add_message("ada", "user", "first")
    taken = memory.pop_message("ada")
    assert taken is not None
    assert taken.content == "newer 0"  # read again: the newest is the message stored meanwhile
    assert [m["content"] for m in memory.get_context("ada")] == ["first"]


def test_durable_pop_reads_a_newer_message_again_and_hands_back_the_one_removed() -> None:
    server = fakeredis.FakeServer()  # no WAIT here: every write is reported as not confirmed
    durable = Durability(replicas=1, timeout=0.1)
    memory = MemoryService(WriterBetween(server=server, writes=1), durability=durable)
    MemoryService(fakeredis.FakeRedis(server=server)).add_message("ada", "user", "first")
    with pytest.raises(NotReplicatedError) as caught:
        memory.pop_message("ada")
    assert isinstance(caught.value.reply, Message)
    assert caught.value.reply.content == "newer 0"  # not the first: its removal wrote nothing
    assert [m["content"] for m in memory.get_context("ada")] == ["first"]


def test_a_session_that_keeps_changing_is_left_as_it_is() -> None:
    server = fakeredis.FakeServer()
    memory = MemoryService(WriterBetween(server=server, writes=50))
    memory.add_message("ada", "user", "first")
    with pytest.raises(SessionChangedError, match="nothing was removed"):
        memory.pop_message("ada")
    assert len(memory.get_context("ada")) == 11  # the first, and ten newer: none removed


def test_a_corrupt_newest_entry_is_named_and_stays() -> None:
    client = fakeredis.FakeRedis()
    memory = MemoryService(client)
    memory.add_message("ada", "user", "first")
    client.rpush(memory.keys.history("ada"), b"not json")
    with pytest.raises(CorruptEntryError) as caught:
        memory.pop_message("ada")
    assert caught.value.position == 1
    assert client.llen(memory.keys.history("ada")) == 2


async def test_the_async_service_takes_back_the_same_way() -> None:
    memory = AsyncMemoryService(fakeredis.FakeAsyncRedis())
    await memory.add_messages("ada", [Message("user", "a", id="m-1"), Message("user", "b")])
    first = await memory.pop_message("ada")
    await memory.pop_message("ada")
    empty = await memory.pop_message("ada")
    await memory.add_message("ada", "user", "a again", message_id="m-1")
    context = await memory.get_context("ada")
    assert first is not None
    assert first.content == "b"
    assert empty is None
    assert context == [{"role": "user", "content": "a again"}]
