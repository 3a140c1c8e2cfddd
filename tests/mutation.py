"""Mutation testing of the library, as a command of the project: writes docs/mutation.md.

Runs mutmut (configured in ``pyproject.toml``) over ``src/chat_memory/`` in
six passes, each in a throwaway copy of the working tree so the checkout is
never touched:

1. the acceptance suite on fakeredis (``pytest features/``), every mutant;
2. the survivors again, with the scenarios fakeredis cannot run, on a
   throwaway real ``redis-server`` (``--redis-server -m "faults or llm_smoke
   or real_redis"``): the ``@faults`` ones, the ``@real_redis`` ones, and the
   ``@llm_smoke`` ones against the loopback model stub of ``tests/llm_stub.py``
   (they drive ``chat_memory.openai_model``);
3. the survivors of the framework adapters (``chat_memory.langchain`` and
   ``chat_memory.openai_agents``), with the suite run through each one's
   adapter (``--memory-adapter``), as CI runs it for docs/peers.md: a plain
   ``pytest features/`` never imports them;
4. the survivors of the code only a cluster runs (``REPLICATED``: slot
   migrations, redirections), with the ``@cluster`` scenarios on one throwaway
   Redis Cluster, started once for the pass rather than once per mutant
   (``--redis-cluster --redis-url``);
5. the survivors of the durability setting's code, with the ``@sentinel``
   scenarios (``--redis-sentinel``: a primary's failover, with and without it,
   and a retry confirmed; ``--sentinel-on DIR`` runs them on another server,
   e.g. Valkey, whose ``WAIT`` counts one connection's writes as Redis 7.0's
   does not);
6. what still survives, with ``tests/unit`` added.

Passes 1 to 5 together are "the acceptance suite alone": everything
``pytest features/`` runs in CI. ``--skip cluster --skip sentinel`` leaves out
passes 4 and 5 (CI's sample: minutes of servers starting and failing over).

The saved run is ``tests/mutation_results.json``, in the repository: each
mutant's diff and exit codes, and a digest of each function's code as its
mutants ran (``ran``). ``--update`` runs some functions again into it (or builds
it from nothing, a piece at a time); ``--update --stale`` picks the functions
whose code changed since their mutants ran, then those never run, then those a
stopped, skipped or failed pass left. The report names them, so it never passes old rows
off as the code's.

Then it writes the score by module, both ways, and every mutant the acceptance
suite lets survive: the ones the unit tests kill, the ones that only change an
error message's wording, and the ones justified as equivalent in
``tests/mutation_equivalents.toml``. A survivor that is none of these is listed
as *unexplained*, and the command exits 1: a mutant that changes what a user
gets and that nothing notices is a hole in the suite. With ``--min-score`` it
exits 1 instead when the acceptance suite kills less than that percentage of
the mutants that change behaviour (what CI checks on a sample). ::

    python -m tests.mutation                      # the full run: 2h20 on 2 idle cores, and
                                                  # hours more for the cluster and Sentinel passes
    python -m tests.mutation --update --stale --limit 40  # the same in pieces: the next 40
                                                  # functions not run on their code as it is
    python -m tests.mutation --from-results       # report the saved run again, after a
                                                  # justification is written down
    python -m tests.mutation --sample 12          # the mutants of 12 random functions
    python -m tests.mutation --module _budget.py  # the modules a change touched
    python -m tests.mutation --update --function _ops.py:compact  # after a test was added for
                                                  # survivors: run those again, into the saved run
    python -m tests.mutation --sample 12 --acceptance-only --min-score 75 \
        --skip cluster --skip sentinel --output m.md  # CI
"""

from __future__ import annotations

import argparse
import ast
import codecs
import difflib
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatch
from io import StringIO
from pathlib import Path
from typing import Final

from chat_memory_suite.servers import throwaway_cluster
from tests.llm_stub import running_stub

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS = ROOT / "tests" / "mutation_equivalents.toml"
RESULTS = ROOT / "tests" / "mutation_results.json"
"""The saved run, in the repository: each session's machine is new, and a full run is longer
than a session, so the run is built and kept up to date in pieces (``--update``)."""
KILLED = {1, 3, 36, 24, -24, 152, 255, 37}  # failed, pytest error, timeout, type check
UNREACHED = {None, 5, 33}  # mutmut found no test that runs the function
MUTANT_KEY = re.compile(r"^(?P<module>[\w.]+)\.x(?:ǁ(?P<cls>\w+)ǁ|_)(?P<func>\w+?)__mutmut_\d+$")


ACCEPTANCE_PASSES: Final = ("features", "server", "adapter", "cluster", "sentinel")
"""The passes of the acceptance suite alone, in the order they run (a Mutant's fields)."""


@dataclass
class Mutant:
    """One mutant: its mutmut name, readable place, diff, and fate in each run."""

    name: str
    module: str
    place: str
    features: int | None
    server: int | None = None
    adapter: int | None = None
    unit: int | None = None
    diff: str = ""
    verdict: str = ""
    cluster: int | None = None
    sentinel: int | None = None

    @property
    def acceptance(self) -> list[int | None]:
        """Its exit codes in every pass of the acceptance suite alone, in order."""
        return [getattr(self, name) for name in ACCEPTANCE_PASSES]

    @property
    def changed(self) -> tuple[list[str], list[str]]:
        """The removed and added lines of the diff, stripped."""
        lines = self.diff.splitlines()
        removed = [x[1:].strip() for x in lines if x.startswith("-") and not x.startswith("---")]
        added = [x[1:].strip() for x in lines if x.startswith("+") and not x.startswith("+++")]
        return removed, added


@dataclass
class Report:
    """The mutants of every module, with what each run made of them."""

    mutants: list[Mutant] = field(default_factory=list)
    sample: bool = False
    unit_left: list[str] = field(default_factory=list)
    """The functions (``module:place``) whose survivors the unit-test pass did not judge
    (``--acceptance-only``, or a unit pass that failed): their column reads "not run"."""
    source: str = ""
    """The commit the run mutated (``git describe --always --dirty``)."""
    updates: list[str] = field(default_factory=list)
    """What ``--update`` ran again since, and at which commit, one line each."""
    left_out: list[str] = field(default_factory=list)
    """The passes this run did not make (``--skip``, or a pass whose servers failed), and why."""
    notes: list[str] = field(default_factory=list)
    """What else a reader of the figures needs: the server a pass ran on, one sentence each."""
    ran: dict[str, str] = field(default_factory=dict)
    """Each function whose mutants ran (``module:place``), with the digest of the code they
    ran on (:func:`fingerprints`): what is not there, or differs now, has no current rows."""


