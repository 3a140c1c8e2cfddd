"""The step catalog: every step sentence, grouped by domain concept, for scenario authors.

``pytest --bdd-steps`` prints it (and the steps no scenario uses);
``pytest --bdd-steps --bdd-steps-output docs/steps.md`` writes the Markdown
version that is committed (a unit test fails when it is stale).
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_bdd import parsers

from ._compat import step_function_context_registry
from .adapter import step_requirements
from .gherkin import FeatureSpec, StepSpec, feature_files, read_feature, shown_path

KEYWORD = {"given": "Given", "when": "When", "then": "Then", None: "*"}
KINDS = {
    "d": "a whole number",
    "f": "a number",
    "ti": "a date and time, like 2026-12-02 10:00:00",
    "": "any text",
}
CHOICE = "one of: "
"""How a parameter that takes one of a few words is described: ``one of: once, twice``."""
_CHOICES = re.compile(r"[\w '-]+(?:\|[\w '-]+)+")
_PARSE_FIELD = re.compile(r"\{(\w+)(?::([^}]*))?\}")
_REGEX_GROUP = re.compile(r"\(\?P<(\w+)>((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)")
"""A named group of a step's regular expression, with up to two levels of groups inside."""


@dataclass(frozen=True)
class StepDefinition:
    """One step sentence bound to a step function."""

    kind: str | None
    pattern: str
    matches_text: Callable[[str], bool]
    function: str
    module: str
    path: str
    line: int
    summary: str
    example: str
    parameters: tuple[tuple[str, str], ...] = ()
    loosely_matches: Callable[[str], dict[str, str] | None] = lambda _: None
    table_columns: tuple[str, ...] | None = None
    json_docstring: bool = False
    requires: frozenset[str] = frozenset()
    """The capabilities of the memory under test this step needs (see the adapter module)."""
    details: str = ""
    """What the docstring says beyond its summary: what the step produces or expects."""

    @property
    def sentence(self) -> str:
        """The sentence as an author writes it, with its parameters in braces."""
        return f"{KEYWORD[self.kind]} {readable(self.pattern)}"

    def wrong_kinds(self, step: StepSpec) -> list[tuple[str, str, str]]:
        """Return (parameter, kind, value) for each parameter whose value is of the wrong kind.

        Empty unless the step would match with every parameter taken as any text.
        """
        if not (self.kind is None or step.kind is None or self.kind == step.kind):
            return []
        values = self.loosely_matches(step.text)
        if values is None:
            return []
        kinds = dict(self.parameters)
        return [
            (name, kinds[name], value)
            for name, value in values.items()
            if kinds.get(name, KINDS[""]) != KINDS[""]
        ]

    def matches(self, step: StepSpec) -> bool:
        """Whether this definition runs ``step``."""
        return (self.kind is None or step.kind is None or self.kind == step.kind) and (
            self.matches_text(step.text)
        )


def readable(pattern: str) -> str:
    """Show a step pattern as authors read it: ``{limit}``, ``message(s)``, no format codes."""
    pattern = _REGEX_GROUP.sub(r"{\1}", pattern)
    pattern = _PARSE_FIELD.sub(r"{\1}", pattern)
    pattern = re.sub(r"\(\?:([^()]*)\)", lambda m: m[1].replace("|", "/"), pattern)
    return re.sub(r"(\w)\?", r"(\1)", pattern)


def _example(lines: list[str], kind: str | None) -> str:
    """The docstring's example for this kind of step (a Given's, not the When's of its twin)."""
    examples = [line for line in lines if line.startswith(("Given ", "When ", "Then "))]
    own = [line for line in examples if line.startswith(KEYWORD[kind] + " ")]
    return (own or examples or [""])[0]


def _parameters(parser: object) -> tuple[tuple[str, str], ...]:
    """Name each parameter's kind, for the catalog and for mistakes of kind."""
    if isinstance(parser, parsers.re):
        return tuple((name, _regex_kind(body)) for name, body in _REGEX_GROUP.findall(parser.name))
    name = getattr(parser, "name", "")
    return tuple((field, KINDS.get(spec, KINDS[""])) for field, spec in _PARSE_FIELD.findall(name))


