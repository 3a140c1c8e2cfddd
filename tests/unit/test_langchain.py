"""chat_memory.langchain: chat-memory as a LangChain chat message history.

langchain-tests (1.1.9) has standard tests for chat models, stores, caches and
retrievers but none for chat message histories, so these are ours: the round
trip LangChain's Redis histories are known to break, sync and async, and the
history inside RunnableWithMessageHistory.
"""

from datetime import date
from typing import Any

import fakeredis
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from chat_memory import (
    AsyncMemoryService,
    InvalidContentError,
    InvalidRoleError,
    MemoryService,
    Message,
    PermissionDeniedError,
    ReplyNotStoredError,
    ToolCall,
)
from chat_memory.langchain import ChatMemoryHistory, RunnableWithChatMemory, from_langchain

TURN: list[BaseMessage] = [
    SystemMessage("Be brief.", id="s-1"),
    HumanMessage("Weather in Paris?", id="h-1"),
    AIMessage(
        "",
        id="a-1",
        tool_calls=[{"name": "weather", "args": {"city": "Paris", "days": 2}, "id": "call-1"}],
    ),
    ToolMessage("18°C", tool_call_id="call-1", id="t-1", name="weather"),
    AIMessage("18°C in Paris.", id="a-2"),
]


@pytest.fixture
def server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


@pytest.fixture
def history(server: fakeredis.FakeServer) -> ChatMemoryHistory:
    memory = MemoryService(fakeredis.FakeRedis(server=server), max_history=50)
    async_memory = AsyncMemoryService(fakeredis.FakeAsyncRedis(server=server), max_history=50)
    return ChatMemoryHistory(memory, "ada", async_memory=async_memory)


def test_tool_calls_tool_call_ids_and_ids_round_trip_exactly(history: ChatMemoryHistory) -> None:
    history.add_messages(TURN)
    assert history.messages == TURN


def test_a_tool_call_whose_arguments_are_not_a_json_object_is_read_and_kept(
    history: ChatMemoryHistory,
) -> None:
    """A model may emit arguments that are not JSON: LangChain keeps them as an invalid call.

    Reading such a stored call raised a bare JSONDecodeError (the whole history unreadable
    through LangChain), and storing a LangChain message with an invalid call dropped it.
    """
    stored = Message(
        "assistant",
        "Let me look that up.",
        id="a-1",
        tool_calls=(ToolCall("call-1", "weather", "Paris"), ToolCall("call-2", "time", "[1]")),
    )
    history.memory.add_messages("ada", [stored])  # type: ignore[union-attr]
    [read] = history.messages
    assert isinstance(read, AIMessage)
    assert read.tool_calls == []
    assert [(c["id"], c["name"], c["args"]) for c in read.invalid_tool_calls] == [
        ("call-1", "weather", "Paris"),
        ("call-2", "time", "[1]"),
    ]
    history.clear()
    history.add_messages([read])
    assert history.memory.get_messages("ada")[0].tool_calls == stored.tool_calls  # type: ignore[union-attr]


async def test_the_async_methods_round_trip_exactly_too(history: ChatMemoryHistory) -> None:
    await history.aadd_messages(TURN)
    assert await history.aget_messages() == TURN
    await history.aclear()
    assert history.messages == []


def test_a_retried_turn_is_stored_once(history: ChatMemoryHistory) -> None:
    history.add_messages(TURN[:2])
    history.add_messages(TURN[:2])  # the app retries after a timeout
    assert history.messages == TURN[:2]


def test_a_message_without_an_id_gets_one(history: ChatMemoryHistory) -> None:
    history.add_message(HumanMessage("hello"))
    [stored] = history.messages
    assert stored.content == "hello"
    assert stored.id


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (HumanMessage(content=[{"type": "text", "text": "hi"}]), InvalidContentError),
        (ChatMessage(content="hi", role="wizard"), InvalidRoleError),
    ],
)
def test_what_cannot_be_stored_exactly_is_refused_and_nothing_is_written(
    history: ChatMemoryHistory, message: BaseMessage, error: type[Exception]
) -> None:
    with pytest.raises(error):
        history.add_messages([HumanMessage("first"), message])
    assert history.messages == []


