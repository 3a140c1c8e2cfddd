@real_redis
Feature: Expiry on a real server
  The other expiry scenarios move a frozen clock. These prove that the Redis
  server itself forgets a session when its time is up, in real time, so that
  a time to live that is never set, or set in the wrong unit, cannot hide
  behind the test clock.

  Rule: The server expires a session by itself

    Scenario: Right after a message the session is still there
      Given sessions expire after 500 milliseconds of inactivity, in real time
      And a new session "alice"
      When the user says "hello"
      Then the context contains 1 message

    @slow
    Scenario: The server forgets the session once its short expiry time is up
      Given sessions expire after 500 milliseconds of inactivity, in real time
      And a new session "alice"
      And the user said "hello"
      When 800 milliseconds really pass
      Then the context is empty
