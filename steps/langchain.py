"""Steps about a LangChain chain that remembers through the memory.

Usage::

    Given the app chats through a LangChain chain
    Given the app chats through a LangChain chain that answers in plain text
    Given the app chats through a LangChain chain that puts its answer under "answer"
    Given the app chats through a LangChain chain that answers in JSON
    Given the app chats through a LangChain chat model wrapped alone
    Given the app awaits a LangChain chain that has only the blocking memory service
    Given the chain's model will reply in content blocks:
    Given the server will go down while the model answers
    Given the user asked the chain "My name is Ada."
    When the user asks the chain "What is my name?"
    When the user asks the chain in a call tagged "support": "My name is Ada."
    When the user asks the chain in a call that stops at "END": "My name is Ada."
    When the app invokes the chain with the input {"topic": "names"}
    Then the model ran with the tag "support"
    Then the model ran with the stop word "END"
    Then the model was not asked
    Then the chain refuses the input with the reason "the chain's input has no 'question'"
    Then the error hands back the answer "Nice to meet you, Ada." with the question alone

The chain is the README's: a prompt with the history before the question,
the scenario's fake model as a LangChain chat model, wrapped in
``chat_memory.langchain.RunnableWithChatMemory``; Given steps give it
another end (a string or JSON output parser, or a dict with the answer under a
key), wrap the model alone, or give the chain the blocking memory service only
and await it (``ainvoke``), as an asyncio app without the async service does.
What it stores, what the model was prompted with and the error of a turn that
could not be stored are checked with the chat turn's own steps
(``steps/model.py``) and the ones here.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import ChatMemoryError, MemoryService, ReplyNotStoredError
from chat_memory.testing import FakeLLM
from chat_memory_suite.apis import Blocking, Services
from chat_memory_suite.backends import RedisClient
from chat_memory_suite.servers import ThrowawayServer
from chat_memory_suite.tables import reads_table, rows

from .model import Turn
from .sessions import MemorySettings

REQUIRES = ("chat", "langchain_chain")
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""


class Chain:
    """The scenario's chain, what runs while its model answers, and what the model saw."""

    def __init__(self, build: Callable[..., Any], services: Services) -> None:
        """Invoke what ``build`` makes (a ``RunnableWithChatMemory``) through the scenario's API.

        ``build(end, output_messages_key)`` wraps the prompt and the model, then
        ``end`` (a runnable, or None), with that ``output_messages_key``;
        ``build(alone=True)`` the model alone, its input the question itself;
        ``build(blocking=memory)`` the prompt and the model over that sync memory only.
        """
        self.build = build
        self.runnable = build()
        self.services = services
        self.awaited = False
        """Whether the app awaits the chain (``ainvoke``) whatever the scenario's API."""
        self.question_key: str | None = "question"
        """The key of the chain's input the question goes under; None: the input is the question."""
        self.while_answering: list[Callable[[], None]] = []
        self.blocks: list[str | dict[str, str]] | None = None
        """The content blocks of the model's next answer, instead of its text."""
        self.tags: list[list[str]] = []
        """The tags of each run of the model, as LangChain handed them to it."""
        self.stops: list[list[str] | None] = []
        """The stop words of each run of the model, as LangChain handed them to it."""

    def ask(self, session_id: str, question: str, **options: Any) -> Any:
        """One turn: the question, the model's answer, the turn stored (or an error raised)."""
        value = question if self.question_key is None else {self.question_key: question}
        return self.invoke(session_id, value, **options)

    def invoke(
        self, session_id: str, value: Any, *, tags: Sequence[str] = (), **kwargs: Any
    ) -> Any:
        """Invoke the chain with ``value`` as its input, in ``session_id``, with ``kwargs``."""
        config = {"configurable": {"session_id": session_id}, "tags": list(tags)}
        if self.services.api == "async" or self.awaited:
            return self.services.wait(self.runnable.ainvoke(value, config, **kwargs))
        return self.runnable.invoke(value, config, **kwargs)


