"""Living documentation: every feature and scenario, with its result, for people who read, not run.

``pytest features/ --living-doc DIR`` writes ``DIR/index.html`` (one
self-contained page, filterable by tag and status) and ``DIR/living-doc.md``
(for CI job summaries and review comments).

The documents are the whole specification: the feature files are read again
here, so scenarios that were deselected or never ran still appear, marked
"not run". Results travel in ``item.user_properties``, which pytest-xdist
carries from its workers, so ``-n auto`` works.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import pytest

from ._compat import (
    Feature,
    Scenario,
    Step,
    example_of,
    registry_get_safe,
    scenario_wrapper_template_registry,
)
from .adapter import describe_factory
from .backends import BACKEND_KEY
from .catalog import StepDefinition, feature_roots, step_definitions
from .collect import NEEDS_KEY, NOT_SUPPORTED, PROBLEMS_KEY, SCENARIO_KEY
from .gherkin import FeatureSpec, ScenarioSpec, feature_files, read_feature, shown_path

STEPS_KEY = "living-doc-steps"
API_KEY = "memory-api"  # set by chat_memory_suite.apis on every scenario it parametrizes
STATUSES = ("passed", "failed", "not supported", "skipped", "undefined", "not run")
_STEPS = pytest.StashKey[list[dict[str, Any]]]()

Key = tuple[str, int, tuple[tuple[str, str], ...]]


@dataclass
class ScenarioResult:
    """What the run said about one scenario."""

    status: str = "not run"
    steps: dict[int, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    reason: str | None = None
    needs: list[str] = field(default_factory=list)


class LivingDoc:
    """The controller's plugin: gathers every report, writes the documents at the end."""

    def __init__(self, config: pytest.Config, out: Path) -> None:
        """Start recording a run whose documents go to ``out``."""
        self.config = config
        self.out = out
        self.roots = feature_roots(config)
        self.started = datetime.now(UTC)
        self.start_clock = time.perf_counter()
        self.results: dict[Key, ScenarioResult] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold one phase's report into its scenario's result."""
        props = dict(report.user_properties)
        if SCENARIO_KEY not in props:
            return
        raw = json.loads(str(props[SCENARIO_KEY]))
        key: Key = (raw["path"], raw["line"], tuple(tuple(pair) for pair in raw["example"]))
        result = self.results.setdefault(key, ScenarioResult())
        if STEPS_KEY in props:
            for step in json.loads(str(props[STEPS_KEY])):
                result.steps[step["line"]] = step
        if NEEDS_KEY in props:
            result.needs = json.loads(str(props[NEEDS_KEY]))
        api = props.get(API_KEY)
        if PROBLEMS_KEY in props:
            result.status = "undefined"
            result.error = str(props[PROBLEMS_KEY])
        elif report.skipped:
            longrepr = report.longrepr
            result.reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            unsupported = result.reason.removeprefix("Skipped: ").startswith(NOT_SUPPORTED)
            result.status = "not supported" if unsupported else "skipped"
        elif report.failed:
            result.status = "failed"
            where = f"[{api} API] " if api else ""
            result.error = result.error or where + _failure_text(report)
        elif report.when == "call" and result.status == "not run":
            result.status = "passed"

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Write the documents once every result is in."""
        write(build(self.config, self), self.out)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"living documentation: {self.out / 'index.html'}, {self.out / 'living-doc.md'}"
            )


def _failure_text(report: pytest.TestReport) -> str:
    """The failure's own message, whole (the exception line pytest shows after ``E``)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    return str(message) if message else report.longreprtext


def pytest_configure(config: pytest.Config) -> None:
    """Start recording when --living-doc is given (on the controller only, under xdist)."""
    out = config.getoption("--living-doc")
    if out and not hasattr(config, "workerinput"):
        config.pluginmanager.register(LivingDoc(config, Path(out)), "chat-memory-living-doc")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Label each scenario test with its place in the feature files."""
    if not config.getoption("--living-doc"):
        return
    for item in items:
        template = registry_get_safe(scenario_wrapper_template_registry, getattr(item, "obj", None))
        if template is None or not isinstance(item, pytest.Function):
            continue
        example = example_of(item)
        path = shown_path(item.path, config.rootpath)
        label = {"path": path, "line": template.line_number, "example": list(example.items())}
        item.user_properties.append((SCENARIO_KEY, json.dumps(label)))


def _record(
    request: pytest.FixtureRequest, step: Step, status: str, error: str | None = None
) -> None:
    if request.config.getoption("--living-doc"):
        entry: dict[str, Any] = {"line": step.line_number, "status": status}
        if error is not None:
            entry["error"] = error
        request.node.stash.setdefault(_STEPS, []).append(entry)


