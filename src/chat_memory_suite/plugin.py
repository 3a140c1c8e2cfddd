"""The acceptance suite as a pytest plugin, registered through the ``pytest11`` entry point.

Installing ``chat-memory[suite]`` makes pytest load this module, and nothing
more: it only adds options until a project asks for the suite, so a project
that has chat-memory installed for its memory alone sees no change. The suite
is switched on by any of:

- ``pytest --chat-memory-suite``: run chat-memory's own scenarios, shipped in
  the package, against the memory under test;
- ``pytest --memory-adapter mypackage.adapters:make_memory``: the memory under
  test is the team's own, through an adapter (see :mod:`chat_memory_suite.adapter`);
- ``chat_memory_suite = true`` in the project's pytest configuration: its own
  ``.feature`` files use the suite's step sentences (this repository does that).

Then the suite's machinery and step definitions are registered, the same
modules this repository runs its own scenarios with.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

FACTORY_KEY = pytest.StashKey["Callable[..., Any] | None"]()
"""The factory of the memory under test, from --memory-adapter; None for chat-memory's own."""

MACHINERY = (
    "chat_memory_suite.catalog",
    "chat_memory_suite.check",
    "chat_memory_suite.collect",
    "chat_memory_suite.backends",
    "chat_memory_suite.apis",
    "chat_memory_suite.living_doc",
)
"""The suite's machinery, in the order its modules import each other."""

STEPS = tuple(
    f"chat_memory_suite.steps.{name}"
    for name in (
        "clock",
        "sessions",
        "conversation",
        "context",
        "storage",
        "concurrency",
        "turns",
        "model",
        "faults",
        "users",
        "transfer",
        "compaction",
        "agents",
        "langchain",
        "failover",
    )
)
"""The step definitions, one module per domain concept (``steps/`` in the repository)."""


def features_folder() -> Path:
    """Where the suite's own ``.feature`` files are: in the package, or the repository's."""
    spec = importlib.util.find_spec("chat_memory_suite.steps")
    if spec is None or spec.origin is None:
        raise pytest.UsageError("chat_memory_suite.steps is missing: reinstall chat-memory[suite]")
    return Path(spec.origin).resolve().parent.parent / "features"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add every option of the suite, and its two configuration keys: all in ``--help``.

    They are declared here, in one place, whether or not the suite is switched on;
    the modules that act on them are loaded only when it is.
    """
    group = parser.getgroup("chat-memory", "chat-memory acceptance suite")
    group.addoption(
        "--chat-memory-suite",
        action="store_true",
        help="run chat-memory's own scenarios (shipped in the package) against the memory",
    )
    group.addoption(
        "--memory-adapter",
        metavar="MODULE:FACTORY",
        help="test your own memory: FACTORY(config) returns it (see chat_memory_suite.adapter)",
    )
    # the API the scenarios drive (apis.py)
    group.addoption(
        "--memory-api",
        choices=("sync", "async", "both"),
        default=None,
        help="drive the scenarios through the sync API, the async one, or both (default);"
        " with --memory-adapter, the API its memory must have (sync or async methods)",
    )
    # the server they run on (backends.py)
    group.addoption(
        "--redis-url",
        default=None,
        help="run the scenarios against this Redis (default: fakeredis; also TEST_REDIS_URL)",
    )
    group.addoption(
        "--redis-server",
        action="store_true",
        help="start a throwaway redis-server for the run and stop it afterwards",
    )
    group.addoption(
        "--redis-cluster",
        action="store_true",
        help="use a Redis Cluster: the node --redis-url names, or a throwaway 3-master cluster",
    )
    group.addoption(
        "--redis-cluster-replicas",
        type=int,
        default=0,
        metavar="N",
        help="with --redis-cluster alone: give each master of the throwaway cluster N replicas",
    )
    group.addoption(
        "--redis-sentinel",
        action="store_true",
        help="start a throwaway primary, 2 replicas and 3 redis-sentinel processes, and reach"
        " the primary through Sentinel (the @failover scenarios run only here)",
    )
    # the step catalog (catalog.py), the feature files' check (check.py), the living doc
    group.addoption("--bdd-steps", action="store_true", help="print the step catalog and exit")
    group.addoption(
        "--bdd-steps-output", metavar="PATH", help="with --bdd-steps: write it as Markdown to PATH"
    )
    group.addoption(
        "--bdd-check",
        action="store_true",
        help="check every feature file (undefined steps, lint) without running, then exit",
    )
    group.addoption(
        "--living-doc",
        metavar="DIR",
        help="write the living documentation (index.html and living-doc.md) to DIR",
    )
    parser.addini(
        "chat_memory_suite",
        type="bool",
        default=False,
        help="load chat-memory's step definitions for this project's .feature files",
    )
    parser.addini(
        "memory_adapter",
        default="",
        help="MODULE:FACTORY of the memory under test, as --memory-adapter",
    )


def _wanted(config: pytest.Config, suite: bool, adapter: str | None) -> bool:
    return bool(
        suite or adapter or config.getini("chat_memory_suite") or config.getini("memory_adapter")
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Register the suite before the command line is parsed, so its options exist."""
    known = parser.parse_known_args(args)
    if not _wanted(early_config, known.chat_memory_suite, known.memory_adapter):
        return
    check_extra()
    for name in (*MACHINERY, *STEPS):
        early_config.pluginmanager.import_plugin(name)
    if known.chat_memory_suite:
        args.append(str(features_folder()))


