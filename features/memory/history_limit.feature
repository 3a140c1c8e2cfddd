Feature: History limit
  Long sessions must not grow without bound, but the assistant must always
  keep the most recent messages, in order. A limit trimmed from the wrong end,
  or one message off, quietly loses what the user just said.

  Rule: Only the newest messages are kept

    Scenario: The oldest message is dropped when the limit is reached
      Given the history limit is 3 messages
      And a new session "alice"
      And the user said "one"
      And the assistant replied "two"
      And the user said "three"
      When the assistant replies "four"
      Then the context is:
        | role      | content |
        | assistant | two     |
        | user      | three   |
        | assistant | four    |

    Scenario: Nothing is dropped while the session is within the limit
      Given the history limit is 3 messages
      And a new session "alice"
      And the user said "one"
      When the assistant replies "two"
      Then the context contains 2 messages

    Scenario Outline: A limit of <limit> keeps exactly messages <first> to 25
      Given the history limit is <limit> messages
      And a new session "alice"
      When the user and the assistant exchange 25 messages
      Then the context is messages <first> to 25 of the exchange

      Examples:
        | limit | first |
        | 1     | 25    |
        | 10    | 16    |
        | 20    | 6     |
        | 24    | 2     |
        | 25    | 1     |
        | 30    | 1     |

  Rule: A lower limit applies from the next message on

    Scenario: The next message trims a session kept under a higher limit
      Given the history limit is 22 messages
      And a new session "alice"
      And the user and the assistant exchanged 21 messages
      And the app was redeployed with a history limit of 20 messages
      When the assistant replies "message 22"
      Then the context is messages 3 to 22 of the exchange

    Scenario: The next message trims a session several messages over the limit, in an app serving other sessions
      Given the history limit is 22 messages
      And a new session "alice"
      And the user and the assistant exchanged 22 messages
      And the app was redeployed with a history limit of 20 messages
      And the app has since served other sessions
      When the user says "message 23"
      Then the context is messages 4 to 23 of the exchange

  Rule: Rapid writes keep the newest messages, in order, roles intact

    Scenario: Fifty rapid writes keep exactly the last ten
      Given the history limit is 10 messages
      And a new session "alice"
      When the user and the assistant exchange 50 messages
      Then the context is messages 41 to 50 of the exchange
