import base64
import re
import threading
from datetime import timedelta
from typing import Any

import fakeredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from chat_memory import (
    CorruptEntryError,
    InvalidContentError,
    InvalidInputError,
    MemoryService,
    Message,
    MessageTooLargeError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
)


def test_the_positional_form_keeps_working(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, 10)
    assert memory.max_history == 10


def test_messages_come_back_oldest_first_in_chat_shape(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, max_history=5)
    memory.add_message("s", "user", "one")
    memory.add_messages("s", [{"role": "assistant", "content": "two"}, Message("user", "three")])
    assert memory.get_context("s") == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
    ]


def test_only_the_newest_max_history_messages_are_kept(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, max_history=3)
    for n in range(7):
        memory.add_message("s", "user", str(n))
    assert [m["content"] for m in memory.get_context("s")] == ["4", "5", "6"]


def test_ids_are_remembered_up_to_the_idempotency_window(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, max_history=3, idempotency_window=5)
    for n in range(7):
        memory.add_message("s", "user", str(n), message_id=f"m-{n}")
    assert fake_redis.llen(memory.keys.ids("s")) == 5
    assert fake_redis.hlen(memory.keys.seen("s")) == 5 + 1  # and the field '': it holds them all
    memory.add_message("s", "user", "2", message_id="m-2")  # remembered: skipped
    assert [m["content"] for m in memory.get_context("s")] == ["4", "5", "6"]
    memory.add_message("s", "user", "1", message_id="m-1")  # forgotten: stored again
    assert [m["content"] for m in memory.get_context("s")] == ["5", "6", "1"]


