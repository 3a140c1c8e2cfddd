"""What the suite takes from pytest-bdd and freezegun beyond their documented API still holds.

If a test here fails after an upgrade, ``src/chat_memory_suite/_compat.py`` needs a look:
it is the one place that uses what these libraries do not document.
"""

from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time

from chat_memory_suite._compat import (
    FreezeTime,
    FrozenDateTimeFactory,
    Step,
    registry_get_safe,
    scenario_wrapper_template_registry,
    step_function_context_registry,
)


def test_every_registered_step_has_a_function_a_parser_and_a_type() -> None:
    contexts = list(step_function_context_registry.values())
    assert contexts
    for context in contexts:
        assert callable(context.step_func)
        assert callable(context.parser.is_matching)
        assert isinstance(context.parser.name, str)
        assert context.type in ("given", "when", "then", None)


def test_a_scenario_test_function_leads_back_to_its_line() -> None:
    templates = list(scenario_wrapper_template_registry.items())
    for function, template in templates:
        assert registry_get_safe(scenario_wrapper_template_registry, function) is template
        assert isinstance(template.line_number, int)
    assert registry_get_safe(scenario_wrapper_template_registry, object()) is None


def test_the_hook_objects_and_the_frozen_clock_keep_their_shape() -> None:
    assert {"line_number", "keyword", "name"} <= set(Step.__init__.__code__.co_varnames)
    freezer = freeze_time(datetime(2026, 12, 2, tzinfo=UTC), tick=False)
    assert isinstance(freezer, FreezeTime)
    frozen = freezer.start()
    try:
        assert isinstance(frozen, FrozenDateTimeFactory)
        frozen.tick(timedelta(seconds=5))
        assert datetime.now(UTC) == datetime(2026, 12, 2, 0, 0, 5, tzinfo=UTC)
    finally:
        freezer.stop()


def test_a_feature_file_is_a_module_of_scenarios_each_at_its_line_and_row(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
from pytest_bdd import given, parsers

from chat_memory_suite._compat import example_of

pytest_plugins = ["chat_memory_suite.collect"]


@given(parsers.parse("the number {n:d}"))
def number(n):
    '''A number.

    Given the number 1
    '''


def pytest_collection_modifyitems(items):
    for item in items:
        print("ITEM", item.name, sorted(example_of(item).items()), item.location[1])
"""
    )
    (pytester.path / "numbers.feature").write_text(
        "Feature: Numbers\n"
        "  Scenario: One\n"
        "    Given the number 1\n"
        "\n"
        "  Scenario Outline: Many\n"
        "    Given the number <n>\n"
        "    Examples:\n"
        "      | n |\n"
        "      | 2 |\n",
        encoding="utf-8",
    )
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-s", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["ITEM test_one [] 1", "ITEM test_many[2] [('n', '2')] 4"])


def test_remembered_step_lookups_keep_pytest_bdds_scoping(pytester: pytest.Pytester) -> None:
    # The same sentence defined at the root and overridden in one folder: each folder's
    # scenarios must get their own definition, however often the lookup is remembered.
    pytester.makeconftest(
        """
import pytest
from pytest_bdd import given, parsers

from chat_memory_suite._compat import remember_step_lookups


def pytest_configure(config):
    config.add_cleanup(remember_step_lookups())


@given(parsers.parse("the word is {word}"), target_fixture="said")
def word(word):
    return ("root", word)
"""
    )
    for folder in ("a", "b"):
        pytester.mkpydir(folder)
        (pytester.path / folder / "scenarios.feature").write_text(
            "Feature: F\n"
            + "".join(
                f"  Scenario: S{n}\n    Given the word is w{n}\n    Then it was heard in {folder}\n"
                for n in range(3)
            ),
            encoding="utf-8",
        )
        (pytester.path / folder / f"test_{folder}.py").write_text(
            "from pytest_bdd import scenarios, then, parsers\n"
            "scenarios('scenarios.feature')\n"
            "@then(parsers.parse('it was heard in {where}'))\n"
            "def heard(said, where):\n"
            "    assert said[0] == ('b' if where == 'b' else 'root'), said\n",
            encoding="utf-8",
        )
    (pytester.path / "b" / "conftest.py").write_text(
        "from pytest_bdd import given, parsers\n"
        "@given(parsers.parse('the word is {word}'), target_fixture='said')\n"
        "def word(word):\n"
        "    return ('b', word)\n",
        encoding="utf-8",
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)


def test_the_step_lookup_pytest_bdd_does_is_where_remember_step_lookups_expects_it() -> None:
    import importlib
    import inspect

    module = importlib.import_module("pytest_bdd.scenario")
    for name in ("find_fixturedefs_for_step", "getfixturedefs"):
        assert callable(getattr(module, name)), f"pytest_bdd.scenario.{name} is gone"
    assert list(inspect.signature(module.find_fixturedefs_for_step).parameters) == [
        "step",
        "fixturemanager",
        "node",
    ]
    assert list(inspect.signature(module.getfixturedefs).parameters) == [
        "fixturemanager",
        "fixturename",
        "node",
    ]
    source = inspect.getsource(module.inject_fixturedefs_for_step)
    assert "find_fixturedefs_for_step(" in source, "pytest-bdd no longer looks steps up this way"
