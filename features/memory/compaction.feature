Feature: Compacting a long session
  A long conversation outgrows the prompt. Compaction folds the older
  messages into one summary (written by a model, outside Redis) and keeps the
  newest ones as they are. A message that arrives while the summary is being
  written must never be lost, and the summary is marked as one.

  Rule: The older messages are replaced by one summary, marked as such

    Scenario: All but the newest messages are folded into a summary
      Given the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I live in Paris. |
        | assistant | Lovely city.     |
      When the session is compacted, keeping the newest 2 messages
      Then the compaction folded 2 messages
      And the context is this JSON:
        """
        [
          {"role": "system", "content": "Summary: I am Ada. / Hello Ada.", "name": "summary"},
          {"role": "user", "content": "I live in Paris."},
          {"role": "assistant", "content": "Lovely city."}
        ]
        """

    Scenario: The summary is stored exactly as the app's model wrote it
      Given the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      When the session is compacted into the summary "Ada (42), from Paris.", keeping the newest 1 message
      Then the compaction folded 1 message
      And the context is this JSON:
        """
        [
          {"role": "system", "content": "Ada (42), from Paris.", "name": "summary"},
          {"role": "assistant", "content": "Hello Ada."}
        ]
        """

    Scenario: A session no longer than what is kept is left alone
      Given the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      When the session is compacted, keeping the newest 2 messages
      Then the compaction folded 0 messages
      And the context contains 2 messages

    Scenario: A tool call is never folded away from its result
      Given the user said "Weather in Paris?"
      And the assistant called the tool "weather" with the arguments {"city": "Paris"}
      And the tool "weather" answered "18°C"
      When the session is compacted, keeping the newest 1 message
      Then the compaction folded 1 message
      And the context is this JSON:
        """
        [
          {"role": "system", "content": "Summary: Weather in Paris?", "name": "summary"},
          {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call-1", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
          {"role": "tool", "content": "18°C", "tool_call_id": "call-1", "name": "weather"}
        ]
        """

    Scenario: A tool call that opens the session is not folded away from its result
      Given the assistant called the tool "weather" with the arguments {"city": "Paris"}
      And the tool "weather" answered "18°C"
      And the user said "Thanks."
      And the assistant replied "You're welcome."
      When the session is compacted, keeping the newest 3 messages
      Then the compaction folded 0 messages
      And the context contains 4 messages

    Scenario: A session is compacted through a client that decodes responses as text
      Given the memory's client decodes responses as text
      And the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I live in Paris. |
      When the session is compacted, keeping the newest 1 message
      Then the compaction folded 2 messages
      And the context is this JSON:
        """
        [
          {"role": "system", "content": "Summary: I am Ada. / Hello Ada.", "name": "summary"},
          {"role": "user", "content": "I live in Paris."}
        ]
        """

    Scenario: Keeping no message folds the whole session into the summary
      Given the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      When the session is compacted, keeping the newest 0 messages
      Then the compaction folded 2 messages
      And the context is this JSON:
        """
        [{"role": "system", "content": "Summary: I am Ada. / Hello Ada.", "name": "summary"}]
        """

    Scenario: A call with two results is kept whole, and only the talk before it is folded
      Given the user said "I am Ada."
      And the assistant replied "Hello Ada."
      And the app sent these chat messages:
        """
        [
          {"role": "user", "content": "Weather in Paris and Rome?"},
          {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": "Paris"}},
            {"id": "call-2", "type": "function", "function": {"name": "weather", "arguments": "Rome"}}]},
          {"role": "tool", "content": "18°C", "tool_call_id": "call-1"},
          {"role": "tool", "content": "21°C", "tool_call_id": "call-2"}
        ]
        """
      When the session is compacted, keeping the newest 1 message
      Then the compaction folded 3 messages
      And the context contains 4 messages

  Rule: A message that arrives during a compaction is never lost

    Scenario: A compaction racing an append loses nothing
      Given the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I live in Paris. |
      When the session is compacted while the user says "And I love museums.", keeping the newest 1 message
      Then the compaction folded 3 messages
      And the context is this JSON:
        """
        [
          {"role": "system", "content": "Summary: I am Ada. / Hello Ada. / I live in Paris.", "name": "summary"},
          {"role": "user", "content": "And I love museums."}
        ]
        """

    Scenario: A compaction racing an append that trims the history loses nothing
      Given the history limit is 3 messages
      And the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I live in Paris. |
      When the session is compacted while the user says "And I love museums.", keeping the newest 1 message
      Then the compaction folded 2 messages
      And the context is this JSON:
        """
        [
          {"role": "system", "content": "Summary: Hello Ada. / I live in Paris.", "name": "summary"},
          {"role": "user", "content": "And I love museums."}
        ]
        """

  Rule: The summary reaches the prompt first, and counts like any message

    Scenario: The summary reaches the prompt before the newest messages
      Given the system prompt is "You are a travel agent."
      And the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I live in Paris. |
        | assistant | Lovely city.     |
      And the session was compacted, keeping the newest 2 messages
      When the user asks "Where do I live?"
      Then the model was prompted with this JSON:
        """
        [
          {"role": "system", "content": "You are a travel agent."},
          {"role": "system", "content": "Summary: I am Ada. / Hello Ada.", "name": "summary"},
          {"role": "user", "content": "I live in Paris."},
          {"role": "assistant", "content": "Lovely city."},
          {"role": "user", "content": "Where do I live?"}
        ]
        """

    Scenario: The prompt begins with the summary the app's model wrote
      Given the system prompt is "You are a travel agent."
      And the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I live in Paris. |
      And the session was compacted into the summary "Ada, who lives in Paris.", keeping the newest 0 messages
      When the user asks "Where do I live?"
      Then the prompt begins with the summary "Ada, who lives in Paris."

    Scenario: The history limit counts the summary like any message
      Given the history limit is 3 messages
      And the session remembers:
        | role      | content    |
        | user      | one        |
        | assistant | two        |
        | user      | three      |
      And the session was compacted, keeping the newest 1 message
      When the user says "four"
      And the user says "five"
      Then the context is:
        | role | content |
        | user | three   |
        | user | four    |
        | user | five    |

    Scenario: A prompt budget counts the summary like any message
      Given tokens are counted one per word
      And the prompt budget is 6 tokens
      And the session remembers:
        | role      | content        |
        | user      | one two        |
        | assistant | three four     |
        | user      | five six seven |
      And the session was compacted, keeping the newest 1 message
      When the user asks "eight?"
      Then the model was prompted with:
        | role | content        |
        | user | five six seven |
        | user | eight?         |

  Rule: A compaction that cannot finish says so and changes nothing

    Scenario: A session that keeps changing is left whole after three tries
      Given the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      When the session is compacted while the user keeps talking
      Then the compaction gave up after 3 summaries, folding nothing
      And the context contains 5 messages

    Scenario: Compacting a session with an entry it cannot read fails, naming the entry
      Given the user said "first"
      And another service stored this entry for the session:
        """
        hello
        """
      Then compacting the session fails, naming entry 2 as corrupt

    Scenario: A summarizer that returns nothing is refused, and nothing is folded
      Given the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      When the session is compacted by a summarizer that returns nothing
      Then the message is refused with the reason "summarize must return the summary as non-empty text"
      And the context contains 2 messages

    Scenario: A compaction without a summarizer is refused, and nothing is folded
      Given the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      When the app compacts the session with no summarizer, keeping the newest 1 message
      Then the message is refused with the reason "summarize must be a function of the messages that returns the summary text, not None", word for word
      And the context contains 2 messages

    Scenario: The summary carries the time it was made
      Given the time is 2026-12-02 10:00:00 UTC
      And the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      And 5 minutes passed
      When the session is compacted, keeping the newest 1 message
      Then the summary is stored as sent at 2026-12-02 10:05:00 UTC
