"""Steps about the chat turn and the model it prompts.

Usage::

    Given the system prompt is "You are a helpful travel agent."
    Given the prompt budget is 12 tokens
    Given the model will reply "Nice to meet you, Ada."
    Given the model will fail
    Given the user asked "My name is Ada."
    When the user asks "What is my name?"
    Then the model was prompted with:
      | role | content |
      | user | My name is Ada. |
    Given user "ada" asked "Plan my Paris trip" in session "paris"
    When user "ada" asks "Which museums?" in session "paris"
    Then the prompt begins with the summary "Ada, who lives in Paris."
    Then the last prompt mentions "I am Alice."
    Then the last prompt does not mention "Bob"
    Then the turn fails with the model's own error
    When the turn the error handed back is stored twice
    Then the turn was not stored, and the error hands back the answer "Nice to meet you, Ada." with the turn

The model is :class:`chat_memory.testing.FakeLLM`, which records every prompt.
Scenarios tagged ``@llm_smoke`` talk to a real OpenAI-compatible endpoint
instead (``LLM_BASE_URL``, ``LLM_API_KEY``, ``LLM_MODEL``).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    ChatMemoryError,
    ChatModel,
    ChatService,
    InvalidInputError,
    MemoryService,
    Message,
    ReplyNotStoredError,
    TokenCounter,
    ToolCall,
    approximate_tokens,
)
from chat_memory.testing import AsyncFakeLLM, FakeLLM, FakeLLMError, count_words
from chat_memory_suite.apis import Services
from chat_memory_suite.compare import expect_messages, expect_text, table
from chat_memory_suite.tables import MESSAGE_COLUMNS, messages, reads_json, reads_table

from .sessions import setting_value

REQUIRES = ("chat",)
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the real-model scenarios, with the reason, when no endpoint is configured."""
    if os.environ.get("LLM_BASE_URL"):
        return
    reason = "needs a real model: set LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL)"
    for item in items:
        if item.get_closest_marker("llm_smoke"):
            item.add_marker(pytest.mark.skip(reason=reason))


@dataclass
class ChatSettings:
    """The chat turn's settings from the scenario's Given steps."""

    system_prompt: str | None = None
    max_prompt_tokens: int | None = None
    token_counter: TokenCounter | None = None
    tools: dict[str, str] = field(default_factory=dict)
    """Tools the model must call one of, each with its one text parameter (a real model's
    ``tools``, with ``tool_choice="required"``)."""
    built: bool = field(default=False, repr=False)


@dataclass
class Turn:
    """The outcome of the scenario's last chat turn."""

    answer: str | None = None
    error: Exception | None = None
    pieces: list[str] = field(default_factory=list)
    preview: list[dict[str, object]] = field(default_factory=list)


@pytest.fixture
def chat_settings() -> ChatSettings:
    """The chat settings of this scenario."""
    return ChatSettings()


@pytest.fixture
def model(
    request: pytest.FixtureRequest, services: Services, chat_settings: ChatSettings
) -> ChatModel:
    """The model the chat turn prompts: a recording fake, or a real one for @llm_smoke."""
    if request.node.get_closest_marker("llm_smoke") is None:
        return services.fake_model()
    base_url, api_key = os.environ["LLM_BASE_URL"], os.environ.get("LLM_API_KEY", "-")
    name = os.environ.get("LLM_MODEL", "gpt-4o-mini")
    options: dict[str, Any] = {"temperature": 0}
    if chat_settings.tools:
        options["tools"] = [_tool(*tool) for tool in chat_settings.tools.items()]
        options["tool_choice"] = "required"
    chat_settings.built = True
    if services.api == "async":
        from openai import AsyncOpenAI

        from chat_memory.openai_model import AsyncOpenAIChatModel

        client = AsyncOpenAI(base_url=base_url, api_key=api_key)
        return cast(ChatModel, AsyncOpenAIChatModel(client, name, **options))
    from openai import OpenAI

    from chat_memory.openai_model import OpenAIChatModel

    return OpenAIChatModel(OpenAI(base_url=base_url, api_key=api_key), name, **options)


