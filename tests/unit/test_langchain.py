"""chat_memory.langchain: chat-memory as a LangChain chat message history.

langchain-tests (1.1.9) has standard tests for chat models, stores, caches and
retrievers but none for chat message histories, so these are ours: the round
trip LangChain's Redis histories are known to break, sync and async, and the
history inside RunnableWithMessageHistory.
"""

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
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.history import RunnableWithMessageHistory

from chat_memory import AsyncMemoryService, InvalidContentError, InvalidRoleError, MemoryService
from chat_memory.langchain import ChatMemoryHistory

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
