"""What the suite takes from pytest-bdd and freezegun beyond their documented API still holds.

If a test here fails after an upgrade, ``src/chat_memory_suite/_compat.py`` needs a look.
"""

from datetime import UTC, datetime, timedelta

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
