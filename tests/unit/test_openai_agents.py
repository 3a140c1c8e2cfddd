"""chat_memory.openai_agents: chat-memory as an OpenAI Agents SDK session."""

from typing import Any

import fakeredis
import pytest
from agents.memory.session import Session
from agents.memory.session_settings import SessionSettings

from chat_memory import AsyncMemoryService, ToolCall
from chat_memory.openai_agents import ChatMemorySession

ITEMS: list[Any] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look up"}]},
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "weather",
        "arguments": '{"city": "Paris"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "18°C in Paris.", "annotations": []}],
    },
]


def session(**settings: Any) -> ChatMemorySession:
    memory = AsyncMemoryService(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer()), **settings)
    return ChatMemorySession(memory, "alice")


def test_it_is_an_agents_sdk_session() -> None:
    assert isinstance(session(), Session)


async def test_every_kind_of_item_comes_back_exactly() -> None:
    memory = session()
    await memory.add_items(ITEMS)
    assert await memory.get_items() == ITEMS
    assert await memory.get_items(limit=3) == ITEMS[-3:]
    assert await memory.get_items(limit=2) == ITEMS[-1:]  # never an output without its call
    assert await memory.get_items(limit=50) == ITEMS
    assert await memory.get_items(limit=0) == []


async def test_a_local_shell_call_and_its_output_come_back_and_stay_together() -> None:
    # A local shell call's output has no call_id: its id is the call's call_id.
    memory = session(max_history=2)
    call: Any = {
        "type": "local_shell_call",
        "id": "lsh_1",
        "call_id": "call_9",
        "status": "completed",
        "action": {"type": "exec", "command": ["ls"], "env": {}},
    }
    output: Any = {"type": "local_shell_call_output", "id": "call_9", "output": "README.md"}
    answer: Any = {"type": "message", "id": "msg_9", "role": "assistant", "content": "One file."}
    await memory.add_items([call, output])
    assert await memory.get_items() == [call, output]
    await memory.add_items([answer])  # the limit trims the call away: its output goes too
    assert await memory.get_items() == [answer]


async def test_an_output_that_names_no_call_is_kept_as_it_is() -> None:
    memory = session()
    odd: Any = {"type": "custom_tool_call_output", "output": "done"}
    await memory.add_items([{"role": "user", "content": "Go"}, odd])
    assert await memory.get_items() == [{"role": "user", "content": "Go"}, odd]


async def test_a_compacted_session_gives_the_agent_its_summary_as_an_input_message() -> None:
    memory = session()
    question: Any = {"role": "user", "content": "Weather in Paris?"}
    answer: Any = {"type": "message", "id": "msg_1", "role": "assistant", "content": "18°C."}
    await memory.add_items([question, answer, {"role": "user", "content": "Thanks"}])

    await memory.memory.compact("alice", lambda _: "Ada asked about Paris.", keep_last=1)

    assert await memory.get_items() == [
        {"role": "system", "content": "Ada asked about Paris."},
        {"role": "user", "content": "Thanks"},
    ]


async def test_items_with_ids_added_again_are_stored_once() -> None:
    memory = session()
    await memory.add_items(ITEMS[1:3])
    await memory.add_items(ITEMS[1:3])  # the runner retries after a timeout
    assert await memory.get_items() == ITEMS[1:3]


async def test_a_retried_call_output_is_stored_once_though_it_has_no_id() -> None:
    memory = session()
    output = ITEMS[3]
    assert "id" not in output
    assert output["type"] == "function_call_output"
    await memory.add_items(ITEMS[:4])
    await memory.add_items([output])  # the runner retries after a timeout
    assert await memory.get_items() == ITEMS[:4]


async def test_input_messages_without_ids_are_each_a_turn() -> None:
    memory = session()
    yes: Any = {"role": "user", "content": "yes"}
    await memory.add_items([yes])
    await memory.add_items([yes])
    assert await memory.get_items() == [yes, yes]


async def test_pop_item_removes_the_newest_and_forgets_its_id() -> None:
    memory = session()
    await memory.add_items(ITEMS)
    assert await memory.pop_item() == ITEMS[-1]
    assert await memory.get_items() == ITEMS[:-1]
    await memory.add_items(ITEMS[-1:])  # a corrected answer under the same id is stored again
    assert await memory.get_items() == ITEMS
    await memory.clear_session()
    assert await memory.pop_item() is None


