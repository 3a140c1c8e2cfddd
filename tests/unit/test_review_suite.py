"""The suite's checks agree with pytest-bdd on which definition a step runs, and diffs show all."""

from pathlib import Path

import pytest

from chat_memory_suite.compare import expect_messages

# Each test runs pytest again, on a project of its own: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]


def test_a_nested_conftest_may_override_a_step_without_it_being_ambiguous(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    for name in ("conftest.py", "pyproject.toml"):
        (pytester.path / name).write_text((ROOT / name).read_text(encoding="utf-8"))
    folder = pytester.path / "features" / "memory"
    folder.mkdir(parents=True)
    (folder / "conftest.py").write_text(
        "from pytest_bdd import then\n\n\n"
        '@then("the context is empty")\n'
        "def overridden():\n"
        '    """The local meaning.\n\n    Then the context is empty\n    """\n',
        encoding="utf-8",
    )
    (folder / "empty.feature").write_text(
        "Feature: F\n  Scenario: S\n    Then the context is empty\n", encoding="utf-8"
    )
    check = pytester.runpytest_subprocess("--bdd-check", "features")
    check.stdout.fnmatch_lines(["checked 1 feature file(s), 1 scenario(s): no problems"])
    assert check.ret == 0
    run = pytester.runpytest_subprocess("features", "-p", "no:randomly")
    run.assert_outcomes(passed=2)


def test_values_that_print_alike_are_told_apart_in_a_diff() -> None:
    with pytest.raises(AssertionError) as failure:
        expect_messages(
            "the context",
            [{"role": "assistant", "content": None}, {"role": "user", "content": "hi "}],
            [{"role": "assistant", "content": ""}, {"role": "user", "content": "hi"}],
        )
    assert str(failure.value).splitlines()[-4:] == [
        "  - | assistant |         |",
        "  - | user      | hi      |",
        "  + | assistant | null    |",
        '  + | user      | "hi "   |',
    ]
