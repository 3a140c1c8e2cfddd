Feature: Remembering a session
  The model is stateless: everything it knows about a user comes from the
  session's remembered messages. If a message is lost or shuffled, the
  assistant answers as if it had never met the user.

  Rule: A session nobody has talked in has nothing to remember

    Scenario: A new session has no context
      Given a new session "alice"
      Then the context is empty

  Rule: Every message is remembered, oldest first

    Scenario: A multi-turn conversation in Chinese is remembered verbatim and in order
      Given a new session "zhang-san"
      And the user said "我叫张三"
      And the assistant replied "你好张三，有什么事？"
      When the user says "我刚才说我叫什么？"
      Then the context is:
        | role      | content            |
        | user      | 我叫张三           |
        | assistant | 你好张三，有什么事？ |
        | user      | 我刚才说我叫什么？   |

    Scenario: The assistant's reply is remembered after the user's message
      Given a new session "ada"
      And the user said "My name is Ada."
      When the assistant replies "Nice to meet you, Ada."
      Then the context is:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |

    Scenario: A long exchange is remembered message by message
      Given a new session "alice"
      When the user and the assistant exchange 12 messages
      Then the context is messages 1 to 12 of the exchange

  Rule: A message the app sends twice is remembered once

    Scenario: A retried message is not remembered twice
      Given a new session "alice"
      And the user sent message "m-1" saying "Book a table for two."
      When the last message is sent again
      Then the context is:
        | role | content               |
        | user | Book a table for two. |

    Scenario: Two different messages with the same text are both remembered
      Given a new session "alice"
      And the user said "yes"
      When the user says "yes"
      Then the context contains 2 messages
