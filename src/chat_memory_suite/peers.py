"""Run the suite against each store a team might use instead, and write ``docs/peers.md``.

::

    python -m chat_memory_suite.peers                   # writes docs/peers.md
    python -m chat_memory_suite.peers --output peers.md

Each store runs ``pytest --chat-memory-suite --memory-adapter ... --redis-server``
in a project of its own (a temporary directory), so on a throwaway real
``redis-server`` (the Debian package), with the concurrency scenarios
included. The table is read from each run's living documentation
(``results.json``): nothing in it is written by hand. The peers come from the
``bench`` extra (``pip install "chat-memory[bench]"``); one that is not
installed is listed as not run.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .adapter import STORE_CAPABILITIES
from .collect import NOT_SUPPORTED

STORES = {
    "chat-memory": ("chat_memory_suite.adapters.chat_memory:make_memory", "chat-memory"),
    "chat-memory through LangChain": (
        "chat_memory_suite.adapters.langchain_history:make_memory",
        "langchain-core",
    ),
    "chat-memory through LangChain, async": (
        "chat_memory_suite.adapters.langchain_history:make_async_memory",
        "langchain-core",
    ),
    "chat-memory through the Agents SDK": (
        "chat_memory_suite.adapters.openai_agents:make_memory",
        "openai-agents",
    ),
    "seed article (RPUSH + LTRIM)": ("chat_memory_suite.adapters.seed:make_memory", "chat-memory"),
    "langchain-community RedisChatMessageHistory": (
        "chat_memory_suite.adapters.langchain_community:make_memory",
        "langchain-community",
    ),
    "llama-index RedisChatStore": (
        "chat_memory_suite.adapters.llama_index:make_memory",
        "llama-index-storage-chat-store-redis",
    ),
}
"""Each store: its adapter (``module:factory``) and the package it is."""

STACK_ONLY = {
    "langchain-redis RedisChatMessageHistory": "needs Redis Stack (RediSearch), not plain Redis",
    "redisvl MessageHistory": "needs Redis Stack (RediSearch), not plain Redis",
}
"""Stores that cannot run on a plain redis-server, and why."""

Scenario = dict[str, Any]


@dataclass(frozen=True)
class Row:
    """One line of the table: a guarantee, and which scenarios show it."""

    label: str
    holds: Callable[[str, Scenario], bool]


def _in(feature: str) -> Callable[[str, Scenario], bool]:
    return lambda path, _: path.endswith(feature)


def _needing(capability: str) -> Callable[[str, Scenario], bool]:
    return lambda _, scenario: capability in scenario["needs"]


ROWS = (
    Row("Remembering, in order", _in("memory/remembering.feature")),
    Row("History limit", _needing("history_limit")),
    Row("Sliding TTL", _needing("ttl")),
    Row("Atomicity under concurrent writers", _in("production/concurrent_writes.feature")),
    Row("Retry safety (message ids)", _needing("message_ids")),
    Row("Tool calls", _needing("tool_calls")),
    Row("Who wrote each message (names)", _needing("names")),
    Row("Unicode and odd text", _in("memory/message_content.feature")),
    Row("Isolation of sessions", _in("memory/session_isolation.feature")),
    Row("Damaged data (corrupt entries)", _in("storage/corrupt_entries.feature")),
    Row(
        "A failing server (down, full, restarted, TLS)",
        lambda path, scenario: (
            _in("production/server_faults.feature")(path, scenario)
            or _in("production/encrypted_connections.feature")(path, scenario)
        ),
    ),
)


def run_store(factory: str, workdir: Path) -> dict[str, Any]:
    """Run the suite against one store on a throwaway server; return its results.json."""
    workdir.mkdir(parents=True)
    (workdir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    out = workdir / "living-doc"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--chat-memory-suite",
        "--memory-adapter",
        factory,
        "--redis-server",
        "--living-doc",
        str(out),
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
    ]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1) or not (out / "results.json").exists():
        raise RuntimeError(f"the suite did not run for {factory}:\n{done.stdout}\n{done.stderr}")
    return dict(json.loads((out / "results.json").read_text(encoding="utf-8")))


def scenarios_of(results: dict[str, Any]) -> list[tuple[str, Scenario]]:
    """Every scenario (every row of an outline) of a run, with its feature file."""
    found = []
    for _, features in results["folders"]:
        for feature in features:
            for rule in feature["rules"]:
                # an outline's rows are listed as scenarios of their own too
                found += [(feature["path"], s) for s in rule["scenarios"] if not s["outline"]]
    return found


def cell(scenarios: list[Scenario]) -> str:
    """What one store did on one row's scenarios."""
    count = {status: 0 for status in ("passed", "failed", "not supported", "skipped")}
    for scenario in scenarios:
        count[scenario["status"]] = count.get(scenario["status"], 0) + 1
    total = len(scenarios)
    if count["failed"]:
        return f"❌ {count['failed']} of {total} failed"
    if count["passed"] and not count["not supported"]:
        return f"✅ {count['passed']} of {total}"
    if count["passed"]:
        return f"✅ {count['passed']} of {total}, 🚫 {count['not supported']} not supported"
    if count["not supported"]:
        return f"🚫 not supported (lacks {', '.join(lacking(scenarios))})"
    return "– not run"


