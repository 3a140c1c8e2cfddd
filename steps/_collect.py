"""Collect every ``.feature`` file under the test paths as a pytest module.

pytest-bdd only runs scenarios that a Python module binds with ``scenarios()``.
This plugin makes each ``.feature`` file its own collector, so an author adds a
scenario or a whole feature file without touching Python, and test ids name the
feature file: ``features/history_limit.feature::test_<scenario name>``.

Each file is checked first (see :mod:`steps._check`): an undefined step, a
duplicate scenario name or any other lint problem fails its collection with
``file:line: ...`` messages, before any scenario runs.
"""

from __future__ import annotations

import functools
import types
from pathlib import Path

import pytest
from pytest_bdd import scenarios
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.utils import registry_get_safe

from ._catalog import StepDefinition, step_definitions
from ._check import check_feature, registered_markers
from ._gherkin import read_feature

FEATURE_SUFFIX = ".feature"


_DEFINITIONS = pytest.StashKey[list[StepDefinition]]()


class FeatureModule(pytest.Module):
    """A ``.feature`` file, collected as a module whose tests are its scenarios."""

    def _getobj(self) -> types.ModuleType:
        feature = read_feature(self.path, self.config.rootpath)
        if _DEFINITIONS not in self.config.stash:  # read once per run, not once per file
            self.config.stash[_DEFINITIONS] = step_definitions(self.config.rootpath)
        definitions = self.config.stash[_DEFINITIONS]
        problems = check_feature(feature, definitions, registered_markers(self.config))
        if problems:
            raise self.CollectError("\n".join(map(str, problems)))
        module = types.ModuleType(f"feature:{self.path.stem}")
        module.__file__ = str(self.path)
        # scenarios() puts one test function per scenario into its caller's
        # namespace; running it at the top level of ``module`` makes that the
        # module's own __dict__.
        module.__dict__["_bind"] = scenarios
        module.__dict__["_path"] = str(self.path)
        exec("_bind(_path, features_base_dir='/')", module.__dict__)
        return module

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """Collect the scenarios, each reported at its line in the feature file."""
        collected = list(super().collect())
        for node in collected:
            template = registry_get_safe(
                scenario_wrapper_template_registry, getattr(node, "obj", None)
            )
            if isinstance(node, pytest.Function) and template is not None:
                node.reportinfo = functools.partial(  # type: ignore[method-assign]
                    _scenario_location, self.path, template.line_number, node.name
                )
        return collected


def _scenario_location(path: Path, line_number: int, name: str) -> tuple[Path, int, str]:
    return path, line_number - 1, name  # pytest counts lines from 0


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> FeatureModule | None:
    """Collect ``file_path`` if it is a feature file."""
    if file_path.suffix == FEATURE_SUFFIX:
        return FeatureModule.from_parent(parent, path=file_path)
    return None
