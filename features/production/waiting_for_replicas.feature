Feature: Waiting for replicas
  With the durability setting, each write waits until replicas confirm it.
  When too few do in time, the write is stored on the primary all the same:
  the app is told it is not confirmed, and given what to send again, which
  stores nothing twice.

  Scenario: A message no replica confirms is stored, and the app is told with the message to resend
    Given every write waits for 1 replica to confirm it within 200 milliseconds
    When the user tries to say "hello"
    Then the message is reported as stored but confirmed by no replica, with the message to resend
    And the context contains 1 message

  Scenario: A message taken back that no replica confirms is removed, and the app is handed it
    Given the user said "hello"
    And the app was redeployed with every write waiting for 1 replica to confirm it within 200 milliseconds
    When the app tries to take back the newest message
    Then the message taken back is reported as removed but confirmed by no replica, and handed back saying "hello"
    And the context is empty

  Scenario: An import no replica confirms is stored whole, and the app is handed what it imported
    Given a new session "paris"
    And the user said "hello"
    And the assistant replied "hi there"
    And the session has this metadata:
      """
      {"title": "Paris"}
      """
    And the session was exported
    And the app was redeployed with every write waiting for 1 replica to confirm it within 200 milliseconds
    And a new session "rome"
    When the app imports the export into the session
    Then the import is reported as stored but confirmed by no replica, having added 2 messages
    And the context is:
      | role      | content  |
      | user      | hello    |
      | assistant | hi there |
    And the session's metadata is:
      """
      {"title": "Paris"}
      """

  Scenario: An erasure no replica confirms erases everything, and the app is handed its report
    Given user "ada" said "Plan my Paris trip" in session "paris"
    And user "ada" said "Help me with my CV" in session "cv"
    And the app was redeployed with every write waiting for 1 replica to confirm it within 200 milliseconds
    When the app tries to forget user "ada"
    Then the erasure is reported as done but confirmed by no replica, having removed the sessions "paris" and "cv"
    And user "ada" has nothing stored
