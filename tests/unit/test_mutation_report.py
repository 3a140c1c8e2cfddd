"""The mutation report's own logic: how survivors are classified and scored (issue 14)."""

import argparse
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path

import pytest

import tests.mutation
from tests.mutation import (
    KILLED,
    REPLICATED,
    ROOT,
    Mutant,
    MutmutFailed,
    Report,
    check_diffs,
    chosen_by,
    classify,
    codec_case,
    command_case,
    describe,
    diffs_of,
    fingerprints,
    function_patterns,
    is_wording,
    load_report,
    outdated,
    place_of,
    render,
    replicated_only,
    replicated_pass,
    save_report,
    score,
    unused,
    update,
)


def mutant(
    removed: str,
    added: str,
    *,
    features: int | None = 0,
    adapter: int | None = None,
    unit: int | None = 0,
    sentinel: int | None = None,
) -> Mutant:
    return Mutant(
        "chat_memory._keys.x_f__mutmut_1",
        "_keys.py",
        "f",
        features,
        adapter=adapter,
        unit=unit,
        sentinel=sentinel,
        diff=f"--- a\n+++ b\n-{removed}\n+{added}",
    )


@pytest.mark.parametrize(
    ("removed", "added"),
    [
        ('raise E("session id must be a string")', 'raise E("XXsession id must be a stringXX")'),
        ('raise E("session id must be a string")', 'raise E("SESSION ID MUST BE A STRING")'),
        ('raise E("session id must be a string")', "raise E(None)"),
        (
            'raise E(f"not {type(x).__name__}, a string")',
            'raise E(f"not {type(None).__name__}, a string")',
        ),
    ],
)
def test_rewording_an_error_message_is_wording(removed: str, added: str) -> None:
    assert is_wording(mutant(removed, added))


@pytest.mark.parametrize(
    ("removed", "added"),
    [
        ('known = {"role", "content"}', 'known = {"ROLE", "content"}'),  # a key, not prose
        ('key = f"{prefix}:history"', 'key = f"{prefix}:XXhistoryXX"'),
        (
            'if len(x) > limit: raise E("too long for it")',
            'if len(x) >= limit: raise E("too long for it")',
        ),
        ('raise E("session id must be a string")', "pass"),
    ],
)
def test_changing_code_or_a_single_token_is_not_wording(removed: str, added: str) -> None:
    assert not is_wording(mutant(removed, added))


def test_only_the_case_of_a_codec_name_is_equivalent() -> None:
    assert codec_case(mutant('b = s.encode("utf-8")', 'b = s.encode("UTF-8")'))
    assert not codec_case(mutant('b = s.encode("utf-8")', 'b = s.encode("XXutf-8XX")'))
    assert not codec_case(mutant('r = "Role"', 'r = "ROLE"'))


def test_only_the_case_of_a_sent_redis_command_is_equivalent() -> None:
    sent = 'yield Command(("DEL", *keys))'
    assert command_case(mutant(sent, 'yield Command(("del", *keys))'))
    assert not command_case(mutant(sent, 'yield Command(("XXDELXX", *keys))'))
    assert not command_case(mutant(sent, 'yield Command(("UNLINK", *keys))'))
    assert not command_case(mutant('if reply == "WRONGTYPE":', 'if reply == "wrongtype":'))


def test_mutant_names_read_as_module_and_function() -> None:
    assert place_of("chat_memory._keys.xǁKeyLayoutǁall__mutmut_3") == ("_keys.py", "KeyLayout.all")
    assert place_of("chat_memory._codec.x_encode__mutmut_12") == ("_codec.py", "encode")


def test_verdicts_and_scores() -> None:
    report = Report(
        mutants=[
            mutant("a = 1", "a = 2", features=1),  # killed by the features
            # killed by the suite through a framework adapter (a plain run never imports it)
            mutant("a = 1", "a = 2", features=None, adapter=1),
            # killed by the scenarios of a primary's failover, on a Sentinel group
            mutant("a = 1", "a = 2", features=0, sentinel=1),
            mutant("a = 1", "a = 2", features=0, unit=1),  # killed by the unit tests only
            mutant('raise E("a b c")', "raise E(None)"),  # wording
            mutant('b = s.encode("utf-8")', 'b = s.encode("UTF-8")'),  # equivalent
            mutant("a = 1", "a = 3"),  # nothing notices
        ]
    )
    classify(report, equivalents=[])
    assert [m.verdict.split(":")[0] for m in report.mutants] == [
        "killed by the acceptance suite",
        "killed by the acceptance suite",
        "killed by the acceptance suite",
        "killed by tests/unit",
        "message wording",
        "equivalent",
        "unexplained",
    ]
    assert score(report.mutants, "fakeredis") == (1, 6)
    assert score(report.mutants, "suite") == (3, 6)  # the equivalent one is not counted
    assert score(report.mutants, "suite", behaviour=True) == (3, 5)
    assert score(report.mutants, "unit") == (4, 6)
    text = render(report)
    assert "Unexplained survivors" in text
    assert "| **library** | 6 | 16.7% | 50.0% | 60.0% | 66.7% |" in text