def lacking(scenarios: list[Scenario]) -> list[str]:
    """The capabilities the store lacks for these scenarios, as their skip reasons name them.

    The ones every such scenario lacks, when there are some (the row's own
    capability: "History limit" lacks ``history_limit``, not also the
    ``export`` one of its scenarios needs besides); else all of them.
    """
    needs: list[set[str]] = []
    for scenario in scenarios:
        reason = scenario.get("reason") or ""
        if NOT_SUPPORTED in reason:
            needs.append({n.strip() for n in reason.split("needs", 1)[1].split(",")})
    if not needs:
        return []
    return sorted(set.intersection(*needs) or set.union(*needs))


def render(runs: dict[str, dict[str, Any]], not_run: dict[str, str], command: str) -> str:
    """The Markdown of docs/peers.md."""
    stores = list(runs)
    lines = [
        "# chat-memory and the Redis chat histories teams use instead",
        "",
        f"Generated by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC: do not edit by "
        "hand. Each store ran chat-memory's acceptance suite through its adapter "
        "(`chat_memory_suite.adapters`), on a throwaway real `redis-server`. A row counts "
        "the scenarios that show that guarantee; 🚫 marks scenarios the store cannot take "
        "(it has no such feature), never a pass. chat-memory's own 🚫 are the scenarios "
        "of its API beyond the adapter protocol (users, export, compaction, the chat turn, "
        "typed errors, ...): `pytest features/` runs those against it directly. The last "
        "row counts the scenarios about a conversation store, which need none of those: "
        "what a store does not run of them needs a feature it lacks, or a Redis Cluster "
        "(`--redis-cluster` runs the cluster scenarios for any store; this table uses one "
        "redis-server).",
        "",
        "| Guarantee | " + " | ".join(stores) + " |",
        "| --- |" + " --- |" * len(stores),
    ]
    scenarios = {store: scenarios_of(results) for store, results in runs.items()}
    for row in ROWS:
        cells = [cell([s for p, s in scenarios[store] if row.holds(p, s)]) for store in stores]
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    totals = [runs[store]["totals"] for store in stores]
    lines.append(
        "| **Every scenario** | "
        + " | ".join(
            f"{t['passed']} passed, {t['failed']} failed, {t['not supported']} not supported"
            for t in totals
        )
        + " |"
    )
    lines.append(
        "| **Share of the suite it runs** | " + " | ".join(_share(t) for t in totals) + " |"
    )
    lines.append(
        "| **Share of the scenarios about a store** | "
        + " | ".join(_store_share(scenarios[store]) for store in stores)
        + " |"
    )
    lines += ["", "## What failed", ""]
    for store in stores:
        failed = [(p, s) for p, s in scenarios[store] if s["status"] == "failed"]
        lines.append(f"**{store}**: " + ("nothing." if not failed else ""))
        for path, scenario in failed:
            error = (scenario.get("error") or _step_error(scenario)).strip().splitlines()
            lines.append(
                f"- {scenario['name']} (`{path}:{scenario['line']}`): {error[0] if error else ''}"
            )
        lines.append("")
    lines += ["## Not run", ""]
    lines += [f"- **{store}**: {reason}" for store, reason in not_run.items()] or ["- none"]
    lines += ["", "## Versions", ""]
    lines += [f"- {store}: {runs[store]['api'].split(' (the memory')[0]}" for store in stores]
    lines += [f"- {name} {version}" for name, version in _versions().items()]
    return "\n".join(lines) + "\n"


def _share(totals: dict[str, int]) -> str:
    """How much of the suite a store runs: the scenarios that passed or failed, of all."""
    ran = totals["passed"] + totals["failed"]
    every = ran + totals["not supported"] + totals.get("skipped", 0)
    return f"{ran} of {every} ({100 * ran / every:.0f}%)" if every else "none"


def _store_share(scenarios: list[tuple[str, Scenario]]) -> str:
    """How many of the scenarios any store may take, a store runs.

    Those scenarios need none of chat-memory's own features (no typed errors, storage
    contract, chat turn, users, export, ...).
    """
    about_a_store = [s for _, s in scenarios if set(s["needs"]) <= set(STORE_CAPABILITIES)]
    ran = [s for s in about_a_store if s["status"] in ("passed", "failed")]
    if not about_a_store:
        return "none"
    return f"{len(ran)} of {len(about_a_store)} ({100 * len(ran) / len(about_a_store):.0f}%)"


def _step_error(scenario: Scenario) -> str:
    return next((s["error"] for s in scenario["steps"] if s.get("error")), "")


def _versions() -> dict[str, str]:
    found = {}
    for package in ("chat-memory", "langchain-community", "llama-index-storage-chat-store-redis"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    redis_server = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True, check=False
    )
    found["redis-server"] = redis_server.stdout.split(" v=")[-1].split()[0]
    return found


def main() -> None:
    """Run every store, write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("docs/peers.md"))
    args = parser.parse_args()
    runs, not_run = {}, dict(STACK_ONLY)
    with tempfile.TemporaryDirectory() as tmp:
        for number, (store, (factory, package)) in enumerate(STORES.items()):
            try:
                importlib.import_module(factory.partition(":")[0])
            except ImportError:
                not_run[store] = f'{package} is not installed: pip install "chat-memory[bench]"'
                continue
            print(f"running the suite against {store} ...", flush=True)
            runs[store] = run_store(factory, Path(tmp) / f"store-{number}")
    args.output.write_text(render(runs, not_run, "python -m chat_memory_suite.peers"), "utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