def place_of(name: str) -> tuple[str, str]:
    """``chat_memory._keys.xǁKeyLayoutǁall__mutmut_3`` -> (``_keys.py``, ``KeyLayout.all``)."""
    match = MUTANT_KEY.match(name)
    if match is None:
        return "?", name
    module = match["module"].removeprefix("chat_memory.") + ".py"
    func = match["func"]
    return module, f"{match['cls']}.{func}" if match["cls"] else func


def describe(root: Path = ROOT) -> str:
    """The checkout's commit, marked dirty when the working tree differs from it.

    The report and the saved run do not count: ``--from-results`` rewrites the
    one and every run the other, and a run after that mutates the commit all the same.
    """

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    changed = git(
        "status",
        "--porcelain",
        "--",
        ".",
        ":(exclude)docs/mutation.md",
        f":(exclude){RESULTS.relative_to(ROOT)}",
    )
    return f"{commit}-dirty" if changed else commit


def copy_tree(target: Path) -> None:
    """Copy the working tree (tracked and new files, not ignored ones) into ``target``."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in filter(None, files):
        source = ROOT / os.fsdecode(raw)
        if source.is_file():
            destination = target / os.fsdecode(raw)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)


class MutmutFailed(SystemExit):
    """mutmut stopped before the mutants ran (its run of the unmutated tests failed)."""


def run_mutmut(
    workdir: Path,
    names: list[str],
    *,
    pytest_args: list[str],
    tests: list[str],
    env: dict[str, str],
    children: int | None = None,
) -> dict[str, int | None]:
    """Run mutmut in ``workdir`` (on ``names``, or all) and return every mutant's exit code.

    ``children`` is how many mutants run at once (mutmut's default: one per core).
    """
    pyproject = workdir / "pyproject.toml"
    text = pyproject.read_text()
    for key, extra in (
        ("pytest_add_cli_args", pytest_args),
        ("pytest_add_cli_args_test_selection", tests),
    ):
        line = next(x for x in text.splitlines() if x.startswith(f"{key} = ["))
        text = text.replace(line, line[:-1] + "".join(f", {json.dumps(a)}" for a in extra) + "]")
    pyproject.write_text(text)
    env = {**os.environ, **env, "PYTHONDONTWRITEBYTECODE": "1"}
    # mutmut writes one progress line per mutant; keep its output for a failed run only.
    log = workdir / "mutmut.log"
    with log.open("w") as out:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mutmut",
                "run",
                *([f"--max-children={children}"] if children else []),
                *names,
            ],
            cwd=workdir,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        sys.stderr.write(log.read_text()[-4000:])
        raise MutmutFailed(f"mutmut failed in {workdir} (exit {done.returncode})")
    codes: dict[str, int | None] = {}
    for meta in sorted((workdir / "mutants" / "src").rglob("*.py.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def diffs_of(workdir: Path) -> dict[str, str]:
    """Every mutant's unified diff against its function, by mutmut's name of it.

    Read from the files mutmut wrote (``mutants/src/chat_memory``), where each
    function has an unmutated copy (``x_f__mutmut_orig``, or ``xǁClassǁf__mutmut_orig``
    in its class) beside its mutants: all of them at once, in this process,
    where ``mutmut show`` is a process per mutant.
    """
    diffs: dict[str, str] = {}
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for path in sorted((workdir / "mutants" / "src" / "chat_memory").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree, lines = ast.parse(source), source.splitlines()
        generated: dict[str, list[str]] = {}
        for node in tree.body:
            body = node.body if isinstance(node, ast.ClassDef) else [node]
            for item in body:
                if isinstance(item, functions) and "__mutmut_" in item.name:
                    text = lines[item.lineno - 1 : item.end_lineno]
                    # Named as the function it comes from (x_f -> f, xǁClassǁm -> m, as
                    # mutmut show names it), so the diff shows only the mutation.
                    base = item.name.partition("__mutmut_")[0]
                    plain = base.rpartition("ǁ")[2] if "ǁ" in base else base.removeprefix("x_")
                    text[0] = text[0].replace(item.name, plain, 1)
                    generated[item.name] = text
        shown = f"src/chat_memory/{path.name}"
        for name, lines in generated.items():
            origin = name.partition("__mutmut_")[0] + "__mutmut_orig"
            if name.endswith("__mutmut_orig") or origin not in generated:
                continue
            diff = difflib.unified_diff(
                generated[origin], lines, fromfile=shown, tofile=shown, lineterm=""
            )
            diffs[f"chat_memory.{path.stem}.{name}"] = "\n".join(diff)
    return diffs


def check_diffs(workdir: Path, mutants: list[Mutant]) -> None:
    """Fail unless :func:`diffs_of` read every mutant, as ``mutmut show`` shows the first.

    :func:`diffs_of` reads the files mutmut writes, whose shape is mutmut's own:
    this stops a run (CI's sample too) when a mutmut release changes it.
    """
    missing = [m.name for m in mutants if not m.diff]
    if missing:
        raise SystemExit(f"no diff read for {len(missing)} mutants, e.g. {missing[0]}")
    if mutants:
        shown = subprocess.run(
            [sys.executable, "-m", "mutmut", "show", mutants[0].name],
            cwd=workdir,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        reference = Mutant(mutants[0].name, "", "", None, diff=shown)
        if reference.changed != mutants[0].changed:
            raise SystemExit(
                f"{mutants[0].name}: mutmut show gives {reference.changed},"
                f" the diff read from its files {mutants[0].changed}"
            )


def _tokens(lines: list[str]) -> list[tuple[bool, str]] | None:
    """The tokens of source lines as (is a string literal, text); None if they don't tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    fstring_start = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+ splits f-strings
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    out: list[tuple[bool, str]] = []
    depth, pieces = 0, list[str]()
    for token in tokens:
        if token.type == fstring_start or depth:
            depth += (token.type == fstring_start) - (token.type == fstring_end)
            pieces.append(token.string)
            if not depth:
                out.append((True, "".join(pieces)))
                pieces = []
        elif token.type == tokenize.STRING:
            out.append((True, token.string))
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            out.append((False, token.string))
    return out


def _changes(mutant: Mutant) -> list[tuple[list[tuple[bool, str]], list[tuple[bool, str]]]] | None:
    """The token runs the mutant replaces, as (old run, new run) pairs."""
    removed, added = mutant.changed
    old, new = _tokens(removed), _tokens(added)
    if old is None or new is None:
        return None
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [
        (old[i1:i2], new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def _prose(token: tuple[bool, str]) -> bool:
    is_string, literal = token
    if not is_string:
        return False
    text = literal[min(literal.find(q) for q in "'\"" if q in literal) :]  # without f, r, b
    text = re.sub(r"\{[^{}]*\}", " ", text)  # an f-string's fields are code, not words
    return len(re.findall(r"[A-Za-z]+", text)) >= 2


def is_wording(mutant: Mutant) -> bool:
    """Whether the mutant only rewrites human-readable text (an error message, usually).

    True when every change replaces string literals that read as prose (at
    least two words) with other strings, or with ``None``. Keys, roles and
    formats are single tokens and never count as wording.
    """
    changes = _changes(mutant)
    return bool(changes) and all(
        old
        and all(_prose(token) for token in old)
        and (all(token[0] for token in new) or new == [(False, "None")])
        for old, new in changes or []
    )


def codec_case(mutant: Mutant) -> bool:
    """Whether the mutant only changes the case of a codec name ("utf-8" -> "UTF-8")."""
    changes = _changes(mutant)
    return bool(changes) and all(
        len(old) == len(new) == 1
        and old[0][0]
        and new[0][0]
        and old[0][1].lower() == new[0][1].lower()
        and _is_codec(old[0][1])
        for old, new in changes or []
    )


REDIS_COMMAND = re.compile(r"""^(?P<q>['"])(?P<name>[A-Z]+)(?P=q)$""")


def command_case(mutant: Mutant) -> bool:
    """Whether the mutant only changes the case of a Redis command's name ("DEL" -> "del").

    Only inside ``Command((...))``, the request the library sends as is: Redis
    reads command names without regard to case.
    """
    changes = _changes(mutant)
    removed, _ = mutant.changed
    return (
        bool(changes)
        and all("Command((" in line for line in removed)
        and all(
            len(old) == len(new) == 1
            and (match := REDIS_COMMAND.match(old[0][1])) is not None
            and new[0][1].strip("'\"").upper() == match["name"]
            for old, new in changes or []
        )
    )


def _is_codec(literal: str) -> bool:
    try:
        codecs.lookup(literal.strip("'\""))
    except LookupError:
        return False
    return True


def load_equivalents() -> list[dict[str, str]]:
    """The hand-written justifications: place, the changed lines, and why it is equivalent."""
    return list(tomllib.loads(EQUIVALENTS.read_text())["equivalent"])


def justification(mutant: Mutant, equivalents: list[dict[str, str]]) -> str | None:
    """The verdict of a survivor whose change is justified in the file, with the reason.

    An entry is equivalent unless it says ``kind = "wording"`` (a change that
    only alters an error message, in a way the token rules cannot see).
    """
    index = _first_match(mutant, equivalents)
    if index is None:
        return None
    entry = equivalents[index]
    kind = "message wording" if entry.get("kind") == "wording" else "equivalent"
    return f"{kind}: {entry['reason']}"


def _first_match(mutant: Mutant, equivalents: list[dict[str, str]]) -> int | None:
    removed, added = mutant.changed
    for index, entry in enumerate(equivalents):
        if (
            entry["place"] == f"{mutant.module}:{mutant.place}"
            and entry["from"].strip() in removed
            and entry["to"].strip() in added
        ):
            return index
    return None


def unused(
    report: Report, equivalents: list[dict[str, str]], current: dict[str, str]
) -> list[dict[str, str]]:
    """The justifications that give no mutant of a full run its verdict.

    The code they quote changed, a test now kills the mutant (in any pass), a
    rule (message wording, the case of a codec or command name) already explains
    it, the function is gone, or an entry above says the same: either way,
    nothing reads them. (An equivalence written down comes before the wording
    rule: the words of an assert that cannot fail look like a message's.) The
    entries of functions of ``current`` (the source now) whose mutants have not
    run yet are not judged.
    """
    if report.sample:
        return []
    used = classify(report, equivalents)
    waiting = {p for p in current if p not in report.ran} if report.ran else set()
    return [
        entry
        for index, entry in enumerate(equivalents)
        if index not in used and entry["place"] not in waiting
    ]


def classify(report: Report, equivalents: list[dict[str, str]]) -> set[int]:
    """Give every mutant its verdict; return which justifications gave one (their index)."""
    used: set[int] = set()
    for mutant in report.mutants:
        if any(code in KILLED for code in mutant.acceptance):
            mutant.verdict = "killed by the acceptance suite"
        elif is_wording(mutant):
            # A written equivalence comes before this rule: the words of an assert that
            # cannot fail are a string the rule takes for an error message.
            index = _first_match(mutant, equivalents)
            if index is not None and equivalents[index].get("kind") != "wording":
                mutant.verdict = justification(mutant, equivalents) or ""
                used.add(index)
            else:
                mutant.verdict = "message wording"
        elif codec_case(mutant):
            mutant.verdict = "equivalent: codec names are case-insensitive in Python"
        elif command_case(mutant):
            mutant.verdict = "equivalent: Redis command names are case-insensitive"
        elif (index := _first_match(mutant, equivalents)) is not None:
            mutant.verdict = justification(mutant, equivalents) or ""
            used.add(index)
        elif mutant.unit in KILLED:
            mutant.verdict = "killed by tests/unit"
        else:
            mutant.verdict = "unexplained"
    return used


# The code only a Redis Cluster or a replicated primary runs, as ``module:function``
# patterns: passes 4 and 5 run the survivors of these functions alone, message wording
# left out. Their scenarios take seconds of servers migrating slots and failing over, and
# mutmut runs every scenario that reaches a function against each of its mutants: the
# survivors of the functions every append runs would take hours there, for what passes 1
# and 2 already ran. Left out on purpose: a Durability's argument checks and
# NotReplicatedError's fields, which no failover can tell apart (the unit tests do).
REPLICATED = {
    # The slot-migration scenarios (their listings and erasures refused mid-migration),
    # and a master's failover with the durability setting (cluster_failover.feature).
    "cluster": (
        "_core.py:AppendCall.declaring",
        "_core.py:MemoryCore.__init__",
        "_compat.py:redirected_in_vain",
        "_errors.py:script_error",  # a listing or an erasure refused mid-migration
        "_keys.py:KeyLayout.ids",
        "_ops.py:_alone",
        "_ops.py:_append_script",
        "_ops.py:_declaring_what_exists",
        "_ops.py:_in_steps",
        "_ops.py:_sessions_script",
        "_ops.py:list_sessions",
        "_ops.py:forget_user",
        "_service.py:MemoryService._node_client",
        "_service.py:MemoryService._run",  # the key a durable write is sent by (failover)
        "_service.py:MemoryService._send",  # a durable write redirected mid-migration
        "_shell.py:MemoryShell.__init__",  # whether the client is a cluster's
        "exceptions.py:NotReplicatedError.with_messages",  # steps of a durable write
    ),
    # A primary's failover, with and without the durability setting, sync and async.
    "sentinel": (
        "_durability.py:confirm*",
        "_durability.py:unconfirmed",
        "_durability.py:Durability.wait_command",
        "_durability.py:Durability.timeout_ms",
        "_ops.py:add_messages",  # the barrier of a retry confirmed
        "_core.py:AppendCall.barrier",
        "_service.py:MemoryService._send",
        "_service.py:MemoryService._run",
        "_async.py:AsyncMemoryService._send",
        "_async.py:AsyncMemoryService._run",
    ),
}


def replicated_only(mutant: Mutant, kind: str) -> bool:
    """Whether pass ``kind`` takes the mutant: of a function it names, not a wording one."""
    place = f"{mutant.module}:{mutant.place}"
    return any(fnmatch(place, p) for p in REPLICATED[kind]) and not is_wording(mutant)


# The framework adapters, each reached by the suite through its suite adapter.
ADAPTERS = {
    "langchain.py": (
        "chat_memory_suite.adapters.langchain_history:make_memory",
        "chat_memory_suite.adapters.langchain_history:make_async_memory",
    ),
    "openai_agents.py": ("chat_memory_suite.adapters.openai_agents:make_memory",),
}


def score(mutants: list[Mutant], upto: str, *, behaviour: bool = False) -> tuple[int, int]:
    """Killed and counted mutants, by the passes up to ``upto``.

    Equivalent mutants are never counted; with ``behaviour``, message-wording
    ones are not either (the score over mutants that change what a user gets).
    """
    skip = ("equivalent", "message wording") if behaviour else ("equivalent",)
    counted = [
        m
        for m in mutants
        if not m.verdict.startswith(skip) and not (behaviour and m.diff and is_wording(m))
    ]

    def codes(m: Mutant) -> list[int | None]:
        by_pass = {
            "fakeredis": [m.features],
            "suite": m.acceptance,
            "unit": [*m.acceptance, m.unit],
        }
        return by_pass[upto]

    killed = [m for m in counted if any(code in KILLED for code in codes(m))]
    return len(killed), len(counted)


def percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage, one decimal."""
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


STOPPED = re.compile(r"\d+ of the \d+ mutants of the (\w+) pass \(the run was stopped\)")
"""How a replicated pass that a stopped run did not finish is said in ``left_out``."""


def unrun_in(report: Report, kind: str) -> tuple[list[Mutant], list[Mutant]]:
    """The mutants a replicated pass (``kind``) is for, and those of them it has not run.

    It is for the mutants ``replicated_only`` gives it that no earlier pass killed.
    """
    earlier = ACCEPTANCE_PASSES[: ACCEPTANCE_PASSES.index(kind)]
    theirs = [
        m
        for m in report.mutants
        if replicated_only(m, kind) and not any(getattr(m, e) in KILLED for e in earlier)
    ]
    return theirs, [m for m in theirs if getattr(m, kind) is None]


def still_left_out(report: Report) -> list[str]:
    """``report.left_out``, with each stopped or failed pass counted again over the mutants.

    An update may run the mutants a stopped pass left: the pass is then said to
    have left out only those of its mutants still not run there (none: not said).
    A failed unit-test pass is said while a function's survivors wait for one.
    """
    said = []
    unit = [note for note in report.left_out if note.startswith(UNIT_FAILED)]
    for note in report.left_out:
        stopped = STOPPED.fullmatch(note)
        kind = next((k for k in REPLICATED if note.startswith(f"the {k} pass (")), None)
        if stopped is not None and stopped[1] in REPLICATED:
            kind = stopped[1]
        if note in unit:  # said once below, of the functions still waiting for it
            continue
        if kind is None:
            said.append(note)
            continue
        theirs, unrun = unrun_in(report, kind)
        if unrun and stopped is None:
            said.append(note)
        elif unrun:
            said.append(f"{len(unrun)} of the {len(theirs)} mutants of the {kind} pass"
                        " (the run was stopped)")  # fmt: skip
    if unit and report.unit_left:
        reason = unit[-1].removeprefix(UNIT_FAILED).removesuffix(")")
        said.append(f"the unit-test pass of {len(report.unit_left)} function(s) ({reason})")
    return list(dict.fromkeys(said))  # two stopped runs of one pass: said once


UNIT_FAILED: Final = "the unit-test pass ("
"""How a unit-test pass that failed starts in ``left_out``."""


def unfinished(report: Report) -> list[str]:
    """The functions (``module:place``) with mutants a pass has not run: stopped or failed."""
    places = {f"{m.module}:{m.place}" for kind in REPLICATED for m in unrun_in(report, kind)[1]}
    return sorted(places | set(report.unit_left))


def _outdated_lines(report: Report, current: dict[str, str]) -> list[str]:
    """What the report cannot speak for: functions not run, or run on older code."""
    never, older = outdated(report, current)
    lines = []
    if never:
        modules = Counter(place.split(":")[0] for place in never)
        lines += [
            f"**Not run yet: the mutants of {len(never)} of the {len(current)} functions**"
            " (the scores below leave them out): "
            + ", ".join(f"{count} of {module}" for module, count in sorted(modules.items()))
            + ". `python -m tests.mutation --update --stale` runs them.",
            "",
        ]
    if older:
        lines += [
            f"**Run on older code: {len(older)} function(s)** (their rows are of the code"
            " before it changed): " + ", ".join(f"`{place}`" for place in older) + ".",
            "",
        ]
    return lines


def render(report: Report, current: dict[str, str] | None = None) -> str:
    """The Markdown of docs/mutation.md.

    With ``current`` (:func:`fingerprints` of the source now), it names the
    functions whose mutants have not run on their code as it is.
    """
    by_module: dict[str, list[Mutant]] = {}
    for mutant in report.mutants:
        by_module.setdefault(mutant.module, []).append(mutant)
    verdicts = Counter(m.verdict.split(":")[0] for m in report.mutants)
    lines = [
        "# Mutation testing",
        "",
        "Generated by `python -m tests.mutation`; do not edit by hand."
        + (f" Mutated: commit `{report.source}`." if report.source else "")
        + "".join(f" Then {update}." for update in report.updates)
        + "".join(f" {note}." for note in report.notes)
        + (" **This is a sample run, not the full one.**" if report.sample else "")
        + "".join(f" **Left out: {passed}.**" for passed in still_left_out(report)),
        "",
        *(_outdated_lines(report, current) if current is not None else []),
        "mutmut changes the library one small edit at a time (a flipped comparison, a",
        "dropped argument, an off-by-one) and runs the tests against each edit. A",
        "mutant the tests let pass is a change to the code that nobody would notice.",
        "Equivalent mutants (the code behaves the same) are not counted.",
        "",
        "Columns: the acceptance suite on fakeredis; the whole acceptance suite"
        " (`pytest features/` on fakeredis and on a real server, `@faults` and"
        " `@llm_smoke` included, through the LangChain and Agents SDK adapters,"
        " and on a Redis Cluster and a Sentinel group, as CI runs it); the same over"
        " mutants that change"
        " behaviour (message wording left out); and with `tests/unit` added.",
        "",
        "| module | mutants | features on fakeredis | `pytest features/` alone"
        " | alone, behaviour only | with `tests/unit` too |",
        "|---|---:|---:|---:|---:|---:|",
    ]

    def row(label: str, mutants: list[Mutant]) -> str:
        cells = [
            percent(*score(mutants, "fakeredis")),
            percent(*score(mutants, "suite")),
            percent(*score(mutants, "suite", behaviour=True)),
            "not run"
            if report.unit_left and _places(mutants) & set(report.unit_left)
            else percent(*score(mutants, "unit")),
        ]
        return f"| {label} | {score(mutants, 'unit')[1]} | " + " | ".join(cells) + " |"

    lines += [row(module, by_module[module]) for module in sorted(by_module)]
    lines += [
        row("**library**", report.mutants),
        "",
        "Survivors of the acceptance suite: "
        + ", ".join(
            f"{count} {verdict}"
            for verdict, count in sorted(verdicts.items())
            if verdict != "killed by the acceptance suite"
        )
        + ".",
        "",
    ]
    sections = [
        ("unexplained", "Unexplained survivors (a change nobody notices: add a test)"),
        ("equivalent", "Equivalent mutants"),
        ("killed by tests/unit", "Killed only by the unit tests"),
        ("message wording", "Message wording (scenarios match error messages by substring)"),
    ]
    for prefix, title in sections:
        chosen = [m for m in report.mutants if m.verdict.startswith(prefix)]
        if not chosen:
            continue
        lines += [f"## {title}", ""]
        for mutant in chosen:
            removed, added = mutant.changed
            change = "; ".join(f"`{r}` → `{a}`" for r, a in zip(removed, added, strict=False))
            reason = mutant.verdict.partition(": ")[2]
            lines.append(
                f"- {mutant.module} `{mutant.place}`: {change or '(see mutmut show)'}"
                + (f" — {reason}" if reason else "")
            )
        lines.append("")
    return "\n".join(lines)


def _places(mutants: list[Mutant]) -> set[str]:
    """The functions (``module:place``) the ``mutants`` are of."""
    return {f"{m.module}:{m.place}" for m in mutants}


def save_report(report: Report, path: Path) -> None:
    """Save what the passes found, verdicts aside (they are given again on loading)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(report)
    for mutant in data["mutants"]:
        del mutant["verdict"]
    mutants = data.pop("mutants")
    # One mutant a line: an update's diff in git is the lines of the functions it ran.
    head = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True)
    rows = ",\n".join(json.dumps(m, ensure_ascii=False) for m in mutants)
    text = head[:-2] + f',\n "mutants": [\n{rows}\n ]\n}}\n'
    path.write_text(text, encoding="utf-8")


def load_report(path: Path) -> Report:
    """The results :func:`save_report` saved."""
    data = json.loads(path.read_text(encoding="utf-8"))
    mutants = [Mutant(**fields) for fields in data.pop("mutants")]
    if not data.pop("unit_ran", True):  # as saved before unit_left: of the whole run
        data["unit_left"] = sorted(data.get("ran") or _places(mutants))
    return Report(mutants=mutants, **data)


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(package: Path) -> Iterator[tuple[Path, str | None, Function]]:
    """Each function and method mutmut mutates: its module's path, its class, its node."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    skipped = {Path(p).name for p in config.get("do_not_mutate", [])}
    for path in sorted(p for p in package.glob("*.py") if p.name not in skipped):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, Function):
                yield path, None, node
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, Function):
                        yield path, node.name, item


def function_patterns(package: Path) -> list[str]:
    """The mutmut name pattern of every function and method mutmut mutates, sorted."""
    return [
        f"chat_memory.{path.stem}.x{f'ǁ{cls}ǁ' if cls else '_'}{node.name}__mutmut_*"
        for path, cls, node in _functions(package)
    ]


def fingerprints(package: Path) -> dict[str, str]:
    """Each function mutmut mutates (``module:place``), with a digest of its code.

    The digest is of its lines (:func:`_code_of`): moving a function or rewording
    its docstring or a comment line changes none of its mutants, any other edit
    may. It reads the text, not a syntax tree, whose dump changes between Python
    versions: the saved run is read on other machines.
    """
    digests = {}
    sources: dict[Path, list[str]] = {}
    for path, cls, node in _functions(package):
        # split("\n"), not splitlines(): the lines ast numbers (a form feed ends none).
        lines = sources.setdefault(path, path.read_text(encoding="utf-8").split("\n"))
        place = f"{cls}.{node.name}" if cls else node.name
        code = _code_of(lines, node)
        digests[f"{path.stem}.py:{place}"] = hashlib.sha256(code.encode()).hexdigest()[:12]
    return digests


def _code_of(lines: list[str], node: Function) -> str:
    """A function's lines as its digest reads them, decorators included.

    Left out: a docstring on lines of its own, blank lines and comment lines. Each
    line is read from the ``def``'s indentation on, and a string literal's lines
    after its first are kept as they are (blank, ``#`` or less indented, they are
    the string's).
    """
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    last = node.end_lineno or node.lineno
    indent = lines[node.lineno - 1][: node.col_offset]
    inside: set[int] = set()
    for part in ast.walk(node):
        if isinstance(part, ast.Constant | ast.JoinedStr) and (part.end_lineno or 0) > part.lineno:
            inside.update(range(part.lineno + 1, (part.end_lineno or 0) + 1))
    docstring: set[int] = set()
    head = node.body[0]
    if (
        isinstance(head, ast.Expr)
        and isinstance(head.value, ast.Constant)
        and isinstance(head.value.value, str)
        and not lines[head.lineno - 1].encode()[: head.col_offset].strip()
        and not lines[(head.end_lineno or head.lineno) - 1].encode()[head.end_col_offset :].strip()
    ):
        docstring = set(range(head.lineno, (head.end_lineno or head.lineno) + 1))
    kept = []
    for number in range(first, last + 1):
        text = lines[number - 1]
        if number in docstring:
            continue
        if number in inside:
            kept.append(text)
        elif text.strip() and not text.strip().startswith("#"):
            kept.append(text.removeprefix(indent).rstrip())
    return "\n".join(kept)


def outdated(report: Report, current: dict[str, str]) -> tuple[list[str], list[str]]:
    """The functions whose mutants never ran into ``report``, and those that ran on older code."""
    never = [place for place in current if place not in report.ran]
    older = [p for p in current if p in report.ran and report.ran[p] != current[p]]
    return never, older


def chosen_by(pattern: str, modules: list[str], functions: list[str]) -> bool:
    """Whether a function's name pattern is in ``modules`` or ``functions`` (``module:place``)."""
    module, place = place_of(pattern.replace("*", "1"))
    return module in modules or f"{module}:{place}" in functions


def update(
    saved: Report, rerun: Report, modules: list[str], functions: list[str], present: list[str]
) -> Report:
    """The saved run, with the mutants of ``modules`` and ``functions`` as ``rerun`` found.

    For a run after tests were added or the code changed: the other mutants keep
    their saved fate, and the report says what ran again, and on which commit. An
    empty ``saved`` (``Report()``) is a saved run built from nothing, a piece at a
    time. The saved mutants of a function no longer in the source (``present``:
    :func:`function_patterns`) are dropped, and the report names it: nothing can
    kill them now.
    """
    if saved.sample:
        raise SystemExit("--update needs the saved run, not the results of a sample")
    kept = [m for m in saved.mutants if not chosen_by(m.name, modules, functions)]
    gone = sorted({f"`{m.module}:{m.place}`" for m in kept if not matches(m.name, present)})
    kept = [m for m in kept if matches(m.name, present)]
    what = ", ".join([f"`{m}`" for m in modules] + [f"`{f}`" for f in functions])
    # "again" if the saved run has these functions' mutants (one saved before ``ran``: any).
    ran_before = any(p in saved.ran for p in rerun.ran) or (bool(saved.mutants) and not saved.ran)
    again = " again" if ran_before else ""
    said = f"the mutants of {what} ran{again} on commit `{rerun.source}`"
    said += "".join(f" ({note[0].lower()}{note[1:]})" for note in rerun.notes)
    if gone:
        said += f"; those of {', '.join(gone)}, no longer in the source, were dropped"
    places = present_places(present)
    return Report(
        mutants=sorted(kept + rerun.mutants, key=lambda m: m.name),
        sample=False,
        unit_left=sorted(
            {p for p in saved.unit_left if p in places and p not in rerun.ran}
            | set(rerun.unit_left)
        ),
        source=saved.source,
        updates=[*saved.updates, said],
        left_out=[*saved.left_out, *rerun.left_out],
        notes=saved.notes,
        ran={
            **{p: d for p, d in saved.ran.items() if p in places},
            **rerun.ran,
        },
    )


def present_places(patterns: list[str]) -> set[str]:
    """The ``module:place`` of each of mutmut's function name ``patterns``."""
    return {":".join(place_of(p.replace("*", "1"))) for p in patterns}


def matches(name: str, patterns: list[str]) -> bool:
    """Whether a mutant's name is one of a function's name ``patterns``."""
    return any(fnmatch(name, p) for p in patterns)


def run_passes(args: argparse.Namespace) -> Report:
    """Run every pass mutmut makes over a snapshot of the working tree."""
    with tempfile.TemporaryDirectory(prefix="chat-memory-mutation-") as tmp:
        # One snapshot of the working tree, taken now: every pass mutates the same code,
        # however the checkout changes while the run goes on.
        snapshot = Path(tmp) / "snapshot"
        copy_tree(snapshot)
        # The suite is the installed plugin, whose chat_memory_suite.steps is the checkout's
        # steps/ (an editable install maps it there). The copy carries its own: mutmut copies
        # src/chat_memory_suite/ (also_copy), and steps/ inside it is found before the checkout.
        shutil.copytree(snapshot / "steps", snapshot / "src" / "chat_memory_suite" / "steps")
        source = describe()  # now: the checkout may move on while the passes run
        features_dir = Path(tmp) / "fakeredis"
        shutil.copytree(snapshot, features_dir)
        names: list[str] = []
        if args.sample or args.module or args.function:
            # mutmut's names are patterns of functions: choose functions, run their mutants.
            every = function_patterns(snapshot / "src" / "chat_memory")
            if args.module or args.function:
                every = [p for p in every if chosen_by(p, args.module, args.function)]
            names = (
                random.Random(args.seed).sample(every, min(args.sample, len(every)))
                if args.sample
                else every
            )
            if not names:  # mutmut would run every mutant, and --update count them twice
                raise SystemExit("--module/--function name no function mutmut mutates")
        features = run_mutmut(features_dir, names, pytest_args=[], tests=[], env={})
        chosen = sorted(
            name
            for name, code in features.items()
            if not names or (code is not None and matches(name, names))
        )
        report = Report(sample=bool(names), source=source)
        digests = fingerprints(snapshot / "src" / "chat_memory")
        places = present_places(names)
        report.ran = {p: d for p, d in digests.items() if not names or p in places}
        for name in chosen:
            module, place = place_of(name)
            report.mutants.append(Mutant(name, module, place, features.get(name)))
        # Every mutant's diff, the killed ones too: the score over mutants that change
        # behaviour leaves out those that only reword a message, killed or not.
        diffs = diffs_of(features_dir)
        for mutant in report.mutants:
            mutant.diff = diffs.get(mutant.name, "")
        check_diffs(features_dir, report.mutants)
        alive = [m for m in report.mutants if m.features not in KILLED]
        if alive:
            server_dir = Path(tmp) / "redis-server"
            shutil.copytree(snapshot, server_dir)
            with running_stub() as stub:
                llm = {"LLM_BASE_URL": stub.base_url, "LLM_API_KEY": "stub", "LLM_MODEL": "stub"}
                codes = run_mutmut(
                    server_dir,
                    [m.name for m in alive],
                    # Only what fakeredis could not run: the other scenarios ran in pass 1.
                    pytest_args=["--redis-server", "-m", "faults or llm_smoke or real_redis"],
                    tests=[],
                    env=llm,
                    # These scenarios wait on the server about half their time (57 s of
                    # wall clock, 27 s of CPU here): twice as many mutants as cores keep
                    # the cores busy. mutmut stops a mutant only after 15 times its tests'
                    # measured time, far beyond what sharing a core costs.
                    children=2 * (os.cpu_count() or 1),
                )
            for mutant in alive:
                mutant.server = codes.get(mutant.name)
        alive = [m for m in alive if m.server not in KILLED]
        for module, factories in ADAPTERS.items():
            for number, factory in enumerate(factories):
                theirs = [m for m in alive if m.module == module and m.adapter not in KILLED]
                if not theirs:
                    break
                adapter_dir = Path(tmp) / f"adapter-{Path(module).stem}-{number}"
                shutil.copytree(snapshot, adapter_dir)
                codes = run_mutmut(
                    adapter_dir,
                    [m.name for m in theirs],
                    pytest_args=["--memory-adapter", factory],
                    tests=[],
                    env={},
                )
                for mutant in theirs:
                    mutant.adapter = codes.get(mutant.name)
        alive = [m for m in alive if m.adapter not in KILLED]
        report.left_out += [f"the {kind} pass (--skip)" for kind in args.skip]
        tmp_dir = Path(tmp)

        @contextmanager
        def on_cluster() -> Iterator[Setting]:
            nodes = tmp_dir / "cluster-nodes"
            nodes.mkdir()
            with throwaway_cluster(nodes) as url:  # one cluster for the whole pass
                yield ["--redis-cluster", "--redis-url", url, "-m", "cluster"], {}

        @contextmanager
        def on_sentinel(servers: Path | None) -> Iterator[Setting]:
            path = {}
            if servers is not None:  # entered only when the pass runs: said in the report
                path = {"PATH": f"{servers}{os.pathsep}{os.environ['PATH']}"}
                version = subprocess.run(
                    [servers / "redis-server", "--version"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split(" sha=")[0]
                report.notes.append(f"The Sentinel pass ran on {version} (`--sentinel-on`)")
            yield ["--redis-sentinel", "-m", "sentinel"], path

        passes: list[tuple[str, Callable[[], AbstractContextManager[Setting]]]] = [
            ("cluster", on_cluster),
            ("sentinel", lambda: on_sentinel(args.sentinel_on)),
        ]
        for kind, setting in passes:
            if kind not in args.skip:
                alive = replicated_pass(report, kind, tmp_dir / kind, snapshot, alive, setting)
        if args.acceptance_only:
            report.unit_left = sorted(_places(alive))
        if alive and not args.acceptance_only:
            unit_dir = Path(tmp) / "with-unit"
            shutil.copytree(snapshot, unit_dir)
            try:  # the acceptance passes' results are kept, the unit tests' said missing
                codes = run_mutmut(
                    unit_dir,
                    [m.name for m in alive],
                    pytest_args=UNIT_PASS_ARGS,
                    tests=["tests/unit/"],
                    env={},
                )
            except MutmutFailed as failed:  # e.g. the checkout's steps/ changed under the run
                report.left_out.append(f"{UNIT_FAILED}{failed})")
                report.unit_left = sorted(_places(alive))
                codes = {}
            for mutant in alive:
                mutant.unit = codes.get(mutant.name)
    return report


UNIT_PASS_ARGS: Final = [
    # It breaks the library on purpose and reruns the acceptance suite in child
    # processes: about the suite, not the library, and minutes per mutant.
    "--ignore=tests/unit/test_suite_catches_regressions.py",
    # mutmut defines its trampolines inside each class, as public
    # attributes with wrapped signatures: this test would see them as
    # methods without twins.
    "--deselect=tests/unit/test_async.py::"
    "test_every_public_method_has_a_twin_with_the_same_signature",
    # It reads the library's source text, where mutmut has written every
    # mutant of every function: it would find the mutated command names.
    "--ignore=tests/unit/test_acl.py",
    # The steps come from the installed plugin, outside this copy, so the
    # catalog names them chat-memory/steps/...: docs/steps.md "differs".
    "--deselect=tests/unit/test_catalog.py::test_docs_steps_md_is_up_to_date",
    # So does --bdd-check, whose sample docs/writing-scenarios.md shows.
    "--deselect=tests/unit/test_check.py::"
    "test_the_guides_bdd_check_sample_is_what_the_check_prints",
    # The README states the last report, which this run is about to replace.
    "--deselect=tests/unit/test_readme.py::test_the_mutation_figures_shown_are_docs_mutation_mds",
]
"""pytest's arguments in the unit-test pass (6): the tests that cannot judge a mutant left out."""


Setting = tuple[list[str], dict[str, str]]
"""A replicated pass's pytest arguments and environment (passes 4, 5)."""


def replicated_pass(
    report: Report,
    kind: str,
    workdir: Path,
    snapshot: Path,
    alive: list[Mutant],
    setting: Callable[[], AbstractContextManager[Setting]],
) -> list[Mutant]:
    """Run the survivors of the cluster's or the Sentinel group's code with their scenarios.

    Takes the mutants of ``alive`` that ``replicated_only`` gives ``kind``
    (passes 4, 5); ``setting`` starts what the scenarios need, only if there is
    one, and gives their pytest arguments and environment. Returns what is
    still alive. Two mutants at a time: the scenarios wait on servers most of
    their time, and each one works in its own namespace and slots or starts its
    own servers to fail over (they pass two at a time here, under ``pytest -n
    2``, as they do one at a time in CI). If their unmutated run fails (a
    failover that took too long), the pass is left out, and said so in the
    report, rather than the whole run lost.
    """
    theirs = [m for m in alive if replicated_only(m, kind)]
    if not theirs:
        return alive
    shutil.copytree(snapshot, workdir)
    try:
        with setting() as (pytest_args, env):
            codes = run_mutmut(
                workdir,
                [m.name for m in theirs],
                pytest_args=pytest_args,
                tests=[],
                env=env,
                children=2,
            )
    except MutmutFailed as failed:
        report.left_out.append(f"the {kind} pass ({failed})")
        return alive
    for mutant in theirs:
        setattr(mutant, kind, codes.get(mutant.name))
    return [m for m in alive if getattr(m, kind) not in KILLED]


def main(argv: list[str] | None = None) -> int:
    """Run mutmut, write the report, and exit 1 when a survivor is unexplained."""
    parser = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__)
    parser.add_argument(
        "--sample", type=int, help="check the mutants of this many random functions"
    )
    parser.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    parser.add_argument("--module", action="append", default=[], help="e.g. _budget.py")
    parser.add_argument(
        "--function",
        action="append",
        default=[],
        help="e.g. _ops.py:compact or _keys.py:KeyLayout.for_user",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="run the mutants of --module, --function or --stale again and put them into the"
        " saved run (after tests were added for them, or the code changed), instead of"
        " reporting them alone; the first update builds the saved run from nothing",
    )
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "mutation.md")
    parser.add_argument(
        "--acceptance-only",
        action="store_true",
        help="skip the unit-test pass (CI's sample run: the acceptance suite is what it measures)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=("cluster", "sentinel"),
        help="leave out the pass on a throwaway Redis Cluster or the one on a Sentinel group",
    )
    parser.add_argument(
        "--sentinel-on",
        type=lambda directory: Path(directory).resolve(),  # mutmut runs elsewhere
        metavar="DIR",
        help="run the Sentinel pass's primaries and replicas with the redis-server in DIR (e.g."
        " Valkey's, linked there as redis-server), not the one on PATH: Valkey's WAIT counts one"
        " connection's own writes, where a retry's confirmation shows; Redis 7.0's counts all",
    )
    parser.add_argument(
        "--min-score",
        type=float,
        help="exit 1 if pytest features/ kills less than this percentage of the mutants"
        " that change behaviour",
    )
    parser.add_argument(
        "--stale",
        action="store_true",
        help="with --update: run the functions whose mutants have not run on their code as it"
        " is: those that changed first, then those never run, then those a stopped, skipped or"
        " failed pass left",
    )
    parser.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="with --stale: only the first N of them (a piece that fits the time there is)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="where every mutant's diff and exit codes are saved (default: the saved run,"
        " tests/mutation_results.json, which a sample or --module run without --update leaves"
        " alone)",
    )
    parser.add_argument(
        "--from-results",
        action="store_true",
        help="run nothing: classify and report the saved results again (after a justification"
        " is added to tests/mutation_equivalents.toml)",
    )
    args = parser.parse_args(argv)

    if args.update and (args.sample or not (args.module or args.function or args.stale)):
        parser.error("--update runs the mutants of --module, --function or --stale, not a sample")
    if args.update and args.skip:
        parser.error("--update puts its mutants into the saved run: it makes every pass, no --skip")
    if (args.stale or args.limit is not None) and not args.update:
        parser.error("--stale and --limit choose what --update runs")
    if args.limit is not None and not args.stale:
        parser.error("--limit takes the first N functions --stale picks")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit runs the first N functions: N is 1 or more")
    results = args.results or RESULTS
    current = fingerprints(ROOT / "src" / "chat_memory")
    if args.from_results:
        report = load_report(results)
    elif args.update:
        present = function_patterns(ROOT / "src" / "chat_memory")
        # The first update builds the saved run from nothing, one piece at a time.
        saved = load_report(results) if results.exists() else Report()
        if args.stale:
            never, older = outdated(saved, current)
            # A pass that fails on every run here must not hold the never-run ones back.
            rest = [p for p in unfinished(saved) if p in current]
            args.function += list(dict.fromkeys([*older, *never, *rest]))[: args.limit]
        if args.module or args.function:
            report = update(saved, run_passes(args), args.module, args.function, present)
            save_report(report, results)
        else:
            print(f"{results}: every function's mutants ran, in every pass, on its code as it is")
            report = saved
    else:
        report = run_passes(args)
        if not report.sample or args.results:  # a sample never replaces the saved run
            save_report(report, results)
    equivalents = load_equivalents()
    classify(report, equivalents)
    args.output.write_text(render(report, None if report.sample else current))
    for entry in unused(report, equivalents, current):
        print(f"{EQUIVALENTS.name}: gives no verdict: {entry['place']} {entry['from']!r}")
    unexplained = [m for m in report.mutants if m.verdict == "unexplained"]
    alone = score(report.mutants, "suite")
    behaviour = score(report.mutants, "suite", behaviour=True)
    print(
        f"{args.output}: pytest features/ alone kills {percent(*alone)} of {alone[1]} mutants"
        f" ({percent(*behaviour)} of those that change behaviour);"
        f" {len(unexplained)} unexplained survivors"
    )
    if args.min_score is not None:
        killed, counted = behaviour
        return 1 if counted and 100 * killed / counted < args.min_score else 0
    return 1 if unexplained else 0


if __name__ == "__main__":
    raise SystemExit(main())
