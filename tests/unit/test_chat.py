from typing import Any

import fakeredis
import pytest

from chat_memory import (
    ChatModel,
    ChatService,
    InvalidContentError,
    InvalidInputError,
    MemoryService,
    Message,
    PromptTooLargeError,
    ReplyNotStoredError,
    ToolCall,
    approximate_tokens,
)
from chat_memory._budget import fit_to_budget
from chat_memory.testing import FakeLLM, FakeLLMError, FakeLLMExhausted, count_words


@pytest.fixture
def memory() -> MemoryService:
    return MemoryService(fakeredis.FakeRedis(server=fakeredis.FakeServer()), max_history=10)


def test_a_turn_prompts_with_system_history_and_new_message_then_stores_both(
    memory: MemoryService,
) -> None:
    model = FakeLLM(["Hello Ada.", "You are Ada."])
    chat = ChatService(memory, model, system_prompt="Be kind.")
    assert chat.reply("s", "I am Ada.") == "Hello Ada."
    assert chat.reply("s", "Who am I?") == "You are Ada."
    assert model.last_prompt == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "I am Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "Who am I?"},
    ]
    assert [m["role"] for m in memory.get_context("s")] == ["user", "assistant"] * 2


def test_a_failing_model_stores_nothing_and_its_error_passes_unchanged(
    memory: MemoryService,
) -> None:
    model = FakeLLM()
    failure = TimeoutError("model timed out")
    model.fail_next(failure)
    with pytest.raises(TimeoutError) as raised:
        ChatService(memory, model).reply("s", "hi")
    assert raised.value is failure
    assert memory.get_context("s") == []


def test_a_model_that_returns_no_text_stores_nothing(memory: MemoryService) -> None:
    class Broken:
        def complete(self, messages: list[dict[str, Any]]) -> str:
            return None  # type: ignore[return-value]

    with pytest.raises(InvalidContentError, match="returned NoneType"):
        ChatService(memory, Broken()).reply("s", "hi")
    assert memory.get_context("s") == []


@pytest.mark.parametrize("model", [None, object(), type("NotCallable", (), {"complete": 1})()])
def test_a_model_that_cannot_answer_is_refused_when_the_chat_is_set_up(
    memory: MemoryService, model: Any
) -> None:
    # A review found ChatService(memory, None).reply(...) raised a bare AssertionError
    # ("only a chat turn asks the model") after reading the session.
    with pytest.raises(InvalidInputError, match=r"^the model cannot answer: it has no complete"):
        ChatService(memory, model)


@pytest.mark.parametrize(("summarize", "named"), [(None, "None"), ("Summary: all of it", "str")])
def test_a_compaction_without_a_summarizer_is_refused_and_folds_nothing(
    memory: MemoryService, summarize: Any, named: str
) -> None:
    # The same review: memory.compact(s, None, ...) read the session, then raised a bare
    # AssertionError ("only a compaction summarizes").
    for text in ("one", "two", "three"):
        memory.add_message("s", "user", text)
    refusal = (
        f"summarize must be a function of the messages that returns the summary text, not {named}"
    )
    with pytest.raises(InvalidInputError) as refused:
        memory.compact("s", summarize, keep_last=1)
    assert str(refused.value) == refusal
    assert [m.content for m in memory.get_messages("s")] == ["one", "two", "three"]


def test_invalid_user_text_is_refused_before_the_model_is_called(memory: MemoryService) -> None:
    model = FakeLLM()
    with pytest.raises(InvalidContentError):
        ChatService(memory, model).reply("s", 42)  # type: ignore[arg-type]
    assert model.prompts == []


def test_the_fake_model_fails_loudly_when_its_script_runs_out() -> None:
    model = FakeLLM(replies=["one"])
    assert model.complete([{"role": "user", "content": "hi"}]) == "one"
    with pytest.raises(FakeLLMExhausted, match="no scripted reply left"):
        model.complete([{"role": "user", "content": "hi"}])
    with pytest.raises(FakeLLMExhausted):
        FakeLLM().complete([{"role": "user", "content": "hi"}])


def test_the_fake_model_echoes_only_when_asked_and_is_a_chat_model() -> None:
    model = FakeLLM(echo=True)
    assert isinstance(model, ChatModel)
    assert model.complete([{"role": "user", "content": "hi"}]) == "echo: hi"
    model.fail_next()
    with pytest.raises(FakeLLMError):
        model.complete([])
    with pytest.raises(AssertionError, match="never prompted"):
        FakeLLM().last_prompt  # noqa: B018 - the property raises