def check_extra() -> None:
    """Refuse to start the suite without what its extra installs, saying how to install it.

    The extra's distributions are read from chat-memory's installed metadata.
    """
    try:
        required = importlib.metadata.requires("chat-memory") or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree: nothing to read
        return
    missing = []
    for requirement in required:
        name, _, marker = requirement.partition(";")
        if marker.replace(" ", "").replace("'", '"') != 'extra=="suite"':
            continue
        distribution = re.match(r"[A-Za-z0-9._-]+", name.strip())
        assert distribution is not None, requirement
        try:
            importlib.metadata.version(distribution[0])
        except importlib.metadata.PackageNotFoundError:
            missing.append(distribution[0])
    if missing:
        raise pytest.UsageError(
            f"the chat-memory suite needs {', '.join(missing)}, which chat-memory alone does"
            " not install: pip install 'chat-memory[suite]'"
        )


def _load_factory(spec: str, folder: Path) -> Callable[..., Any]:
    """Import the factory ``spec`` names; a module in ``folder`` (where pytest was run) too.

    Plain ``pytest`` does not put that folder on ``sys.path`` (``python -m pytest``
    does), yet an adapter file beside the tests is what a team writes first.
    """
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise pytest.UsageError(f"--memory-adapter {spec!r}: write it as module:factory")
    top = module_name.partition(".")[0]
    beside = (folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file()
    if beside and importlib.util.find_spec(top) is None:
        sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise pytest.UsageError(f"--memory-adapter {spec!r}: cannot import it: {error}") from error
    factory = getattr(module, name, None)
    if not callable(factory):
        raise pytest.UsageError(f"--memory-adapter {spec!r}: {module_name} has no factory {name}")
    from .adapter import capabilities_of

    try:
        capabilities_of(factory)
    except ValueError as error:
        raise pytest.UsageError(f"--memory-adapter {spec!r}: {error}") from error
    return cast(Callable[..., Any], factory)


MARKERS = (
    "wip: work in progress; the scenario documents a behaviour not built yet",
    "slow: takes more than a second (real waiting on a real server)",
    "real_redis: needs a real Redis server (skipped on fakeredis)",
    "cluster: needs a Redis Cluster (skipped elsewhere)",
    "faults: breaks throwaway redis-server processes of its own (run with a real backend)",
    "failover: kills or pauses a primary with replicas (--redis-sentinel, --redis-cluster)",
    "sentinel: needs a primary watched by Sentinel (run with --redis-sentinel)",
    "storage_contract: pins the exact key and entry format other services rely on",
    "llm_smoke: talks to a real OpenAI-compatible model (skipped unless LLM_BASE_URL is set)",
    "permission_precheck: needs a server that checks a script's permissions in advance (Redis 7+)",
    "no_permission_precheck: needs a server that cannot check a script's permissions (Redis 6.2)",
)
"""The tags the suite's scenarios use, registered for projects that do not declare them."""


def pytest_configure(config: pytest.Config) -> None:
    """Register the suite's tags, and find the memory under test: an adapter's, or ours."""
    if _wanted(config, config.getoption("chat_memory_suite"), config.getoption("memory_adapter")):
        from ._compat import remember_step_lookups  # pytest-bdd only once the suite is wanted

        config.add_cleanup(remember_step_lookups())
        declared = {line.split(":")[0].strip() for line in config.getini("markers")}
        for line in MARKERS:
            if line.split(":")[0] not in declared:
                config.addinivalue_line("markers", line)
    spec = adapter_spec(config)
    folder = config.invocation_params.dir
    config.stash[FACTORY_KEY] = _load_factory(spec, folder) if spec else None


def lacking(reason: str) -> list[str]:
    """The capabilities a "not supported" skip reason names; [] for any other reason."""
    from .collect import NOT_SUPPORTED

    _, marker, needs = reason.partition(f"{NOT_SUPPORTED}: needs ")
    return [c.strip() for c in needs.split(",")] if marker else []


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """With an adapter: what was tested and what failed, then what was not run and why.

    One line per capability the memory lacks, then one per reason the run's backend or
    setup could not run a scenario (a real server, a cluster, ...).
    """
    if memory_factory(config) is None:
        return
    from .adapter import CAPABILITIES

    stats = terminalreporter.stats
    passed = len([r for r in stats.get("passed", []) if r.when == "call"])
    failed = len({r.nodeid for r in stats.get("failed", []) + stats.get("error", [])})
    missing: dict[str, int] = {}
    elsewhere: dict[str, int] = {}  # skipped for the run's backend or setup, not the memory
    for report in stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        for capability in lacking(reason):
            missing[capability] = missing.get(capability, 0) + 1
        if not lacking(reason):
            reason = reason.removeprefix("Skipped: ")
            elsewhere[reason] = elsewhere.get(reason, 0) + 1
    terminalreporter.section(f"chat-memory kit: {adapter_spec(config)}")
    terminalreporter.write_line(
        f"tested: {passed + failed} scenario runs, {passed} passed, {failed} failed"
    )
    if missing:
        terminalreporter.write_line("not supported by this memory (not run, not passed):")
        for capability, count in sorted(missing.items(), key=lambda item: -item[1]):
            meaning = CAPABILITIES.get(capability, "")
            terminalreporter.write_line(f"  {capability}: {count} scenario runs need it: {meaning}")
    if elsewhere:
        terminalreporter.write_line("not run in this run (another backend or setup runs them):")
        for reason, count in sorted(elsewhere.items(), key=lambda item: -item[1]):
            terminalreporter.write_line(f"  {count} scenario runs: {reason}")


def adapter_spec(config: pytest.Config) -> str:
    """The ``module:factory`` of the memory under test (``--memory-adapter``), or ``""``."""
    return str(config.getoption("--memory-adapter") or config.getini("memory_adapter") or "")


def memory_factory(config: pytest.Config) -> Callable[..., Any] | None:
    """The factory of the memory under test, or None when it is chat-memory's own service."""
    return config.stash.get(FACTORY_KEY, None)
