@faults
Feature: Server faults
  Redis goes down, freezes, fills up, restarts empty and drops connections.
  The memory must then tell the app exactly what happened to each message,
  never store one twice, and work again as soon as the server does. Each
  scenario breaks a throwaway server of its own.

  Background:
    Given the memory runs on a server of its own
    And a new session "alice"

  Rule: A server that is down gives a prompt, truthful error, and the memory works once it is back

    Scenario: A message sent while the server is down is reported in time as possibly not stored
      Given the user said "hello"
      And the server went down
      When the user tries to say "are you there?"
      Then the user was told within 2 seconds that the message may not have been stored

    Scenario: The same memory works again once the server is back
      Given the user said "hello"
      And the server went down
      And the user tried to say "are you there?"
      When the server comes back
      And the app retries the failed message
      Then the context is:
        | role | content        |
        | user | hello          |
        | user | are you there? |

    Scenario: Reading while the server is down fails in time, saying the memory is unavailable
      Given the user said "hello"
      And the server went down
      When the app tries to load the context
      Then the app was told within 2 seconds that the memory is unavailable

    Scenario: Asking how long a session has left while the server is down fails in time
      Given the user said "hello"
      And the server went down
      When the app tries to read how long the session has left
      Then the app was told within 2 seconds that the memory is unavailable

    Scenario: Clearing a session while the server is down reports that it may not have happened
      Given the user said "hello"
      And the server went down
      When the app tries to clear the session
      Then the app was told within 2 seconds that the session may not have been cleared

    Scenario: Clearing a user's session while the server is down reports that it may not have happened
      Given user "ada" said "Plan my Paris trip" in session "paris"
      And the server went down
      When user "ada" tries to clear session "paris"
      Then the app was told within 2 seconds that the session may not have been cleared

    Scenario: Exporting a session while the server is down fails in time, saying the memory is unavailable
      Given the user said "hello"
      And the server went down
      When the app tries to export the session
      Then the app was told within 2 seconds that the memory is unavailable

    Scenario: Importing into a session while the server is down fails in time, saying the memory is unavailable
      Given the user said "hello"
      And the session was exported
      And the server went down
      When the app imports the export into the session, appending
      Then the app was told within 2 seconds that the memory is unavailable

    Scenario: Compacting a session while the server is down fails in time, saying the memory is unavailable
      Given the user said "hello"
      And the user said "are you there?"
      And the server went down
      When the app tries to compact the session, keeping the newest 1 message
      Then the app was told within 2 seconds that the memory is unavailable

    Scenario: Listing a user's sessions while the server is down fails in time, saying the memory is unavailable
      Given user "ada" said "Plan my Paris trip" in session "paris"
      And the server went down
      When the sessions of user "ada" are listed with limit = 10
      Then the app was told within 2 seconds that the memory is unavailable

  Rule: A message resent after a timeout is stored once

    Scenario: A message sent while the server is frozen is stored exactly once
      Given the user said "hello"
      When the user says "are you there?" while the server is frozen for 1500 milliseconds
      Then the server received that message more than once
      And the context is:
        | role | content        |
        | user | hello          |
        | user | are you there? |

  Rule: A full server refuses a message whole, and still answers reads

    Scenario: A message sent to a server out of memory is refused and nothing of it is stored
      Given the user said "hello"
      And the server is out of memory
      When the user tries to say "are you there?"
      Then the message is refused by the server with the reason "out of memory"
      And the context is:
        | role | content |
        | user | hello   |

  Rule: A server that cannot run scripts is said so, and nothing is written

    Scenario: A message sent to a server without scripting is refused, saying why
      Given the server was restarted without scripting
      When the user tries to say "hello"
      Then the app was told that the server cannot run scripts
      And the server holds no key at all

  Rule: Lost connections and lost data are not errors

    Scenario: A dropped connection does not stop the next message
      Given the user said "hello"
      And the server dropped every connection
      When the user says "are you there?"
      Then the context is:
        | role | content        |
        | user | hello          |
        | user | are you there? |

    Scenario: A server restarted without its data gives an empty context
      Given the user said "hello"
      When the server restarts without its data
      Then the context is empty
