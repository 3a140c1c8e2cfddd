"""The eight defects of "every write tells the truth", each reproduced as reported.

Each test failed on the code before the fix; the names say what a caller now gets.
"""

import sys
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import fakeredis
import pytest
import redis

import chat_memory as cm
from chat_memory import (
    ChatService,
    CorruptEntryError,
    InvalidContentError,
    InvalidInputError,
    MemoryService,
    Message,
    StorageError,
    ToolCall,
)
from chat_memory.testing import FakeLLM

# 1. Retries are safe beyond the newest max_history messages.


def test_a_retry_of_a_message_trimmed_from_the_history_is_not_stored_again(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, max_history=5)
    memory.add_message("s", "user", "late", message_id="late-1")
    for n in range(5):
        memory.add_message("s", "user", f"newer {n}")
    memory.add_message("s", "user", "late", message_id="late-1")
    assert [m["content"] for m in memory.get_context("s")] == [f"newer {n}" for n in range(5)]


def test_a_retried_turn_with_a_history_of_one_keeps_the_answer(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, max_history=1)
    turn = [Message("user", "hi", id="u-1"), Message("assistant", "hello", id="a-1")]
    memory.add_messages("s", turn)
    memory.add_messages("s", turn)
    assert memory.get_context("s") == [{"role": "assistant", "content": "hello"}]


# 2. Settings Redis would reject halfway through the script are refused up front.


def test_an_unbounded_history_limit_works(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, max_history=sys.maxsize)
    for n in range(3):
        memory.add_message("s", "user", str(n))
    assert [m["content"] for m in memory.get_context("s")] == ["0", "1", "2"]


@pytest.mark.parametrize("ttl", [1e14, float("nan"), float("inf"), -float("inf"), 10**30])
def test_a_ttl_redis_cannot_take_is_refused_when_the_service_is_built(
    fake_redis: fakeredis.FakeRedis, ttl: float
) -> None:
    with pytest.raises(InvalidInputError, match="ttl"):
        MemoryService(fake_redis, ttl=ttl)


def test_the_longest_ttl_allowed_is_stored(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis, ttl=cm.MAX_TTL)
    memory.add_message("s", "user", "hi")
    assert memory.ttl("s") == pytest.approx(cm.MAX_TTL.total_seconds(), abs=1)


# 3. No raw exception crosses the public API.


@pytest.mark.parametrize("field", ["content", "message_id", "name"])
def test_a_lone_surrogate_is_refused_and_nothing_is_written(
    fake_redis: fakeredis.FakeRedis, field: str
) -> None:
    memory = MemoryService(fake_redis)
    values: dict[str, Any] = {"content": "half an emoji \ud83d", "message_id": None, "name": None}
    if field != "content":
        values["content"] = "fine"
        values[field] = "id-\ud83d"
    with pytest.raises(InvalidContentError, match="UTF-8"):
        memory.add_message(
            "s", "user", values["content"], message_id=values["message_id"], name=values["name"]
        )
    assert fake_redis.keys() == []


def test_a_model_reply_that_cannot_be_stored_reaches_the_caller_with_the_reply(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis)
    chat = ChatService(memory, FakeLLM(replies=["Here you go \ud83d"]))
    with pytest.raises(cm.ReplyNotStoredError) as failure:
        chat.reply("s", "Send me an emoji")
    assert failure.value.reply == "Here you go \ud83d"
    assert isinstance(failure.value.__cause__, InvalidContentError)
    assert memory.get_context("s") == []


def test_a_non_utf8_entry_is_corrupt_with_its_position_when_responses_are_decoded() -> None:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=True)
    memory = MemoryService(client)
    memory.add_message("s", "user", "fine")
    client.rpush(memory.keys.history("s"), b'{"role":"user","content":"\xff"}')
    with pytest.raises(CorruptEntryError) as failure:
        memory.get_context("s")
    assert (failure.value.session_id, failure.value.position) == ("s", 1)


def _no_slot(*args: Any, **kwargs: Any) -> Any:
    raise redis.exceptions.SlotNotCoveredError("slot 1234 is not covered by the cluster")


class _NoSlotCluster:
    """A cluster client whose every command (scripts too) finds no node for the slot."""

    def register_script(self, script: str) -> Any:
        return SimpleNamespace(sha="0" * 40, script=script)

    def __getattr__(self, name: str) -> Any:
        return _no_slot


