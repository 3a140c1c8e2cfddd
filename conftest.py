"""Root of the acceptance suite: collect every .feature file and register the steps once.

Plugins are listed so that a module comes after those it imports.
"""

pytest_plugins = [
    # the suite's machinery
    "steps._catalog",
    "steps._check",
    "steps._collect",
    "steps._backends",
    "steps._apis",
    "steps._living_doc",
    # step definitions, one module per domain concept
    "steps.clock",
    "steps.sessions",
    "steps.conversation",
    "steps.context",
    "steps.storage",
    "steps.concurrency",
    "steps.model",
    "steps.faults",
    "steps.users",
    "steps.transfer",
    "steps.compaction",
    # for the unit tests of the suite's own tooling
    "pytester",
]
