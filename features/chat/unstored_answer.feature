Feature: An answer that cannot be stored
  Sometimes the model answers but the memory cannot store the turn: another
  program wrote over one of the session's keys, the answer is not valid text,
  or Redis refused the write. The user must still get the answer, the app
  must learn that the turn was not remembered, and storing that turn later,
  even twice, must remember it exactly once.

  Rule: The answer comes back with the whole turn, ready to be stored again

    Scenario: The caller gets the answer and learns that nothing was stored
      Given a new session "ada"
      And the model will reply "Nice to meet you, Ada."
      And another service stored a string under the session's seen key
      When the user asks "My name is Ada."
      Then the turn was not stored, and the error hands back the answer "Nice to meet you, Ada." with the turn

    Scenario: A tool call the model answered with comes back as it would have been stored
      Given a new session "ada"
      And the model will call the tool "weather" with the arguments {"city": "Paris"}
      And another service stored a string under the session's seen key
      When the user asks "Weather in Paris?"
      Then the turn was not stored, and the error hands back the tool call "weather" with the turn

    Scenario: Storing the handed-back turn twice remembers it once
      Given a new session "ada"
      And the model will reply "Nice to meet you, Ada."
      And another service stored a string under the session's seen key
      And the user asked "My name is Ada."
      And the other service's value was deleted
      When the turn the error handed back is stored twice
      Then the context is:
        | role      | content                |
        | user      | My name is Ada.        |
        | assistant | Nice to meet you, Ada. |

    Scenario: An answer that is not valid text is handed back, and nothing is written
      Given a new session "ada"
      And the model will reply the JSON string "Hello \ud83d"
      When the user asks "Say hello with an emoji."
      Then the turn was not stored, and the error hands back the JSON string "Hello \ud83d" with the turn
      And nothing is stored

  Rule: An answer that is neither text nor a message is refused, and nothing is written

    Scenario: A model that answers with a number is refused, naming what it returned
      Given a new session "ada"
      And the model will reply the number 42
      When the user tries to ask "How old are you?"
      Then the turn is refused with the reason "the model returned int, not a string or an assistant Message", word for word
      And nothing is stored