def _regex_kind(body: str) -> str:
    """The kind of a regular expression's parameter: a whole number, one of a few words, text."""
    if body == r"\d+":
        return KINDS["d"]
    if _CHOICES.fullmatch(body):
        return CHOICE + ", ".join(body.split("|"))
    return KINDS[""]


def _loose_matcher(parser: object) -> Callable[[str], dict[str, str] | None]:
    """Match a step with every parameter taken as any text, to tell a wrong kind from a typo."""
    if isinstance(parser, parsers.re):
        regex = re.compile(_REGEX_GROUP.sub(lambda m: f"(?P<{m[1]}>.+?)", parser.name))
        return lambda text: found.groupdict() if (found := regex.fullmatch(text)) else None
    if isinstance(parser, parsers.parse | parsers.cfparse):
        loose = parsers.parse(_PARSE_FIELD.sub(lambda m: "{" + m[1] + "}", parser.name))
        return lambda text: loose.parse_arguments(text) if loose.is_matching(text) else None
    return lambda _: None


def step_definitions(root: Path) -> list[StepDefinition]:
    """Return every loaded step definition but pytest-bdd's own, by module and line."""
    definitions = []
    for context in list(step_function_context_registry.values()):
        func = context.step_func
        if func.__module__.startswith("pytest_bdd"):
            continue
        path = shown_path(Path(inspect.getsourcefile(func) or "?").resolve(), root)
        doc = inspect.getdoc(func) or ""
        lines = [line.strip() for line in doc.splitlines() if line.strip()]
        definitions.append(
            StepDefinition(
                kind=context.type,
                pattern=context.parser.name,
                matches_text=context.parser.is_matching,
                function=func.__name__,
                module=func.__module__,
                path=path,
                line=inspect.getsourcelines(func)[1],
                summary=lines[0] if lines else "",
                example=_example(lines, context.type),
                parameters=_parameters(context.parser),
                loosely_matches=_loose_matcher(context.parser),
                table_columns=getattr(func, "table_columns", None),
                json_docstring=getattr(func, "json_docstring", False),
                requires=step_requirements(func, sys.modules.get(func.__module__)),
                details=_details(doc),
            )
        )
    return sorted(definitions, key=lambda d: (d.module, d.line, d.sentence))


def load_nested_conftests(config: pytest.Config, roots: Iterable[Path]) -> None:
    """Import the ``conftest.py`` files below the feature roots, for their step definitions.

    A normal run imports them as it collects each folder; ``--bdd-check`` and
    ``--bdd-steps`` stop before collecting, so they import them here.
    """
    loaded = {Path(str(getattr(m, "__file__", ""))).resolve() for m in sys.modules.values()}
    for root in roots:
        folder = root if root.is_dir() else root.parent
        for conftest in sorted(folder.rglob("conftest.py")):
            path = conftest.resolve()
            if path in loaded or path.parent == config.rootpath.resolve():
                continue
            name = "chat_memory_steps_" + "_".join(path.relative_to(config.rootpath).parts[:-1])
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                continue
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            loaded.add(path)


def applies_to(definition: StepDefinition, feature_path: str) -> bool:
    """Whether a feature file sees a step definition (a nested conftest's only below it)."""
    source = Path(definition.path)
    if source.name.startswith("test_"):  # pytest-bdd binds those to their own module's tests
        return False
    if source.name != "conftest.py" or source.parent == Path():
        return True
    return Path(feature_path).is_relative_to(source.parent)


def nearest(definitions: list[StepDefinition]) -> list[StepDefinition]:
    """Keep the definitions pytest-bdd would pick: the deepest conftest.py overrides the rest."""

    def depth(definition: StepDefinition) -> int:
        source = Path(definition.path)
        return len(source.parent.parts) + 1 if source.name == "conftest.py" else 0

    deepest = max(map(depth, definitions), default=0)
    return [d for d in definitions if depth(d) == deepest]