def test_a_written_justification_makes_a_survivor_equivalent() -> None:
    report = Report(mutants=[mutant("a = 1", "a = 3")])
    equivalents = [{"place": "_keys.py:f", "from": "a = 1", "to": "a = 3", "reason": "a is unused"}]
    classify(report, equivalents)
    assert report.mutants[0].verdict == "equivalent: a is unused"
    assert 1 in KILLED


def test_a_written_justification_comes_before_the_wording_rule() -> None:
    # the words of an assert that cannot fail look like an error message to the rule
    removed = 'assert x is not None, "only a turn"'
    added = 'assert x is not None, "XXonly a turnXX"'
    report = Report(mutants=[mutant(removed, added)])
    classify(report, equivalents=[])
    assert report.mutants[0].verdict == "message wording"
    entry = {"place": "_keys.py:f", "from": removed, "to": added}
    classify(report, [entry | {"reason": "the assert cannot fail"}])
    assert report.mutants[0].verdict == "equivalent: the assert cannot fail"
    assert score(report.mutants, "suite") == (0, 0)


def test_a_justification_of_kind_wording_counts_as_message_wording() -> None:
    report = Report(mutants=[mutant("t = name(v)", "t = other(v)")])
    change = {"place": "_keys.py:f", "from": "t = name(v)", "to": "t = other(v)"}
    classify(report, [change | {"kind": "wording", "reason": "'None' reads 'NoneType'"}])
    assert report.mutants[0].verdict == "message wording: 'None' reads 'NoneType'"
    assert score(report.mutants, "suite", behaviour=True) == (0, 0)


def test_the_sample_is_drawn_from_what_mutmut_mutates() -> None:
    patterns = function_patterns(Path(__file__).resolve().parents[2] / "src" / "chat_memory")
    assert "chat_memory._codec.x_decode__mutmut_*" in patterns
    assert "chat_memory._keys.xǁKeyLayoutǁall__mutmut_*" in patterns
    assert not [p for p in patterns if p.startswith("chat_memory.testing.")]  # do_not_mutate


def test_saved_results_report_the_same_again(tmp_path: Path) -> None:
    report = Report(
        mutants=[mutant("a = 1", "a = 2", features=1), mutant("a = 1", "a = 3", adapter=33)],
        sample=True,
        source="abc1234",
    )
    classify(report, equivalents=[])
    save_report(report, tmp_path / "results.json")
    again = load_report(tmp_path / "results.json")
    classify(again, equivalents=[])
    assert again == report
    assert render(again) == render(report)


def named(name: str, features: int) -> Mutant:
    """A mutant of mutmut's ``name``, with its fate on fakeredis."""
    module, place = place_of(name)
    return Mutant(name, module, place, features)


def test_an_update_replaces_only_the_mutants_run_again_and_says_so() -> None:
    saved = Report(
        mutants=[
            named("chat_memory._ops.x_compact__mutmut_1", 0),
            named("chat_memory._ops.x_clear__mutmut_1", 0),
            named("chat_memory._keys.xǁKeyLayoutǁfor_user__mutmut_2", 0),
        ],
        source="aaa",
    )
    rerun = Report(
        mutants=[
            named("chat_memory._ops.x_compact__mutmut_1", 1),
            named("chat_memory._keys.xǁKeyLayoutǁfor_user__mutmut_2", 1),
        ],
        sample=True,
        source="bbb",
    )
    present = ["chat_memory._ops.x_compact__mutmut_*", "chat_memory._ops.x_clear__mutmut_*"]
    present.append("chat_memory._keys.xǁKeyLayoutǁfor_user__mutmut_*")
    merged = update(saved, rerun, [], ["_ops.py:compact", "_keys.py:KeyLayout.for_user"], present)
    fates = {m.name.rsplit(".", 1)[1]: m.features for m in merged.mutants}
    assert fates == {
        "x_clear__mutmut_1": 0,
        "x_compact__mutmut_1": 1,
        "xǁKeyLayoutǁfor_user__mutmut_2": 1,
    }
    assert (merged.source, merged.sample) == ("aaa", False)
    assert "`_ops.py:compact`" in merged.updates[0]
    assert "`bbb`" in merged.updates[0]
    assert "Then the mutants of `_ops.py:compact`" in render(merged)
    with pytest.raises(SystemExit):
        update(rerun, rerun, ["_ops.py"], [], present)
    assert chosen_by("chat_memory._ops.x_compact__mutmut_*", ["_ops.py"], [])
    assert not chosen_by("chat_memory._ops.x_compact__mutmut_*", [], ["_ops.py:clear"])