def pytest_bdd_after_step(request: pytest.FixtureRequest, step: Step) -> None:
    """Record a passed step."""
    _record(request, step, "passed")


def pytest_bdd_step_error(request: pytest.FixtureRequest, step: Step, exception: Exception) -> None:
    """Record a failed step with its error."""
    _record(request, step, "failed", f"{type(exception).__name__}: {exception}")


def pytest_bdd_step_func_lookup_error(
    request: pytest.FixtureRequest, step: Step, exception: Exception
) -> None:
    """Record a step no definition matched."""
    _record(request, step, "undefined", str(exception))


def pytest_bdd_after_scenario(
    request: pytest.FixtureRequest, feature: Feature, scenario: Scenario
) -> None:
    """Hand the scenario's steps to the report (and so to the xdist controller)."""
    if request.config.getoption("--living-doc"):
        steps = request.node.stash.get(_STEPS, [])
        request.node.user_properties.append((STEPS_KEY, json.dumps(steps)))


def build(config: pytest.Config, collector: LivingDoc) -> dict[str, Any]:
    """Merge the feature files and the results into the document's data."""
    definitions = step_definitions(config.rootpath)
    features = [read_feature(p, config.rootpath) for p in feature_files(collector.roots)]
    folders: dict[str, list[dict[str, Any]]] = {}
    totals: Counter[str] = Counter()
    tags: set[str] = set()
    attention: list[dict[str, Any]] = []
    for feature in features:
        data = _feature(feature, collector.results, definitions)
        totals.update(data["counts"])
        tags.update(data["all_tags"])
        folders.setdefault(feature.folder, []).append(data)
        attention += [
            {
                **scenario,
                "feature": data["name"],
                "path": data["path"],
                "first_error": _first_error(scenario),
            }
            for rule in data["rules"]
            for scenario in rule["scenarios"]
            if not scenario["outline"] and scenario["status"] in ("failed", "undefined")
        ]
    backend = config.stash[BACKEND_KEY].describe() if BACKEND_KEY in config.stash else "unknown"
    lacked: Counter[str] = Counter()
    for folder in folders.values():
        for data in folder:
            for rule in data["rules"]:
                for scenario in rule["scenarios"]:  # an outline's rows are scenarios too
                    if not scenario["outline"] and scenario["status"] == "not supported":
                        lacked.update(_lacking(scenario["reason"] or ""))
    return {
        "title": "chat-memory: living documentation",
        "date": collector.started.strftime("%Y-%m-%d %H:%M UTC"),
        "duration": f"{time.perf_counter() - collector.start_clock:.1f} s",
        "backend": backend,
        "api": _api_label(config),
        "folders": sorted(folders.items()),
        "totals": {status: totals[status] for status in STATUSES},
        "scenario_count": sum(totals.values()),
        "tags": sorted(tags),
        "statuses": STATUSES,
        "attention": attention,
        "tested": totals["passed"] + totals["failed"],
        "not_supported": sorted(lacked.items(), key=lambda item: (-item[1], item[0])),
    }


def _lacking(reason: str) -> list[str]:
    _, marker, needs = reason.partition(f"{NOT_SUPPORTED}: needs ")
    return [c.strip() for c in needs.split(",")] if marker else []


def _api_label(config: pytest.Config) -> str:
    """Which API the scenarios drove, as the pytest header says it."""
    if not config.pluginmanager.has_plugin("chat_memory_suite.apis"):
        return "sync"
    from .apis import selected_apis
    from .plugin import memory_factory

    factory = memory_factory(config)
    if factory is not None:
        return f"{describe_factory(factory)} (the memory under test, through its adapter)"
    apis = selected_apis(config)
    return "sync and async (each scenario on each)" if len(apis) > 1 else apis[0]


def _feature(
    feature: FeatureSpec, results: dict[Key, ScenarioResult], definitions: list[StepDefinition]
) -> dict[str, Any]:
    rules: dict[str | None, list[dict[str, Any]]] = {}
    counts: Counter[str] = Counter()
    all_tags: set[str] = set(feature.tags)
    outlines: dict[int, dict[str, Any]] = {}
    for spec in feature.scenarios:
        result = results.get((feature.path, spec.line, spec.example), ScenarioResult())
        scenario = _scenario(spec, result, definitions, _anchor(feature.path, spec))
        counts[scenario["status"]] += 1
        all_tags.update(spec.tags)
        if spec.example:
            if spec.line not in outlines:
                outlines[spec.line] = _outline(spec)
                rules.setdefault(spec.rule, []).append(outlines[spec.line])
            outlines[spec.line]["rows"].append(
                {
                    "values": [visible(value) for _, value in spec.example],
                    "status": scenario["status"],
                    "anchor": scenario["anchor"],
                }
            )
        rules.setdefault(spec.rule, []).append(scenario)
    descriptions = dict(feature.rules)
    return {
        "path": feature.path,
        "name": feature.name,
        "description": feature.description,
        "tags": feature.tags,
        "error": feature.error,
        "rules": [
            {
                "name": name,
                "description": descriptions.get(name, "") if name else "",
                "scenarios": s,
            }
            for name, s in rules.items()
        ],
        "counts": {status: counts[status] for status in STATUSES},
        "all_tags": all_tags,
    }


