"""The suite's plugin where chat-memory is installed without its ``suite`` extra."""

import importlib.metadata

import pytest

from chat_memory_suite import plugin


def test_the_suite_without_its_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = importlib.metadata.version

    def without_trustme(name: str) -> str:
        if name == "trustme":
            raise importlib.metadata.PackageNotFoundError(name)
        return installed(name)

    monkeypatch.setattr(importlib.metadata, "version", without_trustme)
    with pytest.raises(pytest.UsageError, match=r"needs trustme, .* 'chat-memory\[suite\]'"):
        plugin.check_extra()
