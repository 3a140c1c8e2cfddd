"""A failed expectation reads like the scenario: the step, the expected and actual tables."""

from pathlib import Path

import pytest

# Each test runs pytest again, on a project of its own: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]

FEATURE = """Feature: Memory
  Scenario: The wrong answer is expected
    Given the user said "one"
    When the assistant replies "two"
    Then the context is:
      | role      | content |
      | user      | one     |
      | assistant | three   |
"""


@pytest.fixture
def project(suite_project: pytest.Pytester) -> pytest.Pytester:
    (suite_project.path / "features" / "memory.feature").write_text(FEATURE, encoding="utf-8")
    return suite_project


def test_a_failed_then_shows_the_step_and_a_table_diff_without_python(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_subprocess("features", "-p", "no:randomly")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "features/memory.feature:5: Then the context is:",
            'AssertionError: the context of session "default" is not as expected',
            "*rows marked - are missing, + are not expected:",
            "    | role      | content |",
            "    | user      | one     |",
            "  - | assistant | three   |",
            "  + | assistant | two     |",
        ]
    )
    output = result.stdout.str()
    for python in ("fixturefunc", "Use -v", "def context_is", "Traceback"):
        assert python not in output


def test_a_long_traceback_is_still_there_when_asked_for(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("features", "-p", "no:randomly", "--tb=long")
    assert "def context_is" in result.stdout.str()
