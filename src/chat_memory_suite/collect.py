"""Collect every ``.feature`` file under the test paths as a pytest module.

pytest-bdd only runs scenarios that a Python module binds with ``scenarios()``.
This plugin makes each ``.feature`` file its own collector, so an author adds a
scenario or a whole feature file without touching Python, and test ids name the
feature file: ``features/history_limit.feature::test_<scenario name>``.

Each file is checked first (see :mod:`chat_memory_suite.check`). A file with a problem
(an undefined step, a duplicate scenario name, ...) is not run: each of its
scenarios is reported as an error with the ``file:line: ...`` messages, and
"undefined" in the living documentation, while every other file's scenarios
run as usual. The run still exits nonzero.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ._compat import (
    ScenarioModule,
    Step,
    registry_get_safe,
    report_at,
    scenario_wrapper_template_registry,
    step_function_context_registry,
)
from .adapter import capabilities_of, unsupported
from .catalog import StepDefinition, applies_to, nearest, step_definitions
from .check import Problem, check_feature, project_tags, registered_markers
from .gherkin import FeatureSpec, ScenarioSpec, StepSpec, read_feature, shown_path
from .plugin import memory_factory

SCENARIO_KEY = "living-doc-scenario"
PROBLEMS_KEY = "living-doc-problems"
NEEDS_KEY = "living-doc-needs"
"""What the scenario needs of the memory under test (capability names), as a JSON list."""

FEATURE_SUFFIX = ".feature"
NOT_SUPPORTED = "not supported by this memory"
"""How a scenario the memory under test cannot take is reported: skipped, with this reason."""


_DEFINITIONS = pytest.StashKey[tuple[int, list[StepDefinition]]]()


class BrokenScenario(pytest.Item):
    """A scenario of a feature file with problems: reported as an error, never run."""

    def __init__(self, *, problems: list[Problem], line: int, **kwargs: Any) -> None:
        """Keep the file's problems, to report them when the scenario "runs"."""
        super().__init__(**kwargs)
        self.problems = problems
        self.line = line

    def setup(self) -> None:
        """Stop with the feature file's problems, no traceback: an error, not a failed test."""
        found = "\n".join(map(str, self.problems))
        message = f"the feature file has problems; this scenario was not run:\n{found}"
        pytest.fail(message, pytrace=False)

    def runtest(self) -> None:
        """Never reached: :meth:`setup` stops the scenario."""

    def reportinfo(self) -> tuple[Path, int, str]:
        """Point at the scenario's line in the feature file."""
        return self.path, self.line - 1, self.name


class FeatureModule(ScenarioModule):
    """A ``.feature`` file, collected as a module whose tests are its scenarios."""

    def _feature(self) -> tuple[FeatureSpec, list[Problem]]:
        feature = read_feature(self.path, self.config.rootpath)
        # Read once per run, again only when a nested conftest.py has added steps.
        count = len(step_function_context_registry)
        if self.config.stash.get(_DEFINITIONS, (-1, []))[0] != count:
            self.config.stash[_DEFINITIONS] = (count, step_definitions(self.config.rootpath))
        definitions = self.config.stash[_DEFINITIONS][1]
        markers, tags = registered_markers(self.config), project_tags(self.config)
        return feature, check_feature(feature, definitions, markers, tags)

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """Collect the scenarios, each reported at its line in the feature file."""
        feature, problems = self._feature()
        if problems:
            return list(_broken(self, feature, problems))
        collected = list(super().collect())
        factory = memory_factory(self.config)
        recorded = factory is not None or self.config.getoption("living_doc", None)
        needs = self._needs(feature) if recorded else {}
        for node in collected:
            template = registry_get_safe(
                scenario_wrapper_template_registry, getattr(node, "obj", None)
            )
            if isinstance(node, pytest.Function) and template is not None:
                report_at(node, self.path, template.line_number)
                needed = sorted(needs.get(template.line_number, ()))
                if recorded:
                    node.user_properties.append((NEEDS_KEY, json.dumps(needed)))
                if factory is None:
                    continue
                missing = unsupported(needed, capabilities_of(factory))
                if missing:
                    reason = f"{NOT_SUPPORTED}: needs {', '.join(missing)}"
                    node.add_marker(pytest.mark.skip(reason=reason))
        return collected

    def _needs(self, feature: FeatureSpec) -> dict[int, set[str]]:
        """What each scenario (by line) needs of the memory, from the steps it uses."""
        definitions = [d for d in self.config.stash[_DEFINITIONS][1] if applies_to(d, feature.path)]
        needs: dict[int, set[str]] = {}
        for spec in feature.scenarios:
            found = needs.setdefault(spec.line, set())
            for step in spec.steps:
                found.update(
                    *(d.requires for d in nearest([d for d in definitions if d.matches(step)]))
                )
                found.update(roles_needed(step))
        return needs


