import json

import pytest

from chat_memory import Message, ToolCall
from chat_memory._codec import DecodeError, decode, encode


def test_encode_is_versioned_compact_utf8_json_in_a_fixed_key_order() -> None:
    message = Message("user", '我叫 "张三"', id="m-1", created_at=1796205600.0)
    assert encode(message) == (
        '{"v":1,"id":"m-1","role":"user","content":"我叫 \\"张三\\"","created_at":1796205600.0}'
    )


@pytest.mark.parametrize(
    "message",
    [
        Message("user", "", id="a", created_at=1.5),
        Message("system", "line\nbreak \\ 👋🏽", id="b", created_at=2.0),
        Message(
            "assistant",
            None,
            id="c",
            created_at=3.0,
            tool_calls=(ToolCall("call_1", "weather", '{"city": "Paris"}'),),
        ),
        Message("tool", "18°C", id="d", created_at=4.0, tool_call_id="call_1", name="weather"),
    ],
)
def test_decode_reverses_encode(message: Message) -> None:
    assert decode(encode(message)) == message
    assert decode(encode(message).encode("utf-8")) == message


def test_the_earlier_plain_shape_decodes_without_id_or_time() -> None:
    assert decode(b'{"role": "user", "content": "hi"}') == Message("user", "hi")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfe", "not valid UTF-8 JSON"),
        ('{"role": "user", "content": "cut', "not valid UTF-8 JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"v": 2, "role": "user", "content": "x"}', "unsupported format version 2"),
        ('{"role": "user"}', "missing 'role' or 'content'"),
        ('{"role": "user", "content": "x", "extra": 1}', "unexpected field(s) extra"),
        ('{"role": "wizard", "content": "x"}', "role must be one of"),
        ('{"role": "user", "content": 42}', "content must be a string"),
        (
            json.dumps({"v": 1, "id": "x", "role": "user", "content": "x", "created_at": "now"}),
            "created_at must be a finite number",
        ),
    ],
)
def test_decode_names_what_is_wrong(raw: str | bytes, reason: str) -> None:
    with pytest.raises(DecodeError, match=None) as failure:
        decode(raw)
    assert reason in str(failure.value)
