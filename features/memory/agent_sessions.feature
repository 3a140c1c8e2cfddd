Feature: An agent's session
  An app that runs an OpenAI Agents SDK agent keeps the agent's items (its
  messages, function calls and their outputs) in the memory. The agent must
  get back exactly what it stored. The app reading the same session through
  the memory sees each item under the chat role it stands for, each output
  beside the call it answers, so that trimming and compaction treat an
  agent's session like any other.

  Rule: The agent gets back exactly the items it stored

    Scenario: Every kind of item comes back to the agent exactly as it was added
      When an agent adds these items to the session:
        """
        [
          {"role": "developer", "content": "Answer in one sentence."},
          {"role": "user", "content": "Weather in Paris?"},
          {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look it up"}]},
          {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
           "arguments": "{\"city\": \"Paris\"}"},
          {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
          {"type": "message", "id": "msg_1", "role": "assistant",
           "content": [{"type": "output_text", "text": "18°C in Paris."}]}
        ]
        """
      Then the agent gets back exactly the items it added

  Rule: Each item reads as the chat message it stands for

    Scenario: Instructions, a question, a tool call, its output and the answer read as chat messages
      When an agent adds these items to the session:
        """
        [
          {"role": "developer", "content": "Answer in one sentence."},
          {"role": "user", "content": "Weather in Paris?"},
          {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
           "arguments": "{\"city\": \"Paris\"}"},
          {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
          {"type": "message", "id": "msg_1", "role": "assistant",
           "content": [{"type": "output_text", "text": "18°C in Paris."}]}
        ]
        """
      Then the session reads as these chat messages:
        | role      | id            | calls                            | answers |
        | system    | (its own)     |                                  |         |
        | user      | (its own)     |                                  |         |
        | assistant | fc_1          | call_1 weather {"city": "Paris"} |         |
        | tool      | call_1:output |                                  | call_1  |
        | assistant | msg_1         |                                  |         |

    Scenario Outline: A message with the role "<role>" reads as a <read as> message
      When an agent adds a message with the role "<role>"
      Then the session reads as one message with the role "<read as>"

      Examples:
        | role      | read as   |
        | user      | user      |
        | system    | system    |
        | developer | system    |
        | assistant | assistant |

  Rule: What the app stored itself reaches the agent as input messages

    Scenario: Messages stored through the memory are given to the agent as input messages
      Given the session remembers:
        | role      | content  |
        | user      | Hello    |
        | assistant | Hi, Ada. |
        | user      | 42       |
      When the agent asks for its newest 3 items
      Then the agent gets these items:
        """
        [
          {"role": "user", "content": "Hello"},
          {"role": "assistant", "content": "Hi, Ada."},
          {"role": "user", "content": "42"}
        ]
        """

  Rule: An agent's retried items are stored once

    Scenario: Items retried with their fields in another order are stored once
      Given an agent added these items to the session:
        """
        [
          {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "clock",
           "arguments": "{}"},
          {"type": "function_call_output", "call_id": "call_1", "output": "14:05"}
        ]
        """
      When the agent adds the same items again, each with its fields in reverse order
      Then the agent gets back exactly the items it added

  Rule: The agent asks for as many of the newest items as it wants, never an output without its call

    Scenario Outline: Asking for its newest <count> items gives the agent just those
      Given an agent added these items to the session:
        """
        [
          {"role": "user", "content": "Hi"},
          {"type": "message", "id": "msg_1", "role": "assistant", "content": "Hello."},
          {"role": "user", "content": "Weather?"}
        ]
        """
      When the agent asks for its newest <count> items
      Then the agent gets the last <count> items it added

      Examples:
        | count |
        | 1     |
        | 2     |

    Scenario: Newest items that would begin with a call's output leave the output out
      Given an agent added these items to the session:
        """
        [
          {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "clock",
           "arguments": "{}"},
          {"type": "function_call_output", "call_id": "call_1", "output": "14:05"},
          {"type": "message", "id": "msg_1", "role": "assistant", "content": "It is 14:05."}
        ]
        """
      When the agent asks for its newest 2 items
      Then the agent gets the last 1 item it added
