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
