Feature: Sessions without expiry
  Some products keep every session until it is cleared on purpose. Without a
  configured expiry time, no amount of silence may make the memory forget.

  Rule: Without an expiry time a session is kept until it is cleared

    Scenario: A session without an expiry time survives a year of silence
      Given a new session "alice"
      And the user said "Remember me."
      When 525600 minutes pass
      Then the context contains 1 message

    Scenario: Clearing a session forgets everything it held
      Given a new session "alice"
      And the user said "Forget me."
      When the session is cleared
      Then the context is empty