def _tool(name: str, parameter: str) -> dict[str, Any]:
    """A function tool taking one text argument, as the chat-completions API describes one."""
    parameters = {"type": "object", "properties": {parameter: {"type": "string"}}}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.fixture
def fake_model(model: ChatModel) -> FakeLLM:
    """The recording fake model (steps that script or inspect it need the fake)."""
    # The async fake scripts and records exactly as the sync one does.
    assert isinstance(model, FakeLLM | AsyncFakeLLM), "this step needs the fake model"
    return model


class _WholeRepliesOnly:
    """A model that answers whole replies only (``complete``), with no ``stream`` method."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    def complete(self, messages: list[dict[str, Any]]) -> Any:
        """Answer as the model underneath does (a coroutine, from an asyncio model)."""
        return self._model.complete(messages)


@given("the model cannot stream", target_fixture="model")
def model_cannot_stream(model: ChatModel) -> ChatModel:
    """The app's model answers whole replies only, as many wrappers of a chat API do.

    Given the model cannot stream
    """
    return cast(ChatModel, _WholeRepliesOnly(model))


class _NotAModel:
    """What reaches the chat when an app wires the wrong object: a misspelt ``completion``."""

    def completion(self, messages: list[dict[str, Any]]) -> str:
        """Answer, under a name the chat turn does not call."""
        return "Hello."


class _StreamsNumbers(_WholeRepliesOnly):
    """A model whose stream yields a number, as a broken wrapper of a streaming API can."""

    def __init__(self, model: ChatModel, number: int, awaited: bool) -> None:
        super().__init__(model)
        self._number, self._awaited = number, awaited

    def stream(self, messages: list[dict[str, Any]]) -> Any:
        """Yield the number as the only chunk (asynchronously for an asyncio chat)."""
        if not self._awaited:
            return iter([self._number])

        async def chunks() -> AsyncIterator[int]:
            yield self._number

        return chunks()


@given(parsers.parse("the model streams the number {number:d}"), target_fixture="model")
def model_streams_number(model: ChatModel, services: Services, number: int) -> ChatModel:
    """The app's model streams a number instead of text (a broken wrapper of a streaming API).

    Given the model streams the number 42
    """
    return cast(ChatModel, _StreamsNumbers(model, number, services.api == "async"))


@pytest.fixture
def chat(
    memory: MemoryService, model: ChatModel, chat_settings: ChatSettings, services: Services
) -> ChatService:
    """The chat turn under test."""
    chat_settings.built = True
    return _chat_over(services, memory, model, chat_settings)


def _chat_over(
    services: Services, memory: MemoryService, model: ChatModel, settings: ChatSettings
) -> ChatService:
    """A chat turn over ``memory`` with the scenario's system prompt, budget and counter."""
    return services.chat(
        memory,
        model,
        system_prompt=settings.system_prompt,
        max_prompt_tokens=settings.max_prompt_tokens,
        token_counter=settings.token_counter,
    )


def _take_turn(turn: Turn, chat: ChatService, session_id: str, text: str) -> None:
    """Run one turn; a failure of the model, or of storing the turn, is kept for a Then step."""
    turn.answer, turn.error = None, None
    try:
        turn.answer = chat.reply(session_id, text)
    except (FakeLLMError, ReplyNotStoredError) as exc:
        turn.error = exc


@pytest.fixture
def turn() -> Turn:
    """The scenario's last chat turn."""
    return Turn()


@given(parsers.parse('the system prompt is "{text}"'))
def system_prompt_is(chat_settings: ChatSettings, text: str) -> None:
    """Give every prompt this system message first (it is never stored in the history).

    Given the system prompt is "You are a helpful travel agent."
    """
    assert not chat_settings.built, "chat settings must come before the first turn"
    chat_settings.system_prompt = text


@given(parsers.parse("the prompt budget is {tokens:d} tokens"))
def prompt_budget_is(chat_settings: ChatSettings, tokens: int) -> None:
    """Keep every prompt within this many tokens, dropping the oldest history first.

    Given the prompt budget is 12 tokens
    """
    assert not chat_settings.built, "chat settings must come before the first turn"
    chat_settings.max_prompt_tokens = tokens


