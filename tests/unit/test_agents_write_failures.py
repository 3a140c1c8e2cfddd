"""The Agents SDK's ``Runner.run`` raises when the session cannot store a turn (issue 25).

LangChain's ``RunnableWithMessageHistory`` only logs a failed write; the
Agents SDK raises it from ``Runner.run``, for the input items it stores before
calling the model and for the model's items after. These tests pin that: if a
release of the SDK starts swallowing session errors, they fail, and
``ChatMemorySession`` needs the remedy LangChain got.
"""

from typing import Any

import fakeredis
import pytest
from agents import Agent, Runner

from chat_memory import AsyncMemoryService, PermissionDeniedError
from chat_memory.openai_agents import ChatMemorySession
from tests.agents_model import ScriptedModel


class _RefusingMemory(AsyncMemoryService):
    """Reads work; every write after the first ``allowed`` is refused, as by a Redis ACL."""

    def __init__(self, allowed: int) -> None:
        super().__init__(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer()))
        self.allowed = allowed

    async def add_messages(self, *args: Any, **kwargs: Any) -> Any:
        if self.allowed == 0:
            raise PermissionDeniedError("the Redis user may not run 'evalsha'; nothing was written")
        self.allowed -= 1
        return await super().add_messages(*args, **kwargs)


@pytest.fixture(autouse=True)
def _no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")


async def test_a_refused_write_of_the_input_fails_the_run_before_the_model_is_called() -> None:
    model = ScriptedModel("Hi, Ada.")
    session = ChatMemorySession(_RefusingMemory(allowed=0), "ada")
    with pytest.raises(PermissionDeniedError, match="nothing was written"):
        await Runner.run(Agent(name="assistant", model=model), "My name is Ada.", session=session)
    assert model.calls == 0


async def test_a_refused_write_of_the_answer_fails_the_run() -> None:
    model = ScriptedModel("Hi, Ada.")
    memory = _RefusingMemory(allowed=1)
    session = ChatMemorySession(memory, "ada")
    with pytest.raises(PermissionDeniedError, match="nothing was written"):
        await Runner.run(Agent(name="assistant", model=model), "My name is Ada.", session=session)
    assert model.calls == 1
    assert [item.get("role") for item in await session.get_items()] == ["user"]
