"""Step definitions of the acceptance suite, one module per domain concept.

Registered once, from the root ``conftest.py``:

- :mod:`steps.sessions`: which session is talking and how the memory is set up
- :mod:`steps.conversation`: what the user and the assistant say
- :mod:`steps.context`: what the model would be given (assertions)
- :mod:`steps.clock`: time passing
- :mod:`steps.storage`: the storage contract, the one place that looks at Redis
- :mod:`steps.failover`: a primary failing over to a replica under writers

Modules whose name starts with ``_`` are the suite's machinery, not steps.
"""
