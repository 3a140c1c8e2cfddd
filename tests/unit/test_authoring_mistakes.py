"""Eleven typical authoring mistakes: each reported before anything runs, none stopping the rest.

Each is written as a QA author would get it wrong, checked by the same code
``--bdd-check`` and the collector use, and then run together with a correct
feature file: the correct scenarios pass, the broken ones show as errors with
``file:line:`` and a suggestion, and the run exits nonzero.
"""

from pathlib import Path

import pytest

from chat_memory_suite.catalog import step_definitions
from chat_memory_suite.check import check_feature, project_tags, registered_markers
from chat_memory_suite.gherkin import read_feature

# Each test runs the suite on a feature file with a mistake: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]

MISTAKES = {
    "misspelled step": (
        'Feature: F\n  Scenario: S\n    When the usr says "hi"\n    Then the context is empty\n',
        'mistake.feature:3: When the usr says "hi": no step definition matches',
        'When the user says "{text}"',
    ),
    "word where a number belongs": (
        "Feature: F\n  Scenario: S\n    Given the history limit is ten messages\n"
        "    Then the context is empty\n",
        "mistake.feature:3: Given the history limit is ten messages: {limit} must be a whole"
        ' number, not "ten"',
        "the sentence is: Given the history limit is {limit} message(s)",
    ),
    "word outside the choices": (
        'Feature: F\n  Scenario: S\n    Given the tool "ann" said "hi"\n'
        "    Then the context is empty\n",
        'mistake.feature:3: Given the tool "ann" said "hi": {role} must be one of: user,'
        ' assistant, system, not "tool"',
        'the sentence is: Given the {role} "{name}" said "{text}"',
    ),
    "placeholder without a column": (
        'Feature: F\n  Scenario Outline: S\n    When the user says "<text>"\n'
        "    Then the context contains 1 message\n\n    Examples:\n      | words |\n      | hi |\n",
        "mistake.feature:2: placeholder <text> has no column in the Examples at line 6",
        None,
    ),
    "unused column": (
        'Feature: F\n  Scenario Outline: S\n    When the user says "<text>"\n'
        "    Then the context contains 1 message\n\n"
        "    Examples:\n      | text | mood |\n      | hi   | glad |\n",
        'mistake.feature:6: Examples column "mood" is used by no step or title',
        None,
    ),
    "duplicate scenario name": (
        "Feature: F\n  Scenario: S\n    Then the context is empty\n"
        "  Scenario: S\n    Then the context is empty\n",
        'mistake.feature:4: duplicate scenario name "S" (first at line 2)',
        None,
    ),
    "When after a Then": (
        'Feature: F\n  Scenario: S\n    When the user says "hi"\n'
        "    Then the context contains 1 message\n"
        '    When the user says "again"\n',
        'mistake.feature:5: When the user says "again": a When step after a Then',
        "start a new scenario for the next event",
    ),
    "unregistered tag": (
        "Feature: F\n  @smoke\n  Scenario: S\n    Then the context is empty\n",
        "mistake.feature:2: tag @smoke is not a registered marker",
        "the project's tags: @cluster, @failover, @faults, @llm_smoke, @no_permission_precheck,",
    ),
    "wrong table header": (
        'Feature: F\n  Scenario: S\n    When the user says "hi"\n    Then the context is:\n'
        "      | who  | text |\n      | user | hi   |\n",
        "mistake.feature:4: Then the context is: the table's header is | who | text |,"
        " but this step reads | role | content |",
        None,
    ),
    "empty scenario": (
        "Feature: F\n  Scenario: S\n  Scenario: T\n    Then the context is empty\n",
        'mistake.feature:2: scenario "S" has no steps',
        None,
    ),
    "Background with a When": (
        'Feature: F\n  Background:\n    When the user says "hi"\n'
        "  Scenario: S\n    Then the context contains 1 message\n",
        'mistake.feature:3: a Background may hold only Given steps, not: When the user says "hi"',
        None,
    ),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_mistake_is_reported_with_file_line_and_help(
    tmp_path: Path, pytestconfig: pytest.Config, mistake: str
) -> None:
    text, expected, hint = MISTAKES[mistake]
    path = tmp_path / "mistake.feature"
    path.write_text(text, encoding="utf-8")
    feature = read_feature(path, tmp_path)
    found = check_feature(
        feature,
        step_definitions(ROOT),
        registered_markers(pytestconfig),
        project_tags(pytestconfig),
    )
    reports = [str(problem) for problem in found]
    matching = [report for report in reports if report.startswith(expected)]
    assert matching, reports
    if hint is not None:
        assert hint in matching[0], matching[0]


def test_no_mistake_stops_the_other_files(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    (pytester.path / "conftest.py").write_text(
        (ROOT / "conftest.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (pytester.path / "pyproject.toml").write_text(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    features = pytester.path / "features"
    features.mkdir()
    for number, mistake in enumerate(sorted(MISTAKES)):
        (features / f"mistake_{number}.feature").write_text(MISTAKES[mistake][0], encoding="utf-8")
    (features / "good.feature").write_text(
        'Feature: Good\n  Scenario: Remembered\n    When the user says "hi"\n'
        "    Then the context contains 1 message\n",
        encoding="utf-8",
    )
    result = pytester.runpytest_subprocess(
        "features", "-p", "no:randomly", "-p", "no:cacheprovider"
    )
    assert result.ret != 0
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 2  # the good scenario, on the sync and the async API
    assert outcomes.get("errors", 0) >= len(MISTAKES)
    assert "Traceback" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*features/mistake_*.feature:*: *"])
