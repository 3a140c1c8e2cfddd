"""The msgspec fast path of ``decode`` admits exactly what the checked path admits.

``decode`` parses a current-format entry with msgspec types and builds the
message without running ``validate``; anything those types refuse goes
through ``_decode_checked``. If the types ever admitted an entry the checked
path refuses, a corrupt entry would reach the model unreported. This compares
the two on generated entries, good and bad alike.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chat_memory._codec import _decode_checked, decode
from chat_memory._message import Message

texts = st.text(min_size=1, max_size=6)
good_calls = st.lists(
    st.builds(
        lambda call_id, name, arguments, typed: {
            "id": call_id,
            **({"type": "function"} if typed else {}),
            "function": {"name": name, "arguments": arguments},
        },
        texts,
        texts,
        st.text(max_size=6),
        st.booleans(),
    ),
    max_size=2,
)


@st.composite
def good_entries(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed current-format entry of any role."""
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    entry: dict[str, Any] = {"v": 1, "role": role, "content": draw(st.text(max_size=6))}
    if draw(st.booleans()):
        entry["id"] = draw(texts)
    if draw(st.booleans()):
        entry["created_at"] = draw(st.floats(allow_nan=False, allow_infinity=False))
    if role == "assistant":
        entry["tool_calls"] = draw(good_calls)
        if entry["tool_calls"] and draw(st.booleans()):
            entry["content"] = None
    if role == "tool":
        entry["tool_call_id"] = draw(texts)
    if draw(st.booleans()):
        entry["name"] = draw(texts)
    return entry


odd_values: st.SearchStrategy[object] = st.sampled_from(
    [
        None, "", "a" * 128, "a" * 129, "é" * 128, "é" * 129, 0, 1, 1.5, True, False,
        float("inf"), [], {}, "function", "other", "tool", "assistant", "user",
        [{"id": "c"}], [{"id": "c", "function": {"name": "n"}}],
        [{"id": "c", "type": None, "function": {"name": "n", "arguments": ""}}],
        [{"id": 1, "function": {"name": "n", "arguments": ""}}],
        [{"id": "c", "function": {"name": "n", "arguments": "", "extra": 1}}],
        [None], "[]",
    ]
)  # fmt: skip
fields = st.sampled_from(
    ["v", "role", "content", "id", "created_at", "tool_calls", "tool_call_id", "name", "other"]
)


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed entry with up to two fields removed or set to odd values."""
    entry = draw(good_entries())
    for _ in range(draw(st.integers(0, 2))):
        key = draw(fields)
        if draw(st.booleans()):
            entry.pop(key, None)
        else:
            entry[key] = draw(odd_values)
    return entry


def outcome(decoder: Any, raw: bytes | str) -> tuple[str, object]:
    """What a decoder makes of ``raw``: the message's fields, or the error's text."""
    try:
        message: Message = decoder(raw)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return "ok", (message.to_chat(), message.id, message.created_at)


@settings(max_examples=600, deadline=None)
@given(entries())
@example({"v": 1, "role": "assistant", "content": None})
@example({"v": 1, "role": "assistant", "content": None, "tool_calls": []})
@example({"v": 1, "role": "tool", "content": "42"})
@example({"v": 1, "role": "user", "content": "hi", "id": "a" * 129})
@example({"v": 1, "role": "user", "content": "hi", "name": "é" * 129})
@example({"v": 1, "role": "tool", "content": "42", "tool_call_id": ""})
def test_the_fast_path_decodes_every_entry_as_the_checked_path_does(entry: dict[str, Any]) -> None:
    raw = json.dumps(entry, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")
    assert outcome(decode, raw) == outcome(_decode_checked, raw)
    text = raw.decode("utf-8", "surrogatepass")
    assert outcome(decode, text) == outcome(_decode_checked, text)


@pytest.mark.parametrize("number", ["1e999", "-1e999"])
def test_an_infinite_created_at_is_refused_by_both_paths(number: str) -> None:
    raw = f'{{"v":1,"role":"user","content":"hi","created_at":{number}}}'
    assert outcome(decode, raw)[0] == "DecodeError"
    assert outcome(decode, raw) == outcome(_decode_checked, raw)
