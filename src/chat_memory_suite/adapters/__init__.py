"""Adapters that put the stores teams use today under chat-memory's scenarios.

Each is a factory for ``pytest --memory-adapter``, and an example of the
protocol in :mod:`chat_memory_suite.adapter`:

- :mod:`~chat_memory_suite.adapters.seed`: the plain ``RPUSH`` + ``LTRIM``
  service every team starts from (the seed article's);
- :mod:`~chat_memory_suite.adapters.langchain_community`: langchain-community's
  ``RedisChatMessageHistory``;
- :mod:`~chat_memory_suite.adapters.llama_index`: llama-index's ``RedisChatStore``;
- :mod:`~chat_memory_suite.adapters.chat_memory`: chat-memory's own service,
  through the same protocol;
- :mod:`~chat_memory_suite.adapters.langchain_history`: chat-memory through
  LangChain (``chat_memory.langchain.ChatMemoryHistory``);
- :mod:`~chat_memory_suite.adapters.openai_agents`: chat-memory through the
  OpenAI Agents SDK (``chat_memory.openai_agents.ChatMemorySession``).

``python -m chat_memory_suite.peers`` runs the suite against each and writes
``docs/peers.md``.
"""