def test_an_update_drops_the_saved_mutants_of_a_function_gone_from_the_source() -> None:
    # A function removed since the full run keeps its saved survivors forever otherwise:
    # nothing can run them again, and they count as unexplained.
    saved = Report(
        mutants=[
            named("chat_memory._ops.x_compact__mutmut_1", 0),
            named("chat_memory._ops.x__text__mutmut_1", 0),
            named("chat_memory._ops.x_clear__mutmut_1", 1),
        ],
        source="aaa",
    )
    rerun = Report(mutants=[named("chat_memory._ops.x_compact__mutmut_1", 1)], source="bbb")
    present = ["chat_memory._ops.x_compact__mutmut_*", "chat_memory._ops.x_clear__mutmut_*"]
    merged = update(saved, rerun, [], ["_ops.py:compact"], present)
    assert [m.name.rsplit(".", 1)[1] for m in merged.mutants] == [
        "x_clear__mutmut_1",
        "x_compact__mutmut_1",
    ]
    assert "those of `_ops.py:_text`, no longer in the source, were dropped" in merged.updates[0]


def test_a_justification_that_gives_no_verdict_in_a_full_run_is_named() -> None:
    # The code it quotes changed, a test now kills the mutant, a rule explains it
    # already, or an entry above says the same: it would linger unread.
    def entry(old: str, new: str) -> dict[str, str]:
        return {"place": "_keys.py:f", "from": old, "to": new, "reason": "r"}

    used = entry("a = 1", "a = 2")
    changed = entry("a = 1 if b else c", "a = 2")
    duplicate = entry("a = 1", "a = 2")
    killed = entry("a = 1", "a = 4")
    by_rule = entry('b = s.encode("utf-8")', 'b = s.encode("UTF-8")')
    report = Report(
        mutants=[
            mutant("a = 1", "a = 2"),
            mutant("a = 1", "a = 4", features=0, adapter=1),  # killed through an adapter
            mutant('b = s.encode("utf-8")', 'b = s.encode("UTF-8")'),
        ],
        source="abc1234",
    )
    equivalents = [used, changed, duplicate, killed, by_rule]
    current = {"_keys.py:f": "d"}
    assert unused(report, equivalents, current) == [changed, duplicate, killed, by_rule]
    report.sample = True  # a sample meets only some mutants: nothing to conclude
    assert unused(report, equivalents, current) == []


def test_only_the_justifications_of_functions_not_run_yet_wait_unjudged() -> None:
    # A saved run built a piece at a time: the entries of a function whose mutants have
    # not run wait for them; those of a function since removed are named (nothing reads them).
    waiting = {"place": "_keys.py:f", "from": "a = 1", "to": "a = 2", "reason": "r"}
    gone = {"place": "_keys.py:removed", "from": "a = 1", "to": "a = 2", "reason": "r"}
    report = Report(mutants=[], ran={"_keys.py:g": "d"})
    current = {"_keys.py:f": "d", "_keys.py:g": "d"}
    assert unused(report, [waiting, gone], current) == [gone]


def test_the_behaviour_score_leaves_out_wording_mutants_killed_too() -> None:
    # Only the survivors' rewordings were left out: the killed ones stayed counted,
    # and the score over mutants that change behaviour read higher than it is.
    reworded = ('raise E("session id must be a string")', 'raise E("XXsession id XX")')
    report = Report(mutants=[mutant(*reworded, features=1), mutant("a = 1", "a = 2")])
    classify(report, equivalents=[])
    assert score(report.mutants, "suite") == (1, 2)
    assert score(report.mutants, "suite", behaviour=True) == (0, 1)


def _diffs_of_module(tmp_path: Path, module: str, text: str) -> dict[str, str]:
    """diffs_of() over one module written in the shape of mutmut 3's mutants/src/."""
    package = tmp_path / "mutants" / "src" / "chat_memory"
    package.mkdir(parents=True)
    (package / module).write_text(text, encoding="utf-8")
    return diffs_of(tmp_path)


