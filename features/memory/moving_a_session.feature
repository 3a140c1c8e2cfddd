Feature: Moving a session
  A session is backed up, moved to another deployment, or handed to its user
  as JSON Lines. Nothing may change on the way: ids, times, tool calls and
  metadata come back exactly, and an import never overwrites a session in use.

  Rule: An exported session, imported elsewhere, is identical

    Scenario: A session with a tool exchange and metadata survives export and import
      Given a new session "paris"
      And the user said "Weather in Paris?"
      And the assistant called the tool "weather" with the arguments {"city": "Paris"}
      And the tool "weather" answered "18°C, 你好 👋"
      And the session has this metadata:
        """
        {"title": "Paris trip", "tags": ["travel"]}
        """
      When the session is exported
      And the export is imported as session "paris-copy"
      Then session "paris-copy" holds exactly what session "paris" holds

  Rule: Messages brought over from another store keep the times they were sent

    Scenario: Messages kept elsewhere with their times but no ids are stored at those times, each given an id
      Given a new session "paris"
      And the time is 2026-12-02 10:00:00 UTC
      When the app stores these messages it kept elsewhere, with the times they were sent:
        | role      | content            | sent at                 |
        | user      | Plan my Paris trip | 2026-11-30 09:00:00 UTC |
        | assistant | Gladly! When?      | 2026-11-30 09:00:05 UTC |
      Then the session's messages, each with an id of its own, were sent at:
        | content            | sent at                 |
        | Plan my Paris trip | 2026-11-30 09:00:00 UTC |
        | Gladly! When?      | 2026-11-30 09:00:05 UTC |

  Rule: An import never overwrites a session in use

    Scenario: Importing into a session that holds messages is refused, and nothing changes
      Given a new session "paris"
      And the user said "from the backup"
      And the session was exported
      And a new session "rome"
      And the user said "mine"
      When the app imports the export into the session
      Then the message is refused with the reason "already holds messages or metadata: import with append=True to add to it"
      And the context is:
        | role | content |
        | user | mine    |

    Scenario: Importing with append adds only the messages the session does not hold
      Given a new session "paris"
      And the user sent message "m-1" saying "hello"
      And the assistant sent message "m-2" saying "hi there"
      And the user sent message "m-3" saying "how are you?"
      And the session was exported
      And a new session "rome"
      And the user sent message "m-1" saying "hello"
      When the app imports the export into the session, appending
      Then the import skipped 1 message
      And the import added 2 messages
      And the context is:
        | role      | content      |
        | user      | hello        |
        | assistant | hi there     |
        | user      | how are you? |

    Scenario: Importing with append keeps the session's own metadata
      Given a new session "paris"
      And the user said "bonjour"
      And the session has this metadata:
        """
        {"title": "Paris"}
        """
      And the session was exported
      And a new session "rome"
      And the user said "ciao"
      And the session has this metadata:
        """
        {"title": "Rome"}
        """
      When the app imports the export into the session, appending
      Then the session's metadata is:
        """
        {"title": "Rome"}
        """

    Scenario: Importing into a session with an entry it cannot read is refused, naming the entry
      Given a new session "paris"
      And the user said "from the backup"
      And the session was exported
      And a new session "rome"
      And the user said "mine"
      And another service stored this entry for the session:
        """
        hello
        """
      When the app imports the export into the session, appending
      Then the import is refused, naming entry 2 of the session as corrupt
      And exporting the session fails, naming entry 2 as corrupt

    Scenario: Importing into a session whose key holds another type is refused, naming the key, and nothing is written
      Given a new session "paris"
      And the user said "from the backup"
      And the session has this metadata:
        """
        {"title": "Paris"}
        """
      And the session was exported
      And a new session "rome"
      And another service stored a list under the session's seen key
      When the app imports the export into the session
      Then the refusal names the session's seen key as holding a list
      And the context is empty
      And the session has no metadata

  Rule: A broken export is refused whole, and nothing is written

    Scenario: An export with a broken line is refused, naming the line
      When the app imports this export into the session:
        """
        {"chat_memory_export": 1, "session_id": "x", "metadata": {}}
        {"v": 1, "id": "m-1", "role": "user", "content": "fine", "created_at": 1796205600.0}
        {"v": 1, "id": "m-2", "role": "wizard", "content": "bad", "created_at": 1796205600.0}
        """
      Then the message is refused with the reason "line 3 of the export"
      And nothing is stored

    Scenario Outline: An exported message without its <missing> is refused, naming the line
      When the app imports this export into the session:
        """
        {"chat_memory_export": 1, "session_id": "x", "metadata": {}}
        <line>
        """
      Then the message is refused with the reason "line 2 of the export has no id or created_at"
      And nothing is stored

      Examples:
        | missing | line                                                                |
        | id      | {"v": 1, "role": "user", "content": "hi", "created_at": 1796205600.0} |
        | time    | {"v": 1, "id": "m-1", "role": "user", "content": "hi"}                |

    Scenario Outline: An exported message sent at <time> is refused, naming the line
      A time that is not a finite number would be stored as text no JSON reader accepts.

      When the app imports this export into the session:
        """
        {"chat_memory_export": 1, "session_id": "x", "metadata": {}}
        {"v": 1, "id": "m-1", "role": "user", "content": "hi", "created_at": <time>}
        """
      Then the message is refused with the reason "line 2 of the export: created_at must be a finite number"
      And nothing is stored

      Examples:
        | time     |
        | NaN      |
        | Infinity |
        | "noon"   |
        | true     |

    Scenario: An empty text is not an export
      When the app imports this export into the session:
        """
        """
      Then the message is refused with the reason "must be the header"
      And nothing is stored

    Scenario: Text that is not JSON is not an export
      When the app imports this export into the session:
        """
        Hello, this is not an export
        """
      Then the message is refused with the reason "line 1 of the export is not JSON"
      And nothing is stored

    Scenario: Text that is not an export is refused
      When the app imports this export into the session:
        """
        {"role": "user", "content": "just a message"}
        """
      Then the message is refused with the reason "must be the header"
      And nothing is stored