@when(parsers.parse("the app sets up the chat with {setting} = {value}"))
def app_sets_up_chat(
    services: Services,
    memory: MemoryService,
    model: ChatModel,
    setup_error: list[InvalidInputError],
    setting: str,
    value: str,
) -> None:
    """The app builds the chat turn with this keyword setting, written as JSON; it may be refused.

    When the app sets up the chat with max_prompt_tokens = 0
    """
    chosen = replace(ChatSettings(), **{setting: setting_value(value)})  # a misspelt one: TypeError
    _set_up(setup_error, lambda: _chat_over(services, memory, model, chosen))


@when("the app sets up the chat with an object that is not a model")
def app_sets_up_chat_without_model(
    services: Services, memory: MemoryService, setup_error: list[InvalidInputError]
) -> None:
    """The app wires the wrong object as its model: one whose method is not ``complete``.

    When the app sets up the chat with an object that is not a model
    """
    not_a_model = cast(ChatModel, _NotAModel())
    _set_up(setup_error, lambda: _chat_over(services, memory, not_a_model, ChatSettings()))


def _set_up(setup_error: list[InvalidInputError], build: Callable[[], object]) -> None:
    """Build the chat with ``build``; a refusal is kept for a "the setup is refused" step."""
    try:
        build()
    except InvalidInputError as exc:
        setup_error.append(exc)


@given("tokens are counted one per word")
def tokens_one_per_word(chat_settings: ChatSettings) -> None:
    """Count each word of a message as one token, so prompt budgets are easy to follow.

    Given tokens are counted one per word
    """
    assert not chat_settings.built, "chat settings must come before the first turn"
    chat_settings.token_counter = count_words


@given(parsers.parse('the model will reply "{text}"'))
def model_will_reply(fake_model: FakeLLM, text: str) -> None:
    """Script the model's next reply (without one it echoes the user).

    Replies queue: given twice, the first turn gets the first reply and the
    second turn the second; once the queue is empty, the model echoes the
    user's message again.

    Given the model will reply "Nice to meet you, Ada."
    """
    fake_model.will_reply(text)


@given(parsers.parse('the model will reply with message "{message_id}" saying "{text}"'))
def model_will_reply_with_id(fake_model: FakeLLM, text: str, message_id: str) -> None:
    """Script the model's next reply as a message with an id of its own (e.g. the API's).

    Given the model will reply with message "resp-1" saying "Hello, Ada."
    """
    fake_model.will_reply(Message("assistant", text, id=message_id))


@then(parsers.parse('the answer is stored as message "{message_id}"'))
def answer_stored_as(memory: MemoryService, session_id: str, message_id: str) -> None:
    """The session's newest message is the answer, under the id the model gave it, once.

    Then the answer is stored as message "resp-1"
    """
    stored = memory.get_messages(session_id)
    assert stored, f'session "{session_id}" holds nothing'
    ids = [m.id for m in stored]
    assert ids.count(message_id) == 1, f"the ids stored: {ids}"
    newest = stored[-1]
    assert (newest.role, newest.id) == ("assistant", message_id), f"the newest: {newest}"


@given(parsers.parse('the model will call the tool "{name}" with the arguments {arguments}'))
def model_will_call_tool(fake_model: FakeLLM, name: str, arguments: str) -> None:
    """Script the model's next reply as a tool call (an assistant Message, no text).

    Given the model will call the tool "weather" with the arguments {"city": "Paris"}
    """
    call = ToolCall(id="call-1", name=name, arguments=arguments)
    fake_model.will_reply(Message("assistant", None, tool_calls=(call,)))


@given(parsers.parse('the model must call the tool "{name}", which takes a "{parameter}"'))
def model_must_call_tool(
    request: pytest.FixtureRequest, chat_settings: ChatSettings, name: str, parameter: str
) -> None:
    """A real model (@llm_smoke) is offered this tool, with one text parameter, and must call it.

    Given the model must call the tool "weather", which takes a "city"
    """
    if request.node.get_closest_marker("llm_smoke") is None:
        raise AssertionError(
            "only a real model (@llm_smoke) is offered tools: script the fake model's call"
            ' with: Given the model will call the tool "..." with the arguments {...}'
        )
    if chat_settings.built:
        raise AssertionError("the model's tools must be set before the first chat turn")
    chat_settings.tools[name] = parameter


