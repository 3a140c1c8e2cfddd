"""How fast the acceptance suite runs as it grows, against plain pytest doing the same calls.

``python -m benchmarks.suite`` writes a throwaway project with ``--scenarios``
generated four-step scenarios (a new session, a user message, an assistant
reply, a check of the context) that use this repository's steps, and a plain
pytest module with as many tests making the same calls on fakeredis. It runs
each in a child pytest, in one process and with ``-n 2``, interleaving the
two round by round, and reports wall times and the ratio of plain pytest's
time to the suite's (higher is better; 1.0 means the suite costs nothing
extra). The suite runs with ``--memory-api sync``, as the plain tests do.

Issue 9's targets: 1,000 scenarios in at most 6 s wall with ``-n 2``, and a
ratio of at least 0.8. The result is written to ``docs/suite-speed.md``
(``--output``); no test asserts on it: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCENARIO = """
  Scenario: Session {n} remembers its turn
    Given a new session "s{n}"
    When the user says "Hello, I am user {n}."
    And the assistant replies "Nice to meet you, user {n}."
    Then the context contains 2 messages
"""

TIMED_SCENARIO = """
  Scenario: Session {n} remembers its turn across a pause
    Given a new session "s{n}"
    When the user says "Hello, I am user {n}."
    And 1 minutes pass
    Then the context contains 1 message
