"""The suite's plugin where chat-memory is installed without its ``suite`` extra."""

import importlib.util
from typing import Any

import pytest

from chat_memory_suite import plugin


def test_the_suite_without_its_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    found = importlib.util.find_spec

    def without_pytest_bdd(name: str, *args: Any) -> Any:
        return None if name == "pytest_bdd" else found(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_pytest_bdd)
    with pytest.raises(pytest.UsageError, match=r"needs pytest_bdd, .* 'chat-memory\[suite\]'"):
        plugin.check_extra()
