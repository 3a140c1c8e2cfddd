"""The suite as a kit: installed, it runs our scenarios against another team's memory.

Each test is a fresh project in a temporary directory, run in a subprocess, the
way a team runs it: pytest loads the ``chat_memory_suite`` plugin from the
installed package's entry point, and nothing from this repository's
configuration applies.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

# Each test runs pytest again, on a project of its own: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]
QUIET = ["-p", "no:randomly", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"]


def readme_adapter() -> str:
    """The adapter the kit's page shows a team, verbatim."""
    readme = (ROOT / "docs" / "kit.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(# mymemory\.py\n.*?)```", readme, flags=re.DOTALL)
    assert len(blocks) == 1, "docs/kit.md shows the example adapter (# mymemory.py) once"
    return str(blocks[0])


def _needs_redis_server() -> None:
    """Skip where redis-server is missing; fail instead under CI's CHAT_MEMORY_REQUIRE_REDIS."""
    if shutil.which("redis-server") is None:
        if os.environ.get("CHAT_MEMORY_REQUIRE_REDIS"):
            pytest.fail("CHAT_MEMORY_REQUIRE_REDIS is set but redis-server is not installed")
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")


def _run_kit(pytester: pytest.Pytester, *options: str) -> pytest.RunResult:
    """Run pytest in the team's folder, with a short base for a throwaway server's socket."""
    basetemp = tempfile.mkdtemp(prefix="kit-")  # a Unix socket path is at most 107 bytes
    try:
        return pytester.runpytest_subprocess(*options, "--basetemp", f"{basetemp}/t")
    finally:
        shutil.rmtree(basetemp, ignore_errors=True)


@pytest.fixture
def team(pytester: pytest.Pytester) -> pytest.Pytester:
    """A team's project, with the README's adapter as mymemory.py."""
    (pytester.path / "mymemory.py").write_text(readme_adapter(), encoding="utf-8")
    return pytester


def test_the_readme_adapter_is_about_twenty_lines() -> None:
    code = [line for line in readme_adapter().splitlines() if line.strip()]
    assert len(code) <= 25


def test_our_scenarios_run_against_a_team_memory(team: pytest.Pytester) -> None:
    result = team.runpytest_subprocess(
        "--chat-memory-suite", "--memory-adapter", "mymemory:make_memory", "--living-doc", "ld",
        "-rs", *QUIET,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] >= 30
    result.stdout.fnmatch_lines(["*not supported by this memory: needs*ttl*"])
    result.stdout.fnmatch_lines(
        ["memory under test: mymemory:make_memory (capabilities: history_limit)"]
    )
    results = json.loads((team.path / "ld" / "results.json").read_text(encoding="utf-8"))
    totals = results["totals"]
    assert totals["failed"] == 0
    assert totals["not supported"] > 0
    assert totals["passed"] == outcomes["passed"]
    [expiry] = [
        f for _, features in results["folders"] for f in features
        if f["path"] == "chat-memory/features/memory/session_expiry.feature"
    ]  # fmt: skip
    assert expiry["counts"]["passed"] == 0
    assert expiry["counts"]["not supported"] > 0
    # The report leads with what was tested; "not supported" is one line per capability.
    result.stdout.fnmatch_lines(
        [
            "*chat-memory kit: mymemory:make_memory*",
            f"tested: {outcomes['passed']} scenario runs, {outcomes['passed']} passed, 0 failed",
            "not supported by this memory (not run, not passed):",
            "  ttl: * scenario runs need it: forgets a session after a time*",
        ]
    )
    markdown = (team.path / "ld" / "living-doc.md").read_text(encoding="utf-8")
    assert markdown.splitlines()[4].startswith(f"**Tested: {totals['passed']} scenarios")
    assert "- 🚫 `ttl`: " in markdown
    assert "(not supported)" not in markdown  # no entry per unsupported scenario


