Feature: Tool exchanges in the history
  An assistant that uses tools leaves two kinds of messages behind: its call
  (which tool, with which arguments, under which call id) and the tool's
  result, which names that call id. Both must come back from the memory
  exactly as they were stored: a history that drops the call, its id or its
  arguments gives the model a result it cannot place, and model APIs reject it.

  Scenario: A tool call and its result come back exactly as they happened
    Given a new session "ada"
    And the user said "What's the weather in Paris?"
    And the assistant called the tool "weather" with the arguments {"city": "Paris"}
    And the tool "weather" answered "18°C and sunny"
    And the assistant replied "18°C and sunny in Paris."
    Then the context is this JSON:
      """
      [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call-1", "type": "function",
           "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "content": "18°C and sunny", "tool_call_id": "call-1", "name": "weather"},
        {"role": "assistant", "content": "18°C and sunny in Paris."}
      ]
      """

  Scenario: Calls of two tools keep their own ids, and each result names its own call
    Given the user said "Weather and time in Oslo?"
    And the assistant called the tool "weather" with the arguments {"city": "Oslo"}
    And the tool "weather" answered "3°C"
    And the assistant called the tool "clock" with the arguments {"city": "Oslo", "format": "24h"}
    And the tool "clock" answered "14:05"
    Then the context is this JSON:
      """
      [
        {"role": "user", "content": "Weather and time in Oslo?"},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call-1", "type": "function",
           "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "content": "3°C", "tool_call_id": "call-1", "name": "weather"},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call-2", "type": "function",
           "function": {"name": "clock", "arguments": "{\"city\": \"Oslo\", \"format\": \"24h\"}"}}]},
        {"role": "tool", "content": "14:05", "tool_call_id": "call-2", "name": "clock"}
      ]
      """

  Scenario: Every message of a tool exchange keeps its own id, the system prompt's too
    Given a new session "ada"
    When these messages are stored in one write, as this JSON:
      """
      [
        {"role": "system", "content": "Be brief.", "id": "s-1"},
        {"role": "user", "content": "Weather in Paris?", "id": "u-1"},
        {"role": "assistant", "content": null, "id": "a-1", "tool_calls": [
          {"id": "call-1", "type": "function",
           "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "content": "18°C", "tool_call_id": "call-1", "id": "t-1"}
      ]
      """
    Then the session's messages have the ids "s-1", "u-1", "a-1" and "t-1"
    And the context is this JSON:
      """
      [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call-1", "type": "function",
           "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "content": "18°C", "tool_call_id": "call-1"}
      ]
      """

  Scenario: A tool result whose call the history limit dropped does not come back
    Given the history limit is 2 messages
    And the user said "What's the weather in Paris?"
    And the assistant called the tool "weather" with the arguments {"city": "Paris"}
    And the tool "weather" answered "18°C and sunny"
    When the assistant replies "18°C and sunny in Paris."
    Then the context is this JSON:
      """
      [{"role": "assistant", "content": "18°C and sunny in Paris."}]
      """
