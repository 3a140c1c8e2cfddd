from typing import Any

import pytest

from chat_memory import (
    InvalidContentError,
    InvalidInputError,
    InvalidRoleError,
    Message,
    ToolCall,
)
from chat_memory._message import message_from_chat


def test_a_plain_message_has_exactly_role_and_content_in_chat_shape() -> None:
    assert Message("user", "hi", id="1", created_at=1.0).to_chat() == {
        "role": "user",
        "content": "hi",
    }


def test_tool_fields_appear_only_when_set() -> None:
    call = ToolCall("call_1", "weather", "{}")
    assert Message("assistant", None, tool_calls=(call,)).to_chat() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        ],
    }
    assert Message("tool", "18°C", tool_call_id="call_1").to_chat() == {
        "role": "tool",
        "content": "18°C",
        "tool_call_id": "call_1",
    }


@pytest.mark.parametrize(
    ("kwargs", "error", "reason"),
    [
        ({"role": "wizard", "content": "x"}, InvalidRoleError, "role must be one of"),
        ({"role": "user", "content": 42}, InvalidContentError, "content must be a string, not int"),
        ({"role": "user", "content": None}, InvalidContentError, "content may be None only"),
        ({"role": "tool", "content": "x"}, InvalidContentError, "needs the tool_call_id"),
        ({"role": "user", "content": "x", "tool_call_id": "c"}, InvalidContentError, "only a tool"),
        (
            {"role": "user", "content": "x", "tool_calls": (ToolCall("c", "f", "{}"),)},
            InvalidContentError,
            "only an assistant",
        ),
        ({"role": "user", "content": "x", "id": ""}, InvalidContentError, "message id must be 1"),
        ({"role": "user", "content": "x", "created_at": True}, InvalidContentError, "created_at"),
    ],
)
def test_invalid_messages_are_refused_with_a_reason(
    kwargs: dict[str, Any], error: type[Exception], reason: str
) -> None:
    with pytest.raises(error) as failure:
        Message(**kwargs)
    assert isinstance(failure.value, InvalidInputError)
    assert isinstance(failure.value, ValueError)
    assert reason in str(failure.value)


def test_chat_dicts_are_checked_field_by_field() -> None:
    assert message_from_chat({"role": "user", "content": "hi"}) == Message("user", "hi")
    with pytest.raises(InvalidContentError, match="unknown message field"):
        message_from_chat({"role": "user", "content": "hi", "colour": "red"})
    with pytest.raises(InvalidContentError, match="needs both"):
        message_from_chat({"role": "user"})
    with pytest.raises(InvalidContentError, match="must be a mapping"):
        message_from_chat("hi")  # type: ignore[arg-type]
    with pytest.raises(InvalidContentError, match="tool call's arguments must be a string"):
        message_from_chat(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
            }
        )
