"""Collect every ``.feature`` file under the test paths as a pytest module.

pytest-bdd only runs scenarios that a Python module binds with ``scenarios()``.
This plugin makes each ``.feature`` file its own collector, so an author adds a
scenario or a whole feature file without touching Python, and test ids name the
feature file: ``features/history_limit.feature::test_<scenario name>``.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from pytest_bdd import scenarios
from pytest_bdd.exceptions import NoScenariosFound

FEATURE_SUFFIX = ".feature"


class FeatureModule(pytest.Module):
    """A ``.feature`` file, collected as a module whose tests are its scenarios."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"feature:{self.path.stem}")
        module.__file__ = str(self.path)
        # scenarios() puts one test function per scenario into its caller's
        # namespace; running it at the top level of ``module`` makes that the
        # module's own __dict__.
        module.__dict__["_bind"] = scenarios
        module.__dict__["_path"] = str(self.path)
        try:
            exec("_bind(_path, features_base_dir='/')", module.__dict__)
        except NoScenariosFound:
            raise self.CollectError(f"{self.path.name}: the feature has no scenarios") from None
        return module


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> FeatureModule | None:
    """Collect ``file_path`` if it is a feature file."""
    if file_path.suffix == FEATURE_SUFFIX:
        return FeatureModule.from_parent(parent, path=file_path)
    return None