_INVISIBLE = str.maketrans(
    {
        "\n": "↵",
        "\t": "⇥",
        "\r": "␍",
        "\u00a0": "⍽",
        "\u200b": "[zero-width space]",
        "\ufeff": "[BOM]",
    }
)


def _first_error(scenario: dict[str, Any]) -> str:
    """The first line that says what went wrong, for the summary."""
    errors = [s["error"] for s in scenario["steps"] if s.get("error")] + [scenario["error"]]
    text = next((e for e in errors if e), "")
    lines = [line for line in text.splitlines() if line.strip()]
    return (
        lines[1]
        if lines and "has problems" in lines[0] and len(lines) > 1
        else (lines[0] if lines else "")
    )


def visible(text: str) -> str:
    """Show characters a reader could not see (line breaks, tabs, no-break spaces) as symbols."""
    return text.translate(_INVISIBLE)


def _anchor(path: str, spec: ScenarioSpec) -> str:
    row = f"-{spec.example_line}" if spec.example_line else ""
    return "s-" + re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-") + f"-{spec.line}{row}"


def _outline(spec: ScenarioSpec) -> dict[str, Any]:
    """A Scenario Outline as written: its steps with placeholders, and its Examples with results."""
    return {
        "outline": True,
        "name": visible(spec.outline_name),
        "line": spec.line,
        "tags": spec.tags,
        "status": "outline",
        "steps": [
            {
                "keyword": step.keyword.strip(),
                "text": visible(step.text),
                "datatable": _visible_table(step.datatable),
                "docstring": step.docstring,
            }
            for step in spec.outline_steps
        ],
        "columns": [visible(name) for name, _ in spec.example],
        "rows": [],
    }


def _visible_table(
    table: tuple[tuple[str, ...], ...] | None,
) -> list[list[str]] | None:
    return [[visible(cell) for cell in row] for row in table] if table else None


def _scenario(
    spec: ScenarioSpec, result: ScenarioResult, definitions: list[StepDefinition], anchor: str
) -> dict[str, Any]:
    steps = []
    failed_step = False
    for step in spec.steps:
        recorded = result.steps.get(step.line)
        if not any(d.matches(step) for d in definitions):
            status = "undefined"
        elif recorded is not None:
            status = recorded["status"]
        elif result.status in ("skipped", "not supported"):
            status = "skipped"
        else:  # never reached: the scenario was deselected, or stopped at an earlier step
            status = "not run"
        failed_step = failed_step or status == "failed"
        steps.append(
            {
                "keyword": step.keyword.strip(),
                "text": visible(step.text),
                "status": status,
                "datatable": _visible_table(step.datatable),
                "docstring": step.docstring,
                "error": recorded.get("error") if recorded else None,
            }
        )
    status = result.status
    if any(s["status"] == "undefined" for s in steps) and status != "failed":
        status = "undefined"
    return {
        "outline": False,
        "name": visible(spec.name),
        "anchor": anchor,
        "line": spec.line,
        "tags": spec.tags,
        "status": status,
        "steps": steps,
        "reason": result.reason,
        "needs": result.needs,
        "error": None if failed_step else result.error,
    }


def _md_cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", "<br>")


def write(document: dict[str, Any], out: Path) -> None:
    """Render the HTML page and the Markdown file into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    loader = jinja2.PackageLoader("chat_memory_suite", "templates")
    html = jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined)
    markdown = jinja2.Environment(
        loader=loader,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    markdown.filters["cell"] = _md_cell
    marks = {
        "passed": "✓",
        "failed": "✗",
        "not supported": "⊘",
        "skipped": "–",
        "undefined": "?",
        "not run": "○",
    }
    emoji = {
        "passed": "✅",
        "failed": "❌",
        "not supported": "🚫",
        "skipped": "⏭️",
        "undefined": "❓",
        "not run": "⚪",
    }
    # The same data, for tools: python -m chat_memory_suite.peers reads it.
    (out / "results.json").write_text(
        json.dumps(document, indent=1, default=list), encoding="utf-8"
    )
    (out / "index.html").write_text(
        html.get_template("living_doc.html.j2").render(doc=document, symbols=marks),
        encoding="utf-8",
    )
    (out / "living-doc.md").write_text(
        markdown.get_template("living_doc.md.j2").render(doc=document, symbols=emoji),
        encoding="utf-8",
    )
