"""The one place the suite reaches into pytest-bdd and freezegun beyond their documented API.

- ``step_function_context_registry``: every step definition pytest-bdd knows,
  with its parser, type and function; the catalog and ``--bdd-check`` read it.
- ``scenario_wrapper_template_registry`` and ``registry_get_safe``: the
  scenario behind a test function, for its line in the feature file.
- ``Feature``, ``Scenario``, ``Step``: the objects pytest-bdd's hooks pass.
- freezegun's factory types, to type the frozen clock.
- :class:`ScenarioModule`: a ``.feature`` file collected as a pytest module,
  through pytest's private ``Module._getobj`` and pytest-bdd's ``scenarios()``,
  which puts its test functions into the namespace of the code calling it.
- :func:`report_at`: a scenario's test reported at its line in the feature file,
  by replacing the item's ``reportinfo``.
- :func:`example_of`: the outline row a scenario's test runs, from pytest-bdd's
  ``_pytest_bdd_example`` parameter.
- :func:`remember_step_lookups`: pytest-bdd's ``find_fixturedefs_for_step``
  and its ``getfixturedefs``, which go through every fixture of the session
  for every step, remembered per place once collection is over.

- :func:`before_each_send`: a hook before every command a redis-py client sends,
  through its connections' ``send_packed_command`` (the ``atomic_turns`` steps
  look at a session, or break the connection, between a write's commands).

``tests/unit/test_suite_compat.py`` fails when any of this changes under us.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import types
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio.connection
import redis.connection
from _pytest.fixtures import FixtureManager
from freezegun.api import FrozenDateTimeFactory, StepTickTimeFactory, TickingDateTimeFactory
from freezegun.api import _freeze_time as FreezeTime
from pytest_bdd import scenarios
from pytest_bdd.parser import Feature, Scenario, Step
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.steps import step_function_context_registry
from pytest_bdd.utils import registry_get_safe

__all__ = [
    "Feature",
    "FreezeTime",
    "FrozenDateTimeFactory",
    "Scenario",
    "ScenarioModule",
    "Step",
    "StepTickTimeFactory",
    "TickingDateTimeFactory",
    "before_each_send",
    "example_of",
    "registry_get_safe",
    "remember_step_lookups",
    "report_at",
    "scenario_wrapper_template_registry",
    "step_function_context_registry",
]


class ScenarioModule(pytest.Module):
    """A ``.feature`` file as a pytest module whose test functions are its scenarios."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"feature:{self.path.stem}")
        module.__file__ = str(self.path)
        # scenarios() puts one test function per scenario into its caller's
        # namespace; running it at the top level of ``module`` makes that the
        # module's own __dict__.
        module.__dict__["_bind"] = scenarios
        module.__dict__["_path"] = str(self.path)
        exec("_bind(_path, features_base_dir='/')", module.__dict__)
        return module


def report_at(item: pytest.Function, path: Path, line: int) -> None:
    """Report ``item`` at ``line`` (counted from 1) of ``path``, not where Python defined it."""
    item.reportinfo = functools.partial(  # type: ignore[method-assign]
        lambda name: (path, line - 1, name), item.name
    )


def example_of(item: pytest.Item) -> dict[str, Any]:
    """The outline row (column to value) a scenario's test runs; empty for a plain scenario."""
    params = getattr(item, "callspec", None)
    return dict(params.params.get("_pytest_bdd_example", {})) if params else {}


def remember_step_lookups() -> Callable[[], None]:
    """Make pytest-bdd's step lookup remember what does not change once collection is over.

    For every step of every scenario, pytest-bdd's ``find_fixturedefs_for_step``
    asks pytest, for every fixture name of the session, which definitions the
    scenario's node sees, then matches each step definition's parser. Which
    definitions a node sees depends only on where it is (its module or class:
    no fixture is defined by an item), and the step definitions are all known
    once collection is over. So each lookup of a name is kept per fixture
    manager (a session) and place, and each step's answer per type, text and
    place. pytest-bdd's temporary step fixtures (``pytestbdd_stepimpl_*``),
    which come and go around each step, are never kept. Returns the undo.
    """
    module = importlib.import_module("pytest_bdd.scenario")  # pytest_bdd.scenario is a function
    uncached_find = module.find_fixturedefs_for_step
    uncached_defs = module.getfixturedefs
    steps: weakref.WeakKeyDictionary[FixtureManager, dict[tuple[str, str, str], list[Any]]]
    steps = weakref.WeakKeyDictionary()
    names: weakref.WeakKeyDictionary[FixtureManager, dict[tuple[str, str], Any]]
    names = weakref.WeakKeyDictionary()

    def place(node: Any) -> str:
        return (
            str(node.nodeid).rpartition("::")[0] if isinstance(node, pytest.Item) else node.nodeid
        )

    def getfixturedefs(fixturemanager: FixtureManager, fixturename: str, node: Any) -> Any:
        if fixturename.startswith("pytestbdd_stepimpl_"):
            return uncached_defs(fixturemanager, fixturename, node)
        known = names.setdefault(fixturemanager, {})
        key = (fixturename, place(node))
        if key not in known:
            known[key] = uncached_defs(fixturemanager, fixturename, node)
        return known[key]

    def find(step: Step, fixturemanager: FixtureManager, node: Any) -> Iterable[Any]:
        known = steps.setdefault(fixturemanager, {})
        key = (step.type, step.name, place(node))
        if key not in known:
            known[key] = list(uncached_find(step=step, fixturemanager=fixturemanager, node=node))
        return known[key]

    setattr(module, "getfixturedefs", getfixturedefs)  # noqa: B010 (a module of another package)
    setattr(module, "find_fixturedefs_for_step", find)  # noqa: B010

    def undo() -> None:
        setattr(module, "getfixturedefs", uncached_defs)  # noqa: B010
        setattr(module, "find_fixturedefs_for_step", uncached_find)  # noqa: B010

    return undo


@contextlib.contextmanager
def before_each_send(
    hook: Callable[[], None], async_hook: Callable[[], Awaitable[None]]
) -> Iterator[None]:
    """Call ``hook`` (``async_hook`` on asyncio connections) before every command a client sends.

    Through redis-py's ``send_packed_command`` of its sync and asyncio connection base
    classes, which every connection (TCP, TLS, Unix socket, fakeredis's) inherits: a
    pipeline or a transaction is one send, a script call is one send. The hooks are not
    called for what they send themselves.
    """
    sync_base = redis.connection.AbstractConnection
    async_base = redis.asyncio.connection.AbstractConnection
    sync_send, async_send = sync_base.send_packed_command, async_base.send_packed_command
    inside = False

    def send(connection: Any, command: Any, check_health: bool = True) -> None:
        nonlocal inside
        if not inside:
            inside = True
            try:
                hook()
            finally:
                inside = False
        sync_send(connection, command, check_health)  # type: ignore[no-untyped-call]

    async def async_send_hooked(connection: Any, command: Any, check_health: bool = True) -> None:
        nonlocal inside
        if not inside:
            inside = True
            try:
                await async_hook()
            finally:
                inside = False
        await async_send(connection, command, check_health)

    sync_base.send_packed_command = send  # type: ignore[method-assign]
    async_base.send_packed_command = async_send_hooked  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        sync_base.send_packed_command = sync_send  # type: ignore[method-assign]
        async_base.send_packed_command = async_send  # type: ignore[method-assign]
