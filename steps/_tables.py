"""Turn Gherkin data tables into domain values, checking the header row once, here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MESSAGE_COLUMNS = ("role", "content")


def rows(datatable: Sequence[Sequence[str]], columns: Sequence[str]) -> list[dict[str, str]]:
    """Return the table's rows as dicts, after checking its header is exactly ``columns``."""
    if not datatable or tuple(datatable[0]) != tuple(columns):
        found = " | ".join(datatable[0]) if datatable else "no table"
        raise AssertionError(
            f"the table must start with the header | {' | '.join(columns)} |, found | {found} |"
        )
    return [dict(zip(columns, row, strict=True)) for row in datatable[1:]]


def messages(datatable: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    """Return a ``| role | content |`` table as chat-completions messages."""
    return [{"role": r["role"], "content": r["content"]} for r in rows(datatable, MESSAGE_COLUMNS)]


def exchange(count: int) -> list[dict[str, Any]]:
    """Return ``count`` numbered messages, the user and the assistant taking turns.

    Odd numbers are the user's ("message 1"), even ones the assistant's.
    """
    return [
        {"role": "user" if n % 2 else "assistant", "content": f"message {n}"}
        for n in range(1, count + 1)
    ]