ROLE_CAPABILITIES: dict[str, str] = {"system": "system_role", "tool": "tool_calls"}
"""The roles a store may have no word for, and the capability that says it has one."""


FIELD_CAPABILITIES: dict[str, str] = {
    "name": "names",
    "tool_calls": "tool_calls",
    "tool_call_id": "tool_calls",
}
"""The fields of a message a store may not keep, and the capability that says it keeps them."""


def _message_fields(docstring: str) -> set[str]:
    """The keys of the messages a JSON docstring holds (a list of them, or one), if any.

    Only the messages' own keys: a tool call's ``function`` has a ``name`` too, which is
    no message's name.
    """
    try:
        value = json.loads(docstring)
    except ValueError:
        return set()
    items = value if isinstance(value, list) else [value]
    return {key for item in items if isinstance(item, dict) for key in item}


def roles_needed(step: StepSpec) -> set[str]:
    """What the roles and fields a step's table or JSON gives the memory need of it.

    A system or tool message needs ``system_role`` or ``tool_calls``; a message's
    ``name`` needs ``names``, its ``tool_calls`` or ``tool_call_id`` ``tool_calls``.
    """
    roles: set[str] = set()
    needed: set[str] = set()
    table = step.datatable or ()
    if table and "role" in table[0]:
        column = table[0].index("role")
        roles.update(row[column] for row in table[1:] if column < len(row))
    if table:
        needed.update(FIELD_CAPABILITIES[f] for f in table[0] if f in FIELD_CAPABILITIES)
    if step.docstring:
        roles.update(re.findall(r'"role"\s*:\s*"(\w+)"', step.docstring))
        fields = _message_fields(step.docstring)
        needed.update(FIELD_CAPABILITIES[f] for f in fields if f in FIELD_CAPABILITIES)
    roles.update(re.findall(r'with the role "(\w+)"', step.text))
    return needed | {ROLE_CAPABILITIES[role] for role in roles if role in ROLE_CAPABILITIES}


def _broken(
    parent: FeatureModule, feature: FeatureSpec, problems: list[Problem]
) -> Iterator[BrokenScenario]:
    """One error item per scenario (per outline row) of a file with problems."""
    if not feature.scenarios:
        yield BrokenScenario.from_parent(parent, name="feature", problems=problems, line=1)
        return
    lines = {spec.key: _lines(spec) for spec in feature.scenarios}
    anywhere = set().union(*lines.values())
    for spec in feature.scenarios:
        row = f"[{'-'.join(v for _, v in spec.example)}]" if spec.example else ""
        name = f"test_{_slug(spec.name)}{row}"
        own = [p for p in problems if p.line in lines[spec.key] or p.line not in anywhere]
        item = BrokenScenario.from_parent(
            parent, name=name, problems=own or problems, line=spec.line
        )
        label = {"path": feature.path, "line": spec.line, "example": list(spec.example)}
        item.user_properties.append((SCENARIO_KEY, json.dumps(label)))
        item.user_properties.append((PROBLEMS_KEY, "\n".join(map(str, item.problems))))
        yield item


def _lines(spec: ScenarioSpec) -> set[int]:
    """The lines of the feature file that belong to one scenario (or outline row)."""
    own = {spec.line, *(step.line for step in spec.steps)}
    return own | ({spec.example_line} if spec.example_line else set())


def _slug(name: str) -> str:
    return re.sub(r"\W+", "_", name.lower()).strip("_")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> FeatureModule | None:
    """Collect ``file_path`` if it is a feature file."""
    if file_path.suffix == FEATURE_SUFFIX:
        return FeatureModule.from_parent(parent, path=file_path)
    return None


_FAILED_STEP = pytest.StashKey[tuple[int, str]]()


def pytest_bdd_step_error(request: pytest.FixtureRequest, step: Step) -> None:
    """Remember which step of the scenario failed, for its report."""
    request.node.stash[_FAILED_STEP] = (step.line_number, f"{step.keyword} {step.name}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Report a scenario whose Then did not hold as the step and its message, not Python.

    Only a failed expectation (an AssertionError in a step) is shortened so;
    any other error keeps its traceback, and ``--tb=long`` keeps every one.
    """
    report = yield
    failed_step = item.stash.get(_FAILED_STEP, None)
    if (
        report.failed
        and call.when == "call"
        and failed_step is not None
        and call.excinfo is not None
        and call.excinfo.errisinstance(AssertionError)
        and item.config.getoption("tbstyle") in ("auto", "short")
    ):
        line, sentence = failed_step
        where = shown_path(item.path, item.config.rootpath)
        report.longrepr = f"{where}:{line}: {sentence}\n{call.excinfo.exconly()}"
    return report
