"""Behaviours that mutation testing found unguarded (issue 14), each pinned by a test.

Every test here kills a mutant that changes what a user gets; the comment
names the mutant.
"""

from typing import Any

import fakeredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from chat_memory import (
    DEFAULT_MAX_MESSAGE_BYTES,
    MAX_SESSION_ID_CHARS,
    ChatService,
    InvalidContentError,
    InvalidInputError,
    KeyLayout,
    MemoryService,
    Message,
    MessageTooLargeError,
    PermissionDeniedError,
    ReplyNotStoredError,
    StorageUnavailableError,
    ToolCall,
    WriteOutcomeUnknownError,
    approximate_tokens,
)
from chat_memory._budget import drop_orphan_tool_results, fit_to_budget
from chat_memory._message import message_from_chat
from chat_memory.testing import FakeLLM, count_words


def _tool_exchange(call_id: str) -> list[Message]:
    call = ToolCall(call_id, "weather", '{"city": "Paris"}')
    return [
        Message("assistant", None, tool_calls=(call,)),
        Message("tool", "18°C", tool_call_id=call_id, name="weather"),
    ]


def test_a_budget_never_keeps_a_tool_result_without_its_call() -> None:
    # _budget.py groups[-1] -> groups[+1]: a result joined to the wrong group.
    messages = [
        Message("user", "one"),
        Message("user", "two"),
        Message("user", "three"),
        *_tool_exchange("c-1"),
    ]
    # The exchange costs 4 (3 for the call, 1 for the result): with 3 tokens it goes whole.
    assert fit_to_budget(messages, 3, count_words) == []
    assert fit_to_budget(messages, 5, count_words) == messages[2:]


def test_several_leading_orphan_results_are_all_left_out_without_hanging() -> None:
    # _budget.py start += 1 -> start = 1: two orphan results looped forever.
    orphans = [Message("tool", "a", tool_call_id="x"), Message("tool", "b", tool_call_id="y")]
    rest = [Message("user", "hi")]
    assert drop_orphan_tool_results([*orphans, *orphans, *rest]) == rest


def test_the_default_token_counter_on_realistic_text() -> None:
    # approximate_tokens: 4 overhead, ceil(ascii / 4), one per non-ASCII character,
    # tool-call names and arguments included.
    assert approximate_tokens({"role": "user", "content": "What's the weather in Paris?"}) == 11
    assert approximate_tokens({"role": "user", "content": "我叫张三"}) == 8
    with_call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function",
             "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
        ],
    }  # fmt: skip
    assert approximate_tokens(with_call) == 4 + 6  # "weather" + 17 characters = 24 / 4


def test_the_prompt_preview_is_what_the_turn_sends(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    memory.add_message("s", "user", "I am Ada.")
    model = FakeLLM(replies=["Hi Ada."])
    chat = ChatService(memory, model, system_prompt="Be brief.")
    preview = chat.prompt("s", "Who am I?")
    chat.reply("s", "Who am I?")
    assert preview == model.last_prompt
    assert preview[0] == {"role": "system", "content": "Be brief."}


def _dead_server() -> redis.Redis:
    return redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )


def test_ttl_and_clear_in_an_outage_say_what_they_could_have_done() -> None:
    memory = MemoryService(_dead_server())
    with pytest.raises(StorageUnavailableError) as ttl_failure:
        memory.ttl("s")
    assert not ttl_failure.value.may_have_written
    with pytest.raises(WriteOutcomeUnknownError) as clear_failure:
        memory.clear("s")
    assert clear_failure.value.may_have_written


def test_the_exact_boundaries_are_accepted(fake_redis: fakeredis.FakeRedis) -> None:
    memory = MemoryService(fake_redis)
    assert memory.max_history == 20
    longest_session = "s" * MAX_SESSION_ID_CHARS
    memory.add_message(longest_session, "user", "hi", message_id="m" * 128)
    with pytest.raises(InvalidContentError):
        memory.add_message("s", "user", "hi", message_id="m" * 129)
    exact = MemoryService(fake_redis, max_message_bytes=200, clock=lambda: 1.0)
    stored = exact.add_message("t", "user", "", message_id="x")
    size = len(fake_redis.lindex(exact.keys.history("t"), 0) or b"")
    fitting = "a" * (200 - size)
    exact.add_message("t", "user", fitting, message_id="y")
    with pytest.raises(MessageTooLargeError):
        exact.add_message("t", "user", fitting + "a", message_id="z")
    assert stored.content == ""
    assert DEFAULT_MAX_MESSAGE_BYTES == 1024 * 1024


