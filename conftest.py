"""Root of the acceptance suite: collect every .feature file and register the steps once."""

pytest_plugins = [
    "steps._collect",
    "steps._backends",
    "steps.clock",
    "steps.sessions",
    "steps.conversation",
    "steps.context",
    "steps.storage",
    "steps.concurrency",
    "steps.model",
    "pytester",  # for the unit tests of the suite's own tooling
]