@pytest.fixture
def langchain_chain(
    memory: MemoryService, fake_model: FakeLLM, services: Services
) -> Iterator[Chain]:
    """The README's chain over the scenario's memory and fake model."""
    pytest.importorskip("langchain_core", reason="needs chat-memory[langchain]")
    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    from chat_memory.langchain import RunnableWithChatMemory, from_langchain

    chain: Chain

    class ScenarioModel(BaseChatModel):
        """The scenario's fake model, as a LangChain chat model."""

        @property
        def _llm_type(self) -> str:
            return "chat-memory-scenario"

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: CallbackManagerForLLMRun | None = None,
            **kwargs: Any,
        ) -> ChatResult:
            chain.tags.append(list(run_manager.tags) if run_manager else [])
            chain.stops.append(stop)
            prompt = [from_langchain(m).to_chat() for m in messages]
            reply: str | list[str | dict[str, str]] = _answer(fake_model, prompt)
            if chain.blocks is not None:
                reply, chain.blocks = chain.blocks, None
            for hook in chain.while_answering:
                hook()
            return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])

    prompt = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{question}")]
    )
    target = memory.target if isinstance(memory, Blocking) else None

    def build(
        end: Any = None,
        output_messages_key: str | None = None,
        *,
        alone: bool = False,
        blocking: MemoryService | None = None,
    ) -> Any:
        inner: Any = ScenarioModel() if alone else prompt | ScenarioModel()
        sync, asynchronous = (None, target) if target is not None else (memory, None)
        if blocking is not None:
            sync, asynchronous = blocking, None
        return RunnableWithChatMemory(
            inner if end is None else inner | end,
            sync,
            async_memory=asynchronous,
            input_messages_key=None if alone else "question",
            history_messages_key=None if alone else "history",
            output_messages_key=output_messages_key,
        )

    chain = Chain(build, services)
    yield chain
    assert chain.blocks is None, f"the model never answered the content blocks {chain.blocks}"


def _answer(model: Any, prompt: list[dict[str, Any]]) -> str:
    reply = model.complete(prompt)
    if inspect.iscoroutine(reply):  # the async fake, called from LangChain's worker thread
        reply = _awaited(reply)
    assert isinstance(reply, str), f"a LangChain scenario's model answers with text: {reply!r}"
    return reply