@then(
    parsers.parse(
        'the context ends with the assistant calling "{name}" with "{argument}" set to "{value}"'
    )
)
def context_ends_with_call(
    memory: MemoryService, session_id: str, name: str, argument: str, value: str
) -> None:
    """The turn's answer, a tool call, is remembered with its call id and its JSON arguments.

    Then the context ends with the assistant calling "weather" with "city" set to "Paris"
    """
    newest = memory.get_messages(session_id)[-1]
    remembered = {
        "role": newest.role,
        "calls": [(c.name, json.loads(c.arguments), bool(c.id)) for c in newest.tool_calls],
    }
    expected = {"role": "assistant", "calls": [(name, {argument: value}, True)]}
    expect_text(
        "the newest message, with its calls (name, arguments, has an id)", remembered, expected
    )


@given(parsers.parse("the model will reply the number {number:d}"))
def model_will_reply_number(fake_model: FakeLLM, number: int) -> None:
    """The model's next answer is a number: neither text nor a message (a broken wrapper's).

    Given the model will reply the number 42
    """
    fake_model.will_reply(cast(Any, number))


@given(parsers.parse("the model will reply the JSON string {text}"))
def model_will_reply_json(fake_model: FakeLLM, text: str) -> None:
    r"""Script the model's next reply, written as a JSON string (for text Gherkin cannot hold).

    Given the model will reply the JSON string "Hello \ud83d"
    """
    fake_model.will_reply(json.loads(text))


@given("the model will fail", target_fixture="model_failure")
def model_will_fail(fake_model: FakeLLM) -> Exception:
    """Make the model's next call fail, as an unreachable or overloaded model does.

    Given the model will fail
    """
    failure = FakeLLMError("the model is overloaded")
    fake_model.fail_next(failure)
    return failure


@given(parsers.parse('the user asked "{text}"'))
@when(parsers.parse('the user asks "{text}"'))
def user_asks(chat: ChatService, session_id: str, turn: Turn, text: str) -> None:
    """One whole chat turn: the user's message, the model's reply, both remembered.

    Given the user asked "My name is Ada."
    When the user asks "What is my name?"
    """
    _take_turn(turn, chat, session_id, text)


@given(parsers.parse('the user of session "{name}" asked "{text}"'))
@when(parsers.parse('the user of session "{name}" asks "{text}"'))
def user_of_session_asks(chat: ChatService, turn: Turn, name: str, text: str) -> None:
    """One whole chat turn in the named session (for users talking in turns).

    Given the user of session "alice" asked "I am Alice."
    When the user of session "alice" asks "Who am I?"
    """
    turn.answer, turn.error = chat.reply(name, text), None


@given(parsers.parse('user "{user}" asked "{text}" in session "{name}"'))
@when(parsers.parse('user "{user}" asks "{text}" in session "{name}"'))
def user_asks_in_own_session(
    memory: MemoryService,
    model: ChatModel,
    chat_settings: ChatSettings,
    services: Services,
    turn: Turn,
    user: str,
    text: str,
    name: str,
) -> None:
    """One whole chat turn in one of the user's own sessions (listed, erased with the user).

    The same turn as "the user asks", with the same system prompt and budget,
    in the session ``name`` of ``user``: the one "user ... said ... in
    session ..." writes to and "the sessions of user ... are listed" shows. A
    failure of the model, or of storing the turn, is kept for a Then step;
    "Then the assistant answers ..." reads its answer. The "context" steps
    still look at the current session, not this one: "Then the context of
    user ... 's session ... is:" reads this one.

    Given user "ada" asked "Plan my Paris trip" in session "paris"
    When user "ada" asks "Which museums?" in session "paris"
    """
    chat = _chat_over(services, memory.for_user(user), model, chat_settings)
    _take_turn(turn, chat, name, text)


