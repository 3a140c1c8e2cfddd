Feature: Messages in the chat-completions shape
  Apps often keep a turn as the JSON the model API speaks and hand it to the
  memory as it is. The memory must keep every field that matters (ids, tool
  calls, the id a tool result answers, the tool's name), recognise a retried
  turn by its ids, and refuse a malformed message with a reason.

  Rule: A turn sent as chat messages comes back exactly

    Scenario: Parallel tool calls sent as chat messages come back with every field
      When the app sends these chat messages:
        """
        [
          {"role": "user", "content": "Weather in Paris and Rome?", "id": "m-1"},
          {"role": "assistant", "content": null, "id": "m-2", "tool_calls": [
            {"id": "call-1", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "call-2", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Rome\"}"}}]},
          {"role": "tool", "content": "18°C", "tool_call_id": "call-1", "name": "weather", "id": "m-3"},
          {"role": "tool", "content": "24°C", "tool_call_id": "call-2", "name": "weather", "id": "m-4"}
        ]
        """
      Then the context is this JSON:
        """
        [
          {"role": "user", "content": "Weather in Paris and Rome?"},
          {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call-1", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "call-2", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Rome\"}"}}]},
          {"role": "tool", "content": "18°C", "tool_call_id": "call-1", "name": "weather"},
          {"role": "tool", "content": "24°C", "tool_call_id": "call-2", "name": "weather"}
        ]
        """
      And the session remembers exactly the ids "m-1", "m-2", "m-3" and "m-4"

    Scenario: A retried turn sent as chat messages is stored once
      When the app sends these chat messages:
        """
        [
          {"role": "user", "content": "Book a table for two.", "id": "m-1"},
          {"role": "assistant", "content": "Done: 8pm, two people.", "id": "m-2"}
        ]
        """
      And the app sends the same chat messages again
      Then the context is:
        | role      | content                |
        | user      | Book a table for two.  |
        | assistant | Done: 8pm, two people. |

  Rule: A malformed chat message is refused with a reason, and nothing is stored

    Scenario Outline: <problem> is refused
      When the app sends the chat message <message>
      Then the message is refused with the reason "<reason>", word for word
      And nothing is stored

      Examples:
        | problem                                  | message                                                                                                                                | reason                                                                                                              |
        | A message that is not an object          | "hello"                                                                                                                                | a message must be a mapping, not str                                                                                |
        | A message without content                | {"role": "user"}                                                                                                                       | a message needs both 'role' and 'content'                                                                           |
        | A message without a role                 | {"content": "hi"}                                                                                                                      | a message needs both 'role' and 'content'                                                                           |
        | A field the memory does not know         | {"role": "user", "content": "hi", "mood": "happy"}                                                                                     | unknown message field(s): mood                                                                                      |
        | Tool calls that are not a list           | {"role": "assistant", "content": null, "tool_calls": "weather"}                                                                        | tool_calls must be a list                                                                                           |
        | Tool calls given as an object            | {"role": "assistant", "content": null, "tool_calls": {"id": "c"}}                                                                      | tool_calls must be a list                                                                                           |
        | A tool call that is not an object        | {"role": "assistant", "content": null, "tool_calls": ["weather"]}                                                                      | a tool call must be an object, not str                                                                              |
        | A tool call of another type              | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "retrieval", "function": {"name": "w", "arguments": "{}"}}]} | a tool call must be of type 'function' with a 'function'                                                            |
        | A tool call without its function         | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function"}]}                                                | a tool call must be of type 'function' with a 'function'                                                            |
        | A tool call whose id is a number         | {"role": "assistant", "content": null, "tool_calls": [{"id": 7, "function": {"name": "w", "arguments": "{}"}}]}                        | a tool call's id must be a string, not int                                                                          |
        | A tool call without a name               | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}                                   | a tool call's name must be a string, not None                                                                       |
        | Tool arguments given as an object        | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "w", "arguments": {"city": "Paris"}}}]}         | a tool call's arguments must be a string, not dict                                                                  |
        | An assistant message with nothing in it  | {"role": "assistant", "content": null}                                                                                                 | content may be None only for an assistant message with tool calls                                                   |
        | A user message with no content           | {"role": "user", "content": null}                                                                                                      | content may be None only for an assistant message with tool calls                                                   |
        | Tool calls on a user message             | {"role": "user", "content": "hi", "tool_calls": [{"id": "c", "function": {"name": "w", "arguments": "{}"}}]}                           | only an assistant message may carry tool calls                                                                      |
        | A tool result that names no call         | {"role": "tool", "content": "18°C"}                                                                                                    | a tool message needs the tool_call_id it answers                                                                    |
        | A tool result whose call id is a number  | {"role": "tool", "content": "18°C", "tool_call_id": 7}                                                                                 | tool_call_id must be a string, not int                                                                              |
        | A call id on a user message              | {"role": "user", "content": "hi", "tool_call_id": "c"}                                                                                 | only a tool message may carry a tool_call_id                                                                        |
        | An empty tool name                       | {"role": "tool", "content": "18°C", "tool_call_id": "c", "name": ""}                                                                   | name must be 1 to 128 characters long                                                                               |
        | A message id that is a number            | {"role": "user", "content": "hi", "id": 7}                                                                                             | message id must be a string, not int                                                                                |
        | An empty message id                      | {"role": "user", "content": "hi", "id": ""}                                                                                            | message id must be 1 to 128 characters long                                                                         |
        | Half an emoji in the content             | {"role": "user", "content": "hi \\ud83d"}                                                                                              | the content of the user message is not valid UTF-8 text (it holds a lone surrogate, e.g. half an emoji)             |
        | Half an emoji in the id                  | {"role": "user", "content": "hi", "id": "m-\\ud83d"}                                                                                   | the id of the user message is not valid UTF-8 text (it holds a lone surrogate, e.g. half an emoji)                  |
        | Half an emoji in the id a result answers | {"role": "tool", "content": "18", "tool_call_id": "c-\\ud83d"}                                                                         | the tool_call_id of the tool message is not valid UTF-8 text (it holds a lone surrogate, e.g. half an emoji)        |
        | Half an emoji in a tool's name           | {"role": "tool", "content": "18", "tool_call_id": "c", "name": "w-\\ud83d"}                                                            | the name of the tool message is not valid UTF-8 text (it holds a lone surrogate, e.g. half an emoji)                |
        | Half an emoji in a tool call's id        | {"role": "assistant", "content": null, "tool_calls": [{"id": "c-\\ud83d", "function": {"name": "w", "arguments": "{}"}}]}              | the tool call id of the assistant message is not valid UTF-8 text (it holds a lone surrogate, e.g. half an emoji)   |
        | Half an emoji in a called tool's name    | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "w-\\ud83d", "arguments": "{}"}}]}              | the tool name of the assistant message is not valid UTF-8 text (it holds a lone surrogate, e.g. half an emoji)      |
        | Half an emoji in a tool call's arguments | {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "w", "arguments": "\\ud83d"}}]}                 | the tool arguments of the assistant message is not valid UTF-8 text (it holds a lone surrogate, e.g. half an emoji) |

  Rule: Ids and session ids may be as long as documented, and no longer

    Scenario Outline: A message id of <length> characters is <verdict>
      When the app sends a message whose id is <length> characters long
      Then the message is <verdict>

      Examples:
        | length | verdict  |
        | 1      | accepted |
        | 128    | accepted |

    Scenario: A message id of 129 characters is refused
      When the app sends a message whose id is 129 characters long
      Then the message is refused with the reason "message id must be 1 to 128 characters long"
      And nothing is stored

    Scenario: A session id of exactly 256 characters is accepted
      When the app sends a message to a session whose id is 256 characters long
      Then the message is accepted
