"""Steps about an agent's session: OpenAI Agents SDK items kept in the memory.

Usage::

    When an agent adds these items to the session:
      \"\"\"
      [{"role": "user", "content": "Weather in Paris?"}]
      \"\"\"
    Then the session reads as these chat messages:
      | role | id | calls | answers |
      | user |    |       |         |
    And the agent gets back exactly the items it added

The agent talks to the scenario's memory through
``chat_memory.openai_agents.ChatMemorySession``, the way an app hands it to
``Runner.run(..., session=...)``; the Agents SDK itself is not needed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import MemoryService
from chat_memory.openai_agents import ChatMemorySession
from chat_memory_suite.adapter import requires
from chat_memory_suite.apis import Services
from chat_memory_suite.compare import expect_text
from chat_memory_suite.tables import reads_json, reads_table, rows

from .sessions import MemorySettings

REQUIRES = ("agents_session",)
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""

READ_AS = ("role", "id", "calls", "answers")
_GIVEN_BY_THE_MEMORY = re.compile(r"[A-Za-z0-9_-]{22}")  # new_message_id()
"""An id the memory gave a message that had none: 22 URL-safe base64 characters.

The scenarios' own ids (``fc_1``, ``call_1:output``) never look like one."""


class Agent:
    """The scenario's agent: its session of the memory, and every item it added, in order."""

    def __init__(self, session: ChatMemorySession, services: Services) -> None:
        """Talk through ``session``; its coroutines run on the scenario's loop."""
        self.session = session
        self.services = services
        self.added: list[dict[str, Any]] = []

    def add(self, items: list[dict[str, Any]]) -> None:
        """The agent's ``add_items``."""
        self.services.wait(self.session.add_items(items))  # type: ignore[arg-type]
        self.added.extend(items)

    def retry(self, items: list[dict[str, Any]]) -> None:
        """The agent's ``add_items`` of items it added before (recorded once)."""
        self.services.wait(self.session.add_items(items))  # type: ignore[arg-type]

    def items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The agent's ``get_items``."""
        return list(self.services.wait(self.session.get_items(limit)))  # type: ignore[arg-type]


@pytest.fixture
def agent(
    memory: MemoryService,
    memory_settings: MemorySettings,
    services: Services,
    namespace: str,
    session_id: str,
) -> Agent:
    """An agent whose session is the scenario's current session."""
    async_memory = services.async_memory(
        memory, namespace=namespace, **memory_settings.service_settings()
    )
    return Agent(ChatMemorySession(async_memory, session_id), services)


@given("an agent added these items to the session:")
@when("an agent adds these items to the session:")
@reads_json
def agent_adds_items(agent: Agent, docstring: str) -> None:
    """The agent stores these Responses API items (a JSON list), as after a run.

    Given an agent added these items to the session:
    When an agent adds these items to the session:
    """
    agent.add(json.loads(docstring))


@when(parsers.parse('an agent adds a message with the role "{role}"'))
def agent_adds_role(agent: Agent, role: str) -> None:
    """The agent stores one input message with this role (user, system, developer, ...).

    When an agent adds a message with the role "developer"
    """
    agent.add([{"role": role, "content": f"a {role} message"}])


@when("the agent adds the same items again, each with its fields in reverse order")
def agent_retries_reordered(agent: Agent) -> None:
    """The agent's run is retried, and the SDK rebuilds every item with its fields reordered.

    When the agent adds the same items again, each with its fields in reverse order
    """
    agent.retry([dict(reversed(list(item.items()))) for item in agent.added])


@then("the session reads as these chat messages:")
@reads_table(*READ_AS)
def session_reads_as(
    memory: MemoryService, session_id: str, datatable: Sequence[Sequence[str]]
) -> None:
    """Read as chat messages, each item is one: its role, id, calls, and the call it answers.

    A call is its call id, the tool's name and its arguments ("call_1 clock {}");
    "(its own)" is an id the memory gave an item that had none.

    Then the session reads as these chat messages:
    """
    actual = [
        {
            "role": m.role,
            "id": "(its own)" if m.id and _GIVEN_BY_THE_MEMORY.fullmatch(m.id) else m.id or "",
            "calls": ", ".join(f"{c.id} {c.name} {c.arguments}".strip() for c in m.tool_calls),
            "answers": m.tool_call_id or "",
        }
        for m in memory.get_messages(session_id)
    ]
    expect_text("the session, read as chat messages", actual, rows(datatable, READ_AS))


@then(parsers.parse('the session reads as one message with the role "{role}"'))
def session_reads_as_role(memory: MemoryService, session_id: str, role: str) -> None:
    """The session holds one message, with this chat role.

    Then the session reads as one message with the role "system"
    """
    roles = [m.role for m in memory.get_messages(session_id)]
    expect_text("the roles of the session's messages", roles, [role])


@then("the agent gets back exactly the items it added")
def agent_gets_back_items(agent: Agent) -> None:
    """The agent's ``get_items`` returns every item it added, equal, in order.

    Then the agent gets back exactly the items it added
    """
    expect_text("the agent's items", agent.items(), agent.added)


@when(
    parsers.re(r"the agent asks for its newest (?P<count>\d+) items?"),
    converters={"count": int},
    target_fixture="items_given",
)
def agent_asks_newest(agent: Agent, count: int) -> list[dict[str, Any]]:
    """``get_items(limit=count)``: the newest items only, oldest first.

    When the agent asks for its newest 2 items
    """
    return agent.items(count)


@then(
    parsers.re(r"the agent gets the last (?P<count>\d+) items? it added"),
    converters={"count": int},
)
def agent_gets_last(agent: Agent, items_given: list[dict[str, Any]], count: int) -> None:
    """What the agent was given is the last items it added, in order.

    Then the agent gets the last 2 items it added
    """
    expect_text("the items the agent got", items_given, agent.added[len(agent.added) - count :])


@then("the agent gets these items:")
@reads_json
def agent_gets_items(items_given: list[dict[str, Any]], docstring: str) -> None:
    """What the agent was given is exactly these items, in order (written as JSON).

    Then the agent gets these items:
    """
    expect_text("the items the agent got", items_given, json.loads(docstring))


@then("the session stores the item as exactly this text:")
@requires("agents_session", "storage_contract")
def item_stored_as(memory: MemoryService, session_id: str, docstring: str) -> None:
    """The session's one entry holds the item as this JSON text, byte for byte (storage contract).

    Then the session stores the item as exactly this text:
    """
    contents = [m.content for m in memory.get_messages(session_id)]
    expect_text("the stored item", contents, [docstring])
