"""The one place the suite reaches into pytest-bdd and freezegun beyond their documented API.

- ``step_function_context_registry``: every step definition pytest-bdd knows,
  with its parser, type and function; the catalog and ``--bdd-check`` read it.
- ``scenario_wrapper_template_registry`` and ``registry_get_safe``: the
  scenario behind a test function, for its line in the feature file.
- ``Feature``, ``Scenario``, ``Step``: the objects pytest-bdd's hooks pass.
- freezegun's factory types, to type the frozen clock.
- :class:`ScenarioModule`: a ``.feature`` file collected as a pytest module,
  through pytest's private ``Module._getobj`` and pytest-bdd's ``scenarios()``,
  which puts its test functions into the namespace of the code calling it.
- :func:`report_at`: a scenario's test reported at its line in the feature file,
  by replacing the item's ``reportinfo``.
- :func:`example_of`: the outline row a scenario's test runs, from pytest-bdd's
  ``_pytest_bdd_example`` parameter.

``tests/unit/test_suite_compat.py`` fails when any of this changes under us.
"""

from __future__ import annotations

import functools
import types
from pathlib import Path
from typing import Any

import pytest
from freezegun.api import FrozenDateTimeFactory, StepTickTimeFactory, TickingDateTimeFactory
from freezegun.api import _freeze_time as FreezeTime
from pytest_bdd import scenarios
from pytest_bdd.parser import Feature, Scenario, Step
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.steps import step_function_context_registry
from pytest_bdd.utils import registry_get_safe

__all__ = [
    "Feature",
    "FreezeTime",
    "FrozenDateTimeFactory",
    "Scenario",
    "ScenarioModule",
    "Step",
    "StepTickTimeFactory",
    "TickingDateTimeFactory",
    "example_of",
    "registry_get_safe",
    "report_at",
    "scenario_wrapper_template_registry",
    "step_function_context_registry",
]


class ScenarioModule(pytest.Module):
    """A ``.feature`` file as a pytest module whose test functions are its scenarios."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"feature:{self.path.stem}")
        module.__file__ = str(self.path)
        # scenarios() puts one test function per scenario into its caller's
        # namespace; running it at the top level of ``module`` makes that the
        # module's own __dict__.
        module.__dict__["_bind"] = scenarios
        module.__dict__["_path"] = str(self.path)
        exec("_bind(_path, features_base_dir='/')", module.__dict__)
        return module


def report_at(item: pytest.Function, path: Path, line: int) -> None:
    """Report ``item`` at ``line`` (counted from 1) of ``path``, not where Python defined it."""
    item.reportinfo = functools.partial(  # type: ignore[method-assign]
        lambda name: (path, line - 1, name), item.name
    )


def example_of(item: pytest.Item) -> dict[str, Any]:
    """The outline row (column to value) a scenario's test runs; empty for a plain scenario."""
    params = getattr(item, "callspec", None)
    return dict(params.params.get("_pytest_bdd_example", {})) if params else {}