"""

PLAIN_TEST = """
def test_session_{n}_remembers_its_turn() -> None:
    memory = MemoryService(fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    memory.add_message("s{n}", "user", "Hello, I am user {n}.")
    memory.add_message("s{n}", "assistant", "Nice to meet you, user {n}.")
    assert len(memory.get_context("s{n}")) == 2
"""


PYTEST_INI = """
[pytest]
addopts = -p no:randomly -p no:cacheprovider -q
"""


def write_project(root: Path, scenarios: int) -> tuple[Path, Path, Path]:
    """Write the generated suite, its timed twin and the plain tests; return their directories."""
    suite, timed, plain = root / "suite", root / "timed", root / "plain"
    for project in (suite / "features", timed / "features", plain):
        project.mkdir(parents=True)
    (plain / "pytest.ini").write_text(PYTEST_INI)
    for project, template in ((suite, SCENARIO), (timed, TIMED_SCENARIO)):
        # the installed chat_memory_suite plugin, switched on as a team's project does it
        (project / "pytest.ini").write_text(PYTEST_INI + "chat_memory_suite = true\n")
        feature = "Feature: Generated sessions\n" + "".join(
            template.format(n=n) for n in range(scenarios)
        )
        (project / "features" / "generated.feature").write_text(feature)
    tests = "import fakeredis\n\nfrom chat_memory import MemoryService\n" + "".join(
        PLAIN_TEST.format(n=n) for n in range(scenarios)
    )
    (plain / "test_generated.py").write_text(tests)
    return suite, timed, plain


def run(project: Path, args: list[str], *, profile: Path | None = None) -> float:
    """Run pytest in ``project`` and return its wall time in seconds; fail loudly.

    With ``profile``, the run is under cProfile, which writes its statistics there.
    """
    started = time.perf_counter()
    profiler = ["-m", "cProfile", "-o", str(profile)] if profile else []
    done = subprocess.run(
        [sys.executable, *profiler, "-m", "pytest", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pytest failed in {project}:\n{done.stdout[-3000:]}{done.stderr}")
    return elapsed


LOOKUP = "get_step_function"
"""pytest-bdd's lookup of a step's definition, handed to the step as a fixture."""


SERVER = "_get_server_runtime"
"""fakeredis building the Lua runtime of a new fake server, on its first script."""


def shares(profile: Path, names: tuple[str, ...]) -> dict[str, float]:
    """Return the share of a profiled run spent in (and under) each named function."""
    stats = pstats.Stats(str(profile))
    entries = stats.stats  # type: ignore[attr-defined]  # pstats keeps its table here
    total = max(cumulative for _, _, _, cumulative, _ in entries.values())
    return {
        wanted: sum(v[3] for (_, _, name), v in entries.items() if name == wanted) / total
        for wanted in names
    }


def main(argv: list[str] | None = None) -> int:
    """Measure, print and write the report."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suite", description=__doc__)
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "suite-speed.md")
    parser.add_argument(
        "--skip-own-suite",
        action="store_true",
        help="do not time this repository's own `pytest features/` (CI's smoke run)",
    )
    args = parser.parse_args(argv)

    modes = {"one process": [], "-n 2": ["-n", "2"]}
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="chat-memory-suite-bench-") as tmp:
        suite, timed, plain = write_project(Path(tmp), args.scenarios)
        scenario_args = ["features", "--memory-api", "sync"]
        for _ in range(args.rounds):
            for mode, extra in modes.items():
                times.setdefault(("suite", mode), []).append(run(suite, scenario_args + extra))
                times.setdefault(("plain", mode), []).append(run(plain, extra))
            times.setdefault(("timed", "one process"), []).append(run(timed, scenario_args))
        profile = Path(tmp) / "suite.prof"
        run(suite, scenario_args, profile=profile)
        share = shares(profile, (LOOKUP, SERVER))

    lines = [
        "# The acceptance suite's speed",
        "",
        "Generated by `python -m benchmarks.suite`; do not edit by hand.",
        f"{args.scenarios} generated four-step scenarios against plain pytest tests making the"
        f" same calls on fakeredis; median wall time of {args.rounds} interleaved rounds,"
        f" {datetime.now(UTC):%Y-%m-%d}, Python {platform.python_version()}, 2 cores shared.",
        "",
        "| run | suite (s) | scenarios/s | plain pytest (s) | plain / suite | target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    report = []
    for mode in modes:
        suite_s = statistics.median(times[("suite", mode)])
        plain_s = statistics.median(times[("plain", mode)])
        ratio = plain_s / suite_s
        target = (
            f"≤ 6 s: {'met' if suite_s <= 6 else 'not met'}; ≥ 0.8×: "
            f"{'met' if ratio >= 0.8 else 'not met'}"
            if mode == "-n 2"
            else f"≥ 0.8×: {'met' if ratio >= 0.8 else 'not met'}"
        )
        rate = args.scenarios / suite_s
        lines.append(
            f"| {mode} | {suite_s:.2f} | {rate:,.0f} | {plain_s:.2f} | {ratio:.3f}× | {target} |"
        )
        report.append(f"{mode}: suite {suite_s:.2f} s, plain {plain_s:.2f} s, ratio {ratio:.3f}")
    plain_one = statistics.median(times[("plain", "one process")])
    plain_n2 = statistics.median(times[("plain", "-n 2")])
    untimed = statistics.median(times[("suite", "one process")])
    timed_s = statistics.median(times[("timed", "one process")])
    freezegun_ms = 1000 * (timed_s - untimed) / args.scenarios
    lines += [
        "",
        f"Time: the same scenarios with a step that lets a minute pass (so the clock is frozen"
        f" by freezegun) took {timed_s:.2f} s in one process, {freezegun_ms:+.2f} ms a scenario"
        " against those without; a scenario that does not use time never starts freezegun.",
        "",
        f"Where the time goes: in one profiled run of the one-process suite, pytest-bdd's step"
        f" lookup (`{LOOKUP}`) took {100 * share[LOOKUP]:.0f}% of the run. pytest-bdd goes"
        " through every fixture of the session, and matches every step definition, for every"
        " step; the suite remembers the answer per module and step text"
        " (`remember_step_lookups` in `chat_memory_suite/_compat.py`: pytest-bdd has no public"
        " way to do this), so what is left is mostly handing the definition over as a"
        " fixture, once per step. Each scenario gets a fresh"
        f" fake server; building its Lua runtime (`{SERVER}`) took {100 * share[SERVER]:.1f}%"
        " of the run, and the plain tests build one per test too, so sharing one server per"
        " worker would change both sides alike, not the ratio.",
        "",
        f"Two workers: plain pytest itself takes {plain_n2:.2f} s with `-n 2` against"
        f" {plain_one:.2f} s in one process"
        + (
            ": on these 2 shared cores, starting two workers (each imports and collects"
            " everything) costs more than the second core saves at this size, so the 6 s"
            " target is out of reach here whatever the suite's own overhead."
            if plain_n2 >= plain_one
            else f", {100 * (1 - plain_n2 / plain_one):.0f}% less."
        ),
    ]
    report.append(
        f"freezegun: {freezegun_ms:+.2f} ms a timed scenario; lookup {100 * share[LOOKUP]:.0f}%,"
        f" fake servers {100 * share[SERVER]:.1f}%"
    )
    if not args.skip_own_suite:
        own = {
            mode: run(ROOT, ["features/", "-p", "no:randomly", *extra])
            for mode, extra in modes.items()
        }
        lines += [
            "",
            "This repository's own acceptance suite, `pytest features/` on fakeredis (every"
            " scenario through both APIs), once each:",
            "",
            "| run | seconds |",
            "|---|---:|",
            *(f"| `{' '.join(['pytest features/', *modes[m]])}` | {own[m]:.0f} |" for m in modes),
        ]
        report.append("own suite: " + ", ".join(f"{m} {own[m]:.0f} s" for m in modes))
    args.output.write_text("\n".join(lines) + "\n")
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