async def test_the_history_limit_never_leaves_an_output_without_its_call() -> None:
    memory = session(max_history=3)
    await memory.add_items(ITEMS[:3])  # the newest three, the call included
    assert await memory.get_items() == ITEMS[:3]
    await memory.add_items(ITEMS[3:4])  # the call stays: reasoning, call, output
    assert await memory.get_items() == ITEMS[1:4]
    question: Any = {"role": "user", "content": "Umbrella?"}
    await memory.add_items([*ITEMS[4:], question])  # the call is trimmed: its output goes too
    assert await memory.get_items() == [ITEMS[4], question]


def parallel_calls(*cities: str) -> list[Any]:
    calls = [
        {
            "type": "function_call",
            "id": f"fc_{c}",
            "call_id": f"call_{c}",
            "name": "weather",
            "arguments": c,
        }
        for c in cities
    ]
    outputs = [
        {"type": "function_call_output", "call_id": f"call_{c}", "output": "mild"} for c in cities
    ]
    return [*calls, *outputs]


async def test_the_history_limit_cutting_between_parallel_calls_leaves_no_output_unanswered() -> (
    None
):
    # Each parallel call is an item of its own, so the limit can keep the last call of three
    # and all three outputs: the Responses API refuses an output whose call it was not given.
    memory = session(max_history=5)
    call_paris, call_rome, call_oslo, *outputs = parallel_calls("paris", "rome", "oslo")
    answer: Any = {"role": "assistant", "content": "Mild everywhere.", "type": "message"}
    await memory.add_items(
        [
            {"role": "user", "content": "Weather?"},
            call_paris,
            call_rome,
            call_oslo,
            *outputs,
            answer,
        ]
    )

    assert await memory.get_items() == [call_oslo, outputs[2], answer]


async def test_a_limit_on_get_items_leaves_no_output_unanswered() -> None:
    memory = session()
    call, output = parallel_calls("paris")
    answer: Any = {"role": "assistant", "content": "Mild.", "type": "message"}
    await memory.add_items([call, output, answer])

    assert await memory.get_items(limit=2) == [answer]
    assert await memory.get_items(limit=3) == [call, output, answer]


async def test_the_memory_ttl_applies() -> None:
    memory = session(ttl=1800)
    await memory.add_items(ITEMS[:1])
    left = await memory.memory.ttl("alice")
    assert left == pytest.approx(1800, abs=2)


async def test_a_message_stored_through_the_memory_with_no_text_is_an_input_message() -> None:
    # openai_agents.py item_of: content None gives "" ("or 'XXXX'" changed it; json.loads of
    # None, with "if message.content or True", failed).
    agent = session()
    call = ToolCall("call-1", "weather", "{}")
    await agent.memory.add_message("alice", "assistant", None, tool_calls=[call])
    assert await agent.get_items() == [{"role": "assistant", "content": ""}]


async def test_the_settings_the_sdk_reads_are_kept() -> None:
    # openai_agents.py ChatMemorySession.__init__: session_settings dropped.
    settings = SessionSettings(limit=3)
    memory = AsyncMemoryService(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer()))
    assert (
        ChatMemorySession(memory, "alice", session_settings=settings).session_settings is settings
    )


async def test_a_call_without_a_name_or_arguments_is_stored_under_its_kind() -> None:
    # openai_agents.py message_of: name defaults to the item's type, arguments to "".
    agent = session()
    click: Any = {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "call_1",
        "action": {"type": "click"},
    }
    await agent.add_items([click])
    [stored] = await agent.memory.get_messages("alice")
    assert stored.tool_calls == (ToolCall("call_1", "computer_call", ""),)


@pytest.mark.parametrize(("length", "derived"), [(121, True), (122, False)])
async def test_an_output_without_an_id_takes_a_derived_one_while_it_fits(
    length: int, derived: bool
) -> None:
    # openai_agents.py message_of: "<call_id>:output" is the id while it is at most 128
    # characters ("<" dropped 128; "or True" stored a longer one and was refused).
    agent = session()
    call_id = "c" * length
    output: Any = {"type": "function_call_output", "call_id": call_id, "output": "18°C"}
    await agent.add_items([output])
    await agent.add_items([output])  # a retry: stored once when it has an id
    stored = await agent.memory.get_messages("alice")
    assert [m.id for m in stored][:1] == ([f"{call_id}:output"] if derived else [stored[0].id])
    assert len(stored) == (1 if derived else 2)


async def test_an_item_whose_id_is_not_text_is_stored_without_it() -> None:
    # openai_agents.py message_of: only a string id is the message's id ("or True" refused 7).
    agent = session()
    odd: Any = {"role": "user", "content": "hi", "id": 7}
    await agent.add_items([odd])
    assert await agent.get_items() == [{"role": "user", "content": "hi", "id": 7}]
