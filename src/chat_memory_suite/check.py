"""Check feature files before anything runs: undefined steps and lint, as ``file:line: ...``.

``pytest features/ --bdd-check`` checks every feature file and exits (nonzero
on any problem) without running a scenario. A normal run checks each file as
it is collected, so an undefined step or a duplicate scenario name fails the
run at once with the same message, instead of a traceback mid-run.

Lint rules: duplicate scenario names in one feature (pytest-bdd would keep only
one); features without scenarios and scenarios without steps; a Background
with anything but Given steps; a Given or When after a Then; outline
placeholders without an Examples column, and Examples columns no step uses;
tags not registered as markers; steps no definition matches (with the closest
sentences, or the kind of value a parameter takes) or several match; a data
table whose header is not the one its step reads, or a missing table; a doc
string that must be JSON and is not.
"""

from __future__ import annotations

import configparser
import difflib
import json
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .catalog import (
    CHOICE,
    KINDS,
    StepDefinition,
    applies_to,
    feature_roots,
    load_nested_conftests,
    nearest,
    step_definitions,
)
from .gherkin import FeatureSpec, StepSpec, feature_files, read_feature

BUILTIN_MARKERS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings"})
_PLACEHOLDER = re.compile(r"<([^<>]+)>")


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong in a feature file."""

    path: str
    line: int
    message: str
    hints: tuple[str, ...] = ()

    def __str__(self) -> str:
        """Format as ``file:line: message`` with indented hints below."""
        return "\n".join([f"{self.path}:{self.line}: {self.message}", *self.hints])


def registered_markers(config: pytest.Config) -> set[str]:
    """The marker names a tag may use (the project's, its plugins' and pytest's)."""
    lines: list[str] = config.getini("markers")
    return _names(lines) | BUILTIN_MARKERS


def project_tags(config: pytest.Config) -> set[str]:
    """The tags the project itself declares in its configuration file, for hints."""
    path = config.inipath
    if path is None or not path.exists():
        return set()
    if path.suffix == ".toml":
        options = tomllib.loads(path.read_text(encoding="utf-8"))
        lines = options.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("markers", [])
    else:
        parser = configparser.ConfigParser()
        parser.read(path, encoding="utf-8")
        section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
        lines = parser.get(section, "markers", fallback="").strip().splitlines()
    return _names(lines)


def _names(lines: Iterable[str]) -> set[str]:
    return {re.split(r"[:(]", line, maxsplit=1)[0].strip() for line in lines if line.strip()}


def check_feature(
    feature: FeatureSpec,
    definitions: Sequence[StepDefinition],
    markers: set[str],
    own_tags: Iterable[str] = (),
) -> list[Problem]:
    """Return every problem of one feature file, in line order."""
    if feature.error is not None:
        return [Problem(feature.path, 1, f"the file does not parse: {feature.error}")]
    visible = [d for d in definitions if applies_to(d, feature.path)]
    problems = _lint(feature, markers, sorted(own_tags)) + _step_problems(feature, visible)
    return sorted(set(problems))


def _step_problems(feature: FeatureSpec, definitions: Sequence[StepDefinition]) -> list[Problem]:
    problems = []
    for scenario in feature.scenarios:
        problems += _order_problems(feature.path, scenario.steps)
        for step in scenario.steps:
            matching = nearest([d for d in definitions if d.matches(step)])
            if not matching:
                problems.append(_unmatched(feature.path, step, definitions))
            elif len(matching) == 1:
                problems += _argument_problems(feature.path, step, matching[0])
            else:
                where = [f"    {d.sentence}  ({d.path}:{d.line})" for d in matching]
                problems.append(
                    Problem(
                        feature.path,
                        step.line,
                        f"{step.sentence()}: matches several step definitions",
                        tuple(where),
                    )
                )
    return problems


def _unmatched(path: str, step: StepSpec, definitions: Sequence[StepDefinition]) -> Problem:
    """Explain a step no definition matches: a value of the wrong kind, or the closest sentences."""
    for definition in definitions:
        for name, kind, value in definition.wrong_kinds(step):
            if not _is_kind(value, kind):
                return Problem(
                    path,
                    step.line,
                    f'{step.sentence()}: {{{name}}} must be {kind}, not "{value}"',
                    (f"    the sentence is: {definition.sentence}  ({definition.path}:"
                     f"{definition.line})",),
                )  # fmt: skip
    return Problem(
        path,
        step.line,
        f"{step.sentence()}: no step definition matches",
        _suggestions(step.text, step.kind, definitions),
    )


def _is_kind(value: str, kind: str) -> bool:
    if kind == KINDS["d"]:
        return value.strip().isdigit()
    if kind == KINDS["f"]:
        return re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value) is not None
    if kind == KINDS["ti"]:
        return re.fullmatch(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?", value.strip()) is not None
    if kind.startswith(CHOICE):
        return value in kind.removeprefix(CHOICE).split(", ")
    return True


def _argument_problems(path: str, step: StepSpec, definition: StepDefinition) -> list[Problem]:
    """The data table and doc string a step carries, against what its definition reads."""
    problems = []
    columns = definition.table_columns
    if columns is not None:
        header = " | ".join(columns)
        if step.datatable is None:
            problems.append(
                Problem(
                    path,
                    step.line,
                    f"{step.sentence().rstrip(':')}: needs a table with the header | {header} |",
                )
            )
        elif tuple(step.datatable[0]) != columns:
            found = " | ".join(step.datatable[0])
            problems.append(
                Problem(
                    path,
                    step.line,
                    f"{step.sentence().rstrip(':')}: the table's header is | {found} |,"
                    f" but this step reads | {header} |",
                )
            )
    if definition.json_docstring:
        try:
            json.loads(step.docstring or "")
        except ValueError as exc:
            problems.append(
                Problem(path, step.line, f"{step.sentence()}: the doc string is not JSON ({exc})")
            )
    return problems


def _order_problems(path: str, steps: Sequence[StepSpec]) -> list[Problem]:
    """A Given or When after a Then: a scenario shows one event, then what is observed."""
    problems = []
    seen_then = False
    for step in steps:
        seen_then = seen_then or step.kind == "then"
        if seen_then and step.kind in ("given", "when"):
            problems.append(
                Problem(
                    path,
                    step.line,
                    f"{step.sentence()}: a {step.kind.capitalize()} step after a Then",
                    (
                        "    a scenario is Given (what happened before), When (one event), Then"
                        " (what is observed): start a new scenario for the next event",
                    ),
                )
            )
    return problems


def _suggestions(
    text: str, kind: str | None, definitions: Sequence[StepDefinition]
) -> tuple[str, ...]:
    def score(d: StepDefinition) -> float:
        example = d.example.split(" ", 1)[-1] if d.example else ""
        ratios = [
            difflib.SequenceMatcher(None, text.lower(), c.lower()).ratio()
            for c in (d.pattern, example)
            if c
        ]
        return max(ratios) + (0.05 if d.kind == kind else 0.0)

    ranked = sorted(definitions, key=score, reverse=True)[:3]
    return ("    did you mean:", *(f"      {d.sentence}  ({d.path}:{d.line})" for d in ranked))


def _lint(feature: FeatureSpec, markers: set[str], own_tags: list[str]) -> list[Problem]:
    document = feature.document.get("feature")
    if document is None:
        return [Problem(feature.path, 1, "the file has no Feature")]
    problems: list[Problem] = []
    blocks = list(_blocks(document))
    scenarios = [block for kind, block in blocks if kind == "scenario"]
    if not scenarios:
        problems.append(
            Problem(feature.path, feature.line, f'feature "{feature.name}" has no scenarios')
        )
    first_line: dict[str, int] = {}
    for scenario in scenarios:
        line = scenario["location"]["line"]
        name = scenario["name"]
        if name in first_line:
            problems.append(
                Problem(
                    feature.path,
                    line,
                    f'duplicate scenario name "{name}" (first at line {first_line[name]}):'
                    " pytest-bdd would run only one of them",
                )
            )
        first_line.setdefault(name, line)
        if not scenario["steps"]:
            problems.append(Problem(feature.path, line, f'scenario "{name}" has no steps'))
        problems += _outline_problems(feature.path, scenario)
    for kind, block in blocks:
        if kind == "background":
            problems += _background_problems(feature.path, block)
    for node in [document, *(b for _, b in blocks), *_examples(scenarios), *_rules(document)]:
        for tag in node.get("tags", []):
            if tag["name"].lstrip("@") not in markers:
                problems.append(
                    Problem(
                        feature.path,
                        tag["location"]["line"],
                        f"tag {tag['name']} is not a registered marker",
                        (
                            "    the project's tags: " + ", ".join(f"@{t}" for t in own_tags),
                            "    a new tag is registered by a developer, under"
                            " [tool.pytest.ini_options] markers",
                        ),
                    )
                )
    return problems


def _blocks(node: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    for child in node.get("children", []):
        if "rule" in child:
            yield from _blocks(child["rule"])
        for kind in ("background", "scenario"):
            if kind in child:
                yield kind, child[kind]


def _rules(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [child["rule"] for child in node.get("children", []) if "rule" in child]


def _examples(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [examples for scenario in scenarios for examples in scenario.get("examples", [])]


def _background_problems(path: str, background: dict[str, Any]) -> list[Problem]:
    problems = []
    effective = "Context"
    for step in background["steps"]:
        if step["keywordType"] != "Conjunction":
            effective = step["keywordType"]
        if effective != "Context":
            problems.append(
                Problem(
                    path,
                    step["location"]["line"],
                    "a Background may hold only Given steps, not: "
                    f"{step['keyword'].strip()} {step['text']}",
                )
            )
    return problems


def _outline_problems(path: str, scenario: dict[str, Any]) -> list[Problem]:
    texts = [scenario["name"]]
    for step in scenario["steps"]:
        texts.append(step["text"])
        if "dataTable" in step:
            texts += [cell["value"] for row in step["dataTable"]["rows"] for cell in row["cells"]]
        if "docString" in step:
            texts.append(step["docString"]["content"])
    used = {name for text in texts for name in _PLACEHOLDER.findall(text)}
    line = scenario["location"]["line"]
    if not scenario.get("examples"):
        if used and scenario["keyword"].strip() in ("Scenario Outline", "Scenario Template"):
            return [Problem(path, line, "the outline has placeholders but no Examples")]
        return []
    problems = []
    for examples in scenario["examples"]:
        columns = [cell["value"] for cell in examples.get("tableHeader", {}).get("cells", [])]
        where = examples["location"]["line"]
        problems += [
            Problem(
                path, line, f"placeholder <{name}> has no column in the Examples at line {where}"
            )
            for name in sorted(used - set(columns))
        ]
        problems += [
            Problem(path, where, f'Examples column "{name}" is used by no step or title')
            for name in columns
            if name not in used
        ]
    return problems


def check_paths(config: pytest.Config, paths: Iterable[Path]) -> tuple[int, int, list[Problem]]:
    """Check every feature under ``paths``: (files, scenarios, problems)."""
    definitions = step_definitions(config.rootpath)
    markers, tags = registered_markers(config), project_tags(config)
    features = [read_feature(path, config.rootpath) for path in feature_files(paths)]
    problems = [
        p for feature in features for p in check_feature(feature, definitions, markers, tags)
    ]
    return len(features), sum(len(f.scenarios) for f in features), problems


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Run the check alone and exit: 0 if clean, 1 if any problem."""
    if not config.getoption("--bdd-check"):
        return None
    load_nested_conftests(config, feature_roots(config))
    files, scenarios, problems = check_paths(config, feature_roots(config))
    for problem in problems:
        print(problem)
    verdict = f"{len(problems)} problem(s)" if problems else "no problems"
    print(f"checked {files} feature file(s), {scenarios} scenario(s): {verdict}")
    return 1 if problems else 0
