"""Root of this repository's tests: nothing is defined here on purpose.

The acceptance suite itself (the collector of every ``.feature`` file, the
checks, the catalog, the living documentation and the step definitions) is
the installed ``chat_memory_suite`` pytest plugin, switched on by
``chat_memory_suite = true`` in ``pyproject.toml``: the same code a team runs
with ``pip install "chat-memory[suite]"``. This file marks the repository's
root for pytest, and must not define ``pytest_plugins``: the suite's own
``features/`` are run from other projects too, where a ``pytest_plugins``
here would be an error.
"""
