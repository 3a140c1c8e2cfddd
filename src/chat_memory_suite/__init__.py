"""chat-memory's acceptance suite, as a pytest plugin: plain-language scenarios for any memory.

:mod:`chat_memory_suite.plugin` is what pytest loads; :mod:`chat_memory_suite.adapter`
is how a team plugs in its own memory. The step definitions are
:mod:`chat_memory_suite.steps` (``steps/`` in the repository) and the scenarios
are shipped as package data (``features/``).
"""
