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