# langchain-core 1.x deprecates RunnableWithMessageHistory (for LangGraph) but still ships it,
# and teams still run it.
@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
def test_it_is_the_history_of_runnable_with_message_history(server: fakeredis.FakeServer) -> None:
    memory = MemoryService(fakeredis.FakeRedis(server=server))
    prompt = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{question}")]
    )
    model = FakeListChatModel(responses=["Hello Ada.", "You are Ada."])
    chain = RunnableWithMessageHistory(
        prompt | model,
        lambda session_id: ChatMemoryHistory(memory, session_id),
        input_messages_key="question",
        history_messages_key="history",
    )
    config = RunnableConfig(configurable={"session_id": "ada"})
    chain.invoke({"question": "I am Ada."}, config=config)
    chain.invoke({"question": "Who am I?"}, config=config)
    assert memory.get_context("ada") == [
        {"role": "user", "content": "I am Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "Who am I?"},
        {"role": "assistant", "content": "You are Ada."},
    ]


def test_a_history_needs_a_memory() -> None:
    with pytest.raises(ValueError, match="give a MemoryService"):
        ChatMemoryHistory(None, "ada")


async def test_the_async_methods_without_an_async_service_use_the_sync_one(
    server: fakeredis.FakeServer,
) -> None:
    # langchain.py aadd_messages/aclear: with no async service, LangChain's default runs the
    # sync method in a thread ("super().aadd_messages(None)" stored nothing, and failed).
    history = ChatMemoryHistory(MemoryService(fakeredis.FakeRedis(server=server)), "ada")
    await history.aadd_messages(TURN)
    assert await history.aget_messages() == TURN
    await history.aclear()
    assert history.messages == []


# A failed write of the turn (issue 25): RunnableWithMessageHistory stores it from a tracer
# callback, whose errors LangChain logs and drops; RunnableWithChatMemory raises them.

PROMPT = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
SESSION: RunnableConfig = {"configurable": {"session_id": "ada"}}


class _RefusingMemory(MemoryService):
    """Reads work; every write is refused, as for a Redis user without EVALSHA."""

    def add_messages(self, *args: Any, **kwargs: Any) -> Any:
        raise PermissionDeniedError("the Redis user may not run 'evalsha'; nothing was written")


class _AsyncRefusingMemory(AsyncMemoryService):
    async def add_messages(self, *args: Any, **kwargs: Any) -> Any:
        raise PermissionDeniedError("the Redis user may not run 'evalsha'; nothing was written")


@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
def test_runnable_with_message_history_drops_a_failed_write_silently(
    server: fakeredis.FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    """What the README warns of: if LangChain starts raising, this fails and the README changes."""
    memory = _RefusingMemory(fakeredis.FakeRedis(server=server))
    chain = RunnableWithMessageHistory(
        PROMPT | FakeListChatModel(responses=["Nice to meet you, Ada."]),
        lambda session_id: ChatMemoryHistory(memory, session_id),
        input_messages_key="question",
        history_messages_key="history",
    )
    answer = chain.invoke({"question": "My name is Ada."}, config=SESSION)
    assert answer.content == "Nice to meet you, Ada."
    assert memory.get_context("ada") == []
    assert "PermissionDeniedError" in caplog.text  # logged, not raised


def _wrapped(memory: MemoryService, *replies: str) -> RunnableWithChatMemory:
    return RunnableWithChatMemory(
        PROMPT | FakeListChatModel(responses=list(replies)),
        memory,
        input_messages_key="question",
        history_messages_key="history",
    )


def test_the_wrapped_chain_remembers_each_turn(server: fakeredis.FakeServer) -> None:
    memory = MemoryService(fakeredis.FakeRedis(server=server))
    chain = _wrapped(memory, "Nice to meet you, Ada.", "Your name is Ada.")
    chain.invoke({"question": "My name is Ada."}, config=SESSION)
    chain.invoke({"question": "What is my name?"}, config=SESSION)
    assert memory.get_context("ada") == [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Nice to meet you, Ada."},
        {"role": "user", "content": "What is my name?"},
        {"role": "assistant", "content": "Your name is Ada."},
    ]


def test_a_failed_write_raises_with_the_turn_which_is_then_stored_once(
    server: fakeredis.FakeServer,
) -> None:
    chain = _wrapped(_RefusingMemory(fakeredis.FakeRedis(server=server)), "Nice to meet you, Ada.")
    with pytest.raises(ReplyNotStoredError, match="nothing was written") as failed:
        chain.invoke({"question": "My name is Ada."}, config=SESSION)
    assert failed.value.reply == "Nice to meet you, Ada."
    assert failed.value.may_have_written is False
    assert isinstance(failed.value.__cause__, PermissionDeniedError)
    memory = MemoryService(fakeredis.FakeRedis(server=server))
    memory.add_messages("ada", failed.value.messages)
    memory.add_messages("ada", failed.value.messages)
    assert memory.get_context("ada") == [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Nice to meet you, Ada."},
    ]


async def test_the_async_chain_raises_a_failed_write_too(server: fakeredis.FakeServer) -> None:
    memory = _AsyncRefusingMemory(fakeredis.FakeAsyncRedis(server=server))
    chain = RunnableWithChatMemory(
        PROMPT | FakeListChatModel(responses=["Hi."]),
        None,
        async_memory=memory,
        input_messages_key="question",
        history_messages_key="history",
    )
    with pytest.raises(ReplyNotStoredError, match="nothing was written"):
        await chain.ainvoke({"question": "Hello"}, config=SESSION)


def test_a_list_of_messages_in_and_an_answer_out_without_keys(server: fakeredis.FakeServer) -> None:
    memory = MemoryService(fakeredis.FakeRedis(server=server))
    chain = RunnableWithChatMemory(FakeListChatModel(responses=["One.", "Two."]), memory)
    chain.invoke([HumanMessage("First?")], config=SESSION)
    chain.invoke("Second?", config=SESSION)
    assert [m["content"] for m in memory.get_context("ada")] == [
        "First?",
        "One.",
        "Second?",
        "Two.",
    ]


def test_a_chain_call_without_a_session_is_refused(server: fakeredis.FakeServer) -> None:
    chain = _wrapped(MemoryService(fakeredis.FakeRedis(server=server)), "Hi.")
    with pytest.raises(InvalidContentError, match="session_id"):
        chain.invoke({"question": "Hello"})


def test_an_input_that_cannot_be_stored_is_refused_before_the_model_is_called(
    server: fakeredis.FakeServer,
) -> None:
    # Review of issue 25: a message of content blocks was refused only after the model ran.
    model = FakeListChatModel(responses=["Seen.", "Seen again."])
    chain = RunnableWithChatMemory(model, MemoryService(fakeredis.FakeRedis(server=server)))
    picture = HumanMessage([{"type": "text", "text": "What is this?"}, {"type": "image_url"}])
    with pytest.raises(InvalidContentError):
        chain.invoke([picture], config=SESSION)
    assert model.i == 0


def test_an_answer_that_cannot_be_stored_is_handed_back_with_its_text(
    server: fakeredis.FakeServer,
) -> None:
    class BlockAnswer(FakeListChatModel):
        def invoke(self, *args: Any, **kwargs: Any) -> Any:
            return AIMessage([{"type": "text", "text": "Paris."}])

    memory = MemoryService(fakeredis.FakeRedis(server=server))
    chain = RunnableWithChatMemory(BlockAnswer(responses=[]), memory)
    with pytest.raises(ReplyNotStoredError) as failed:
        chain.invoke("Capital of France?", config=SESSION)
    assert failed.value.reply == "Paris."
    assert [m.content for m in failed.value.messages] == ["Capital of France?"]
    assert memory.get_context("ada") == []


def test_an_invalid_tool_call_without_an_id_a_name_or_arguments_is_kept_with_empty_ones() -> None:
    # What the model left out stays left out: nothing is made up for it.
    missing = {"name": None, "args": None, "id": None, "error": None, "type": "invalid_tool_call"}
    stored = from_langchain(AIMessage("", invalid_tool_calls=[missing]))
    assert stored.tool_calls == (ToolCall(id="", name="", arguments=""),)


def test_a_message_with_its_own_id_is_stored_under_it(server: fakeredis.FakeServer) -> None:
    memory = MemoryService(fakeredis.FakeRedis(server=server))
    chain = RunnableWithChatMemory(FakeListChatModel(responses=["Hi, Ada."]), memory)
    chain.invoke([HumanMessage("I am Ada.", id="h-1")], config=SESSION)
    asked = memory.get_messages("ada")[0]
    assert asked.id == "h-1"  # a retry of the call finds it


def test_a_failed_write_of_a_turn_of_several_messages_hands_back_the_answer(
    server: fakeredis.FakeServer,
) -> None:
    chain = RunnableWithChatMemory(
        FakeListChatModel(responses=["Both noted."]),
        _RefusingMemory(fakeredis.FakeRedis(server=server)),
    )
    with pytest.raises(ReplyNotStoredError) as failed:
        chain.invoke([HumanMessage("I am Ada."), HumanMessage("I live in Paris.")], config=SESSION)
    assert failed.value.reply == "Both noted."
    assert len(failed.value.messages) == 3


@pytest.mark.parametrize("text", ["", "Let me check."])
def test_a_failed_write_of_a_tool_call_hands_back_the_call_whatever_its_text(
    server: fakeredis.FakeServer, text: str
) -> None:
    class Calls(FakeListChatModel):
        def invoke(self, *args: Any, **kwargs: Any) -> Any:
            call = {"name": "weather", "args": {"city": "Paris"}, "id": "call-1"}
            return AIMessage(text, tool_calls=[call])

    chain = RunnableWithChatMemory(
        Calls(responses=[]), _RefusingMemory(fakeredis.FakeRedis(server=server))
    )
    with pytest.raises(ReplyNotStoredError) as failed:
        chain.invoke("Weather in Paris?", config=SESSION)
    reply = failed.value.reply
    assert isinstance(reply, Message)
    assert [c.name for c in reply.tool_calls] == ["weather"]
    assert reply.content == (text or None)


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ({"city": "Zürich", "when": date(2026, 12, 7)}, '{"city": "Zürich", "when": "2026-12-07"}'),
        (42, "42"),
    ],
    ids=["a structured answer", "a number"],
)
def test_an_answer_that_is_not_a_message_is_handed_back_as_its_text(
    server: fakeredis.FakeServer, answer: object, text: str
) -> None:
    chain = RunnableWithChatMemory(
        RunnableLambda(lambda _: answer), MemoryService(fakeredis.FakeRedis(server=server))
    )
    with pytest.raises(ReplyNotStoredError) as failed:
        chain.invoke("When, and where?", config=SESSION)
    assert failed.value.reply == text


async def test_ainvoke_without_an_async_memory_passes_its_arguments_on(
    server: fakeredis.FakeServer,
) -> None:
    seen: list[dict[str, Any]] = []

    class Recording(FakeListChatModel):
        def invoke(self, *args: Any, **kwargs: Any) -> Any:
            seen.append(kwargs)
            return AIMessage("Noted.")

    memory = MemoryService(fakeredis.FakeRedis(server=server))
    chain = RunnableWithChatMemory(Recording(responses=[]), memory)
    await chain.ainvoke("Hello", config=SESSION, stop=["\n"])
    assert len(seen) == 1
    assert seen[0].get("stop") == ["\n"]
    assert [m["content"] for m in memory.get_context("ada")] == ["Hello", "Noted."]
