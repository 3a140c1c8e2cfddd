"""Steps about moving a session: export to JSON Lines, import, metadata.

Usage::

    Given the session has this metadata:
      \"\"\"
      {"title": "Paris trip"}
      \"\"\"
    When the session is exported
    When the app tries to export the session
    And the export is imported as session "paris-copy"
    Then session "paris-copy" holds exactly what session "paris" holds
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import CorruptEntryError, ImportResult, MemoryService
from chat_memory_suite.compare import expect_text
from chat_memory_suite.tables import reads_json

from .context import expect_corrupt_entry
from .conversation import Attempt

REQUIRES = ("export",)
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""


@dataclass
class Transfer:
    """The scenario's last export and imports."""

    export: str | None = None
    imports: list[ImportResult] = field(default_factory=list)


@pytest.fixture
def transfer() -> Transfer:
    """What the scenario exported and imported."""
    return Transfer()


@given("the session has this metadata:")
@reads_json
def session_has_metadata(memory: MemoryService, session_id: str, docstring: str) -> None:
    """The app stores this JSON object as the current session's metadata (e.g. its title).

    Given the session has this metadata:
    """
    memory.set_metadata(session_id, json.loads(docstring))


@when("the app gives the session this metadata:")
@reads_json
def app_gives_metadata(
    memory: MemoryService, session_id: str, attempt: Attempt, docstring: str
) -> None:
    """The app tries to store this metadata (JSON, where NaN and Infinity parse as numbers).

    When the app gives the session this metadata:
    """
    attempt.make(lambda: memory.set_metadata(session_id, json.loads(docstring)))


@when(parsers.parse("the app gives the session metadata of {size:d} bytes"))
def app_gives_metadata_of_size(
    memory: MemoryService, session_id: str, attempt: Attempt, metadata: dict[str, str], size: int
) -> None:
    """The app tries to store metadata whose compact JSON is exactly this many bytes.

    When the app gives the session metadata of 16384 bytes
    """
    metadata["note"] = "x" * (size - len('{"note":""}'))
    attempt.make(lambda: memory.set_metadata(session_id, metadata))


@pytest.fixture
def metadata() -> dict[str, str]:
    """The metadata the scenario's app gave, for a Then step to read back."""
    return {}


@then("the metadata is stored")
def metadata_stored(
    memory: MemoryService, session_id: str, attempt: Attempt, metadata: dict[str, str]
) -> None:
    """The app's metadata was accepted and reads back exactly.

    Then the metadata is stored
    """
    assert attempt.made, "no step gave the session metadata"
    assert attempt.error is None, f"the metadata was refused: {attempt.error}"
    assert memory.get_metadata(session_id) == metadata


@given("the session was exported")
@when("the session is exported")
def session_exported(memory: MemoryService, session_id: str, transfer: Transfer) -> None:
    """The app exports the current session as JSON Lines.

    Given the session was exported
    When the session is exported
    """
    transfer.export = memory.export_session(session_id)


@when("the app tries to export the session")
def app_tries_to_export(
    memory: MemoryService, session_id: str, transfer: Transfer, attempt: Attempt
) -> None:
    """The app exports the current session; a failure is kept for a Then step.

    When the app tries to export the session
    """

    def export() -> None:
        transfer.export = memory.export_session(session_id)

    attempt.make(export)


@given(parsers.parse('the export was imported as session "{name}"'))
@when(parsers.parse('the export is imported as session "{name}"'))
def export_imported_as(memory: MemoryService, transfer: Transfer, name: str) -> None:
    """The app imports the last export as a new session.

    Given the export was imported as session "alice-copy"
    When the export is imported as session "paris-copy"
    """
    assert transfer.export is not None, "no step exported a session"
    transfer.imports.append(memory.import_session(name, transfer.export))


@when(parsers.re(r"the app imports the export into the session(?P<how>, appending)?"))
def app_imports_export(
    memory: MemoryService, session_id: str, transfer: Transfer, attempt: Attempt, how: str | None
) -> None:
    """The app imports the last export into the current session, appending or not.

    When the app imports the export into the session, appending
    """
    export = transfer.export
    assert export is not None, "no step exported a session"
    options = {"append": True} if how else {}  # without it, the library's default
    attempt.make(
        lambda: transfer.imports.append(memory.import_session(session_id, export, **options))
    )


