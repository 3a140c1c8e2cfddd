"""The feature-file check: undefined steps with suggestions, and every lint rule."""

import subprocess
import sys
from pathlib import Path

import pytest

from chat_memory_suite.catalog import step_definitions
from chat_memory_suite.check import Problem, check_feature, registered_markers
from chat_memory_suite.gherkin import read_feature

ROOT = Path(__file__).resolve().parents[2]


def problems(tmp_path: Path, pytestconfig: pytest.Config, text: str) -> list[Problem]:
    path = tmp_path / "sample.feature"
    path.write_text(text, encoding="utf-8")
    feature = read_feature(path, tmp_path)
    return check_feature(feature, step_definitions(ROOT), registered_markers(pytestconfig))


def test_a_clean_feature_has_no_problems(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    text = 'Feature: F\n  Scenario: S\n    Given a new session "a"\n    Then the context is empty\n'
    assert problems(tmp_path, pytestconfig, text) == []


def test_an_undefined_step_is_reported_with_its_line_and_suggestions(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    text = 'Feature: F\n  Scenario: S\n    Given a new session "a"\n    When the usr says "hi"\n'
    [problem] = problems(tmp_path, pytestconfig, text)
    assert (problem.path, problem.line) == ("sample.feature", 4)
    assert problem.message == 'When the usr says "hi": no step definition matches'
    assert problem.hints[0] == "    did you mean:"
    assert problem.hints[1].startswith('      When the user says "{text}"  (')
    assert "steps/conversation.py:" in problem.hints[1]  # where it is defined


def test_outline_steps_are_checked_after_substitution(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    text = (
        "Feature: F\n  Scenario Outline: S <n>\n    Given the history limit is <n> messages\n"
        '    And a new session "a"\n    Then the context is empty\n\n'
        "    Examples:\n      | n   |\n      | 3   |\n      | ten |\n"
    )
    [problem] = problems(tmp_path, pytestconfig, text)
    assert problem.line == 3
    assert problem.message.startswith("Given the history limit is ten messages")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Feature: F\n", 'sample.feature:1: feature "F" has no scenarios'),
        ("Feature: F\n  Scenario: S\n", 'sample.feature:2: scenario "S" has no steps'),
        (
            "Feature: F\n  Scenario: S\n    Then the context is empty\n"
            "  Scenario: S\n    Then the context is empty\n",
            'sample.feature:4: duplicate scenario name "S" (first at line 2):'
            " pytest-bdd would run only one of them",
        ),
        (
            'Feature: F\n  Background:\n    Given a new session "a"\n    And the user says "x"\n'
            '    When the user says "y"\n  Scenario: S\n    Then the context is empty\n',
            'sample.feature:5: a Background may hold only Given steps, not: When the user says "y"',
        ),
        (
            "@nonsense\nFeature: F\n  Scenario: S\n    Then the context is empty\n",
            "sample.feature:1: tag @nonsense is not a registered marker",
        ),
        (
            'Feature: F\n  Scenario Outline: S\n    Given a new session "<who>"\n'
            "    Then the context is empty\n\n    Examples:\n      | whom |\n      | a    |\n",
            "sample.feature:2: placeholder <who> has no column in the Examples at line 6",
        ),
        (
            'Feature: F\n  Scenario Outline: S\n    Given a new session "<who>"\n'
            "    Then the context is empty\n\n"
            "    Examples:\n      | who | extra |\n      | a   | b     |\n",
            'sample.feature:6: Examples column "extra" is used by no step or title',
        ),
        ("Given a step outside any feature\n", "sample.feature:1: the file does not parse"),
    ],
    ids=[
        "no scenarios",
        "no steps",
        "duplicate name",
        "background",
        "tag",
        "placeholder",
        "column",
        "parse",
    ],
)
def test_each_lint_rule_reports_file_and_line(
    tmp_path: Path, pytestconfig: pytest.Config, text: str, expected: str
) -> None:
    found = [str(p).splitlines()[0] for p in problems(tmp_path, pytestconfig, text)]
    assert any(line.startswith(expected) for line in found), found


def test_a_step_several_definitions_match_is_reported(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    import importlib.util

    from pytest_bdd.steps import step_function_context_registry as registry

    # A second definition of a sentence that already exists, in a steps module of its own.
    module_path = tmp_path / "more_steps.py"
    module_path.write_text(
        'from pytest_bdd import then\n\n\n@then("the context is empty")\n'
        'def again():\n    """A second definition."""\n',
        encoding="utf-8",
    )
    spec = importlib.util.spec_from_file_location("more_steps", module_path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "Feature: F\n  Scenario: S\n    Then the context is empty\n"
    try:
        [problem] = problems(tmp_path, pytestconfig, text)
    finally:  # the registry is global: leave no second definition behind
        for marker in [k for k, v in registry.items() if v.step_func is module.again]:
            del registry[marker]
    assert problem.message == "Then the context is empty: matches several step definitions"
    assert len(problem.hints) == 2


def test_bdd_check_exits_nonzero_without_running_anything(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest(
        "pytest_plugins = ['chat_memory_suite.catalog', 'chat_memory_suite.check',\n"
        "    'chat_memory_suite.collect', 'chat_memory_suite.steps.context']\n"
    )
    (pytester.path / "a.feature").write_text(
        "Feature: A\n  Scenario: S\n    Then the contxt is empty\n", encoding="utf-8"
    )
    result = pytester.runpytest_subprocess("--bdd-check", ".")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "a.feature:3: Then the contxt is empty: no step definition matches",
            "*did you mean:*",
            "checked 1 feature file(s), 1 scenario(s): 1 problem(s)",
        ]
    )


def test_the_project_features_pass_the_check(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--bdd-check",
        str(ROOT / "features"),
        "--rootdir",
        str(ROOT),
        "-c",
        str(ROOT / "pyproject.toml"),
    )
    result.stdout.fnmatch_lines(["checked * feature file(s), * scenario(s): no problems"])
    assert result.ret == 0


def test_the_guides_bdd_check_sample_is_what_the_check_prints() -> None:
    """docs/writing-scenarios.md shows --bdd-check's output on its example: the real one."""
    guide = (ROOT / "docs" / "writing-scenarios.md").read_text(encoding="utf-8")
    shown = guide[guide.index("```text\n") + len("```text\n") :].split("```")[0].strip()
    printed = subprocess.run(
        [sys.executable, "-m", "pytest", "docs/examples/greeting.feature", "--bdd-check",
         "-p", "no:randomly"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert printed.returncode != 0
    assert printed.stdout.strip() == shown
