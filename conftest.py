"""Root of this repository's tests.

The acceptance suite itself (the collector of every ``.feature`` file, the
checks, the catalog, the living documentation and the step definitions) is
the installed ``chat_memory_suite`` pytest plugin, switched on by
``chat_memory_suite = true`` in ``pyproject.toml``: the same code a team runs
with ``pip install "chat-memory[suite]"``.
"""

pytest_plugins = ["pytester"]  # for the unit tests of the suite's own tooling
