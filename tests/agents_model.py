"""A model for the OpenAI Agents SDK that answers every prompt with one text, for tests.

No network: ``Runner.run`` gets its answer from here, and the tests count the calls.
"""

from __future__ import annotations

from typing import Any

from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText


class ScriptedModel(Model):
    """Answers every prompt with ``text``, and counts its calls."""

    def __init__(self, text: str) -> None:
        """Answer ``text`` to every prompt."""
        self.text = text
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        """Return the scripted answer as one assistant message."""
        self.calls += 1
        content = ResponseOutputText(type="output_text", text=self.text, annotations=[])
        message = ResponseOutputMessage(
            id="msg_1", type="message", role="assistant", status="completed", content=[content]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        """Streaming is not scripted: no test here streams."""
        raise NotImplementedError