def test_a_chat_dict_keeps_every_field() -> None:
    # message_from_chat dropping id, tool_call_id or name; refusing a call without "type".
    tool = message_from_chat(
        {"role": "tool", "content": "18°C", "tool_call_id": "c-1", "name": "weather", "id": "m-9"}
    )
    assert (tool.id, tool.tool_call_id, tool.name) == ("m-9", "c-1", "weather")
    call: dict[str, Any] = {"id": "c-1", "function": {"name": "weather", "arguments": "{}"}}
    assistant = message_from_chat({"role": "assistant", "content": None, "tool_calls": [call]})
    assert assistant.tool_calls == (ToolCall("c-1", "weather", "{}"),)
    with pytest.raises(InvalidContentError):
        message_from_chat({"role": "assistant", "content": None})


@pytest.mark.parametrize("when", [float("nan"), float("inf")])
def test_a_time_that_is_not_finite_is_refused(when: float) -> None:
    with pytest.raises(InvalidContentError, match="finite"):
        Message("user", "hi", id="m", created_at=when)


def test_the_default_counter_takes_tool_calls_without_a_name_or_arguments() -> None:
    # approximate_tokens is public: a hand-built dict may leave out what to_chat() always has.
    bare = {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}
    assert approximate_tokens(bare) == 4
    named = {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "abcd"}}]}
    assert approximate_tokens(named) == 5
    args = {"role": "assistant", "content": None, "tool_calls": [{"function": {"arguments": "ab"}}]}
    assert approximate_tokens(args) == 5


def test_reply_is_empty_text_for_an_answer_of_tool_calls_only() -> None:
    call = ToolCall("call-1", "weather", '{"city": "Paris"}')
    model = FakeLLM([Message("assistant", None, tool_calls=(call,))])
    chat = ChatService(MemoryService(fakeredis.FakeRedis()), model)
    assert chat.reply("s", "Weather in Paris?") == ""


def test_messages_the_app_dates_without_an_id_keep_their_time_and_each_gets_an_id() -> None:
    # _core.py _stamp: "created_at if ... is not None else now" always taking now, and
    # "id is not None and" -> "id is None and" storing such a message without an id (the
    # second one then looked like a retry of the first and was dropped).
    memory = MemoryService(fakeredis.FakeRedis())
    memory.add_messages("s", [Message("user", "one", created_at=100.0)])
    memory.add_messages("s", [Message("user", "two", created_at=200.0)])
    stored = memory.get_messages("s")
    assert [(m.content, m.created_at) for m in stored] == [("one", 100.0), ("two", 200.0)]
    assert all(isinstance(m.id, str) and m.id for m in stored)
    assert stored[0].id != stored[1].id


@pytest.mark.parametrize("user_id", ["x" * 257, "", 7])
def test_a_key_layout_built_directly_refuses_a_bad_user_id(user_id: Any) -> None:
    # _keys.py KeyLayout.__post_init__: the error class dropped (None) made the refusal a
    # TypeError; for_user checks first, so only a layout built directly reaches it.
    with pytest.raises(InvalidInputError, match="user id"):
        KeyLayout("chat", user_id)


def test_tool_calls_that_are_not_tool_call_objects_are_refused_and_nothing_is_stored() -> None:
    # _message.py validate: "not a tuple or not all ToolCall" -> "and" accepted a tuple of dicts.
    memory = MemoryService(fakeredis.FakeRedis())
    with pytest.raises(InvalidContentError, match="tuple of ToolCall"):
        memory.add_messages("s", [Message("assistant", None, tool_calls=({"id": "c"},))])  # type: ignore[arg-type]
    assert memory.get_messages("s") == []


@pytest.mark.parametrize("user_id", ["x" * 257, "", 7])
def test_a_user_memory_refuses_a_bad_user_id(user_id: Any) -> None:
    # _keys.py KeyLayout.for_user: the error class dropped (None) made the refusal a TypeError.
    with pytest.raises(InvalidInputError, match="user id"):
        MemoryService(fakeredis.FakeRedis()).for_user(user_id)