def test_a_cluster_exception_outside_redis_error_is_a_storage_error() -> None:
    memory = MemoryService(_NoSlotCluster())  # type: ignore[arg-type]
    with pytest.raises(StorageError, match="not covered"):
        memory.get_context("s")
    with pytest.raises(StorageError, match="not covered") as failure:
        memory.add_message("s", "user", "hi")
    assert failure.value.may_have_written


# 4. The library's own UTF-8 bytes, whatever the client's encoding.


@pytest.mark.parametrize("decode", [False, True])
def test_the_clients_encoding_does_not_change_what_is_stored(decode: bool) -> None:
    client = fakeredis.FakeRedis(
        server=fakeredis.FakeServer(), encoding="latin-1", decode_responses=decode
    )
    memory = MemoryService(client)
    memory.add_message("s", "user", "café", message_id="m-é")
    memory.add_message("s", "user", "我叫张三")
    assert [m["content"] for m in memory.get_context("s")] == ["café", "我叫张三"]
    raw = fakeredis.FakeRedis(server=client.connection_pool.connection_kwargs["server"])
    entry = raw.lindex(memory.keys.history("s"), 0)
    assert isinstance(entry, bytes)
    assert '"content":"café"' in entry.decode("utf-8")


# 5. A write says what was stored.


def test_re_adding_an_id_with_other_content_is_a_conflict_and_changes_nothing(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, clock=lambda: 100.0)
    first = memory.add_message("s", "user", "first", message_id="m-1")
    with pytest.raises(cm.MessageIdConflictError, match="m-1"):
        memory.add_messages("s", [Message("user", "new", id="m-2"), Message("user", "x", id="m-1")])
    assert memory.get_messages("s") == [first]


