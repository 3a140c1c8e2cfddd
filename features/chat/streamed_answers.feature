Feature: Streamed answers
  People watch the answer appear word by word. The memory must remember the
  whole turn once the answer has ended, and nothing of a turn whose answer
  broke off or was abandoned: half an answer in the history would mislead
  every later turn.

  Rule: A streamed answer is remembered whole, once it has ended

    Scenario: A streamed answer is remembered whole with its question
      Given the model will reply "Once upon a time there was a dragon."
      When the user asks "Tell me a story." with the answer streamed
      Then the answer arrived in 8 pieces
      And the context is:
        | role      | content                              |
        | user      | Tell me a story.                     |
        | assistant | Once upon a time there was a dragon. |

  Rule: Nothing of a turn whose answer did not end is remembered

    Scenario: An answer that breaks off leaves the history as it was
      Given the user asked "Hello."
      And the model will stop streaming after 3 words
      When the user asks "Tell me a story." with the answer streamed
      Then the turn fails with the model's own error
      And the context is:
        | role      | content       |
        | user      | Hello.        |
        | assistant | echo: Hello.  |

    Scenario: An answer the user stops reading is not remembered
      Given the model will reply "Once upon a time there was a dragon."
      When the user stops reading the answer to "Tell me a story." after 2 words
      Then the context is empty

  Rule: Streaming needs a model that streams text

    Scenario: Streaming from a model that cannot stream is refused, and nothing is remembered
      Given the model cannot stream
      When the user tries to ask "Tell me a story." with the answer streamed
      Then the turn is refused with the reason "the model cannot stream: it has no stream(messages) method", word for word
      And nothing is stored

    Scenario: A model that streams something other than text is refused, and nothing is remembered
      Given the model streams the number 42
      When the user tries to ask "Tell me a story." with the answer streamed
      Then the turn is refused with the reason "the model streamed int, not text", word for word
      And nothing is stored