def test_every_mutants_diff_is_read_from_the_files_mutmut_writes(tmp_path: Path) -> None:
    # The shape of mutmut 3's mutants/src/: each function's unmutated copy beside its
    # mutants, methods inside their class.
    diffs = _diffs_of_module(
        tmp_path,
        "_keys.py",
        "def x_f__mutmut_orig(a):\n    return a + 1\n\n"
        "def x_f__mutmut_1(a):\n    return a - 1\n\n"
        "class KeyLayout:\n"
        "    def xǁKeyLayoutǁall__mutmut_orig(self, s):\n        return (s, 'h')\n\n"
        "    def xǁKeyLayoutǁall__mutmut_2(self, s):\n        return (s, 'XXhXX')\n",
    )
    assert sorted(diffs) == [
        "chat_memory._keys.x_f__mutmut_1",
        "chat_memory._keys.xǁKeyLayoutǁall__mutmut_2",
    ]
    function, method = (Mutant(name, "_keys.py", "f", 0, diff=diffs[name]) for name in diffs)
    assert function.changed == (["return a + 1"], ["return a - 1"])
    assert method.changed == (["return (s, 'h')"], ["return (s, 'XXhXX')"])
    with pytest.raises(SystemExit, match="no diff read for 1 mutants"):
        check_diffs(tmp_path, [function, Mutant("x", "_keys.py", "g", 0)])


def test_a_mutant_of_a_methods_signature_is_shown_under_the_methods_own_name(
    tmp_path: Path,
) -> None:
    # A mutated default argument changes the def line: it was shown as
    # "def xǁAppendCallǁdeclaring(...)" where mutmut show says "def declaring(...)", and the
    # check that the two agree stopped the run.
    diffs = _diffs_of_module(
        tmp_path,
        "_core.py",
        "def x_f__mutmut_orig(a, b=False):\n    return a\n\n"
        "def x_f__mutmut_1(a, b=True):\n    return a\n\n"
        "class AppendCall:\n"
        "    def xǁAppendCallǁdeclaring__mutmut_orig(self, k=False):\n        return k\n\n"
        "    def xǁAppendCallǁdeclaring__mutmut_1(self, k=True):\n        return k\n",
    )
    function, method = (Mutant(name, "_core.py", "f", 0, diff=diffs[name]) for name in diffs)
    assert function.changed == (["def f(a, b=False):"], ["def f(a, b=True):"])
    assert method.changed == (["def declaring(self, k=False):"], ["def declaring(self, k=True):"])


def test_the_commit_is_dirty_for_any_change_but_the_report(tmp_path: Path) -> None:
    # --from-results rewrites docs/mutation.md: an --update after it named the commit
    # "-dirty" though the code it mutated was the commit's.
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "mutation.md").write_text("old")
    (tmp_path / "code.py").write_text("a = 1")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "mutation_results.json").write_text("{}")  # new, then changed
    (tmp_path / "docs" / "mutation.md").write_text("new")
    assert not describe(tmp_path).endswith("-dirty")
    (tmp_path / "code.py").write_text("a = 2")
    assert describe(tmp_path).endswith("-dirty")


def test_the_replicated_passes_name_functions_mutmut_mutates() -> None:
    """A renamed function would silently leave passes 4 and 5 with nothing to run."""
    every = [place_of(p.replace("*", "1")) for p in function_patterns(ROOT / "src" / "chat_memory")]
    places = [f"{module}:{place}" for module, place in every]
    for kind, patterns in REPLICATED.items():
        for pattern in patterns:
            assert any(fnmatch(place, pattern) for place in places), (kind, pattern)


def test_results_saved_before_the_replicated_passes_load_as_not_run_there(tmp_path: Path) -> None:
    saved = tmp_path / "results.json"
    saved.write_text(
        '{"mutants": [{"name": "chat_memory._keys.x_f__mutmut_1", "module": "_keys.py",'
        ' "place": "f", "features": 0, "server": null, "adapter": null, "unit": 1,'
        ' "diff": ""}], "sample": false, "unit_ran": true, "source": "4f18b5b", "updates": []}'
    )
    report = load_report(saved)
    assert (report.mutants[0].cluster, report.mutants[0].sentinel, report.left_out) == (
        None,
        None,
        [],
    )