def test_the_idempotency_window_cannot_be_shorter_than_the_history(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    with pytest.raises(InvalidInputError, match="idempotency_window"):
        MemoryService(fake_redis, max_history=10, idempotency_window=9)
    assert MemoryService(fake_redis, max_history=5000).idempotency_window == 5000
    assert MemoryService(fake_redis).idempotency_window == 20
    assert MemoryService(fake_redis, max_history=1).idempotency_window == 20


def test_by_default_every_message_in_the_history_is_remembered_and_no_more(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    # Issue 24: the default window was 1,000 ids whatever the history, ~180 KB a session.
    memory = MemoryService(fake_redis, max_history=30)
    for n in range(40):
        memory.add_message("s", "user", str(n), message_id=f"m-{n}")
    assert fake_redis.hlen(memory.keys.seen("s")) == 30 + 1  # and the field ''
    memory.add_message("s", "user", "10", message_id="m-10")  # in the history: skipped
    assert fake_redis.llen(memory.keys.history("s")) == 30
    assert memory.get_context("s")[-1]["content"] == "39"


def test_a_session_stored_with_only_an_ids_list_keeps_its_retries_safe(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, max_history=5)
    old = '{"v":1,"id":"m-1","role":"user","content":"hi","created_at":1.0}'
    fake_redis.rpush(memory.keys.history("s"), old)
    fake_redis.rpush(memory.keys.ids("s"), "m-1")
    again = memory.add_messages("s", [Message("user", "hi", id="m-1"), Message("user", "new")])
    assert [m.content for m in again.already_stored] == ["hi"]
    assert [m["content"] for m in memory.get_context("s")] == ["hi", "new"]


def test_stored_messages_carry_an_id_and_the_clock_time(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, clock=lambda: 1234.5)
    stored = memory.add_message("s", "user", "hi")
    assert stored.created_at == 1234.5
    assert stored.id is not None
    assert memory.get_messages("s") == [stored]


def test_a_generated_id_is_128_random_bits_in_22_url_safe_characters(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    # Issue 24: the id is stored twice per message (entry and hash), so its length is memory.
    memory = MemoryService(fake_redis)
    ids = {memory.add_message("s", "user", "hi").id for _ in range(200)}
    assert len(ids) == 200
    for message_id in ids:
        assert message_id is not None
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", message_id)
        assert len(base64.urlsafe_b64decode(message_id + "==")) == 16


def test_the_clock_time_is_stamped_in_whole_milliseconds(fake_redis: fakeredis.FakeRedis) -> None:
    # Issue 24: time.time()'s sub-millisecond digits cost bytes in the entry and the hash.
    memory = MemoryService(fake_redis, clock=lambda: 1796491352.1987386)
    stored = memory.add_message("s", "user", "hi")
    assert stored.created_at == 1796491352.198  # never ahead of the clock
    assert memory.get_messages("s") == [stored]
    entry = fake_redis.lrange(memory.keys.history("s"), 0, -1)[0]
    assert (entry if isinstance(entry, bytes) else entry.encode()).endswith(
        b',"created_at":1796491352.198}'
    )


def test_a_retried_append_is_applied_once(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    turn = memory.add_messages(
        "s", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    )
    memory.add_messages("s", turn)
    memory.add_message("s", "user", "hi", message_id=turn[0].id)
    assert memory.get_messages("s") == turn


def test_ids_must_be_unique_within_one_call(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    with pytest.raises(InvalidContentError, match="unique"):
        memory.add_messages("s", [Message("user", "a", id="x"), Message("user", "b", id="x")])
    assert fake_redis.keys() == []


def test_one_invalid_message_in_a_batch_writes_nothing(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, max_message_bytes=100)
    with pytest.raises(MessageTooLargeError, match="over the limit of 100") as refused:
        memory.add_messages(
            "s", [{"role": "user", "content": "ok"}, {"role": "user", "content": "x" * 100}]
        )
    assert (refused.value.role, refused.value.limit) == ("user", 100)
    assert refused.value.size > 100
    assert f"encodes to {refused.value.size} bytes" in str(refused.value)
    with pytest.raises(InvalidContentError, match="at least one"):
        memory.add_messages("s", [])
    assert fake_redis.keys() == []


def test_the_ttl_slides_with_every_write_and_expires_the_whole_session(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, ttl=timedelta(minutes=30))
    memory.add_message("s", "user", "hi")
    assert memory.ttl("s") == pytest.approx(1800, abs=1)
    fake_redis.pexpire(memory.keys.history("s"), 1000)
    memory.add_message("s", "user", "again")
    assert memory.ttl("s") == pytest.approx(1800, abs=1)
    assert fake_redis.pttl(memory.keys.seen("s")) > 1_799_000


def test_without_a_ttl_nothing_expires(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    memory.add_message("s", "user", "hi")
    assert memory.ttl("s") is None
    assert fake_redis.pttl(memory.keys.history("s")) == -1


def test_clear_forgets_the_session_only(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    memory.add_message("a", "user", "hi")
    memory.add_message("b", "user", "hi")
    memory.clear("a")
    assert memory.get_context("a") == []
    assert memory.ttl("a") is None
    assert len(memory.get_context("b")) == 1


def test_an_unknown_session_has_an_empty_context(fake_redis: fakeredis.FakeRedis) -> None:
    assert MemoryService(fake_redis).get_context("nobody") == []


def test_a_corrupt_entry_names_the_session_and_position(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    memory.add_message("s", "user", "fine")
    fake_redis.rpush(memory.keys.history("s"), b"{not json")
    with pytest.raises(CorruptEntryError) as failure:
        memory.get_context("s")
    assert (failure.value.session_id, failure.value.position) == ("s", 1)
    assert "session 's': stored entry 1 cannot be decoded" in str(failure.value)


def test_a_wrong_type_key_is_refused_without_a_partial_write(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis)
    fake_redis.set(memory.keys.seen("s"), "not a hash")
    with pytest.raises(StorageUnavailableError, match="holds a string"):
        memory.add_message("s", "user", "hi")
    assert fake_redis.exists(memory.keys.history("s")) == 0


@pytest.mark.parametrize(
    "settings",
    [{"max_history": 0}, {"max_history": True}, {"ttl": 0}, {"ttl": -5}, {"max_message_bytes": 0}],
)
def test_bad_settings_are_refused(
    fake_redis: fakeredis.FakeRedis, settings: dict[str, Any]
) -> None:
    with pytest.raises(InvalidInputError):
        MemoryService(fake_redis, **settings)


def test_a_lost_connection_on_write_says_the_outcome_is_unknown_and_keeps_the_messages() -> None:
    client = redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )
    memory = MemoryService(client)
    with pytest.raises(WriteOutcomeUnknownError) as failure:
        memory.add_message("s", "user", "hi", message_id="m-1")
    assert failure.value.may_have_written
    assert [m.id for m in failure.value.messages] == ["m-1"]
    assert isinstance(failure.value.__cause__, redis.ConnectionError)
    with pytest.raises(StorageUnavailableError) as read_failure:
        memory.get_context("s")
    assert not read_failure.value.may_have_written


def test_concurrent_writers_never_let_a_reader_see_more_than_the_limit() -> None:
    server = fakeredis.FakeServer()
    memory = MemoryService(fakeredis.FakeRedis(server=server), max_history=20)
    writers, per_writer = 4, 100
    done = threading.Event()
    seen: list[int] = []

    def write(writer: int) -> None:
        mine = MemoryService(fakeredis.FakeRedis(server=server), max_history=20)
        for n in range(per_writer):
            mine.add_message("s", "user", f"{writer}:{n}")

    def read() -> None:
        while not done.is_set():
            seen.append(len(memory.get_context("s")))

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    assert seen
    assert max(seen) <= 20
    context = [m["content"] for m in memory.get_context("s")]
    assert len(context) == 20
    for writer in range(writers):
        numbers = [int(c.split(":")[1]) for c in context if c.startswith(f"{writer}:")]
        assert numbers == sorted(numbers)
    assert len(set(context)) == 20


def test_a_tool_result_answering_no_stored_call_is_left_out_of_the_context_only(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis)
    memory.add_message("s", "user", "Weather?")
    memory.add_message("s", "tool", "18°C", tool_call_id="call-never-stored")
    memory.add_message("s", "assistant", "Mild.")

    assert memory.get_context("s") == [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Mild."},
    ]
    assert [m.role for m in memory.get_messages("s")] == ["user", "tool", "assistant"]


def test_a_server_that_lost_its_scripts_is_given_them_again(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    # The services send EVALSHA themselves (for raw replies): NOSCRIPT must load the script,
    # as redis-py's Script does, after a restart or a failover to a server without it.
    memory = MemoryService(fake_redis)
    memory.add_message("s", "user", "before")
    fake_redis.script_flush()
    memory.add_message("s", "user", "after")
    fake_redis.script_flush()
    assert memory.export_session("s").count('"role":"user"') == 2
    assert [m.content for m in memory.get_messages("s")] == ["before", "after"]
