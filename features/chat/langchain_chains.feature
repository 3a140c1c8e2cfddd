Feature: Turns through a LangChain chain
  Apps built on LangChain keep their turns in the memory. LangChain's own
  RunnableWithMessageHistory stores a turn from a callback and only logs a
  write that failed, so the user is forgotten without anyone noticing. The
  chain chat-memory wraps stores the whole turn in one write, and the app
  learns at once when it could not.

  Rule: Each turn through the chain is remembered in the next one

    Scenario: The chain gives the model what the user said in the previous turn
      Given a new session "ada"
      And the app chats through a LangChain chain
      And the model will reply "Nice to meet you, Ada."
      And the user asked the chain "My name is Ada."
      When the user asks the chain "What is my name?"
      Then the model was prompted with:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |
        | user      | What is my name?       |

    Scenario: A chain that answers in plain text stores the answer as the assistant's
      Given a new session "ada"
      And the app chats through a LangChain chain that answers in plain text
      And the model will reply "Nice to meet you, Ada."
      When the user asks the chain "My name is Ada."
      Then the context is:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |

    Scenario: A chain that puts its answer under a key stores that answer
      Given a new session "ada"
      And the app chats through a LangChain chain that puts its answer under "answer"
      And the model will reply "Nice to meet you, Ada."
      When the user asks the chain "My name is Ada."
      Then the context is:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |

    Scenario: An asyncio app whose chain has only the blocking memory service remembers each turn
      Given a new session "ada"
      And the app awaits a LangChain chain that has only the blocking memory service
      And the model will reply "Nice to meet you, Ada."
      And the user asked the chain "My name is Ada."
      When the user asks the chain "What is my name?"
      Then the model was prompted with:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |
        | user      | What is my name?       |

    Scenario: A chat model wrapped alone is given the history before the question
      Given a new session "ada"
      And the app chats through a LangChain chat model wrapped alone
      And the model will reply "Nice to meet you, Ada."
      And the user asked the chain "My name is Ada."
      When the user asks the chain "What is my name?"
      Then the model was prompted with:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |
        | user      | What is my name?       |

  Rule: The call's config and options reach the chain's model, as tracing and callbacks need

    Scenario: The call's tags reach the model
      Given a new session "ada"
      And the app chats through a LangChain chain
      When the user asks the chain in a call tagged "support": "My name is Ada."
      Then the model ran with the tag "support"

    Scenario: The call's stop words reach the model
      Given a new session "ada"
      And the app chats through a LangChain chat model wrapped alone
      When the user asks the chain in a call that stops at "END": "My name is Ada."
      Then the model ran with the stop word "END"

  Rule: A turn the chain cannot store fails the call, and storing it again remembers it once

    @faults
    Scenario: A turn whose server goes down while the model answers fails with the turn
      Given the memory runs on a server of its own
      And a new session "ada"
      And the app chats through a LangChain chain
      And the model will reply "Nice to meet you, Ada."
      And the server will go down while the model answers
      When the user asks the chain "My name is Ada."
      Then the turn may not have been stored, and the error hands back the answer "Nice to meet you, Ada." with the turn

    @faults
    Scenario: The turn a failed chain handed back is remembered once, though stored twice
      Given the memory runs on a server of its own
      And a new session "ada"
      And the app chats through a LangChain chain
      And the model will reply "Nice to meet you, Ada."
      And the server will go down while the model answers
      And the user asked the chain "My name is Ada."
      When the server comes back
      And the turn the error handed back is stored twice
      Then the context is:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |

    @faults
    Scenario: A Redis user who may not write gets a refusal with the turn, and nothing is stored
      Given the memory runs as a Redis user allowed what the README lists except "evalsha"
      And a new session "ada"
      And the app chats through a LangChain chain
      And the model will reply "Nice to meet you, Ada."
      When the user asks the chain "My name is Ada."
      Then the turn was not stored, and the error hands back the answer "Nice to meet you, Ada." with the turn
      And the context is empty

  Rule: What the chain cannot store is refused before the model is asked, or handed back

    Scenario: An input without the question is refused before the model is asked
      Given a new session "ada"
      And the app chats through a LangChain chain
      When the app invokes the chain with the input {"topic": "names"}
      Then the chain refuses the input with the reason "the chain's input has no 'question'"
      And the model was not asked
      And the context is empty

    Scenario Outline: A question that is not text or messages is refused before the model is asked
      Given a new session "ada"
      And the app chats through a LangChain chain
      When the app invokes the chain with the input {"question": <question>}
      Then the chain refuses the input with the reason "the chain's input must be text, a message or a list of messages, not <type>"
      And the model was not asked
      And the context is empty

      Examples:
        | question  | type |
        | 42        | int  |
        | ["hello"] | list |

    Scenario: An answer in content blocks is handed back as its text, and the question is not stored
      Given a new session "ada"
      And the app chats through a LangChain chain
      And the chain's model will reply in content blocks:
        | kind  | text                  |
        | text  | Nice to meet you, Ada |
        | image |                       |
        | plain | .                     |
      When the user asks the chain "My name is Ada."
      Then the error hands back the answer "Nice to meet you, Ada." with the question alone
      And the answer is refused with the reason "content must be text to be stored exactly, got list"
      And the context is empty

    Scenario: An answer that is neither text nor messages is handed back, and the question is not stored
      Given a new session "ada"
      And the app chats through a LangChain chain that answers in JSON
      And the model will reply "{"name": "Zoë"}"
      When the user asks the chain "What is my name?"
      Then the error hands back the answer "{"name": "Zoë"}" with the question alone
      And the answer is refused with the reason "the chain's output must be text, a message or a list of messages, not dict"
      And the context is empty