def unused(
    definitions: Iterable[StepDefinition], features: Iterable[FeatureSpec]
) -> list[StepDefinition]:
    """Return the definitions that no step of ``features`` uses."""
    steps = [step for feature in features for s in feature.scenarios for step in s.steps]
    return [d for d in definitions if not any(d.matches(step) for step in steps)]


def _details(doc: str) -> str:
    """The docstring's paragraphs after its summary, without its Gherkin examples."""
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n")[1:]]
    return " ".join(p for p in paragraphs if p and not p.startswith(("Given ", "When ", "Then ")))


CONCEPTS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    # (title, what it covers, step modules it takes whole, words of a sentence that place it)
    ("Streaming", "answers streamed chunk by chunk", (), ("stream",)),
    ("Tools", "tool calls and their results", (), ("tool",)),
    ("Frameworks", "LangChain chains and OpenAI Agents SDK sessions", ("agents", "langchain"), ()),
    (
        "Production",
        "real servers, clusters, replicas, permissions, concurrent writers, the stored format",
        ("faults", "failover", "concurrency", "storage"),
        (
            "server",
            "cluster",
            "redis",
            "tls",
            "writers",
            "replica",
            "sentinel",
            "slot",
            "previous version",
            'the key "',
        ),
    ),
    (
        "Failures",
        "what the user or the app is told when something goes wrong, and retries",
        (),
        (
            "fail",
            "refused",
            "corrupt",
            "error",
            "tries to",
            "may not have",
            "not stored",
            "conflict",
            "again",
            "twice",
            "retr",
        ),
    ),
    (
        "Users and their sessions",
        "a user's own sessions: listing, titles, metadata, export and import, erasure",
        ("users", "transfer"),
        ('user "', "metadata", "export", "import"),
    ),
    (
        "Expiry",
        "sessions forgotten after a time without messages, and time passing",
        ("clock",),
        ("expire", "expiry", "pass", "ttl", "minutes", "seconds"),
    ),
    (
        "Limits and token budgets",
        "the history limit, message sizes, prompt budgets, token counts, compaction",
        ("compaction",),
        ("limit", "budget", "token", "size", "bytes", "remembered for the newest"),
    ),
    ("Conversation", "sessions, what is said, what the model is given", (), ()),
)
"""The product concepts the Markdown catalog groups steps by, first match first."""
READING_ORDER = (
    "Conversation",
    "Limits and token budgets",
    "Expiry",
    "Users and their sessions",
    "Tools",
    "Streaming",
    "Failures",
    "Production",
    "Frameworks",
)
"""The order the catalog shows the concepts in: the everyday ones first."""


def concept(definition: StepDefinition) -> str:
    """Return the product concept a step belongs to (see :data:`CONCEPTS`)."""
    module = definition.module.rsplit(".", 1)[-1]
    text = definition.sentence.lower()
    for title, _, modules, words in CONCEPTS:
        if module in modules or any(word in text for word in words):
            return title
    return CONCEPTS[-1][0]


def _module_summary(module: str) -> str:
    doc = inspect.getdoc(sys.modules[module]) or module
    return doc.splitlines()[0].rstrip(".")


def _groups(definitions: list[StepDefinition]) -> dict[str, list[StepDefinition]]:
    groups: dict[str, list[StepDefinition]] = {}
    for definition in definitions:
        groups.setdefault(definition.module, []).append(definition)
    return groups


def render_text(definitions: list[StepDefinition], never_used: list[StepDefinition]) -> str:
    """Return the catalog for the terminal."""
    out = []
    for module, group in _groups(definitions).items():
        out.append(f"{module}: {_module_summary(module)}")
        for d in group:
            out.append(f"  {d.sentence}")
            out.append(f"      {d.summary}  ({d.path}:{d.line})")
            if d.parameters:
                out.append(f"      {_parameter_line(d)}")
            if d.table_columns:
                out.append(f"      with a table: {_table_header(d)}")
            if d.example and d.example != d.sentence:
                out.append(f"      e.g. {d.example}")
        out.append("")
    if never_used:
        out.append(f"{len(never_used)} step(s) no scenario uses:")
        out += [f"  {d.sentence}  ({d.path}:{d.line})" for d in never_used]
    else:
        out.append("Every step is used by at least one scenario.")
    return "\n".join(out) + "\n"