def test_a_pass_left_out_is_said_in_the_report_while_its_mutants_wait_for_it() -> None:
    waiting = _replicated("_ops.py:_in_steps", "a")
    report = Report(mutants=[waiting], left_out=["the cluster pass (--skip)"])
    classify(report, equivalents=[])
    assert "**Left out: the cluster pass (--skip).**" in render(report)
    waiting.cluster = 1  # an update ran it since
    assert "Left out" not in render(report)


def test_a_stopped_pass_is_said_with_the_mutants_it_still_has_not_run() -> None:
    ran, unrun = _replicated("_ops.py:_in_steps", "a"), _replicated("_ops.py:_in_steps", "b")
    ran.cluster = 1
    killed_before = _replicated("_ops.py:_in_steps", "c")
    killed_before.server = 1
    stopped = "3 of the 3 mutants of the cluster pass (the run was stopped)"
    failed = ["the unit-test pass (x /tmp/a)", "the unit-test pass (x /tmp/b)"]
    report = Report(
        mutants=[ran, unrun, killed_before], left_out=[stopped, *failed], unit_left=["_ops.py:g"]
    )
    classify(report, equivalents=[])
    text = render(report)
    assert "**Left out: 1 of the 2 mutants of the cluster pass (the run was stopped).**" in text
    assert text.count("unit-test pass") == 1  # two failed pieces: said once, of what waits
    assert "**Left out: the unit-test pass of 1 function(s) (x /tmp/b).**" in text
    unrun.cluster = 0
    report.unit_left = []  # an update ran them since
    assert "Left out" not in render(report)


def test_the_replicated_passes_take_their_functions_behaviour_only() -> None:
    def of(place: str, removed: str, added: str) -> Mutant:
        module, _, function = place.partition(":")
        return Mutant("x", module, function, 0, diff=f"--- a\n+++ b\n-{removed}\n+{added}")

    assert replicated_only(of("_ops.py:_in_steps", "a = 1", "a = 2"), "cluster")
    assert not replicated_only(
        of("_ops.py:_in_steps", 'raise E("a b c")', "raise E(None)"), "cluster"
    )
    assert not replicated_only(of("_ops.py:_in_steps", "a = 1", "a = 2"), "sentinel")
    assert replicated_only(of("_durability.py:confirmed", "a = 1", "a = 2"), "sentinel")


def _replicated(place: str, name: str) -> Mutant:
    module, _, function = place.partition(":")
    return Mutant(name, module, function, 0, diff="--- a\n+++ b\n-a = 1\n+a = 2")


