"""The one place the suite reaches into pytest-bdd and freezegun beyond their documented API.

- ``step_function_context_registry``: every step definition pytest-bdd knows,
  with its parser, type and function; the catalog and ``--bdd-check`` read it.
- ``scenario_wrapper_template_registry`` and ``registry_get_safe``: the
  scenario behind a test function, for its line in the feature file.
- ``Feature``, ``Scenario``, ``Step``: the objects pytest-bdd's hooks pass.
- freezegun's factory types, to type the frozen clock.

``tests/unit/test_suite_compat.py`` fails when any of this changes under us.
"""

from __future__ import annotations

from freezegun.api import FrozenDateTimeFactory, StepTickTimeFactory, TickingDateTimeFactory
from freezegun.api import _freeze_time as FreezeTime
from pytest_bdd.parser import Feature, Scenario, Step
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.steps import step_function_context_registry
from pytest_bdd.utils import registry_get_safe

__all__ = [
    "Feature",
    "FreezeTime",
    "FrozenDateTimeFactory",
    "Scenario",
    "Step",
    "StepTickTimeFactory",
    "TickingDateTimeFactory",
    "registry_get_safe",
    "scenario_wrapper_template_registry",
    "step_function_context_registry",
]
