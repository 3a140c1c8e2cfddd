"""The suite's adapters: how each store's own shape carries the suite's messages."""

import fakeredis
import pytest

from chat_memory import AsyncMemoryService, Message, ToolCall
from chat_memory.openai_agents import ChatMemorySession
from chat_memory_suite.adapters.openai_agents import AgentsSessionMemory

WEATHER = ToolCall(id="call-1", name="weather", arguments='{"city": "Oslo"}')
CLOCK = ToolCall(id="call-2", name="clock", arguments="{}")


@pytest.fixture
def memory() -> AgentsSessionMemory:
    client = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer())
    return AgentsSessionMemory(AsyncMemoryService(client), client)


async def test_a_reply_that_calls_tools_is_the_items_a_model_would_produce(
    memory: AgentsSessionMemory,
) -> None:
    reply = Message("assistant", "Let me look.", id="r1", tool_calls=(WEATHER, CLOCK))
    await memory.add_messages("ada", [Message("user", "Oslo?"), reply])

    items = await ChatMemorySession(memory.memory, "ada").get_items()
    assert [item.get("type", "message") for item in items] == [
        "message",
        "message",
        "function_call",
        "function_call",
    ]
    assert [item.get("id") for item in items] == [None, "r1", "r1#0", "r1#1"]


@pytest.mark.parametrize("message_id", [None, "r1"])
async def test_a_reply_and_its_calls_come_back_as_one_message(
    memory: AgentsSessionMemory, message_id: str | None
) -> None:
    said = [
        Message("user", "Oslo?"),
        Message("assistant", "Let me look.", id=message_id, tool_calls=(WEATHER, CLOCK)),
        Message("tool", "3°C", tool_call_id="call-1"),
        Message("tool", "14:05", tool_call_id="call-2"),
        Message("assistant", "3°C at 14:05."),
    ]
    await memory.add_messages("ada", said)

    assert await memory.get_messages("ada") == said


async def test_a_tool_result_comes_back_without_a_name_it_was_not_given(
    memory: AgentsSessionMemory,
) -> None:
    """The SDK's output item keeps no name: none is made up from the call's (issue 26 peers)."""
    said = [
        Message("assistant", "Let me look that up.", id="r1", tool_calls=(WEATHER,)),
        Message("tool", "3°C", tool_call_id="call-1"),
    ]
    await memory.add_messages("ada", said)

    assert [m.name for m in await memory.get_messages("ada")] == [None, None]


async def test_a_reply_and_a_later_call_of_its_own_stay_two_messages(
    memory: AgentsSessionMemory,
) -> None:
    said = [
        Message("assistant", "Let me look.", id="r1"),
        Message("assistant", None, id="r2", tool_calls=(WEATHER,)),
    ]
    await memory.add_messages("ada", said)

    assert await memory.get_messages("ada") == said


async def test_taking_back_a_reply_with_calls_takes_all_its_items(
    memory: AgentsSessionMemory,
) -> None:
    question = Message("user", "Oslo?")
    reply = Message("assistant", None, id="r1", tool_calls=(WEATHER, CLOCK))
    await memory.add_messages("ada", [question, reply])

    assert await memory.pop_message("ada") == reply
    assert await memory.get_messages("ada") == [question]
    assert await memory.pop_message("ada") == question
    assert await memory.pop_message("ada") is None


async def test_taking_back_counts_the_stored_items_not_the_ones_get_items_gives(
    memory: AgentsSessionMemory,
) -> None:
    # Trimmed to outputs whose calls are gone: get_items gives nothing, yet items are stored.
    await memory.memory.add_messages(
        "ada",
        [
            Message(
                "tool",
                '{"call_id":"call-1","output":"3°C","type":"function_call_output"}',
                tool_call_id="call-1",
            )
        ],
    )
    assert await memory.get_messages("ada") == []

    taken = await memory.pop_message("ada")

    assert taken == Message("tool", "3°C", tool_call_id="call-1")
    assert await memory.memory.get_messages("ada") == []


def test_a_scenario_needs_of_a_store_only_the_fields_of_its_messages() -> None:
    """A tool call's function has a name too, which is no message's name (asked for names)."""
    from chat_memory_suite.collect import roles_needed
    from chat_memory_suite.gherkin import StepSpec

    def needs(docstring: str) -> set[str]:
        return roles_needed(
            StepSpec("When ", "when", "the app sends these chat messages:", 1, None, docstring)
        )

    call = '{"id": "c-1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}'
    assert needs(f'[{{"role": "assistant", "content": null, "tool_calls": [{call}]}}]') == {
        "tool_calls"
    }
    assert needs('[{"role": "user", "content": "Hi", "name": "ada"}]') == {"names"}
    assert needs('[{"role": "system", "content": "Be brief."}]') == {"system_role"}