def test_a_replicated_pass_runs_its_survivors_and_returns_what_lives_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pass 5 runs only the Sentinel code's mutants, in the setting's environment."""
    ran: list[tuple[list[str], list[str], dict[str, str]]] = []

    def run_mutmut(_: Path, names: list[str], **kwargs: object) -> dict[str, int | None]:
        ran.append((names, kwargs["pytest_args"], kwargs["env"]))  # type: ignore[arg-type]
        return {"killed": 1, "lives": 0}

    @contextmanager
    def setting() -> Iterator[tuple[list[str], dict[str, str]]]:
        yield ["--redis-sentinel"], {"PATH": "valkey"}

    monkeypatch.setattr(tests.mutation, "run_mutmut", run_mutmut)
    (tmp_path / "snapshot").mkdir()
    killed, lives = (_replicated("_durability.py:confirmed", n) for n in ("killed", "lives"))
    elsewhere = _replicated("_keys.py:KeyLayout.ids", "elsewhere")
    report = Report(mutants=[killed, lives, elsewhere])
    alive = replicated_pass(
        report, "sentinel", tmp_path / "w", tmp_path / "snapshot", report.mutants, setting
    )
    assert ran == [(["killed", "lives"], ["--redis-sentinel"], {"PATH": "valkey"})]
    assert (killed.sentinel, lives.sentinel, elsewhere.sentinel) == (1, 0, None)
    assert alive == [lives, elsewhere]


def test_a_replicated_pass_whose_run_fails_is_left_out_and_kills_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run_mutmut(*_: object, **__: object) -> dict[str, int | None]:
        raise MutmutFailed("the unmutated scenarios failed")

    @contextmanager
    def setting() -> Iterator[tuple[list[str], dict[str, str]]]:
        yield [], {}

    monkeypatch.setattr(tests.mutation, "run_mutmut", run_mutmut)
    (tmp_path / "snapshot").mkdir()
    lives = _replicated("_durability.py:confirmed", "lives")
    lives.sentinel = 0  # what an earlier Sentinel pass found: kept
    report = Report(mutants=[lives])
    alive = replicated_pass(
        report, "sentinel", tmp_path / "w", tmp_path / "snapshot", report.mutants, setting
    )
    assert (alive, lives.sentinel) == ([lives], 0)
    assert report.left_out == ["the sentinel pass (the unmutated scenarios failed)"]


def test_a_note_on_the_servers_is_said_in_the_report_or_in_the_update_that_ran_there() -> None:
    note = "The Sentinel pass ran on Valkey server v=9.1.2 (`--sentinel-on`)"
    saved = Report(mutants=[mutant("a = 1", "a = 2")], source="abc")
    rerun = Report(mutants=[], source="def", notes=[note])
    report = update(saved, rerun, ["_budget.py"], [], present=["*"])
    classify(report, equivalents=[])
    assert "ran again on commit `def` (the Sentinel pass ran on Valkey" in render(report)
    assert report.notes == []  # a later --update without it does not inherit it
    full = Report(mutants=[mutant("a = 1", "a = 2")], source="abc", notes=[note])
    classify(full, equivalents=[])
    assert f" {note}." in render(full)


def test_a_replicated_pass_without_survivors_starts_nothing(tmp_path: Path) -> None:
    @contextmanager
    def setting() -> Iterator[tuple[list[str], dict[str, str]]]:
        raise AssertionError("the servers were started for nothing")
        yield [], {}

    other = _replicated("_keys.py:KeyLayout.ids", "other")
    report = Report(mutants=[other])
    alive = replicated_pass(report, "sentinel", tmp_path / "w", tmp_path, [other], setting)
    assert (alive, other.sentinel, report.left_out) == ([other], None, [])


def _package(tmp_path: Path, source: str) -> Path:
    package = tmp_path / "chat_memory"
    package.mkdir(exist_ok=True)
    (package / "_keys.py").write_text(source, encoding="utf-8")
    return package


def test_a_functions_digest_changes_with_its_code_not_its_place_or_docstring(
    tmp_path: Path,
) -> None:
    # The saved run outlives the machine: what it says of a function holds only for the code
    # its mutants ran on, and the report must tell when that code has changed since.
    code = 'def f(a):\n    """Doc."""\n    return a + 1\n\n\n'
    code += "class K:\n    def g(self):\n        return 2\n"
    before = fingerprints(_package(tmp_path, code))
    assert sorted(before) == ["_keys.py:K.g", "_keys.py:f"]
    moved = "\n\n# a comment\n" + code.replace('"""Doc."""', '"""Other words."""')
    assert fingerprints(_package(tmp_path, moved)) == before
    changed = fingerprints(_package(tmp_path, code.replace("a + 1", "a + 2")))
    assert changed["_keys.py:f"] != before["_keys.py:f"]
    assert changed["_keys.py:K.g"] == before["_keys.py:K.g"]


def test_a_functions_digest_is_of_its_text_so_every_python_reads_the_saved_run_alike(
    tmp_path: Path,
) -> None:
    # The saved run is read by other machines and Pythons (a syntax tree's dump changed in
    # 3.13): the digest is of the function's lines, indented from its def, comment lines out.
    code = "def f(a):\n    if a:\n        a += 1\n    return a\n"
    digest = fingerprints(_package(tmp_path, code))["_keys.py:f"]
    text = "def f(a):\n    if a:\n        a += 1\n    return a"
    assert digest == hashlib.sha256(text.encode()).hexdigest()[:12]
    commented = code.replace("    return", "    # why\n\n    return")
    assert fingerprints(_package(tmp_path, commented))["_keys.py:f"] == digest
    indented = code.replace("    return a", "        return a")
    assert fingerprints(_package(tmp_path, indented))["_keys.py:f"] != digest


@pytest.mark.parametrize(
    ("code", "edited"),
    [
        # A one-line def: its docstring (or stub) shares the def's line, which stays read.
        ('def f(a): "doc"\n', 'def f(a, b): "doc"\n'),
        ('def f(a):\n    "doc"; return 1\n', 'def f(a):\n    "doc"; return 2\n'),
        # A string literal's own lines: blank, "#", or less indented than its method.
        ('class K:\n    def f(self):\n        return """a\n\nb"""\n', None),
        ('class K:\n    def f(self):\n        return """a\n# b"""\n', None),
        ('class K:\n    def f(self):\n        return """a\nbcdef"""\n', None),
        # Decorators are the function's code.
        ("@cache\ndef f(a):\n    return a\n", "@other\ndef f(a):\n    return a\n"),
        # A form feed before a function ends no line: the lines read are its own.
        ("\x0c\ndef f(a):\n    return 2\n", "\x0c\ndef f(a):\n    return 3\n"),
    ],
)
def test_every_edit_of_a_functions_code_changes_its_digest(
    tmp_path: Path, code: str, edited: str | None
) -> None:
    if edited is None:  # an edit of the string literal's second line
        edited = code.replace("\n\nb", "\nb").replace("# b", "# c").replace("bcdef", "xcdef")
    assert edited != code
    before = next(iter(fingerprints(_package(tmp_path, code)).values()))
    after = next(iter(fingerprints(_package(tmp_path, edited)).values()))
    assert before != after


