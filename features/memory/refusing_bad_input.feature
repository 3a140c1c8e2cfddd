Feature: Refusing bad input
  A message the memory cannot store faithfully must be refused loudly, with a
  reason, and must leave nothing behind: a half-stored or silently altered
  message is worse than an error the app can see.

  Rule: An invalid message is refused with a reason and nothing is stored

    Scenario Outline: A message with the role "<role>" is refused
      Given a new session "alice"
      When the app sends a message with the role "<role>"
      Then the message is refused with the reason "role must be one of"
      And nothing is stored

      Examples:
        | role      |
        | wizard    |
        | User      |
        | developer |

    Scenario: A message whose content is not text is refused
      Given a new session "alice"
      When the app sends a message whose content is the number 42
      Then the message is refused with the reason "content must be a string"
      And nothing is stored

    Scenario: A message larger than the memory accepts is refused
      Given a new session "alice"
      When the app sends a message of 2000000 characters
      Then the message is refused with the reason "over the limit"
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
