"""pytest's own flags keep working under the suite: real durations, one clear backend error."""

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

# Each test runs pytest again, on a project of its own: -m suite_runs runs them.
pytestmark = pytest.mark.suite_runs

ROOT = Path(__file__).resolve().parents[2]

TIME_FEATURE = """Feature: Time
  Scenario: A year passes in no time
    Given sessions expire after 30 minutes of inactivity
    And the user said "hello"
    When 525600 minutes pass
    Then the context is empty
"""


@pytest.fixture
def project(suite_project: pytest.Pytester) -> pytest.Pytester:
    (suite_project.path / "features" / "time.feature").write_text(TIME_FEATURE, encoding="utf-8")
    return suite_project


def test_durations_and_junit_times_are_real_while_the_clock_is_frozen(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_subprocess(
        "features", "--durations=0", "--durations-min=0", "--junitxml=report.xml", "-p",
        "no:randomly", "--living-doc", "doc",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    durations = [float(d) for d in re.findall(r"^(\d+\.\d+)s ", result.stdout.str(), re.M)]
    assert durations, result.stdout.str()
    assert max(durations) < 60
    report = ET.parse(project.path / "report.xml").getroot()
    times = [float(case.attrib["time"]) for case in report.iter("testcase")]
    assert times
    assert max(times) < 60
    doc = (project.path / "doc" / "living-doc.md").read_text(encoding="utf-8")
    found = re.search(r" · (\d+\.\d) s · ", doc)
    assert found, doc[:300]
    assert float(found[1]) < 60


def test_an_unreachable_server_stops_the_run_once_before_any_scenario(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_subprocess("features", "--redis-url", "redis://127.0.0.1:1/0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("cannot reach the Redis backend") == 1
    assert "fix --redis-url" in result.stderr.str()
    assert "passed" not in result.stdout.str()


def test_a_missing_redis_server_is_named_with_what_to_install(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    python_only = tmp_path / "bin"
    python_only.mkdir()
    monkeypatch.setenv("PATH", str(python_only) + os.pathsep + "/nonexistent")
    result = project.runpytest_subprocess("features", "--redis-server")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "apt-get install redis-server" in result.stderr.str()