@then(parsers.parse('the prompt begins with the summary "{text}"'))
def prompt_begins_with_summary(fake_model: FakeLLM, chat_settings: ChatSettings, text: str) -> None:
    """The last prompt's first message, after the system prompt if any, is this summary.

    A compaction's summary is a system message (named "summary") at the head
    of the history; the text is compared exactly.

    Then the prompt begins with the summary "Ada, who lives in Paris."
    """
    prompt = list(fake_model.last_prompt)
    if chat_settings.system_prompt is not None:
        prompt = prompt[1:]
    first = {k: prompt[0].get(k) for k in ("role", "content")} if prompt else None
    assert first == {"role": "system", "content": text}, (
        f"the prompt does not begin with the summary {text!r}: its first message after the"
        f" system prompt is {prompt[0] if prompt else 'none (the prompt is empty)'}"
    )


@then("the model was prompted with:")
@reads_table(*MESSAGE_COLUMNS)
def model_was_prompted_with(fake_model: FakeLLM, datatable: Sequence[Sequence[str]]) -> None:
    """The last prompt was exactly these messages, in this order.

    Then the model was prompted with:
    """
    expect_messages("the last prompt", fake_model.last_prompt, messages(datatable))


@then("the model was prompted with this JSON:")
@reads_json
def model_was_prompted_with_json(fake_model: FakeLLM, docstring: str) -> None:
    """The last prompt was exactly this chat-completions JSON (for tool calls).

    Then the model was prompted with this JSON:
    """
    expect_text("the last prompt", fake_model.last_prompt, json.loads(docstring))


@then(parsers.parse('the last prompt mentions "{text}"'))
def last_prompt_mentions(fake_model: FakeLLM, text: str) -> None:
    """Some message of the last prompt contains this text.

    Then the last prompt mentions "I am Alice."
    """
    prompt = fake_model.last_prompt
    if not any(text in (m["content"] or "") for m in prompt):
        raise AssertionError(f'the last prompt does not mention "{text}":\n{table(prompt)}')


@then(parsers.parse('the last prompt does not mention "{text}"'))
def last_prompt_does_not_mention(fake_model: FakeLLM, text: str) -> None:
    """No message of the last prompt contains this text.

    Then the last prompt does not mention "Bob"
    """
    prompt = fake_model.last_prompt
    if any(text in (m["content"] or "") for m in prompt):
        raise AssertionError(f'the last prompt mentions "{text}":\n{table(prompt)}')


@given(
    parsers.re(r"the model will stop streaming after (?P<words>\d+) words?"),
    converters={"words": int},
    target_fixture="model_failure",
)
def model_will_stop_streaming(fake_model: FakeLLM, words: int) -> Exception:
    """Make the model's next streamed answer break off after this many words.

    Given the model will stop streaming after 3 words
    """
    failure = FakeLLMError("the model stopped streaming")
    fake_model.fail_stream_after(words, failure)
    return failure


@when(parsers.parse('the user asks "{text}" with the answer streamed'))
def user_asks_streamed(chat: ChatService, session_id: str, turn: Turn, text: str) -> None:
    """One whole chat turn whose answer arrives word by word, read to its end.

    When the user asks "Tell me a story." with the answer streamed
    """
    turn.answer, turn.error, turn.pieces = None, None, []
    try:
        for piece in chat.stream(session_id, text):
            turn.pieces.append(piece)
    except FakeLLMError as exc:  # only a scripted failure is kept for a Then step
        turn.error = exc
    else:
        turn.answer = "".join(turn.pieces)


def _try_turn(turn: Turn, run: Callable[[], object]) -> None:
    """Run ``run`` as the scenario's turn; a refusal of bad input is kept for a Then step."""
    turn.answer, turn.error, turn.pieces = None, None, []
    try:
        run()
    except InvalidInputError as exc:
        turn.error = exc


@when(parsers.parse('the user tries to ask "{text}"'))
def user_tries_to_ask(chat: ChatService, session_id: str, turn: Turn, text: str) -> None:
    """A chat turn whose refusal is kept for a Then step.

    When the user tries to ask "How old are you?"
    """

    def ask() -> None:
        turn.answer = chat.reply(session_id, text)

    _try_turn(turn, ask)


@when(parsers.parse('the user tries to ask "{text}" with the answer streamed'))
def user_tries_to_ask_streamed(chat: ChatService, session_id: str, turn: Turn, text: str) -> None:
    """A streamed turn whose refusal is kept for a Then step.

    When the user tries to ask "Tell me a story." with the answer streamed
    """
    _try_turn(turn, lambda: turn.pieces.extend(chat.stream(session_id, text)))