def test_a_too_large_message_is_named_by_role_size_and_limit() -> None:
    # exceptions.py MessageTooLargeError: role and limit left unset (the README names them).
    memory = MemoryService(fakeredis.FakeRedis(), max_message_bytes=100)
    with pytest.raises(MessageTooLargeError) as failure:
        memory.add_message("s", "assistant", "x" * 200)
    assert (failure.value.role, failure.value.limit) == ("assistant", 100)
    assert failure.value.size > 200


def test_the_model_answering_as_the_user_is_refused() -> None:
    # _chat.py _assistant_message: "is a Message and role is assistant" -> "or".
    model = FakeLLM([Message("user", "I am the user now")])
    chat = ChatService(MemoryService(fakeredis.FakeRedis()), model)
    with pytest.raises(InvalidContentError, match="not a string or an assistant Message"):
        chat.reply("s", "hi")


class _WritesLost(fakeredis.FakeRedis):
    """Reads work; every script run loses its answer, as when the server dies mid-write."""

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if str(args[0]).upper() in ("EVALSHA", "EVAL"):
            raise redis.ConnectionError("Connection closed by server.")
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_a_turn_whose_write_was_lost_says_it_may_have_been_stored() -> None:
    # exceptions.py ReplyNotStoredError: may_have_written taken from the cause (getattr(None,
    # ...) always False would tell the caller the turn was surely not stored: a retry without
    # the handed-back ids could then store it twice).
    chat = ChatService(MemoryService(_WritesLost()), FakeLLM(replies=["Hi."]))
    with pytest.raises(ReplyNotStoredError) as failure:
        chat.reply("s", "Hello")
    assert isinstance(failure.value.__cause__, WriteOutcomeUnknownError)
    assert failure.value.may_have_written


@pytest.mark.parametrize("seconds", [1, 0.5])
def test_a_ttl_of_a_second_or_less_is_accepted_and_applied(seconds: float) -> None:
    # _core.py ttl_milliseconds: "0 < seconds" -> "1 < seconds" refused a TTL of one second.
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, ttl=seconds)
    memory.add_message("s", "user", "hi")
    assert 0 < client.pttl(memory.keys.history("s")) <= seconds * 1000


class _ReadsRefused(fakeredis.FakeRedis):
    """A Redis user that may not read the history: every LRANGE is refused by the ACL."""

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if str(args[0]).upper() == "LRANGE":
            raise redis.exceptions.NoPermissionError(
                "User app has no permissions to run the 'lrange' command"
            )
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_a_read_the_acl_refuses_is_a_permission_error_not_a_key_of_another_type() -> None:
    # _errors.py wrong_type_key: "ResponseError and starts with WRONGTYPE" -> "or" took every
    # refusal (ACL, read-only replica, out of memory) for a key holding another type.
    with pytest.raises(PermissionDeniedError):
        MemoryService(_ReadsRefused()).get_context("s")


class _ScriptFailsHalfway(fakeredis.FakeRedis):
    """Every script run fails with an error reply, as a script that broke after a write."""

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if str(args[0]).upper() == "EVALSHA":
            raise redis.exceptions.ResponseError("ERR Error running script: boom")
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_an_append_that_failed_halfway_hands_back_the_messages_it_may_have_written() -> None:
    # _errors.py storage_error: the messages dropped from WriteOutcomeUnknownError left the
    # caller unable to retry them.
    memory = MemoryService(_ScriptFailsHalfway())
    with pytest.raises(WriteOutcomeUnknownError) as failure:
        memory.add_message("s", "user", "hi", message_id="m-1")
    assert [(m.id, m.content) for m in failure.value.messages] == [("m-1", "hi")]


def test_a_failed_write_other_than_an_append_does_not_call_itself_one() -> None:
    # _errors.py storage_error said "the append failed" for every script: a user reading
    # why set_metadata or a user's clear failed was sent looking at appends.
    memory = MemoryService(_ScriptFailsHalfway())
    with pytest.raises(WriteOutcomeUnknownError) as metadata:
        memory.set_metadata("s", {"title": "Trip"})
    with pytest.raises(WriteOutcomeUnknownError) as clearing:
        memory.for_user("ada").clear("s")
    for failure in (metadata, clearing):
        assert "append" not in str(failure.value)
        assert "it may or may not have happened" in str(failure.value)
