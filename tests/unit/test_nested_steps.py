"""Step definitions in a nested conftest.py: used below it, in runs, checks and the catalog."""

from pathlib import Path

import pytest

# Each test runs pytest again, on a project of its own: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]

NESTED_CONFTEST = '''
from pytest_bdd import then


@then("the basket smells of apples")
def smells_of_apples():
    """A step only the baskets folder defines.

    Then the basket smells of apples
    """
'''


@pytest.fixture
def project(suite_project: pytest.Pytester) -> pytest.Pytester:
    pytester = suite_project
    baskets = pytester.path / "features" / "baskets"
    baskets.mkdir(parents=True)
    (baskets / "conftest.py").write_text(NESTED_CONFTEST, encoding="utf-8")
    (baskets / "apples.feature").write_text(
        "Feature: Apples\n  Scenario: Fresh\n    Then the basket smells of apples\n"
    )
    (pytester.path / "features" / "elsewhere.feature").write_text(
        "Feature: Elsewhere\n  Scenario: Not here\n    Then the basket smells of apples\n"
    )
    return pytester


def test_a_nested_step_runs_below_its_conftest_only(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("features", "-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)  # the nested step passes on both APIs
    result.stdout.fnmatch_lines(
        ["*elsewhere.feature:3: Then the basket smells of apples: no step*"]
    )


def test_bdd_check_sees_the_nested_step_where_it_applies(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--bdd-check", "features")
    assert result.ret == 1
    output = result.stdout.str()
    assert "elsewhere.feature:3" in output
    assert "apples.feature" not in output
    result.stdout.fnmatch_lines(["checked 2 feature file(s), 2 scenario(s): 1 problem(s)"])


def test_the_catalog_lists_the_nested_step(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--bdd-steps", "features")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*Then the basket smells of apples*"])
