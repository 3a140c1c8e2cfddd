Feature: Refusing bad input
  A message the memory cannot store faithfully must be refused loudly, with a
  reason, and must leave nothing behind: a half-stored or silently altered
  message is worse than an error the app can see.

  Rule: An invalid message is refused with a reason and nothing is stored

    Scenario Outline: A message with the role "<role>" is refused
      Given a new session "alice"
      When the app sends a message with the role "<role>"
      Then the message is refused with the reason "role must be one of assistant, system, tool, user, not '<role>'", word for word
      And nothing is stored

      Examples:
        | role      |
        | wizard    |
        | User      |
        | developer |

    Scenario: A message whose content is not text is refused
      Given a new session "alice"
      When the app sends a message whose content is the number 42
      Then the message is refused with the reason "content must be a string, not int", word for word
      And nothing is stored

    Scenario: A message larger than the memory accepts is refused
      Given a new session "alice"
      When the app sends a message of 2000000 characters
      Then the message is refused with the reason "over the limit"
      And nothing is stored

    Scenario: A message exactly as large as the limit is kept
      Given a new session "alice"
      And a message may take at most 300 bytes once stored
      When the app sends a message whose stored form is exactly the size limit
      Then the context contains 1 message

    Scenario: A message one byte over the limit is refused
      Given a new session "alice"
      And a message may take at most 300 bytes once stored
      When the app sends a message whose stored form is one byte over the size limit
      Then the message is refused with the reason "encodes to 301 bytes, over the limit of 300"
      And the refusal names a user message of 301 bytes, over the limit of 300
      And nothing is stored

    Scenario: One call may store as many messages as the memory remembers ids for
      A retry of a longer call could not be recognised whole, so it is refused.

      Given a new session "alice"
      And message ids are remembered for the newest 20 messages
      When the app sends 20 messages in one call
      Then the context contains 20 messages

    Scenario: A call of more messages than the memory remembers ids for is refused whole
      Given a new session "alice"
      And message ids are remembered for the newest 20 messages
      When the app sends 21 messages in one call
      Then the message is refused with the reason "one call may append at most idempotency_window (20) messages, not 21"
      And nothing is stored

    Scenario: A call of no messages is refused
      Given a new session "alice"
      When the app sends 0 messages in one call
      Then the message is refused with the reason "add_messages needs at least one message"
      And nothing is stored

    Scenario: A call that gives two messages one id is refused whole
      Given a new session "alice"
      When the app sends two messages under the id "m-1" in one call
      Then the message is refused with the reason "message ids must be unique within one call"
      And nothing is stored

  Rule: A message needs a valid session id

    Scenario: A message without a session id is refused
      When the app sends a message to a session with an empty id
      Then the message is refused with the reason "session id must be 1 to 256 characters"
      And nothing is stored

    Scenario: A session id longer than 256 characters is refused
      When the app sends a message to a session whose id is 300 characters long
      Then the message is refused with the reason "session id must be 1 to 256 characters"
      And nothing is stored

  Rule: A user's message needs a valid user id

    Scenario: A message for a user without an id is refused
      When the app sends a message for a user with an empty id
      Then the message is refused with the reason "user id must be 1 to 256 characters long, not 0"
      And nothing is stored

    Scenario: A user id longer than 256 characters is refused
      When the app sends a message for a user whose id is 300 characters long
      Then the message is refused with the reason "user id must be 1 to 256 characters long, not 300"
      And nothing is stored