def _awaited(coroutine: Any) -> Any:
    """Finish a coroutine that never awaits anything (the async fake model's reply)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the fake model's reply awaited something")


@given("the app chats through a LangChain chain")
def app_chats_through_langchain(langchain_chain: Chain) -> None:
    """The app's chain loads the session, asks the model and stores each turn in one write.

    Given the app chats through a LangChain chain
    """


@given("the app chats through a LangChain chain that answers in plain text")
def chain_answers_in_plain_text(langchain_chain: Chain) -> None:
    """The chain ends with LangChain's string output parser: its output is the answer's text.

    Given the app chats through a LangChain chain that answers in plain text
    """
    from langchain_core.output_parsers import StrOutputParser

    langchain_chain.runnable = langchain_chain.build(StrOutputParser(), None)


@given("the app chats through a LangChain chain that answers in JSON")
def chain_answers_in_json(langchain_chain: Chain) -> None:
    """The chain ends with LangChain's JSON output parser: its output is the answer parsed.

    Given the app chats through a LangChain chain that answers in JSON
    """
    from langchain_core.output_parsers import JsonOutputParser

    langchain_chain.runnable = langchain_chain.build(JsonOutputParser())


@given("the app chats through a LangChain chat model wrapped alone")
def chat_model_wrapped_alone(langchain_chain: Chain) -> None:
    """The chain is the chat model itself: its input is the question, the history put before it.

    Given the app chats through a LangChain chat model wrapped alone
    """
    langchain_chain.runnable = langchain_chain.build(alone=True)
    langchain_chain.question_key = None


@given("the app awaits a LangChain chain that has only the blocking memory service")
def chain_awaited_over_blocking_memory(
    langchain_chain: Chain,
    services: Services,
    redis_client: RedisClient,
    namespace: str,
    memory_settings: MemorySettings,
) -> None:
    """An asyncio app awaits the chain (``ainvoke``), built with a sync ``MemoryService`` only.

    The chain then runs each turn in a worker thread, through the sync service, over
    the scenario's server and namespace.

    Given the app awaits a LangChain chain that has only the blocking memory service
    """
    blocking = services.memory_on(
        redis_client, namespace=namespace, **memory_settings.service_settings()
    )
    langchain_chain.runnable = langchain_chain.build(blocking=blocking)
    langchain_chain.awaited = True


@given(parsers.parse('the app chats through a LangChain chain that puts its answer under "{key}"'))
def chain_puts_answer_under(langchain_chain: Chain, key: str) -> None:
    """The chain's output is a dict, the model's answer under ``key``; the wrapper is told so.

    Given the app chats through a LangChain chain that puts its answer under "answer"
    """
    from langchain_core.runnables import RunnableLambda

    end: Any = RunnableLambda(lambda answer: {key: answer, "model": "scenario"})
    langchain_chain.runnable = langchain_chain.build(end, key)


@given("the chain's model will reply in content blocks:")
@reads_table("kind", "text")
def model_replies_in_blocks(langchain_chain: Chain, datatable: Sequence[Sequence[str]]) -> None:
    """The chain's model answers next with a list of content blocks, as multimodal models do.

    A ``text`` block is ``{"type": "text", "text": ...}``, a ``plain`` one a bare
    string, an ``image`` one a block without text. A scenario whose chain never
    asks the model again fails: the blocks were never answered.

    Given the chain's model will reply in content blocks:
    """
    blocks: list[str | dict[str, str]] = []
    for row in rows(datatable, ("kind", "text")):
        kind, text = row["kind"], row["text"]
        assert kind in ("text", "plain", "image"), f"a block is text, plain or image, not {kind!r}"
        assert not (kind == "image" and text), f"an image block has no text, not {text!r}"
        blocks.append(
            {"type": "text", "text": text}
            if kind == "text"
            else text
            if kind == "plain"
            else {"type": "image", "url": "https://example.com/a.png"}
        )
    langchain_chain.blocks = blocks


@given("the server will go down while the model answers")
def server_goes_down_while_answering(langchain_chain: Chain, fault_server: ThrowawayServer) -> None:
    """The server stops after the history was read, before the turn is stored.

    Given the server will go down while the model answers
    """
    langchain_chain.while_answering.append(fault_server.stop)


@given(parsers.parse('the user asked the chain "{text}"'))
@when(parsers.parse('the user asks the chain "{text}"'))
def user_asks_the_chain(langchain_chain: Chain, session_id: str, turn: Turn, text: str) -> None:
    """One turn through the chain; a turn it could not store is kept for a Then step.

    Given the user asked the chain "My name is Ada."
    When the user asks the chain "What is my name?"
    """
    _ask(langchain_chain, session_id, turn, text)


@when(parsers.parse('the user asks the chain in a call tagged "{tag}": "{text}"'))
def user_asks_the_chain_tagged(
    langchain_chain: Chain, session_id: str, turn: Turn, text: str, tag: str
) -> None:
    """One turn, the call's config tagged (as tracing and callbacks tag a run).

    When the user asks the chain in a call tagged "support": "My name is Ada."
    """
    _ask(langchain_chain, session_id, turn, text, tags=[tag])


@when(parsers.parse('the user asks the chain in a call that stops at "{word}": "{text}"'))
def user_asks_the_chain_with_stop(
    langchain_chain: Chain, session_id: str, turn: Turn, text: str, word: str
) -> None:
    """One turn, the call given a stop word (a keyword argument of ``invoke``, for the model).

    When the user asks the chain in a call that stops at "END": "My name is Ada."
    """
    _ask(langchain_chain, session_id, turn, text, stop=[word])


def _ask(chain: Chain, session_id: str, turn: Turn, text: str, **options: Any) -> None:
    turn.answer, turn.error = None, None
    try:
        output = chain.ask(session_id, text, **options)
    except ReplyNotStoredError as exc:
        turn.error = exc
        return
    answer = output[chain.runnable.output_messages_key] if isinstance(output, dict) else output
    turn.answer = answer if isinstance(answer, str) else answer.content


@when(parsers.parse("the app invokes the chain with the input {value}"))
def chain_invoked_with(langchain_chain: Chain, session_id: str, turn: Turn, value: str) -> None:
    """The app invokes the chain with this input, written as JSON; a refusal is kept.

    When the app invokes the chain with the input {"topic": "names"}
    """
    turn.answer, turn.error = None, None
    try:
        langchain_chain.invoke(session_id, json.loads(value))
    except ChatMemoryError as exc:
        turn.error = exc


@then(parsers.parse('the chain refuses the input with the reason "{reason}"'))
def chain_refuses_input(turn: Turn, reason: str) -> None:
    """The chain raised the memory's typed error for invalid content, saying why.

    Then the chain refuses the input with the reason "the chain's input has no 'question'"
    """
    from chat_memory import InvalidContentError

    assert isinstance(turn.error, InvalidContentError), f"not a refusal: {turn.error!r}"
    assert reason in str(turn.error), f"the refusal says {str(turn.error)!r}"


@then(parsers.parse('the answer is refused with the reason "{reason}"'))
def answer_refused(turn: Turn, reason: str) -> None:
    """The failed turn's error says, in its own message, why the memory could not keep the answer.

    Then the answer is refused with the reason "content must be text to be stored exactly, got list"
    """
    assert turn.error is not None, "the turn did not fail"
    assert reason in str(turn.error), f"the error says {str(turn.error)!r}"


@then("the model was not asked")
def model_not_asked(fake_model: FakeLLM) -> None:
    """No prompt reached the model: nothing was paid for.

    Then the model was not asked
    """
    assert not fake_model.prompts, f"the model was prompted: {fake_model.prompts}"


@then(parsers.parse('the model ran with the tag "{tag}"'))
def model_ran_with_tag(langchain_chain: Chain, tag: str) -> None:
    """The call's config reached the model: its run carried the tag.

    Then the model ran with the tag "support"
    """
    assert langchain_chain.tags, "the model never ran"
    assert tag in langchain_chain.tags[-1], f"the model's run was tagged {langchain_chain.tags[-1]}"


@then(parsers.parse('the model ran with the stop word "{word}"'))
def model_ran_with_stop_word(langchain_chain: Chain, word: str) -> None:
    """The call's keyword arguments reached the model: its run had the stop word.

    Then the model ran with the stop word "END"
    """
    assert langchain_chain.stops, "the model never ran"
    assert langchain_chain.stops[-1] == [word], f"the model ran with {langchain_chain.stops[-1]}"


@then(parsers.parse('the error hands back the answer "{text}" with the question alone'))
def question_not_stored(turn: Turn, text: str) -> None:
    """An answer the memory cannot store: its text comes back, the turn holds only the question.

    The question keeps its id, for the app to store once it has an answer it can keep.

    Then the error hands back the answer "Nice to meet you, Ada." with the question alone
    """
    error = turn.error
    assert isinstance(error, ReplyNotStoredError), f"not a ReplyNotStoredError: {error!r}"
    assert error.reply == text, f"the error hands back {error.reply!r}, not {text!r}"
    assert [m.role for m in error.messages] == ["user"], f"the turn: {error.messages}"
    assert all(m.id for m in error.messages), f"the question has no id: {error.messages}"
    assert isinstance(error.__cause__, ChatMemoryError), f"the cause: {error.__cause__!r}"
    assert str(error.__cause__) in str(error), f"the error does not say why: {error}"
    assert error.may_have_written is False, f"the error says it may have written: {error}"
