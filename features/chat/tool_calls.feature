Feature: Tool calls
  When the assistant uses a tool (weather, search, a booking system), its call
  and the tool's result must reach later prompts exactly as they happened, and
  never one without the other: model APIs reject a result without its call.

  Rule: A tool call and its result reach the prompt exactly as they happened

    Scenario: A tool exchange survives the round trip into the prompt
      Given a new session "ada"
      And the user said "What's the weather in Paris?"
      And the assistant called the tool "weather" with the arguments {"city": "Paris"}
      And the tool "weather" answered "18°C and sunny"
      When the user asks "Should I take an umbrella?"
      Then the model was prompted with this JSON:
        """
        [
          {"role": "user", "content": "What's the weather in Paris?"},
          {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call-1", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
          {"role": "tool", "content": "18°C and sunny", "tool_call_id": "call-1", "name": "weather"},
          {"role": "user", "content": "Should I take an umbrella?"}
        ]
        """

    Scenario: An assistant message with both words and a tool call keeps both
      Given a new session "ada"
      When the app sends these chat messages:
        """
        [
          {"role": "user", "content": "Weather in Paris?"},
          {"role": "assistant", "content": "Let me look that up.", "tool_calls": [
            {"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": "Paris"}}]},
          {"role": "tool", "content": "18°C", "tool_call_id": "call-1"}
        ]
        """
      Then the context is this JSON:
        """
        [
          {"role": "user", "content": "Weather in Paris?"},
          {"role": "assistant", "content": "Let me look that up.", "tool_calls": [
            {"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": "Paris"}}]},
          {"role": "tool", "content": "18°C", "tool_call_id": "call-1"}
        ]
        """

    Scenario: The model's tool call is remembered as the assistant's side of the turn
      Given a new session "ada"
      And the model will call the tool "weather" with the arguments {"city": "Paris"}
      When the user asks "Weather in Paris?"
      Then the assistant answers with no text
      And the context is this JSON:
        """
        [
          {"role": "user", "content": "Weather in Paris?"},
          {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call-1", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]}
        ]
        """

  Rule: Trimming never separates a tool call from its result

    Scenario: A budget too small for the whole tool exchange leaves all of it out
      Given tokens are counted one per word
      And the prompt budget is 10 tokens
      And a new session "ada"
      And the user said "What's the weather in Paris?"
      And the assistant called the tool "weather" with the arguments {"city": "Paris"}
      And the tool "weather" answered "18°C and sunny"
      When the user asks "Should I take an umbrella?"
      Then the model was prompted with:
        | role | content                    |
        | user | Should I take an umbrella? |

    Scenario: A tool result whose call the history limit dropped never reaches the prompt
      Given the history limit is 1 message
      And a new session "ada"
      And the user said "What's the weather in Paris?"
      And the assistant called the tool "weather" with the arguments {"city": "Paris"}
      And the tool "weather" answered "18°C and sunny"
      When the user asks "Should I take an umbrella?"
      Then the model was prompted with:
        | role | content                    |
        | user | Should I take an umbrella? |

  Rule: Parallel tool calls stay whole, wherever they are in the history

    Scenario: A budget that cuts between a later tool call and its result leaves both out
      Given tokens are counted one per word
      And the prompt budget is 4 tokens
      And the user said "Hi"
      And the assistant replied "Hello"
      And the user said "Weather in Paris?"
      And the assistant called the tool "weather" with the arguments {"city": "Paris"}
      And the tool "weather" answered "18°C"
      When the user asks "Umbrella?"
      Then the model was prompted with:
        | role | content   |
        | user | Umbrella? |

    Scenario: Results of parallel calls whose call the history limit dropped never reach the prompt
      Given the history limit is 4 messages
      When the app sends these chat messages:
        """
        [
          {"role": "user", "content": "Weather in Paris, Rome and Oslo?"},
          {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": "Paris"}},
            {"id": "call-2", "type": "function", "function": {"name": "weather", "arguments": "Rome"}},
            {"id": "call-3", "type": "function", "function": {"name": "weather", "arguments": "Oslo"}}]},
          {"role": "tool", "content": "18°C", "tool_call_id": "call-1", "name": "weather"},
          {"role": "tool", "content": "24°C", "tool_call_id": "call-2", "name": "weather"},
          {"role": "tool", "content": "3°C", "tool_call_id": "call-3", "name": "weather"},
          {"role": "assistant", "content": "Paris 18°C, Rome 24°C, Oslo 3°C."}
        ]
        """
      And the user asks "Umbrella?"
      Then the model was prompted with:
        | role      | content                          |
        | assistant | Paris 18°C, Rome 24°C, Oslo 3°C. |
        | user      | Umbrella?                        |
