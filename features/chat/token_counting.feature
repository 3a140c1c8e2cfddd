Feature: Counting tokens without a tokenizer
  A prompt over the model's limit is rejected by the model API; one far under
  it forgets more than it must. Unless the app brings its own tokenizer, the
  memory estimates each message: 4 tokens, plus one per 4 ASCII characters
  (rounded up) and one per other character, of its text, its tool names and
  its tool arguments.

  Rule: The default estimate follows the documented rule

    Scenario Outline: <kind> counts as <tokens> tokens
      Then by the default count, the message <message> is <tokens> tokens

      Examples:
        | kind                             | message                                                                                                                                                                                                                  | tokens |
        | An empty message                 | {"role": "user", "content": ""}                                                                                                                                                                                          | 4      |
        | A five-letter word               | {"role": "user", "content": "Hello"}                                                                                                                                                                                     | 6      |
        | Eight ASCII characters           | {"role": "user", "content": "12345678"}                                                                                                                                                                                  | 6      |
        | Nine ASCII characters            | {"role": "user", "content": "123456789"}                                                                                                                                                                                 | 7      |
        | Chinese                          | {"role": "user", "content": "你好世界"}                                                                                                                                                                                      | 8      |
        | English and Chinese              | {"role": "user", "content": "Hi 你好"}                                                                                                                                                                                     | 7      |
        | Five characters beyond ASCII     | {"role": "user", "content": "\\u0080\\u0080\\u0080\\u0080\\u0080"}                                                                                                                                                       | 9      |
        | An emoji with a skin tone        | {"role": "user", "content": "👋🏽"}                                                                                                                                                                                        | 6      |
        | A tool call                      | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}                                                                              | 7      |
        | A tool call with text            | {"role": "assistant", "content": "Checking", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}                                                                        | 9      |
        | Two tool calls                   | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "a", "arguments": "1234"}}, {"id": "d", "type": "function", "function": {"name": "b", "arguments": "5678"}}]} | 7      |
        | Tool arguments beyond ASCII      | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "weather", "arguments": "Zürich"}}]}                                                                          | 8      |
        | A tool call without arguments    | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "weather"}}]}                                                                                                 | 6      |
        | A tool call without a name       | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}]}                                                                                                 | 5      |
        | A tool call without its function | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function"}]}                                                                                                                                  | 4      |

  Rule: A prompt budget uses the default estimate unless the app brings a counter

    Scenario: The oldest messages leave the prompt when the estimate runs over
      Given the prompt budget is 18 tokens
      And the session remembers:
        | role      | content  |
        | user      | 12345678 |
        | assistant | 12345678 |
        | user      | 12345678 |
      When the user asks "12345678"
      Then the model was prompted with:
        | role      | content  |
        | assistant | 12345678 |
        | user      | 12345678 |
        | user      | 12345678 |

    Scenario: A budget that fits the history exactly keeps all of it
      Given the prompt budget is 24 tokens
      And the session remembers:
        | role      | content  |
        | user      | 12345678 |
        | assistant | 12345678 |
        | user      | 12345678 |
      When the user asks "12345678"
      Then the model was prompted with:
        | role      | content  |
        | user      | 12345678 |
        | assistant | 12345678 |
        | user      | 12345678 |
        | user      | 12345678 |

    Scenario: The context loaded within a budget uses the same estimate
      Given the session remembers:
        | role      | content   |
        | user      | 12345678  |
        | assistant | 123456789 |
      Then the context within 13 tokens is:
        | role      | content   |
        | user      | 12345678  |
        | assistant | 123456789 |
      And the context within 12 tokens is:
        | role      | content   |
        | assistant | 123456789 |

    Scenario: The smallest budget, one token, still sends the new message
      Given tokens are counted one per word
      And the prompt budget is 1 tokens
      And the session remembers:
        | role | content |
        | user | earlier |
      When the user asks "Hi"
      Then the model was prompted with:
        | role | content |
        | user | Hi      |

    Scenario: A context within no tokens at all is empty
      Given the session remembers:
        | role | content |
        | user | hello   |
      Then the context within 0 tokens is:
        | role | content |
