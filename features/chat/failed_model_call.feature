Feature: Failed model calls
  Models time out and get overloaded. A failed call must leave no half-written
  turn behind (a question without its answer confuses every later prompt),
  and the caller must see the model's own error to decide what to do.

  Background:
    Given a new session "ada"
    And the model will reply "Nice to meet you, Ada."
    And the user asked "My name is Ada."

  Rule: A failed model call stores nothing of its turn

    Scenario: A failed turn leaves the remembered session as it was
      Given the model will fail
      When the user asks "What is my name?"
      Then the context is:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |

    Scenario: The caller gets the model's own error
      Given the model will fail
      When the user asks "What is my name?"
      Then the turn fails with the model's own error

    Scenario: The turn after a failed one sees the earlier history intact
      Given the model will fail
      And the user asked "What is my name?"
      When the user asks "Are you there?"
      Then the model was prompted with:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |
        | user      | Are you there?         |