def test_re_adding_the_same_message_returns_the_stored_version(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    times = iter([100.0, 200.0, 300.0])
    memory = MemoryService(fake_redis, clock=lambda: next(times))
    first = memory.add_message("s", "user", "hello", message_id="m-1")
    again = memory.add_message("s", "user", "hello", message_id="m-1")
    assert again == first
    assert again.created_at == 100.0
    result = memory.add_messages("s", [Message("user", "hello", id="m-1"), Message("user", "new")])
    assert [m.created_at for m in result.already_stored] == [100.0]
    assert [m.content for m in result.appended] == ["new"]


# 6. ttl=None makes a session persistent on its next write.


def test_switching_to_no_ttl_makes_the_session_persistent_on_its_next_write(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    MemoryService(fake_redis, ttl=1800).add_message("s", "user", "before the switch")
    memory = MemoryService(fake_redis, ttl=None)
    memory.add_message("s", "user", "after the switch")
    assert memory.ttl("s") is None
    history, _, seen, _ = memory.keys.all("s")
    assert [fake_redis.pttl(history), fake_redis.pttl(seen)] == [-1, -1]


# 7. A tool-call reply is stored as the model gave it.


def _openai_like(message: Any) -> Any:
    response = SimpleNamespace(choices=[SimpleNamespace(message=message)])
    completions = SimpleNamespace(create=lambda **_: response)
    return SimpleNamespace(chat=SimpleNamespace(completions=completions))


def test_a_tool_call_reply_from_the_openai_api_is_stored_exactly(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    pytest.importorskip("openai", reason="the openai extra is not installed")
    from chat_memory.openai_model import OpenAIChatModel

    call = SimpleNamespace(
        id="call_abc",
        type="function",
        function=SimpleNamespace(name="weather", arguments='{"city": "Paris"}'),
    )
    api_message = SimpleNamespace(role="assistant", content=None, tool_calls=[call])
    memory = MemoryService(fake_redis)
    chat = ChatService(memory, OpenAIChatModel(_openai_like(api_message), "m"))
    chat.reply("s", "Weather in Paris?")
    assert memory.get_context("s")[-1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }


def test_a_chat_model_may_answer_with_tool_calls(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    call = ToolCall("call-1", "weather", "{}")
    chat = ChatService(memory, FakeLLM(replies=[Message("assistant", None, tool_calls=(call,))]))
    chat.reply("s", "Weather?")
    assert memory.get_messages("s")[-1].tool_calls == (call,)


# 8. A wrong key type has an error of its own, naming the key and its type.


def test_a_wrong_key_type_names_the_key_and_its_type_and_writes_nothing(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis)
    key = memory.keys.history("s")
    fake_redis.hset(key, "a", "b")
    with pytest.raises(cm.WrongKeyTypeError) as failure:
        memory.add_message("s", "user", "hi")
    assert (failure.value.key, failure.value.key_type) == (key, "hash")
    assert not failure.value.may_have_written
    assert fake_redis.exists(*memory.keys.all("s")) == 1
    with pytest.raises(cm.WrongKeyTypeError):
        memory.get_context("s")


def test_settings_are_named_when_refused(fake_redis: fakeredis.FakeRedis) -> None:
    with pytest.raises(InvalidInputError, match="ttl"):
        MemoryService(fake_redis, ttl=timedelta(seconds=-1))


# Found in review: the retry paths themselves must stay truthful.


def test_a_turn_that_could_not_be_stored_hands_back_messages_with_ids_that_retry_once(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis)
    real_execute = fake_redis.execute_command
    scripts_run = 0

    def first_script_applied_but_answer_lost(*args: Any, **options: Any) -> Any:
        nonlocal scripts_run
        reply = real_execute(*args, **options)  # type: ignore[no-untyped-call]
        if str(args[0]).upper() == "EVALSHA":
            scripts_run += 1
            if scripts_run == 1:
                raise redis.ConnectionError("connection reset after the write")
        return reply

    fake_redis.execute_command = first_script_applied_but_answer_lost  # type: ignore[method-assign]
    chat = ChatService(memory, FakeLLM(replies=["Hello Ada."]))
    with pytest.raises(cm.ReplyNotStoredError) as failure:
        chat.reply("s", "I am Ada.")
    assert failure.value.may_have_written
    assert all(m.id for m in failure.value.messages)
    assert scripts_run == 1
    again = memory.add_messages("s", failure.value.messages)
    assert len(again.already_stored) == 2
    assert [m["content"] for m in memory.get_context("s")] == ["I am Ada.", "Hello Ada."]


def test_a_retry_of_stored_messages_writes_nothing_not_even_the_ttl(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, ttl=60)
    memory.add_message("s", "user", "hi", message_id="m-1")
    history, _, seen, _ = memory.keys.all("s")
    for key in (history, seen):
        fake_redis.pexpire(key, 10_000)
    memory.add_message("s", "user", "hi", message_id="m-1")
    assert all(0 < fake_redis.pttl(key) <= 10_000 for key in (history, seen))


def test_a_call_larger_than_the_idempotency_window_is_refused(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, max_history=2, idempotency_window=2)
    with pytest.raises(InvalidContentError, match="idempotency_window"):
        memory.add_messages("s", [Message("user", str(n)) for n in range(3)])
    assert fake_redis.keys() == []


def test_ids_written_by_an_older_version_beside_newer_ones_are_still_recognised(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis, max_history=2)
    for name in "abc":
        memory.add_message("s", "user", name, message_id=name)
    # What the 0.1 script does: push the entry and its id, trim both lists to the history.
    history, ids, *_ = memory.keys.all("s")
    fake_redis.rpush(history, '{"v":1,"id":"d","role":"user","content":"d","created_at":1.0}')
    fake_redis.rpush(ids, "d")
    fake_redis.ltrim(history, -2, -1)
    fake_redis.ltrim(ids, -2, -1)
    memory.add_message("s", "user", "d", message_id="d")
    assert [m["content"] for m in memory.get_context("s")] == ["c", "d"]


def test_a_fingerprint_another_writer_mangled_does_not_escape_as_a_raw_error(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    memory = MemoryService(fake_redis)
    stored = memory.add_message("s", "user", "hi", message_id="m-1")
    fingerprint = fake_redis.hget(memory.keys.seen("s"), "m-1")
    assert fingerprint is not None
    digest = (fingerprint if isinstance(fingerprint, str) else fingerprint.decode()).split()[0]
    for mangled in (digest, f"{digest} not-json", f"{digest} NaN"):
        fake_redis.hset(memory.keys.seen("s"), "m-1", mangled)
        again = memory.add_message("s", "user", "hi", message_id="m-1")
        assert (again.id, again.content) == (stored.id, stored.content)
    assert len(memory.get_context("s")) == 1


def test_a_stream_of_something_other_than_text_is_refused_and_stores_nothing(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    class OddStream(FakeLLM):
        def stream(self, messages: list[dict[str, Any]]) -> Any:
            yield "fine "
            yield 42

    memory = MemoryService(fake_redis)
    chat = ChatService(memory, OddStream(replies=["unused"]))
    with pytest.raises(InvalidContentError, match="streamed int"):
        list(chat.stream("s", "hi"))
    assert memory.get_context("s") == []