@when(
    parsers.re(
        r'the user stops reading the answer to "(?P<text>[^"]*)" after (?P<words>\d+) words?'
    ),
    converters={"words": int},
)
def user_stops_reading(
    chat: ChatService, session_id: str, turn: Turn, text: str, words: int
) -> None:
    """The user leaves while the answer is still arriving (the app stops reading the stream).

    When the user stops reading the answer to "Tell me a story." after 2 words
    """
    stream = chat.stream(session_id, text)
    turn.pieces = list(itertools.islice(stream, words))
    stream.close()


@then(parsers.re(r"the answer arrived in (?P<pieces>\d+) pieces?"), converters={"pieces": int})
def answer_arrived_in(turn: Turn, pieces: int) -> None:
    """The streamed answer came piece by piece, this many of them.

    Then the answer arrived in 8 pieces
    """
    assert len(turn.pieces) == pieces, f"the answer arrived in {len(turn.pieces)}: {turn.pieces}"


@then(parsers.parse('the assistant answers "{text}"'))
def assistant_answers(turn: Turn, text: str) -> None:
    """The turn's answer is exactly this text (the fake model's scripted reply, or its echo).

    Then the assistant answers "Nice to meet you, Ada."
    """
    assert turn.error is None, f"the turn failed: {turn.error!r}"
    assert turn.answer is not None, "no turn was run"
    if turn.answer != text:
        raise AssertionError(f'the assistant answered "{turn.answer}", expected "{text}"')


@then("the assistant answers with no text")
def assistant_answers_nothing(turn: Turn) -> None:
    """The turn's answer carried no text (a tool call): reply() gives the empty string.

    Then the assistant answers with no text
    """
    assert turn.error is None, f"the turn failed: {turn.error!r}"
    assert turn.answer == "", f"the assistant answered {turn.answer!r}"


@then(parsers.parse('the answer mentions "{text}"'))
def answer_mentions(turn: Turn, text: str) -> None:
    """The turn's answer contains this text (for real models, whose wording varies).

    Then the answer mentions "Ada"
    """
    assert turn.error is None, f"the turn failed: {turn.error!r}"
    assert turn.answer is not None, "no turn was run"
    assert text.casefold() in turn.answer.casefold(), f'the answer "{turn.answer}" lacks "{text}"'


@when(parsers.re(r"the turn the error handed back is stored (?P<times>once|twice)"))
def turn_handed_back_is_stored(
    memory: MemoryService, session_id: str, turn: Turn, times: str
) -> None:
    """The app stores the turn a ReplyNotStoredError handed back (twice: a retry of that).

    When the turn the error handed back is stored twice
    """
    assert isinstance(turn.error, ReplyNotStoredError), f"no turn was handed back: {turn.error!r}"
    for _ in range(1 if times == "once" else 2):
        memory.add_messages(session_id, turn.error.messages)


@then(
    parsers.parse(
        'the turn was not stored, and the error hands back the answer "{text}" with the turn'
    )
)
def turn_not_stored(turn: Turn, text: str) -> None:
    """The model's answer reached the caller in a ReplyNotStoredError, with the whole turn.

    The turn is the user's message and the answer, each with its id (so that
    storing it again is safe), and the error says why and that nothing was written.

    Then the turn was not stored, and the error hands back the answer "Nice to meet you, Ada." with the turn
    """
    _handed_back(turn, text)


@then(
    parsers.parse(
        "the turn was not stored, and the error hands back the JSON string {text} with the turn"
    )
)
def turn_not_stored_json(turn: Turn, text: str) -> None:
    r"""As above, for an answer written as a JSON string (e.g. half an emoji: "\ud83d").

    Then the turn was not stored, and the error hands back the JSON string "Hello \ud83d" with the turn
    """
    _handed_back(turn, json.loads(text))


