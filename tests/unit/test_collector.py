"""The .feature collector: every feature file is collected with no Python glue."""

from pathlib import Path

import pytest

# Each test runs pytest again, on a project of its own: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
from pytest_bdd import given, then, parsers

pytest_plugins = ["chat_memory_suite.collect"]


@given(parsers.parse("a number {n:d}"), target_fixture="number")
def a_number(n):
    return n


@then(parsers.parse("it is less than {limit:d}"))
def less_than(number, limit):
    assert number < limit
"""

FEATURE = """
Feature: Numbers
  @small
  Scenario: A small number is small
    Given a number 3
    Then it is less than 10

  Scenario Outline: Number <n> is below 100
    Given a number <n>
    Then it is less than 100

    Examples:
      | n  |
      | 1  |
      | 99 |
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nmarkers =\n    small: a small one\n")
    (pytester.path / "features").mkdir()
    (pytester.path / "features" / "numbers.feature").write_text(FEATURE)
    return pytester


def test_every_scenario_is_collected_under_its_feature_file(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--collect-only", "-q", "-p", "no:randomly")
    result.stdout.fnmatch_lines(
        [
            "features/numbers.feature::test_a_small_number_is_small",
            "features/numbers.feature::test_number_n_is_below_100[[]1[]]",
            "features/numbers.feature::test_number_n_is_below_100[[]99[]]",
        ]
    )


def test_scenarios_run_and_can_fail(project: pytest.Pytester) -> None:
    (project.path / "features" / "broken.feature").write_text(
        "Feature: Broken\n  Scenario: A big number is not small\n"
        "    Given a number 300\n    Then it is less than 10\n"
    )
    result = project.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["FAILED features/broken.feature::test_a_big_number_is_not_small*"])


def test_keyword_and_tag_selection_work(project: pytest.Pytester) -> None:
    project.runpytest_subprocess("-k", "below_100", "-p", "no:randomly").assert_outcomes(passed=2)
    project.runpytest_subprocess("-m", "small", "-p", "no:randomly").assert_outcomes(passed=1)


def test_runs_under_xdist(project: pytest.Pytester) -> None:
    project.runpytest_subprocess("-n", "2", "-p", "no:randomly").assert_outcomes(passed=3)


def test_a_feature_without_scenarios_fails_collection(project: pytest.Pytester) -> None:
    (project.path / "features" / "empty.feature").write_text("Feature: Nothing here\n")
    result = project.runpytest_subprocess("-p", "no:randomly")
    assert result.ret != 0
    result.stdout.fnmatch_lines(['*empty.feature:1: feature "Nothing here" has no scenarios*'])
