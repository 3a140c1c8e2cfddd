Feature: The model sees the remembered session
  Users report "it forgot who I was mid-conversation": the history was
  stored, but the next prompt did not carry it. These scenarios run the chat
  turn the product runs and look at the exact prompt the model received.

  Rule: Every turn's prompt carries the whole remembered session, in order

    Scenario: The model is reminded of the name the user gave earlier
      Given a new session "ada"
      And the model will reply "Nice to meet you, Ada."
      And the user asked "My name is Ada."
      When the user asks "What is my name?"
      Then the model was prompted with:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |
        | user      | What is my name?       |

    Scenario: Both sides of a turn are remembered for the next one
      Given a new session "ada"
      And the model will reply "Nice to meet you, Ada."
      When the user asks "My name is Ada."
      Then the assistant answers "Nice to meet you, Ada."
      And the context is:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |

    Scenario: An answer the model gave an id of its own is stored under that id
      Given the model will reply with message "resp-1" saying "Hello, Ada."
      When the user asks "Hi, I am Ada."
      Then the answer is stored as message "resp-1"

  Rule: The system prompt always comes first and is never remembered

    Scenario: The system prompt opens every prompt but stays out of the history
      Given the system prompt is "You are a helpful travel agent."
      And a new session "ada"
      And the model will reply "Where would you like to go?"
      And the user asked "I need a holiday."
      When the user asks "Somewhere warm, please."
      Then the model was prompted with:
        | role      | content                         |
        | system    | You are a helpful travel agent. |
        | user      | I need a holiday.               |
        | assistant | Where would you like to go?     |
        | user      | Somewhere warm, please.         |

  Rule: A chat built with a system prompt that is not text, or without a model, is refused at once

    Scenario: A system prompt that is not text is refused when the chat is built
      When the app sets up the chat with system_prompt = 42
      Then the setup is refused with the reason "system_prompt must be a string or None", word for word

    Scenario: Something that is not a model is refused when the chat is built
      When the app sets up the chat with an object that is not a model
      Then the setup is refused with the reason "the model cannot answer: it has no complete(messages) method", word for word

  Rule: A prompt carries only its own session, and only while it is remembered

    Scenario Outline: The prompt for <asker> never carries what <other> said
      Given the user of session "alice" asked "I am Alice."
      And the user of session "bob" asked "I am Bob."
      When the user of session "<asker>" asks "Who am I?"
      Then the last prompt mentions "I am <name>."
      And the last prompt does not mention "<other>"

      Examples:
        | asker | name  | other |
        | alice | Alice | Bob   |
        | bob   | Bob   | Alice |

    Scenario: After the session expires the prompt no longer carries the old conversation
      Given sessions expire after 30 minutes of inactivity
      And a new session "ada"
      And the user asked "My name is Ada."
      And 31 minutes passed
      When the user asks "What is my name?"
      Then the model was prompted with:
        | role | content          |
        | user | What is my name? |

  Rule: The app can preview a turn's prompt without running it

    Scenario: The preview is the prompt the turn would send, and nothing is stored
      Given the system prompt is "You are a travel agent."
      And the session remembers:
        | role      | content         |
        | user      | My name is Ada. |
        | assistant | Hello, Ada.     |
      When the app previews the prompt for "What is my name?"
      Then the preview is:
        | role      | content                 |
        | system    | You are a travel agent. |
        | user      | My name is Ada.         |
        | assistant | Hello, Ada.             |
        | user      | What is my name?        |
      And the context contains 2 messages
