"""Steps about a LangChain chain that remembers through the memory.

Usage::

    Given the app chats through a LangChain chain
    Given the server will go down while the model answers
    Given the user asked the chain "My name is Ada."
    When the user asks the chain "What is my name?"

The chain is the README's: a prompt with the history before the question,
the scenario's fake model as a LangChain chat model, wrapped in
``chat_memory.langchain.RunnableWithChatMemory``. What it stores, what the
model was prompted with and the error of a turn that could not be stored are
checked with the chat turn's own steps (``steps/model.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from pytest_bdd import given, parsers, when

from chat_memory import MemoryService, ReplyNotStoredError
from chat_memory.testing import FakeLLM
from chat_memory_suite.apis import Blocking, Services
from chat_memory_suite.servers import ThrowawayServer

from .model import Turn

REQUIRES = ("chat", "langchain_chain")
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""


class Chain:
    """The scenario's chain, and what runs while its model answers."""

    def __init__(self, runnable: Any, services: Services) -> None:
        """Invoke ``runnable`` (a ``RunnableWithChatMemory``) through the scenario's API."""
        self.runnable = runnable
        self.services = services
        self.while_answering: list[Callable[[], None]] = []

    def ask(self, session_id: str, question: str) -> Any:
        """One turn: the question, the model's answer, the turn stored (or an error raised)."""
        config = {"configurable": {"session_id": session_id}}
        if self.services.api == "async":
            return self.services.wait(self.runnable.ainvoke({"question": question}, config))
        return self.runnable.invoke({"question": question}, config)


@pytest.fixture
def langchain_chain(memory: MemoryService, fake_model: FakeLLM, services: Services) -> Chain:
    """The README's chain over the scenario's memory and fake model."""
    pytest.importorskip("langchain_core", reason="needs chat-memory[langchain]")
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    from chat_memory.langchain import RunnableWithChatMemory, from_langchain

    hooks: list[Callable[[], None]] = []

    class ScenarioModel(BaseChatModel):
        """The scenario's fake model, as a LangChain chat model."""

        @property
        def _llm_type(self) -> str:
            return "chat-memory-scenario"

        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            prompt = [from_langchain(m).to_chat() for m in messages]
            reply = _answer(fake_model, prompt)
            for hook in hooks:
                hook()
            return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])

    prompt = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{question}")]
    )
    target = memory.target if isinstance(memory, Blocking) else None
    runnable = RunnableWithChatMemory(
        prompt | ScenarioModel(),
        None if target is not None else memory,
        async_memory=target,
        input_messages_key="question",
        history_messages_key="history",
    )
    chain = Chain(runnable, services)
    chain.while_answering = hooks
    return chain


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
    turn.answer, turn.error = None, None
    try:
        turn.answer = langchain_chain.ask(session_id, text).content
    except ReplyNotStoredError as exc:
        turn.error = exc