def test_the_report_names_functions_not_run_or_run_on_older_code() -> None:
    report = Report(mutants=[mutant("a = 1", "a = 2", features=1)], ran={"_keys.py:f": "old"})
    classify(report, equivalents=[])
    current = {"_keys.py:f": "new", "_keys.py:g": "x", "_ops.py:h": "y"}
    assert outdated(report, current) == (["_keys.py:g", "_ops.py:h"], ["_keys.py:f"])
    text = render(report, current)
    assert "**Not run yet: the mutants of 2 of the 3 functions**" in text
    assert "1 of _keys.py, 1 of _ops.py" in text
    assert "**Run on older code: 1 function(s)** (their rows are of the code" in text
    assert "before it changed): `_keys.py:f`." in text
    report.ran["_keys.py:f"] = "new"
    text = render(report, {"_keys.py:f": "new"})
    assert "Not run yet" not in text
    assert "older code" not in text


def test_updates_build_the_saved_run_from_nothing_and_keep_each_functions_digest() -> None:
    first = Report(
        mutants=[named("chat_memory._ops.x_compact__mutmut_1", 1)],
        sample=True,
        source="aaa",
        ran={"_ops.py:compact": "c1"},
    )
    present = ["chat_memory._ops.x_compact__mutmut_*", "chat_memory._ops.x_clear__mutmut_*"]
    saved = update(Report(), first, [], ["_ops.py:compact"], present)
    assert (saved.sample, saved.ran) == (False, {"_ops.py:compact": "c1"})
    assert saved.updates == ["the mutants of `_ops.py:compact` ran on commit `aaa`"]
    second = Report(mutants=[named("chat_memory._ops.x_clear__mutmut_1", 0)], source="bbb")
    second.ran = {"_ops.py:clear": "k1"}
    saved = update(saved, second, [], ["_ops.py:clear"], present)
    assert saved.updates[-1] == "the mutants of `_ops.py:clear` ran on commit `bbb`"  # first time
    assert saved.ran == {"_ops.py:compact": "c1", "_ops.py:clear": "k1"}
    assert len(saved.mutants) == 2
    third = Report(mutants=[named("chat_memory._ops.x_clear__mutmut_1", 1)], source="ccc")
    third.ran = {"_ops.py:clear": "k2"}
    saved = update(saved, third, [], ["_ops.py:clear"], present[1:])  # compact was removed
    assert saved.ran == {"_ops.py:clear": "k2"}
    assert saved.updates[-1].startswith("the mutants of `_ops.py:clear` ran again on commit `ccc`")


def test_stale_runs_the_changed_functions_first_then_the_new_ones_and_saves_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = fingerprints(ROOT / "src" / "chat_memory")
    places = list(current)
    changed, kept = places[5], places[6]
    saved = Report(ran={changed: "older code", kept: current[kept]})
    save_report(saved, tmp_path / "results.json")
    asked: list[list[str]] = []

    def run_passes(args: argparse.Namespace) -> Report:
        chosen = list(args.function)
        asked.append(chosen)
        return Report(sample=True, source="now", ran={p: current[p] for p in chosen})

    monkeypatch.setattr(tests.mutation, "run_passes", run_passes)
    where = ["--results", str(tmp_path / "results.json"), "--output", str(tmp_path / "m.md")]
    tests.mutation.main(["--update", "--stale", "--limit", "3", *where])
    never = [p for p in places if p not in (changed, kept)]
    assert asked == [[changed, *never[:2]]]
    again = load_report(tmp_path / "results.json")
    assert again.ran == {changed: current[changed], kept: current[kept]} | {
        p: current[p] for p in never[:2]
    }
    text = (tmp_path / "m.md").read_text()
    assert f"**Not run yet: the mutants of {len(never) - 2} of the {len(places)}" in text