def test_the_budget_keeps_the_system_prompt_and_the_newest_history(memory: MemoryService) -> None:
    memory.add_messages("s", [{"role": "user", "content": w} for w in ["a b c", "d e", "f g h"]])
    model = FakeLLM(echo=True)
    chat = ChatService(
        memory, model, system_prompt="sys", max_prompt_tokens=6, token_counter=count_words
    )
    chat.reply("s", "new")
    assert [m["content"] for m in model.last_prompt] == ["sys", "f g h", "new"]
    with pytest.raises(PromptTooLargeError, match="need 3 tokens more"):
        ChatService(memory, model, system_prompt="a b c", max_prompt_tokens=3,
                    token_counter=count_words).reply("s", "d e f")  # fmt: skip


def test_get_context_with_a_budget_never_splits_a_tool_call(memory: MemoryService) -> None:
    call = ToolCall("c1", "weather", "{}")
    memory.add_messages(
        "s",
        [
            Message("user", "weather?"),
            Message("assistant", None, tool_calls=(call,)),
            Message("tool", "sunny", tool_call_id="c1"),
            Message("user", "thanks"),
        ],
    )
    full = memory.get_context("s")
    assert len(full) == 4
    cost = [approximate_tokens(m) for m in full]
    assert memory.get_context("s", max_tokens=cost[3] + cost[2]) == full[3:]
    assert memory.get_context("s", max_tokens=sum(cost[1:])) == full[1:]
    assert memory.get_context("s", max_tokens=0) == []


def test_the_budget_stops_at_the_first_message_that_does_not_fit() -> None:
    history = [Message("user", "one"), Message("user", "two three four"), Message("user", "five")]
    kept = fit_to_budget(history, max_tokens=2, count=count_words)
    assert kept == [history[2]]


def test_approximate_tokens_counts_cjk_per_character() -> None:
    assert approximate_tokens({"role": "user", "content": "abcdefgh"}) == 4 + 2
    assert approximate_tokens({"role": "user", "content": "我叫张三"}) == 4 + 4


def test_orphan_tool_results_are_left_out_of_the_context() -> None:
    memory = MemoryService(fakeredis.FakeRedis(server=fakeredis.FakeServer()), max_history=2)
    memory.add_message("s", "assistant", None, tool_calls=[ToolCall("c1", "f", "{}")])
    memory.add_message("s", "tool", "result", tool_call_id="c1")
    memory.add_message("s", "user", "next")
    assert memory.get_context("s") == [{"role": "user", "content": "next"}]
    assert len(memory.get_messages("s")) == 2


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_bad_prompt_budget_is_refused(memory: MemoryService, bad: object) -> None:
    with pytest.raises(InvalidInputError, match="max_prompt_tokens must be a whole number >= 1"):
        ChatService(memory, FakeLLM(), max_prompt_tokens=bad)  # type: ignore[arg-type]


def test_an_unstored_tool_call_answer_is_handed_back_as_the_turn_stores_it() -> None:
    """A Message answer comes back in the error exactly as the turn holds it: with its id."""
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    memory = MemoryService(client)
    call = Message("assistant", None, tool_calls=(ToolCall("c1", "get_weather", "{}"),))
    chat = ChatService(memory, FakeLLM([call]))
    client.set(memory.keys.seen("s"), b"not a hash")  # the store fails after the model answered
    with pytest.raises(ReplyNotStoredError) as raised:
        chat.respond("s", "Weather?")
    error = raised.value
    assert error.reply is error.messages[1]
    assert isinstance(error.reply, Message)
    assert error.reply.id
    assert error.reply.tool_calls == call.tool_calls


def test_approximate_tokens_counts_a_hand_made_tool_call_with_missing_parts() -> None:
    """An app may count its own dicts: a tool call without function, name or arguments counts 0."""
    bare = approximate_tokens({"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]})
    named = {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "abcd"}}]}
    given = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"function": {"arguments": "abcd"}}],
    }
    empty = approximate_tokens({"role": "assistant", "content": ""})
    assert bare == empty
    assert approximate_tokens(named) == approximate_tokens(given) == empty + 1
