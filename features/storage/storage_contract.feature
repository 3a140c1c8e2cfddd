@storage_contract
Feature: Storage contract
  This feature is about storage itself: other services read and write chat
  history directly in Redis, so the key of a session and the exact stored
  entry are a contract. A renamed key or a changed serializer would break
  those services silently; these scenarios break first.

  Rule: A session's history lives under one key, with the session id as its hash tag

    Scenario: A session's messages are stored under its own key
      Given a new session "alice"
      When the user says "hello"
      Then the session's history is stored under the key "chat:session:{alice}:history"

    Scenario: An e-mail address keeps its readable characters in the key
      Given a new session "ada@example.com/x"
      When the user says "hello"
      Then the session's history is stored under the key "chat:session:{ada@example.com%2Fx}:history"

    Scenario: Characters that could break the key are percent-encoded
      Given a new session "user:{42} *"
      When the user says "hello"
      Then the session's history is stored under the key "chat:session:{user%3A%7B42%7D%20%2A}:history"

  Rule: Each entry is versioned JSON in UTF-8, not ASCII-escaped

    Scenario: An entry is stored exactly in format version 1
      Given the time is 2026-12-02 10:00:00 UTC
      And a new session "alice"
      When the user sends message "m-1" saying "Call me "Ada", 我叫张三"
      Then stored entry 1 of the session is:
        """
        {"v":1,"id":"m-1","role":"user","content":"Call me \"Ada\", 我叫张三","created_at":1796205600.0}
        """

    Scenario: A tool exchange is stored exactly in format version 1, as compact JSON
      Given the time is 2026-12-02 10:00:00 UTC
      And a new session "alice"
      When the app sends these chat messages:
        """
        [
          {"id": "m-1", "role": "assistant", "content": null, "tool_calls": [
            {"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
          {"id": "m-2", "role": "tool", "content": "18°C", "tool_call_id": "call-1", "name": "weather"}
        ]
        """
      Then stored entry 1 of the session is:
        """
        {"v":1,"id":"m-1","role":"assistant","content":null,"created_at":1796205600.0,"tool_calls":[{"id":"call-1","type":"function","function":{"name":"weather","arguments":"{\"city\": \"Paris\"}"}}]}
        """
      And stored entry 2 of the session is:
        """
        {"v":1,"id":"m-2","role":"tool","content":"18°C","created_at":1796205600.0,"tool_call_id":"call-1","name":"weather"}
        """

    Scenario: An entry in the earlier plain shape still loads
      Given a new session "alice"
      And another service stored this entry for the session:
        """
        {"role": "user", "content": "I was stored before format versions."}
        """
      When the assistant replies "Welcome back."
      Then the context is:
        | role      | content                              |
        | user      | I was stored before format versions. |
        | assistant | Welcome back.                        |

    Scenario Outline: An entry another program wrote with empty optional fields loads with every field
      Given a new session "alice"
      And another service stored this entry for the session:
        """
        <entry>
        """
      Then the session's messages, with their ids and times, are this JSON:
        """
        [<read back>]
        """

      Examples:
        | entry                                                                                                                                         | read back                                                                                              |
        | {"v": 1, "id": "m-7", "role": "user", "content": "Hi.", "created_at": 1796205600, "tool_calls": [], "tool_call_id": null, "name": "ada"}     | {"role": "user", "content": "Hi.", "name": "ada", "id": "m-7", "created_at": 1796205600}               |
        | {"v": 1, "id": "m-8", "role": "tool", "content": "18°C", "tool_call_id": "call-1", "tool_calls": [], "created_at": 1796205600.5, "name": null} | {"role": "tool", "content": "18°C", "tool_call_id": "call-1", "id": "m-8", "created_at": 1796205600.5} |

    Scenario: An agent's item is stored as its JSON text, keys sorted, compact, not escaped
      When an agent adds these items to the session:
        """
        [{"role": "user", "content": "天气如何?", "type": "message"}]
        """
      Then the session stores the item as exactly this text:
        """
        {"content":"天气如何?","role":"user","type":"message"}
        """

  Rule: Every message id is remembered with a fingerprint, for retries

    Scenario: A message id is remembered with the digest of its entry and its time
      Given the time is 2026-12-02 10:00:00 UTC
      And a new session "alice"
      When the user sends message "m-1" saying "hi"
      Then the session remembers the id "m-1" under the key "chat:session:{alice}:seen" as:
        """
        b9ae644914aa7f4105169c454b396dd5 1796205600.0
        """

    Scenario: The ids of the messages in the history are remembered, and no list of them is kept
      Given the history limit is 20 messages
      And a new session "alice"
      And the user sent message "m-1" saying "one"
      When the user and the assistant exchange 20 messages
      Then the session remembers the ids of exactly the messages it holds, and keeps no list of ids

    Scenario: Messages stored in one write forget the ids of the messages they push out
      Given the history limit is 20 messages
      And a new session "alice"
      And the user and the assistant exchanged 20 messages
      When these messages are stored in one write:
        | role      | content         |
        | user      | Still there?    |
        | assistant | Yes, listening. |
      Then the session remembers the ids of exactly the messages it holds, and keeps no list of ids

    Scenario: With a retry window longer than the history, the ids of the newest messages are listed, oldest first
      Given message ids are remembered for the newest 2 messages
      And the history limit is 1 message
      And a new session "alice"
      And the user sent message "m-1" saying "one"
      And the user sent message "m-2" saying "two"
      When the user sends message "m-3" saying "three"
      Then the session remembers exactly the ids "m-2" and "m-3"

  Rule: A session's keys carry the expiry time of the session

    Scenario: Every key of an expiring session carries its time to live
      Given sessions expire after 30 minutes of inactivity
      And a new session "alice"
      When the user says "hello"
      Then the session's keys expire in 1800 seconds

    Scenario: Every message restarts the time to live of every key of the session
      Given sessions expire after 30 minutes of inactivity
      And a new session "alice"
      And the session has this metadata:
        """
        {"title": "Paris trip"}
        """
      And the user said "hello"
      And 10 minutes passed
      When the user says "still here"
      Then the session's keys expire in 1800 seconds

    Scenario: The keys of a session without expiry carry no time to live
      Given a new session "alice"
      When the user says "hello"
      Then the session's keys never expire

  Rule: A user's sessions live under the user's hash tag, listed in an index by last activity

    Scenario: A user's session, its metadata hash and the index are stored under the user's keys
      Given the time is 2026-12-02 10:00:00 UTC
      When user "ada@example.com" says "hello" in session "paris/1"
      Then the key "chat:user:{ada@example.com}:sessions" holds the sorted set:
        | member    | score         |
        | paris%2F1 | 1796205600000 |
      And the key "chat:user:{ada@example.com}:session:paris%2F1:meta" holds the hash:
        | field      | value         |
        | created_at | 1796205600000 |

    Scenario: Every key of a user's expiring session, and the index, carry its time to live
      Given sessions expire after 30 minutes of inactivity
      When user "ada" says "hello" in session "paris"
      Then every key of user "ada" expires in 1800 seconds

  Rule: Metadata is one JSON field of the session's meta hash; an export is JSON Lines

    Scenario: A session's metadata is stored as compact UTF-8 JSON
      Given a new session "alice"
      And the user said "hello"
      And the session has this metadata:
        """
        {"title": "Été à Paris", "pinned": true}
        """
      Then the key "chat:session:{alice}:meta" holds the hash:
        | field | value                                |
        | doc   | {"title":"Été à Paris","pinned":true} |

    Scenario Outline: Metadata that is <what> is refused
      Given a new session "alice"
      When the app gives the session this metadata:
        """
        <metadata>
        """
      Then the message is refused with the reason "<reason>"

      Examples:
        | what              | metadata         | reason                                               |
        | not plain JSON    | {"score": NaN}   | metadata must be plain JSON                          |
        | a list            | ["a", "b"]       | metadata must be a JSON object (a dict), not list    |
        | a string          | "a title"        | metadata must be a JSON object (a dict), not str     |

    Scenario: Metadata of exactly 16 KiB is stored
      Given a new session "alice"
      When the app gives the session metadata of 16384 bytes
      Then the metadata is stored

    Scenario: Metadata over 16 KiB is refused
      Given a new session "alice"
      When the app gives the session metadata of 16385 bytes
      Then the message is refused with the reason "metadata encodes to 16385 bytes, over the limit of 16384"

    Scenario: An export is a header line, then each message as stored
      Given the time is 2026-12-02 10:00:00 UTC
      And a new session "alice"
      And the user sent message "m-1" saying "hi"
      And the session has this metadata:
        """
        {"title": "Été"}
        """
      When the session is exported
      Then the export is:
        """
        {"chat_memory_export":1,"session_id":"alice","metadata":{"title":"Été"}}
        {"v":1,"id":"m-1","role":"user","content":"hi","created_at":1796205600.0}
        """