def test_stale_picks_the_changed_then_the_never_run_then_what_a_pass_left_each_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = fingerprints(ROOT / "src" / "chat_memory")
    changed = max(current)  # last in the source's order: the order is not the names'
    stopped = _replicated("_ops.py:_in_steps", "chat_memory._ops.x__in_steps__mutmut_1")
    changed_and_stopped = _replicated("_ops.py:_alone", "chat_memory._ops.x__alone__mutmut_1")
    no_unit, never = "_keys.py:KeyLayout.ids", "_acl.py:acl_rules"
    ran = {**current, changed: "older code", "_ops.py:_alone": "older code"}
    del ran[never]
    saved = Report(
        mutants=[stopped, changed_and_stopped],
        ran=ran,
        unit_left=[no_unit],
        left_out=["2 of the 2 mutants of the cluster pass (the run was stopped)"],
    )
    save_report(saved, tmp_path / "results.json")
    asked: list[list[str]] = []

    def run_passes(args: argparse.Namespace) -> Report:
        asked.append(list(args.function))
        return Report(sample=True, source="now", ran={p: current[p] for p in args.function})

    monkeypatch.setattr(tests.mutation, "run_passes", run_passes)
    where = ["--results", str(tmp_path / "results.json"), "--output", str(tmp_path / "m.md")]
    tests.mutation.main(["--update", "--stale", *where])
    older = [p for p in current if p in (changed, "_ops.py:_alone")]  # the source's order
    assert asked == [[*older, never, no_unit, "_ops.py:_in_steps"]]
    again = load_report(tmp_path / "results.json")
    assert again.unit_left == []  # those functions' unit pass ran this time


def test_a_failed_unit_pass_marks_only_its_functions_not_run() -> None:
    # One piece whose unit pass failed used to mark the whole saved run's unit column
    # "not run", and no later piece could undo it.
    diff = "--- a\n+++ b\n-a = 1\n+a = 2"
    of_g = Mutant("chat_memory._ops.x_g__mutmut_1", "_ops.py", "g", 1, diff=diff)
    saved = Report(mutants=[mutant("a = 1", "a = 2", features=1)], ran={"_keys.py:f": "d"})
    present = ["chat_memory._keys.x_f__mutmut_*", "chat_memory._ops.x_g__mutmut_*"]
    failed = Report(mutants=[of_g], ran={"_ops.py:g": "d"}, unit_left=["_ops.py:g"])
    merged = update(saved, failed, [], ["_ops.py:g"], present)
    assert merged.unit_left == ["_ops.py:g"]
    classify(merged, equivalents=[])
    text = render(merged)
    assert "| _keys.py | 1 | 100.0% | 100.0% | 100.0% | 100.0% |" in text
    assert "| _ops.py | 1 | 100.0% | 100.0% | 100.0% | not run |" in text
    assert "| **library** | 2 | 100.0% | 100.0% | 100.0% | not run |" in text
    ran = Report(ran={"_ops.py:g": "d"})
    assert update(merged, ran, [], ["_ops.py:g"], present).unit_left == []


def test_a_run_saved_without_its_unit_pass_before_unit_left_reads_as_such(
    tmp_path: Path,
) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"mutants": [], "unit_ran": false, "ran": {"_keys.py:f": "d"}}')
    assert load_report(path).unit_left == ["_keys.py:f"]


def test_limit_takes_one_function_or_more_of_what_stale_picks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        tests.mutation.main(["--update", "--stale", "--limit", "0"])
    assert "N is 1 or more" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # it was ignored
        tests.mutation.main(["--update", "--function", "_ops.py:compact", "--limit", "3"])
    assert "--limit takes the first N functions --stale picks" in capsys.readouterr().err


def test_a_sample_does_not_replace_the_saved_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tests.mutation, "RESULTS", tmp_path / "results.json")
    monkeypatch.setattr(tests.mutation, "run_passes", lambda args: Report(sample=True))
    assert tests.mutation.main(["--sample", "2", "--output", str(tmp_path / "m.md")]) == 0
    assert not (tmp_path / "results.json").exists()


def test_the_saved_run_reads_back_as_saved_one_mutant_a_line(tmp_path: Path) -> None:
    report = Report(
        mutants=[mutant("a = 1", "a = 2", features=1), mutant("a = 1", "a = 3")],
        source="abc",
        ran={"_keys.py:f": "d1"},
        updates=["u"],
    )
    save_report(report, tmp_path / "results.json")
    lines = (tmp_path / "results.json").read_text().splitlines()
    assert sum(line.startswith('{"name": ') for line in lines) == 2
    assert load_report(tmp_path / "results.json") == report
