"""Feature files as data: every scenario with its steps, as the official Gherkin parser reads them.

pytest-bdd keeps one scenario per name and hides outlines' rows; the checks,
the step catalog and the living documentation need the whole specification,
so they read the files here, with ``gherkin-official`` (which pytest-bdd
itself depends on) and its pickle compiler for outline substitution.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from gherkin.errors import CompositeParserException
from gherkin.parser import Parser
from gherkin.pickles.compiler import Compiler

from .plugin import features_folder

KINDS = {"Context": "given", "Action": "when", "Outcome": "then"}


@dataclass(frozen=True)
class StepSpec:
    """One step of one scenario (an outline's row substituted)."""

    keyword: str
    kind: str | None
    text: str
    line: int
    datatable: tuple[tuple[str, ...], ...] | None = None
    docstring: str | None = None

    def sentence(self) -> str:
        """Return the step as written: keyword and text."""
        return f"{self.keyword.strip()} {self.text}"


@dataclass(frozen=True)
class ScenarioSpec:
    """One scenario, or one row of a Scenario Outline."""

    name: str
    line: int
    rule: str | None
    tags: tuple[str, ...]
    steps: tuple[StepSpec, ...]
    example: tuple[tuple[str, str], ...] = ()
    example_line: int | None = None
    outline_name: str = ""
    outline_steps: tuple[StepSpec, ...] = ()

    @property
    def key(self) -> tuple[int, tuple[tuple[str, str], ...]]:
        """Identify the scenario (with its row) inside its feature file."""
        return (self.line, self.example)


@dataclass
class FeatureSpec:
    """One feature file: its description, rules and every scenario."""

    path: str
    name: str
    description: str
    tags: tuple[str, ...]
    line: int
    rules: list[tuple[str, str]] = field(default_factory=list)
    scenarios: list[ScenarioSpec] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict, repr=False)
    error: str | None = None

    @property
    def folder(self) -> str:
        """The feature's folder, relative to the root it was read from."""
        return str(Path(self.path).parent)


def feature_files(paths: Iterable[Path]) -> list[Path]:
    """Return every ``.feature`` file under ``paths`` (files or folders), sorted."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(path.rglob("*.feature"))
        elif path.suffix == ".feature" and path.exists():
            found.add(path)
    return sorted(found)


def shown_path(path: Path, root: Path) -> str:
    """How reports name a file: relative to the project's root, or as one of the suite's own.

    The suite's own feature files and steps, when the suite runs from another
    project, read ``chat-memory/features/...`` and ``chat-memory/steps/...``.
    """
    if not path.is_absolute():
        return str(path)
    resolved = path.resolve()
    if resolved.is_relative_to(root.resolve()):
        return str(resolved.relative_to(root.resolve()))
    home = features_folder().parent
    if resolved.is_relative_to(home):
        return f"chat-memory/{resolved.relative_to(home)}"
    return str(resolved)


def read_feature(path: Path, root: Path) -> FeatureSpec:
    """Parse one feature file; a file that does not parse gives a spec with ``error`` set."""
    relative = shown_path(path, root)
    text = path.read_text(encoding="utf-8")
    try:
        document: dict[str, Any] = cast(dict[str, Any], Parser().parse(text))
    except CompositeParserException as exc:
        return FeatureSpec(relative, path.stem, "", (), 1, error=str(exc))
    document["uri"] = relative
    feature = document.get("feature")
    if feature is None:
        return FeatureSpec(relative, path.stem, "", (), 1, document=document)
    spec = FeatureSpec(
        path=relative,
        name=feature["name"],
        description=_dedent(feature.get("description", "")),
        tags=_tags(feature),
        line=feature["location"]["line"],
        document=document,
    )
    nodes = dict(_index(feature, rule=None))
    for child in feature["children"]:
        if "rule" in child:
            spec.rules.append(
                (child["rule"]["name"], _dedent(child["rule"].get("description", "")))
            )
    for pickle in Compiler().compile(cast(Any, document)):
        spec.scenarios.append(_scenario(cast(dict[str, Any], pickle), nodes))
    return spec


def _index(
    node: dict[str, Any], rule: str | None
) -> Iterator[tuple[str, tuple[str, Any, str | None]]]:
    for child in node.get("children", []):
        if "rule" in child:
            yield from _index(child["rule"], rule=child["rule"]["name"])
        for kind in ("background", "scenario"):
            if kind in child:
                block = child[kind]
                yield block["id"], (kind, block, rule)
                for step in block["steps"]:
                    yield step["id"], ("step", step, rule)
                for examples in block.get("examples", []):
                    header = [cell["value"] for cell in examples["tableHeader"]["cells"]]
                    for row in examples["tableBody"]:
                        values = tuple(zip(header, (c["value"] for c in row["cells"]), strict=True))
                        yield row["id"], ("row", (row, values), rule)


def _scenario(
    pickle: dict[str, Any], nodes: dict[str, tuple[str, Any, str | None]]
) -> ScenarioSpec:
    _, scenario, rule = nodes[pickle["astNodeIds"][0]]
    example: tuple[tuple[str, str], ...] = ()
    example_line = None
    if len(pickle["astNodeIds"]) > 1:
        _, (row, example), _ = nodes[pickle["astNodeIds"][1]]
        example_line = row["location"]["line"]
    steps = []
    for step in pickle["steps"]:
        _, ast_step, _ = nodes[step["astNodeIds"][0]]
        argument = step.get("argument", {})
        table = argument.get("dataTable")
        steps.append(
            StepSpec(
                keyword=ast_step["keyword"],
                kind=KINDS.get(step["type"]),
                text=step["text"],
                line=ast_step["location"]["line"],
                datatable=tuple(tuple(c["value"] for c in r["cells"]) for r in table["rows"])
                if table
                else None,
                docstring=argument["docString"]["content"] if "docString" in argument else None,
            )
        )
    return ScenarioSpec(
        name=pickle["name"],
        line=scenario["location"]["line"],
        rule=rule,
        tags=tuple(tag["name"].lstrip("@") for tag in pickle["tags"]),
        steps=tuple(steps),
        example=example,
        example_line=example_line,
        outline_name=scenario["name"] if example else "",
        outline_steps=tuple(_template_step(s) for s in scenario["steps"]) if example else (),
    )


def _template_step(step: dict[str, Any]) -> StepSpec:
    """An outline's step as written, placeholders and all."""
    table = step.get("dataTable")
    return StepSpec(
        keyword=step["keyword"],
        kind=None,
        text=step["text"],
        line=step["location"]["line"],
        datatable=tuple(tuple(c["value"] for c in r["cells"]) for r in table["rows"])
        if table
        else None,
        docstring=step["docString"]["content"] if "docString" in step else None,
    )


def _tags(node: dict[str, Any]) -> tuple[str, ...]:
    return tuple(tag["name"].lstrip("@") for tag in node.get("tags", []))


def _dedent(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines())
