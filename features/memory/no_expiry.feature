Feature: Sessions without expiry
  Some products keep every session until it is cleared on purpose. Without a
  configured expiry time, no amount of silence may make the memory forget.

  Rule: Without an expiry time a session is kept until it is cleared

    Scenario: A session without an expiry time survives a year of silence
      Given a new session "alice"
      And the user said "Remember me."
      When 525600 minutes pass
      Then the context contains 1 message

    Scenario: A session without an expiry time has no time left to tell
      Given a new session "alice"
      And the user said "Remember me."
      Then the memory reports no time left for the session

    Scenario: Clearing a session forgets everything it held
      Given a new session "alice"
      And the user said "Forget me."
      When the session is cleared
      Then the context is empty

  Rule: Turning expiry off keeps the sessions stored while it was on

    Scenario: A session stored with an expiry time is kept once expiry is turned off
      Given sessions expire after 30 minutes of inactivity
      And a new session "alice"
      And the user said "Remember me."
      And the app was redeployed with sessions that never expire
      And the user said "I am still here."
      When 31 minutes pass
      Then the context contains 2 messages

    Scenario: A session stored with an expiry time keeps none once an app serving other sessions takes its next message
      Given sessions expire after 30 minutes of inactivity
      And a new session "alice"
      And the user said "Remember me."
      And the app was redeployed with sessions that never expire
      And the app has since served other sessions
      When the user says "I am still here."
      Then the session's keys never expire

    Scenario: Messages stored in one write once expiry is turned off are kept too
      Given sessions expire after 30 minutes of inactivity
      And a new session "alice"
      And the user said "Remember me."
      And the app was redeployed with sessions that never expire
      When these messages are stored in one write:
        | role      | content        |
        | user      | Are you there? |
        | assistant | Always.        |
      And 31 minutes pass
      Then the context contains 3 messages