@when("the app imports this export into the session:")
def app_imports_text(
    memory: MemoryService, session_id: str, attempt: Attempt, docstring: str
) -> None:
    """The app imports this JSON Lines text into the current session.

    When the app imports this export into the session:
    """
    attempt.make(lambda: memory.import_session(session_id, docstring + "\n"))


@then(parsers.parse('session "{name}" holds exactly what session "{other}" holds'))
def sessions_identical(memory: MemoryService, name: str, other: str) -> None:
    """Both sessions hold the same messages (ids, times, tool calls) and metadata.

    Then session "paris-copy" holds exactly what session "paris" holds
    """
    copy, original = memory.export_session(name), memory.export_session(other)
    header = {"session_id": name}
    assert original.count("\n") > 1, f'session "{other}" holds no message'
    expect_text(
        f'session "{name}"',
        [json.loads(line) for line in copy.splitlines()],
        [
            json.loads(line) | (header if n == 0 else {})
            for n, line in enumerate(original.splitlines())
        ],
    )


@then("the session's metadata is:")
@reads_json
def session_metadata_is(memory: MemoryService, session_id: str, docstring: str) -> None:
    """The current session's metadata reads back as exactly this JSON object.

    Then the session's metadata is:
    """
    expect_text("the session's metadata", memory.get_metadata(session_id), json.loads(docstring))


@then("the session has no metadata")
def session_has_no_metadata(memory: MemoryService, session_id: str) -> None:
    """The current session's metadata was never set, or is gone.

    Then the session has no metadata
    """
    assert memory.get_metadata(session_id) == {}, memory.get_metadata(session_id)


@then(
    parsers.parse(
        "the import is reported as stored but confirmed by no replica,"
        " having added {count:d} messages"
    )
)
def import_not_replicated(attempt: Attempt, count: int) -> None:
    """The import raised NotReplicatedError, handing back its report of what it stored.

    Then the import is reported as stored but confirmed by no replica, having added 2 messages
    """
    error, reply = attempt.not_replicated(ImportResult)
    assert len(reply.imported) == count, f"the error hands back {reply}"
    # To resend them: the messages' write, not the metadata's, is the error's.
    resend = [(m.id, m.content) for m in error.messages]
    assert resend == [(m.id, m.content) for m in reply.imported], str(error)


@then("the export is:")
def export_is(transfer: Transfer, docstring: str) -> None:
    """The last export is exactly this text, line for line.

    Then the export is:
    """
    assert transfer.export is not None, "no step exported a session"
    assert transfer.export == docstring + "\n", transfer.export


@then(
    parsers.re(r"the import (?P<what>added|skipped) (?P<count>\d+) messages?"),
    converters={"count": int},
)
def import_added_or_skipped(transfer: Transfer, what: str, count: int) -> None:
    """The last import added this many messages, or left out this many whose ids were held.

    Then the import added 2 messages
    Then the import skipped 1 message
    """
    assert transfer.imports, "no import succeeded"
    result = transfer.imports[-1]
    assert len(result.imported if what == "added" else result.skipped) == count, result


@then(parsers.parse("exporting the session fails, naming entry {number:d} as corrupt"))
def export_fails_on_corrupt_entry(memory: MemoryService, session_id: str, number: int) -> None:
    """The export is refused, naming the session and the entry that cannot be read.

    Then exporting the session fails, naming entry 2 as corrupt
    """
    with pytest.raises(CorruptEntryError) as failure:
        memory.export_session(session_id)
    expect_corrupt_entry(failure.value, session_id, number)


@then(parsers.parse("the import is refused, naming entry {number:d} of the session as corrupt"))
def import_refused_on_corrupt_entry(attempt: Attempt, session_id: str, number: int) -> None:
    """The last import was refused, naming the session's entry that cannot be read.

    Then the import is refused, naming entry 2 of the session as corrupt
    """
    assert attempt.made, "no step tried to import"
    expect_corrupt_entry(attempt.error, session_id, number)
