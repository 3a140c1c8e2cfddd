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

    Scenario: A message retried after the history limit dropped it is not remembered again
      Given the history limit is 3 messages
      And a new session "alice"
      And the user sent message "m-1" saying "Book a table for two."
      And the user and the assistant exchanged 3 messages
      When message "m-1" is sent again
      Then the context is messages 1 to 3 of the exchange

    Scenario: A retried turn keeps the answer when only one message is kept
      Given the history limit is 1 message
      And a new session "alice"
      And the user sent message "m-1" saying "Book a table for two."
      And the assistant sent message "m-2" saying "Done: Friday at eight."
      When messages "m-1" and "m-2" are sent again
      Then the context is:
        | role      | content                |
        | assistant | Done: Friday at eight. |

    Scenario: Two different messages with the same text are both remembered
      Given a new session "alice"
      And the user said "yes"
      When the user says "yes"
      Then the context contains 2 messages

  Rule: A message id stands for one message

    Scenario: Another message under a stored id is refused and changes nothing
      Given a new session "alice"
      And the user sent message "m-1" saying "Book a table for two."
      When the app sends message "m-1" saying "Cancel my booking."
      Then the message is refused as another message under a stored id
      And the context is:
        | role | content               |
        | user | Book a table for two. |

    Scenario: In a turn, the refusal names the id that is stored with other content
      Given a new session "alice"
      And the user sent message "m-1" saying "Book a table for two."
      And the assistant sent message "m-2" saying "Done: Friday at eight."
      When the app tries to send these chat messages:
        """
        [
          {"role": "user", "content": "Book a table for two.", "id": "m-1"},
          {"role": "assistant", "content": "Sorry, we are full.", "id": "m-2"}
        ]
        """
      Then the message is refused with the reason "message id 'm-2' is already stored with other content; nothing of this write was stored"
      And the refusal names the message id "m-2"
      And the context is:
        | role      | content                |
        | user      | Book a table for two.  |
        | assistant | Done: Friday at eight. |

  Rule: A retry is recognised however the app sends it

    Scenario: A turn retried as chat messages is remembered once
      Given a new session "alice"
      And the user sent message "m-1" saying "Book a table for two."
      And the assistant sent message "m-2" saying "Done: Friday at eight."
      When the app sends the last 2 messages again, as chat messages
      Then the context contains 2 messages

    Scenario: The newest message is recognised when ids are remembered for only a few
      Given the history limit is 2 messages
      And message ids are remembered for the newest 3 messages
      And a new session "alice"
      And the user and the assistant exchanged 4 messages
      When the last message is sent again
      Then the context is messages 3 to 4 of the exchange

  Rule: A retried message is answered with the stored version, never stored again

    Scenario: A message sent again minutes later keeps its first time
      Given the time is 2026-12-02 10:00:00 UTC
      And the user sent message "m-1" saying "Book a table for two."
      And 5 minutes passed
      When the user sends message "m-1" saying "Book a table for two."
      Then message "m-1" is stored once, sent at 2026-12-02 10:00:00 UTC

    Scenario: A retry through a client that decodes responses as text keeps the first time too
      Given the memory's client decodes responses as text
      And the time is 2026-12-02 10:00:00 UTC
      And the user sent message "m-1" saying "Book a table for two."
      And 5 minutes passed
      When the user sends message "m-1" saying "Book a table for two."
      Then message "m-1" is stored once, sent at 2026-12-02 10:00:00 UTC

  Rule: The app can take back the newest message, and send it again

    Scenario: The newest message is taken back and the rest stays
      Given the user sent message "m-1" saying "Book a table for Friday"
      And the assistant sent message "m-2" saying "For how many?"
      And the user sent message "m-3" saying "Four, please"
      When the app takes back the newest message
      Then the message taken back says "Four, please"
      And the context is:
        | role      | content                 |
        | user      | Book a table for Friday |
        | assistant | For how many?           |

    Scenario: The newest message is taken back through a client that decodes responses as text
      Given the memory's client decodes responses as text
      And the user sent message "m-1" saying "Book a table for Friday"
      And the assistant sent message "m-2" saying "For how many?"
      When the app takes back the newest message
      Then the message taken back says "For how many?"

    Scenario: A message taken back can be sent again under its id
      Given the user sent message "m-1" saying "Book a table for Friday"
      And the assistant sent message "m-2" saying "For how many?"
      And the app took back the newest message
      And the assistant sent message "m-2" saying "For how many people?"
      Then the context is:
        | role      | content                 |
        | user      | Book a table for Friday |
        | assistant | For how many people?    |

    Scenario: Taking back from a session with nothing stored takes nothing
      When the app takes back the newest message
      Then nothing was taken back
      And the context is empty