def render_markdown(definitions: list[StepDefinition], never_used: list[StepDefinition]) -> str:
    """Return the catalog as Markdown (docs/steps.md)."""
    out = [
        "# Step catalog",
        "",
        "Every sentence a scenario can use, grouped by product concept. Generated by",
        "`pytest --bdd-steps --bdd-steps-output docs/steps.md`: do not edit by hand.",
        "Parameters are in braces; each step says what kind of value each one takes.",
        "",
        "Every scenario starts with empty memory and talks in a fresh session of its",
        'own (named "default"); `Given a new session "alice"` names it instead. A',
        "scenario is Given steps (what happened before), then When steps (the event),",
        "then Then steps (what is observed); no Given or When may follow a Then.",
        "",
    ]
    by_concept: dict[str, list[StepDefinition]] = {title: [] for title, *_ in CONCEPTS}
    for definition in definitions:
        by_concept[concept(definition)].append(definition)
    covering = {title: covers for title, covers, *_ in CONCEPTS}
    out += ["| concept | covers | steps |", "| --- | --- | --- |"]
    out += [
        f"| [{title}](#{title.lower().replace(' ', '-')}) | {covering[title]} |"
        f" {len(by_concept[title])} |"
        for title in READING_ORDER
    ]
    out.append("")
    for title in READING_ORDER:
        covers = covering[title]
        out += [f"## {title}", "", f"Steps about {covers}.", ""]
        for d in by_concept[title]:
            out.append(f"- **`{d.sentence}`** ({d.path}:{d.line})  ")
            details = [d.summary]
            if d.details:
                details.append(d.details)
            if d.parameters:
                details.append(_parameter_line(d))
            if d.table_columns:
                details.append(f"With a table: `{_table_header(d)}`")
            if d.json_docstring:
                details.append("With a doc string holding JSON.")
            if d.example:
                details.append(f"Example: `{d.example}`")
            out.append("  " + "  \n  ".join(details))
        out.append("")
    if never_used:
        out += ["## Steps no scenario uses", ""] + [f"- `{d.sentence}`" for d in never_used] + [""]
    return "\n".join(out)


def _parameter_line(d: StepDefinition) -> str:
    return "Parameters: " + "; ".join(f"{{{name}}} is {kind}" for name, kind in d.parameters)


def _table_header(d: StepDefinition) -> str:
    return "| " + " | ".join(d.table_columns or ()) + " |"


def catalog(
    root: Path, feature_paths: Iterable[Path]
) -> tuple[list[StepDefinition], list[StepDefinition]]:
    """Return every step definition, and the project's own that no scenario here uses.

    Run from another project, the suite's own steps are never listed as unused:
    a team's scenarios use the few they need.
    """
    definitions = step_definitions(root)
    features = [read_feature(path, root) for path in feature_files(feature_paths)]
    own = [d for d in definitions if not d.path.startswith("chat-memory/")]
    return definitions, unused(own, features)


def feature_roots(config: pytest.Config) -> list[Path]:
    """The folders or files the run was asked for (default: the configured testpaths)."""
    args = [a.split("::")[0] for a in config.args if not a.startswith("-")] or config.getini(
        "testpaths"
    )
    return [Path(config.invocation_params.dir, a) for a in args] or [config.rootpath]


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Print or write the catalog, then exit without running anything."""
    if not config.getoption("--bdd-steps"):
        return None
    load_nested_conftests(config, feature_roots(config))
    definitions, never_used = catalog(config.rootpath, feature_roots(config))
    output = config.getoption("--bdd-steps-output")
    if output:
        Path(output).write_text(render_markdown(definitions, never_used), encoding="utf-8")
        print(f"wrote {output}: {len(definitions)} steps, {len(never_used)} unused")
    else:
        print(render_text(definitions, never_used), end="")
    return 0