@then(
    parsers.parse(
        'the turn was not stored, and the error hands back the tool call "{name}" with the turn'
    )
)
def turn_not_stored_tool_call(turn: Turn, name: str) -> None:
    """As above, for a model that answered with a tool call: the call comes back as stored.

    The reply handed back is the turn's own assistant message, id included,
    so that the app can run the tool and store the turn later, once.

    Then the turn was not stored, and the error hands back the tool call "weather" with the turn
    """
    error = _turn_handed_back(turn)
    reply = error.reply
    assert isinstance(reply, Message), f"the error hands back {reply!r}, not the model's message"
    assert [call.name for call in reply.tool_calls] == [name], f"the reply: {reply}"
    assert reply == error.messages[1], f"the reply {reply} is not the turn's {error.messages[1]}"


@then(
    parsers.parse(
        'the turn may not have been stored, and the error hands back the answer "{text}"'
        " with the turn"
    )
)
def turn_may_not_be_stored(turn: Turn, text: str) -> None:
    """As above, for a write whose answer was lost (the server went down): it may have happened.

    Storing the turn handed back is still safe: its messages keep their ids.

    Then the turn may not have been stored, and the error hands back the answer "Nice to meet you, Ada." with the turn
    """
    _handed_back(turn, text, may_have_written=True)


def _handed_back(turn: Turn, text: str, *, may_have_written: bool = False) -> None:
    error = _turn_handed_back(turn, may_have_written=may_have_written)
    assert error.reply == text, f"the error hands back {error.reply!r}, not {text!r}"
    assert error.messages[1].content == text, f"the turn: {error.messages}"


def _turn_handed_back(turn: Turn, *, may_have_written: bool = False) -> ReplyNotStoredError:
    error = turn.error
    assert isinstance(error, ReplyNotStoredError), f"not a ReplyNotStoredError: {error!r}"
    roles = [m.role for m in error.messages]
    assert roles == ["user", "assistant"], f"the turn: {error.messages}"
    assert all(m.id for m in error.messages), f"a message of the turn has no id: {error.messages}"
    assert isinstance(error.__cause__, ChatMemoryError), f"the cause: {error.__cause__!r}"
    assert str(error.__cause__) in str(error), f"the error does not say why: {error}"
    assert error.may_have_written is may_have_written, (
        f"the error says the turn {'may' if error.may_have_written else 'cannot'} have been"
        f" written: {error}"
    )
    return error


@then(parsers.parse('the turn is refused with the reason "{reason}", word for word'))
def turn_refused(turn: Turn, reason: str) -> None:
    """The turn was refused with a typed error saying exactly this, and nothing of it came back.

    Then the turn is refused with the reason "the model streamed int, not text", word for word
    """
    assert isinstance(turn.error, InvalidInputError), f"not refused: {turn.error!r}, {turn.pieces}"
    said = str(turn.error)
    assert said == reason, f"the refusal says {said!r}"
    assert (turn.answer, turn.pieces) == (None, []), f"answered all the same: {turn}"


@then("the turn fails with the model's own error")
def turn_fails_with_model_error(turn: Turn, model_failure: Exception) -> None:
    """The caller got exactly the model's exception, not a wrapped or swallowed one.

    Then the turn fails with the model's own error
    """
    assert turn.error is model_failure


@then(parsers.parse("by the default count, the message {message} is {tokens:d} tokens"))
def default_count_is(message: str, tokens: int) -> None:
    """The memory's built-in token estimate (no tokenizer) for one chat-completions message.

    Then by the default count, the message {"role": "user", "content": "Hello"} is 6 tokens
    """
    counted = approximate_tokens(json.loads(message))
    assert counted == tokens, f"the default count is {counted} tokens, not {tokens}"


@when(parsers.parse('the app previews the prompt for "{text}"'))
def app_previews_prompt(chat: ChatService, session_id: str, turn: Turn, text: str) -> None:
    """The app asks what a turn with this message would send, without running the turn.

    When the app previews the prompt for "What is my name?"
    """
    turn.preview = chat.prompt(session_id, text)


@then("the preview is:")
@reads_table(*MESSAGE_COLUMNS)
def preview_is(turn: Turn, datatable: Sequence[Sequence[str]]) -> None:
    """The previewed prompt is exactly these messages, in this order.

    Then the preview is:
    """
    expect_messages("the previewed prompt", turn.preview, messages(datatable))
