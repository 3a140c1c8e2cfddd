Feature: Corrupt entries
  A stored entry that cannot be read (cut off, written by a broken service,
  in an unknown format) must be reported, naming the session and the entry.
  Dropping it would hand the model a shortened context without a word.

  Rule: An unreadable entry makes loading fail loudly

    Scenario: A cut-off entry is reported instead of being skipped
      Given a new session "alice"
      And the user said "first"
      And another service stored this entry for the session:
        """
        {"role": "user", "content": "cut off
        """
      When the user says "third"
      Then loading the context fails, naming entry 2 as corrupt

    Scenario: An entry in an unknown format version is reported
      Given a new session "alice"
      And another service stored this entry for the session:
        """
        {"v": 99, "role": "user", "content": "from the future"}
        """
      When the user says "hello"
      Then loading the context fails, naming entry 1 as corrupt

    Scenario: An entry with an unknown role is reported
      Given a new session "alice"
      And another service stored this entry for the session:
        """
        {"role": "wizard", "content": "abracadabra"}
        """
      When the user says "hello"
      Then loading the context fails, naming entry 1 as corrupt

  Rule: A session key holding another kind of value is reported by name, and nothing is written

    Scenario: A message for a session whose key holds a text value is refused
      Given a new session "alice"
      And another service stored the text "hello" under the session's history key
      When the user tries to say "hello"
      Then the message is refused by the server with the reason "holds a string"
      And the session's history key still holds the text "hello"

    Scenario: An entry that is not UTF-8 is reported, whatever the client decodes
      Given a new session "alice"
      And the memory's client decodes responses as text
      And another service stored an entry that is not UTF-8 for the session
      When the user says "hello"
      Then loading the context fails, naming entry 1 as corrupt