def test_the_failover_scenarios_are_not_passed_for_a_store_they_never_drive(
    team: pytest.Pytester,
) -> None:
    """They write through chat-memory's own service (its durability setting): for another
    store they are "not supported", never a pass of chat-memory's that the store is credited
    with, as they were before on --redis-sentinel."""
    result = team.runpytest_subprocess(
        "--chat-memory-suite", "--memory-adapter", "mymemory:make_memory", "-k", "failover",
        "-rs", *QUIET,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    skipped = [line for line in result.stdout.lines if line.startswith("SKIPPED")]
    outcomes = result.parseoutcomes()  # every scenario of failover.feature, cluster_failover's
    assert outcomes.get("passed", 0) == 0, result.stdout.str()
    assert len(skipped) == outcomes["skipped"] >= 8, result.stdout.str()
    for line in skipped:
        assert "not supported by this memory: needs " in line, line
        assert "server_faults" in line, line


REFUSES_EVERYTHING = """
from chat_memory_suite.adapter import STORE_CAPABILITIES, MemoryConfig, adapter


class Refuses:
    def add_messages(self, session_id, messages):
        raise RuntimeError("this store stores nothing")

    get_messages = clear = ttl = pop_message = add_messages


@adapter(capabilities=set(STORE_CAPABILITIES))
def make_memory(config: MemoryConfig) -> Refuses:
    return Refuses()
"""


@pytest.mark.parametrize("backend", [[], ["--redis-server"]], ids=["fakeredis", "redis-server"])
def test_no_scenario_passes_without_the_store_under_test(
    pytester: pytest.Pytester, backend: list[str]
) -> None:
    """A scenario a store passes is one it ran: a store that refuses every call passes none.

    A step that wrote through chat-memory's own service instead of the adapter's, or
    a check the suite's client satisfies on its own (the refusal of a server it cannot
    verify), would pass here.
    """
    if backend:
        _needs_redis_server()
    (pytester.path / "refuses.py").write_text(REFUSES_EVERYTHING, encoding="utf-8")
    result = _run_kit(
        pytester,
        "--chat-memory-suite", "--memory-adapter", "refuses:make_memory", "-p", "no:randomly",
        "-rA", *backend,
    )  # fmt: skip
    passed = {
        line.split("::", 1)[1].split("[", 1)[0]
        for line in result.stdout.lines
        if line.startswith("PASSED ")
    }
    assert passed == set(), sorted(passed)
    assert result.parseoutcomes()["failed"] > 50


def test_a_memory_that_loses_a_message_fails_our_scenarios(team: pytest.Pytester) -> None:
    broken = readme_adapter().replace(
        "for e in self.redis.lrange(self.prefix + session_id, 0, -1)",
        "for e in self.redis.lrange(self.prefix + session_id, 1, -1)",  # drops the oldest
    )
    assert broken != readme_adapter()
    (team.path / "mymemory.py").write_text(broken, encoding="utf-8")
    result = team.runpytest_subprocess(
        "--chat-memory-suite", "--memory-adapter", "mymemory:make_memory", *QUIET
    )
    assert result.ret == 1
    assert result.parseoutcomes()["failed"] >= 10


def test_a_team_writes_its_own_scenarios_in_our_sentences(team: pytest.Pytester) -> None:
    team.makeini("[pytest]\nchat_memory_suite = true\nmemory_adapter = mymemory:make_memory\n")
    team.makeconftest(
        '''
from pytest_bdd import given


@given("the user signed in")
def signed_in():
    """A step of the team's own, beside the suite's.

    Given the user signed in
    """
'''
    )
    (team.path / "features").mkdir()
    (team.path / "features" / "greeting.feature").write_text(
        """Feature: Greeting
  Scenario: The greeting is remembered
    Given the user signed in
    And a new session "bo"
    When the user says "Hello"
    Then the context is:
      | role | content |
      | user | Hello   |
""",
        encoding="utf-8",
    )
    result = team.runpytest_subprocess("features", *QUIET)
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes() == {"passed": 1}
    catalog = team.runpytest_subprocess("--bdd-steps", "features", *QUIET)
    assert catalog.ret == 0
    for line in ("*Given the user signed in*", '*When the user says "{text}"*'):
        catalog.stdout.fnmatch_lines([line])  # the team's step and ours, in one catalog
    catalog.stdout.fnmatch_lines(["Every step is used by at least one scenario."])


def test_the_plugin_does_nothing_until_asked(pytester: pytest.Pytester) -> None:
    (pytester.path / "x.feature").write_text(
        "Feature: X\n  Scenario: S\n    Then the context is empty\n", encoding="utf-8"
    )
    result = pytester.runpytest_subprocess(*QUIET)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    helped = pytester.runpytest_subprocess("--help")
    helped.stdout.fnmatch_lines(["*--chat-memory-suite*", "*--memory-adapter=MODULE:FACTORY*"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mymemory", "*write it as module:factory*"),
        ("nosuchmodule:make", "*cannot import it*"),
        ("mymemory:missing", "*mymemory has no factory missing*"),
        ("mymemory:bad_capabilities", "*unknown capabilities ?'telepathy'?*"),
    ],
)
def test_a_wrong_adapter_is_a_usage_error(team: pytest.Pytester, spec: str, message: str) -> None:
    with (team.path / "mymemory.py").open("a", encoding="utf-8") as module:
        module.write("\n\nclass bad_capabilities:\n    capabilities = {'telepathy'}\n")
    result = team.runpytest_subprocess("--chat-memory-suite", "--memory-adapter", spec, *QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_every_folder_of_features_ships_in_the_wheel() -> None:
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["packages"]
    folders = {p.name for p in (ROOT / "features").iterdir() if p.is_dir()}
    assert folders
    missing = sorted(f for f in folders if f"chat_memory_suite.features.{f}" not in packages)
    assert missing == [], "list them in [tool.setuptools] packages of pyproject.toml"


def test_plain_pytest_finds_the_adapter_in_the_folder_it_runs_in(team: pytest.Pytester) -> None:
    # Issue 26: `pytest ... --memory-adapter mymemory:make_memory` said "No module named
    # 'mymemory'": the `pytest` script, unlike `python -m pytest`, does not put the folder it
    # runs in on sys.path (and pytester's own runs put it on PYTHONPATH, so it is run here).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("pytest")), "--chat-memory-suite",
         "--memory-adapter", "mymemory:make_memory", "-k", "remembering", *QUIET],
        cwd=team.path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout.splitlines()[-1], done.stdout


def test_every_kit_option_is_in_help_before_the_suite_is_switched_on(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest_subprocess("--help")
    help_text = result.stdout.str()
    for option in (
        "--chat-memory-suite", "--memory-adapter", "--memory-api", "--redis-url",
        "--redis-server", "--redis-cluster", "--bdd-steps", "--bdd-steps-output",
        "--bdd-check", "--living-doc",
    ):  # fmt: skip
        assert option in help_text, f"{option} is not in pytest --help"


def test_memory_api_async_with_a_sync_memory_is_a_clear_error_not_ignored(
    team: pytest.Pytester,
) -> None:
    # Issue 26: --memory-api was silently ignored when an adapter was given.
    result = team.runpytest_subprocess(
        "--chat-memory-suite", "--memory-adapter", "mymemory:make_memory",
        "--memory-api", "async", *QUIET,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(
        ["*--memory-api async: the memory mymemory:make_memory builds is sync*"]
    )
    assert "skipped" not in result.stdout.str(), "it stops before any scenario"


ASYNC_ADAPTER = """
import json

from chat_memory import Message
from chat_memory_suite.adapter import MemoryConfig, adapter


class AsyncListMemory:
    def __init__(self, config: MemoryConfig) -> None:
        self.redis, self.prefix = config.async_redis(), config.key_prefix

    async def add_messages(self, session_id, messages):
        entries = [json.dumps({"role": m.role, "content": m.content}) for m in messages]
        await self.redis.rpush(self.prefix + session_id, *entries)

    async def get_messages(self, session_id):
        entries = await self.redis.lrange(self.prefix + session_id, 0, -1)
        return [Message(**json.loads(e)) for e in entries]

    async def clear(self, session_id):
        await self.redis.delete(self.prefix + session_id)

    async def aclose(self):
        await self.redis.aclose()


@adapter(capabilities=set())
def make_memory(config: MemoryConfig) -> AsyncListMemory:
    return AsyncListMemory(config)
"""


def test_memory_api_async_drives_an_async_memory(pytester: pytest.Pytester) -> None:
    """Issue 26 part 4: the async side of a store, driven and named as such."""
    (pytester.path / "asyncmemory.py").write_text(ASYNC_ADAPTER, encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--chat-memory-suite", "--memory-adapter", "asyncmemory:make_memory",
        "--memory-api", "async", "-v", "-k", "remembering", *QUIET,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*remembering.feature::*[[]async[]] PASSED*"])
    assert "[sync]" not in result.stdout.str()
    synced = pytester.runpytest_subprocess(
        "--chat-memory-suite", "--memory-adapter", "asyncmemory:make_memory",
        "--memory-api", "sync", *QUIET,
    )  # fmt: skip
    assert synced.ret == pytest.ExitCode.USAGE_ERROR
    synced.stdout.fnmatch_lines(["*--memory-api sync: the memory * builds is async*"])


def test_memory_api_async_runs_the_concurrency_scenarios_on_the_adapters_memory(
    pytester: pytest.Pytester,
) -> None:
    """The writers are the adapter's async memory, not chat-memory's own async service.

    They were chat-memory's: its writes landed under its own keys, and this store, reading
    its own, lost every message.
    """
    _needs_redis_server()
    limited = (
        ASYNC_ADAPTER.replace(
            "self.redis, self.prefix = config.async_redis(), config.key_prefix",
            "self.redis, self.prefix = config.async_redis(), config.key_prefix\n"
            "        self.limit = config.max_history or 20",
        )
        .replace(
            "        await self.redis.rpush(self.prefix + session_id, *entries)",
            "        async with self.redis.pipeline(transaction=True) as write:\n"
            "            write.rpush(self.prefix + session_id, *entries)\n"
            "            write.ltrim(self.prefix + session_id, -self.limit, -1)\n"
            "            await write.execute()",
        )
        .replace("@adapter(capabilities=set())", '@adapter(capabilities={"history_limit"})')
    )
    assert "ltrim" in limited
    assert "history_limit" in limited
    (pytester.path / "asyncmemory.py").write_text(limited, encoding="utf-8")
    result = _run_kit(
        pytester,
        "--chat-memory-suite", "--memory-adapter", "asyncmemory:make_memory",
        "--memory-api", "async", "--redis-server",
        "-k", "eight_writers_to_eight_sessions", *QUIET,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=1)


ACME_ADAPTER = '''
import json

from chat_memory import Message
from chat_memory_suite.adapter import MemoryConfig, adapter

WORDS = {"user": "customer", "assistant": "agent"}  # no word for system or tool
ROLES = {word: role for role, word in WORDS.items()}


class AcmeStore:
    """A list per session, expiring in whole seconds (EXPIRE), with its own speakers."""

    def __init__(self, config: MemoryConfig) -> None:
        self.redis, self.prefix, self.limit = config.redis, config.key_prefix, config.max_history
        self.seconds = None if config.ttl is None else int(config.ttl.total_seconds())

    def add_messages(self, session_id, messages):
        key = self.prefix + session_id
        if self.redis.type(key) not in (b"list", b"none"):  # MULTI would still run EXPIRE
            raise TypeError(f"{key} holds no list")
        with self.redis.pipeline() as write:
            write.rpush(key, *[json.dumps([WORDS[m.role], m.content]) for m in messages])
            write.ltrim(key, -(self.limit or 50), -1)
            if self.seconds is None:
                write.persist(key)
            else:
                write.expire(key, self.seconds)
            write.execute()

    def get_messages(self, session_id):
        entries = self.redis.lrange(self.prefix + session_id, 0, -1)
        return [Message(ROLES[who], text) for who, text in map(json.loads, entries)]

    def clear(self, session_id):
        self.redis.delete(self.prefix + session_id)

    def ttl(self, session_id):
        left = self.redis.ttl(self.prefix + session_id)
        return None if left < 0 else float(left)


@adapter(capabilities={"history_limit", "ttl", "readable_storage"})
def make_memory(config: MemoryConfig) -> AcmeStore:
    return AcmeStore(config)
'''


@pytest.mark.parametrize("backend", [[], ["--redis-server"]], ids=["fakeredis", "redis-server"])
def test_a_store_with_whole_second_expiry_and_its_own_speakers_runs_unchanged(
    pytester: pytest.Pytester, backend: list[str]
) -> None:
    """Issue 26: no pytest.ini, no skip in the adapter; what it cannot represent is not run.

    On a real server the scenarios of a sub-second expiry (EXPIRE would refuse it)
    are "not supported", not failures.
    """
    if backend:
        _needs_redis_server()
    assert "skip" not in ACME_ADAPTER
    (pytester.path / "acme_adapter.py").write_text(ACME_ADAPTER, encoding="utf-8")
    result = _run_kit(
        pytester,
        "--chat-memory-suite", "--memory-adapter", "acme_adapter:make_memory",
        "-p", "no:randomly", "--living-doc", "ld", *backend,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] >= 30
    result.stdout.fnmatch_lines(["  system_role: * scenario runs need it: *"])
    if not backend:  # the report says what the backend could not run, and how to run it
        result.stdout.fnmatch_lines(
            [
                "not run in this run (another backend or setup runs them):",
                "  * scenario runs: *run with --redis-server*",
            ]
        )
    results = json.loads((pytester.path / "ld" / "results.json").read_text(encoding="utf-8"))
    reasons = {
        scenario["reason"]
        for _, features in results["folders"]
        for feature in features
        for rule in feature["rules"]
        for scenario in rule["scenarios"]
        if scenario["status"] == "not supported"
    }
    assert any("needs" in r and "millisecond_expiry" in r for r in reasons), reasons


ACME_BREAKS = {  # what breaks: the capability, the edits, and the feature that must fail for it
    "ttl() always None": (
        "ttl",
        [("return None if left < 0 else float(left)", "return None")],
        "memory/session_expiry.feature",
    ),
    "ttl() in milliseconds": (
        "ttl",
        [
            (
                "left = self.redis.ttl(self.prefix + session_id)",
                "left = self.redis.pttl(self.prefix + session_id)",
            )
        ],
        "memory/session_expiry.feature",
    ),
    "expiry not restarted by a write": (
        "ttl",
        [("write.expire(key, self.seconds)", "write.expire(key, self.seconds, nx=True)")],
        "memory/session_expiry.feature",
    ),
    "history limit one too long": (
        "history_limit",
        [
            (
                "write.ltrim(key, -(self.limit or 50), -1)",
                "write.ltrim(key, -(self.limit or 50) - 1, -1)",
            )
        ],
        "memory/history_limit.feature",
    ),
    "text kept as hex": (  # declared readable, yet no value holds a message's text
        "readable_storage",
        [
            (
                "json.dumps([WORDS[m.role], m.content]) for m in messages",
                "json.dumps([WORDS[m.role], m.content]).encode().hex() for m in messages",
            ),
            (
                "map(json.loads, entries)",
                "(json.loads(bytes.fromhex(e.decode())) for e in entries)",
            ),
        ],
        "storage/corrupt_entries.feature",
    ),
    "expiry set on another service's key": (  # MULTI runs EXPIRE after RPUSH's WRONGTYPE
        "readable_storage",
        [
            (
                '        if self.redis.type(key) not in (b"list", b"none"):'
                "  # MULTI would still run EXPIRE\n"
                '            raise TypeError(f"{key} holds no list")\n',
                "",
            )
        ],
        "storage/corrupt_entries.feature",
    ),
    "damaged entries skipped": (  # what the damage scenarios are for
        "readable_storage",
        [
            (
                "map(json.loads, entries)",
                "[json.loads(e) for e in entries if _readable(e)]",
            ),
            (
                "class AcmeStore:",
                "def _readable(entry):\n"
                "    try:\n"
                "        json.loads(entry)\n"
                "    except ValueError:\n"
                "        return False\n"
                "    return True\n\n\n"
                "class AcmeStore:",
            ),
        ],
        "storage/corrupt_entries.feature",
    ),
}


def _run_broken_acme(
    pytester: pytest.Pytester, edits: list[tuple[str, str]], *options: str
) -> pytest.RunResult:
    """Run the kit against the Acme store with these edits (each must apply), expecting failures."""
    broken = ACME_ADAPTER
    for old, new in edits:
        assert old in broken, old
        broken = broken.replace(old, new)
    (pytester.path / "acme_adapter.py").write_text(broken, encoding="utf-8")
    result = _run_kit(
        pytester,
        "--chat-memory-suite", "--memory-adapter", "acme_adapter:make_memory", "-p", "no:randomly",
        *options,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    return result


@pytest.mark.parametrize("name", sorted(ACME_BREAKS))
def test_a_capability_the_store_declares_but_breaks_fails_the_kit(
    pytester: pytest.Pytester, name: str
) -> None:
    """Declaring a capability proves something: a store that breaks it fails (issue 26 part 2)."""
    _, edits, failing = ACME_BREAKS[name]
    result = _run_broken_acme(pytester, edits)
    result.stdout.fnmatch_lines([f"FAILED {failing}::*"])


SWALLOWED = {  # a store that hides the server's failure: the edit, and the scenario that fails
    "a write": (
        "            write.execute()",
        "            try:\n"
        "                write.execute()\n"
        "            except Exception:\n"
        "                pass",
        "test_a_message_sent_to_a_server_out_of_memory_is_refused*",
    ),
    "a read": (
        "        entries = self.redis.lrange(self.prefix + session_id, 0, -1)",
        "        try:\n"
        "            entries = self.redis.lrange(self.prefix + session_id, 0, -1)\n"
        "        except Exception:\n"
        "            entries = []",
        "test_reading_while_the_server_is_down_fails_in_time*",
    ),
}


@pytest.mark.parametrize("name", sorted(SWALLOWED))
def test_a_store_that_hides_a_server_failure_fails_the_kit(
    pytester: pytest.Pytester, name: str
) -> None:
    """The server-fault scenarios run through the protocol: a failure hidden from the app fails."""
    _needs_redis_server()
    old, new, failing = SWALLOWED[name]
    result = _run_broken_acme(pytester, [(old, new)], "--redis-server", "-k", "server_faults")
    result.stdout.fnmatch_lines([f"FAILED production/server_faults.feature::{failing}"])


def test_a_store_that_keeps_every_session_in_one_hash_slot_fails_on_a_cluster(
    pytester: pytest.Pytester,
) -> None:
    """The cluster scenarios find another store's keys: one hash tag for all sessions fails."""
    _needs_redis_server()
    one_slot = (
        "self.redis, self.prefix, self.limit = config.redis, config.key_prefix, config.max_history",
        "self.redis, self.limit = config.redis, config.max_history\n"
        "        self.prefix = config.key_prefix + '{sessions}:'",
    )
    result = _run_broken_acme(
        pytester, [one_slot], "--redis-cluster", "-k", "many_sessions_are_stored_across_every_node"
    )
    result.stdout.fnmatch_lines(["FAILED production/cluster.feature::test_many_sessions*"])


@pytest.mark.parametrize(
    ("stated", "kept", "passes"),
    [(None, 500_000, False), (4096, 4096, True), (4096, 3000, False)],
    ids=["unstated-1-MiB-cut-short", "stated-and-kept", "stated-but-cut-short"],
)
def test_a_store_is_sent_a_message_as_large_as_it_states(
    pytester: pytest.Pytester, stated: int | None, kept: int, passes: bool
) -> None:
    """Issue 26 part 1: content up to the store's stated maximum comes back whole.

    A store that cuts content short fails; one that states its maximum is sent exactly
    that much, and 1 MiB when it states none.
    """
    declared = '@adapter(capabilities={"history_limit", "ttl", "readable_storage"})'
    assert declared in ACME_ADAPTER
    store = ACME_ADAPTER.replace(
        "json.dumps([WORDS[m.role], m.content])", f"json.dumps([WORDS[m.role], m.content[:{kept}]])"
    )
    if stated is not None:
        store = store.replace(
            declared,
            declared.replace(")", f", max_message_bytes={stated})"),
        )
    (pytester.path / "acme_adapter.py").write_text(store, encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--chat-memory-suite", "--memory-adapter", "acme_adapter:make_memory", "-p", "no:randomly",
        "-k", "message_content",
    )  # fmt: skip
    if passes:
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        # The scenarios of longer messages are what it cannot represent, said once.
        result.stdout.fnmatch_lines(["  messages larger than its max_message_bytes (4096): *"])
    else:
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
        result.stdout.fnmatch_lines(
            ["FAILED *message_content.feature::*as_large_as_the_memory_takes*"]
        )


OUR_STORE_BROKEN = """
import dataclasses
from chat_memory.exceptions import MessageIdConflictError
import math
from datetime import timedelta

from chat_memory_suite.adapter import adapter
from chat_memory_suite.adapters import chat_memory


class Broken(chat_memory.ServiceMemory):
    BREAK


@adapter(capabilities=chat_memory.make_memory.capabilities)
def make_memory(config):
    CONFIG
    return Broken(chat_memory.service_for(config))
"""
KEEP = "pass"
OUR_BREAKS = {  # a capability chat-memory's own adapter declares, broken: (capability, the
    # class's code, make_memory's first line, the feature that fails, pytest's own options)
    "names dropped": (
        "names",
        "def get_messages(self, session_id):\n"
        "        stored = super().get_messages(session_id)\n"
        "        return [dataclasses.replace(m, name=None) for m in stored]",
        KEEP,
        "memory/named_writers.feature",
        [],
    ),
    "tool calls dropped": (
        "tool_calls",
        "def get_messages(self, session_id):\n"
        "        stored = super().get_messages(session_id)\n"
        "        return [dataclasses.replace(m, tool_calls=()) for m in stored]",
        KEEP,
        "memory/tool_exchanges.feature",
        [],
    ),
    "message ids ignored": (
        "message_ids",
        "def add_messages(self, session_id, messages):\n"
        "        fresh = [dataclasses.replace(m, id=None) for m in messages]\n"
        "        return super().add_messages(session_id, fresh)",
        KEEP,
        "memory/remembering.feature",
        [],
    ),
    "other content under a stored id dropped silently": (
        "message_ids",
        "def add_messages(self, session_id, messages):\n"
        "        try:\n"
        "            return super().add_messages(session_id, messages)\n"
        "        except MessageIdConflictError:\n"
        "            return list(messages)",
        KEEP,
        "memory/remembering.feature",
        ["-k", "another_message_under_a_stored_id"],
    ),
    "timestamps dropped": (
        "timestamps",
        "def get_messages(self, session_id):\n"
        "        stored = super().get_messages(session_id)\n"
        "        return [dataclasses.replace(m, created_at=None) for m in stored]",
        KEEP,
        "*.feature",
        [],
    ),
    "pop takes nothing": (
        "pop_message",
        "def pop_message(self, session_id):\n        return None",
        KEEP,
        "memory/remembering.feature",
        [],
    ),
    "system messages read back as the user's": (
        "system_role",
        "def get_messages(self, session_id):\n"
        "        stored = super().get_messages(session_id)\n"
        "        return [dataclasses.replace(m, role='user') if m.role == 'system' else m"
        " for m in stored]",
        KEEP,
        "memory/named_writers.feature",
        [],
    ),
    "expiry rounded up to whole seconds": (
        "millisecond_expiry",
        KEEP,
        "if config.ttl is not None:\n"
        "        seconds = math.ceil(config.ttl.total_seconds())\n"
        "        config = dataclasses.replace(config, ttl=timedelta(seconds=seconds))",
        "storage/server_expiry.feature",
        ["--redis-server", "-k", "server_expiry"],
    ),
    "a turn written message by message": (
        "atomic_turns",
        "def add_messages(self, session_id, messages):\n"
        "        stored = []\n"
        "        for one in messages:\n"
        "            stored += super().add_messages(session_id, [one])\n"
        "        return stored",
        KEEP,
        "memory/whole_turns.feature",
        ["-k", "whole_turns"],
    ),
}


def test_every_capability_a_store_can_declare_has_a_scenario_that_fails_without_it() -> None:
    """Declaring a capability proves something (issue 26): each has a break the kit catches."""
    from chat_memory_suite.adapter import STORE_CAPABILITIES

    proven = {entry[0] for entry in ACME_BREAKS.values()} | {e[0] for e in OUR_BREAKS.values()}
    assert sorted(proven) == sorted(STORE_CAPABILITIES)


@pytest.mark.parametrize("name", sorted(OUR_BREAKS))
def test_each_capability_our_adapter_declares_fails_the_kit_when_broken(
    pytester: pytest.Pytester, name: str
) -> None:
    """Every declared capability is proven by some scenario that fails without it."""
    capability, code, config, failing, options = OUR_BREAKS[name]
    if "--redis-server" in options:
        _needs_redis_server()
    adapter = OUR_STORE_BROKEN.replace("BREAK", code).replace("CONFIG", config)
    (pytester.path / "broken.py").write_text(adapter, "utf-8")
    result = _run_kit(
        pytester,
        "--chat-memory-suite", "--memory-adapter", "broken:make_memory", "-p", "no:randomly",
        *options,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines([f"FAILED *{failing}::*"])
    if capability == "atomic_turns":  # both ways of seeing half a turn catch it
        result.stdout.fnmatch_lines(["FAILED *::test_another_worker_reading_the_session*"])
        result.stdout.fnmatch_lines(["FAILED *::test_a_write_cut_off_at_any*"])
