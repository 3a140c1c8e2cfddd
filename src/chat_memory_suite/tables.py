"""Turn Gherkin data tables into domain values, checking the header row once, here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

MESSAGE_COLUMNS = ("role", "content")

F = TypeVar("F", bound=Callable[..., Any])


def reads_table(*columns: str) -> Callable[[F], F]:
    """Declare that a step reads a data table with this header, for the catalog and the check."""

    def declare(step: F) -> F:
        step.table_columns = columns  # type: ignore[attr-defined]
        return step

    return declare


def reads_json(step: F) -> F:
    """Declare that a step's doc string holds JSON, for the catalog and the check."""
    step.json_docstring = True  # type: ignore[attr-defined]
    return step


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
