Feature: Session expiry
  A session is forgotten after a period without messages, so that old
  conversations do not pile up forever. It must never be forgotten while the
  user is still talking, and must be forgotten once the time is up.

  Background:
    Given sessions expire after 30 minutes of inactivity
    And a new session "alice"

  Rule: A session is forgotten after the expiry time without messages

    Scenario: The context is still there one second before the session expires
      Given the user said "Remember my order number 4711."
      When 1799 seconds pass
      Then the context contains 1 message

    Scenario: The context is gone exactly when the expiry time is reached
      Given the user said "Remember my order number 4711."
      When 1800 seconds pass
      Then the context is empty

    Scenario: The context is gone one second after the session expires
      Given the user said "Remember my order number 4711."
      When 1801 seconds pass
      Then the context is empty

    Scenario: The context is gone after a long silence
      Given the user said "Remember my order number 4711."
      When 31 minutes pass
      Then the context is empty

    Scenario: A user who comes back after the expiry time starts afresh
      Given the user said "My name is Ada."
      And 31 minutes passed
      When the user says "Do you remember me?"
      Then the context is:
        | role | content             |
        | user | Do you remember me? |

  Rule: Every message restarts the expiry time

    Scenario: The context survives while the user keeps talking
      Given the user said "one"
      And 20 minutes passed
      And the user said "two"
      When 20 minutes pass
      Then the context is:
        | role | content |
        | user | one     |
        | user | two     |

    Scenario: The whole context expires together after the last message
      Given the user said "one"
      And 20 minutes passed
      And the user said "two"
      When 31 minutes pass
      Then the context is empty

  Rule: The memory tells how long a session has left, in seconds

    Scenario: A session just written has the whole expiry time left
      Given the user said "hello"
      Then the session expires in 1800 seconds

    Scenario: The time left goes down as time passes
      Given the user said "hello"
      When 10 minutes pass
      Then the session expires in 1200 seconds

    Scenario: A message restarts the time left
      Given the user said "hello"
      And 10 minutes passed
      When the user says "still here"
      Then the session expires in 1800 seconds
