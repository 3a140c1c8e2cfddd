"""Compare what a session holds with what a scenario expects, and say the difference plainly.

A failing Then shows the expected messages and the actual ones in the shape
the scenario wrote them (a table), and marks each row, as Cucumber's table
diff does: ``-`` expected but missing, ``+`` there but not expected, nothing
for a row that matches. Nothing is truncated.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["expect_count", "expect_messages", "expect_text", "table"]

_COLUMNS = ("role", "content")


def expect_messages(
    what: str, actual: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]]
) -> None:
    """Raise an AssertionError describing how ``actual`` differs from ``expected``, if it does."""
    __tracebackhide__ = True
    if list(actual) == list(expected):
        return
    columns = _columns([*actual, *expected])
    want = [_row(m, columns) for m in expected]
    got = [_row(m, columns) for m in actual]
    widths = _widths([columns, *want, *got])
    header = _format([columns], widths)[0]
    lines = [
        f"{what} is not as expected",
        f"expected {_count(len(want))}, found {_count(len(got))};"
        " rows marked - are missing, + are not expected:",
        f"    {header}",
    ]
    matcher = difflib.SequenceMatcher(a=want, b=got, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            lines += [f"    {row}" for row in _format(want[a0:a1], widths)]
            continue
        lines += [f"  - {row}" for row in _format(want[a0:a1], widths)]
        lines += [f"  + {row}" for row in _format(got[b0:b1], widths)]
    raise AssertionError("\n".join(lines))


def expect_count(what: str, actual: Sequence[Mapping[str, Any]], count: int) -> None:
    """Raise an AssertionError showing ``actual`` unless it holds ``count`` messages."""
    __tracebackhide__ = True
    if len(actual) != count:
        raise AssertionError(
            f"{what} holds {_count(len(actual))}, expected {count}:\n{table(actual)}"
        )


def table(messages: Sequence[Mapping[str, Any]]) -> str:
    """Return messages as an indented table, as a scenario would write them."""
    columns = _columns(messages)
    rows = [columns, *(_row(m, columns) for m in messages)]
    return "\n".join(f"    {row}" for row in _format(rows, _widths(rows)))


def expect_text(what: str, actual: object, expected: object) -> None:
    """Raise an AssertionError with a line diff of two JSON values, if they differ."""
    __tracebackhide__ = True
    if actual == expected:
        return
    want = json.dumps(expected, ensure_ascii=False, indent=2).splitlines()
    got = json.dumps(actual, ensure_ascii=False, indent=2).splitlines()
    diff = [line for line in difflib.ndiff(want, got) if not line.startswith("?")]
    heading = f"{what} is not as expected; lines marked - are missing, + are not expected:"
    raise AssertionError("\n".join([heading, *diff]))


def _count(n: int) -> str:
    return f"{n} message" + ("" if n == 1 else "s")


def _columns(messages: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    extra = sorted({key for m in messages for key in m} - set(_COLUMNS))
    return (*_COLUMNS, *extra)


def _row(message: Mapping[str, Any], columns: Sequence[str]) -> tuple[str, ...]:
    return tuple(_cell(message.get(column)) for column in columns)


def _cell(value: object) -> str:
    """Show a value so that two different values never look alike."""
    if isinstance(value, str):
        shown = value.replace("\n", "↵").replace("\t", "⇥")
        return json.dumps(value, ensure_ascii=False) if value != value.strip() else shown
    return json.dumps(value, ensure_ascii=False)  # None is null, 42 is 42


def _widths(rows: Sequence[Sequence[str]]) -> list[int]:
    return [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]


def _format(rows: Sequence[Sequence[str]], widths: Sequence[int]) -> list[str]:
    return [
        "| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |"
        for row in rows
    ]
