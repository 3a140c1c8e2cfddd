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

    Scenario Outline: <problem> is reported with the reason
      Given another service stored this entry for the session:
        """
        <entry>
        """
      Then loading the context fails, naming entry 1 as corrupt: "<reason>", word for word

      Examples:
        | problem                                    | entry                                                                                                                                             | reason                                                            |
        | A list instead of an object                | ["user", "hi"]                                                                                                                                    | expected a JSON object, got list                                  |
        | An entry without content                   | {"role": "user"}                                                                                                                                  | missing 'role' or 'content'                                       |
        | An entry without a role                    | {"content": "hi"}                                                                                                                                 | missing 'role' or 'content'                                       |
        | An entry with an unknown field             | {"role": "user", "content": "hi", "mood": "x"}                                                                                                    | unexpected field(s) mood                                          |
        | An entry with two unknown fields           | {"role": "user", "content": "hi", "mood": "x", "tone": "y"}                                                                                       | unexpected field(s) mood, tone                                    |
        | An entry from a newer format               | {"v": 2, "role": "user", "content": "hi"}                                                                                                         | unsupported format version 2                                      |
        | A tool result naming no call               | {"role": "tool", "content": "18°C"}                                                                                                               | a tool message needs the tool_call_id it answers                  |
        | An assistant saying nothing                | {"v": 1, "id": "m-1", "role": "assistant", "content": null}                                                                                       | content may be None only for an assistant message with tool calls |
        | A v1 tool result naming no call            | {"v": 1, "id": "m-1", "role": "tool", "content": "18°C"}                                                                                          | a tool message needs the tool_call_id it answers                  |
        | A v1 entry with an unknown field           | {"v": 1, "id": "m-1", "role": "user", "content": "hi", "created_at": 1.5, "tool_calls": [], "tool_call_id": null, "name": "ada", "zodiac": "leo"} | unexpected field(s) zodiac                                        |
        | A v1 entry whose tool calls are not a list | {"v": 1, "id": "m-1", "role": "assistant", "content": null, "created_at": 1.5, "tool_calls": "weather"}                                           | tool_calls must be a list                                         |

    Scenario: Text that is not JSON is reported, with the parser's own words
      Given another service stored this entry for the session:
        """
        hello
        """
      Then loading the context fails, naming entry 1 as corrupt: "not valid UTF-8 JSON"

    Scenario: An entry another service wrote with its id and time loads with both
      Given another service stored this entry for the session:
        """
        {"v":1,"id":"m-9","role":"user","content":"hi","created_at":1796205600.0}
        """
      Then the session's messages, with their ids and times, are this JSON:
        """
        [{"role": "user", "content": "hi", "id": "m-9", "created_at": 1796205600.0}]
        """

    Scenario: A tool call another service stored with empty fields written out loads with its call
      Given another service stored this entry for the session:
        """
        {"v": 1, "id": "m-1", "role": "assistant", "content": null, "tool_calls": [{"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}], "tool_call_id": null}
        """
      Then the context is this JSON:
        """
        [{"role": "assistant", "content": null, "tool_calls": [
          {"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}]
        """

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

    Scenario Outline: A message is refused, naming the key, when the session's <which> key holds a <kind>
      Given another service stored a <kind> under the session's <which> key
      When the user tries to say "hello"
      Then the refusal names the session's <which> key as holding a <kind>

      Examples:
        | which   | kind   |
        | history | string |
        | history | hash   |
        | seen    | list   |
        | seen    | string |

    Scenario: With a retry window longer than the history, a list of ids of another kind is named
      Given message ids are remembered for the newest 50 messages
      And another service stored a hash under the session's ids key
      When the user tries to say "hello"
      Then the refusal names the session's ids key as holding a hash

    Scenario Outline: Loading fails, naming the key, when the session's history key holds a <kind>
      Given another service stored a <kind> under the session's history key
      Then loading the context fails, naming the session's history key as holding a <kind>

      Examples:
        | kind   |
        | string |
        | hash   |
        | set    |

    Scenario: Loading names the key and its kind through a client that decodes responses as text
      Given the memory's client decodes responses as text
      And another service stored a hash under the session's history key
      Then loading the context fails, naming the session's history key as holding a hash

    Scenario Outline: <what> fails, naming the key, when the session's <which> key holds a <kind>
      Given another service stored a <kind> under the session's <which> key
      Then <action> fails, naming the session's <which> key as holding a <kind>

      Examples:
        | what                 | action                           | which   | kind   |
        | An export            | exporting the session            | meta    | string |
        | An export            | exporting the session            | history | hash   |
        | Reading the metadata | reading the session's metadata   | meta    | list   |

    Scenario: A message is read back whole through a client that decodes responses as text
      Given the memory's client decodes responses as text
      And the user said "Grüße, 世界"
      When the assistant replies "你好"
      Then the context is:
        | role      | content     |
        | user      | Grüße, 世界 |
        | assistant | 你好        |

    Scenario: An export of an entry that is not UTF-8 reports it, whatever the client decodes
      Given a new session "alice"
      And the memory's client decodes responses as text
      And another service stored an entry that is not UTF-8 for the session
      Then exporting the session fails, naming entry 1 as corrupt

    Scenario: An export of an entry that is not UTF-8, stored amid the conversation, reports it, whatever the client decodes
      Given a new session "alice"
      And the memory's client decodes responses as text
      And the user said "hello"
      And another service stored an entry that is not UTF-8 for the session
      Then exporting the session fails, naming entry 2 as corrupt

  Rule: A corrupt newest entry is never taken back unread

    Scenario: Taking back a corrupt newest entry reports it, and it stays
      Given a new session "alice"
      And the user said "first"
      And another service stored this entry for the session:
        """
        hello
        """
      Then taking back the newest message fails, naming entry 2 as corrupt: "not valid UTF-8 JSON"

    Scenario: Taking back a newest entry that is not UTF-8 reports it, whatever the client decodes
      Given a new session "alice"
      And the memory's client decodes responses as text
      And another service stored an entry that is not UTF-8 for the session
      Then taking back the newest message fails, naming entry 1 as corrupt

    Scenario: Taking back fails, naming the key, when the session's history key holds a string
      Given another service stored a string under the session's history key
      Then taking back the newest message fails, naming the session's history key as holding a string

  Rule: Whatever the store, a message a broken writer damaged is reported, never passed over

    Scenario: A stored message cut off by a broken writer makes loading fail
      Given the user said "My booking reference is K7Q2."
      And the user said "A table for two, please."
      And a broken writer cut off the stored message "My booking reference is K7Q2."
      Then loading the context fails, rather than leaving messages out

    Scenario: A stored message a broken writer made invalid UTF-8 makes loading fail
      Given the user said "My booking reference is K7Q2."
      And a broken writer put bytes that are not UTF-8 into the stored message "My booking reference is K7Q2."
      Then loading the context fails, rather than leaving messages out

    Scenario: A stored message a broken writer replaced with plain text makes loading fail
      Given the user said "My booking reference is K7Q2."
      And the user said "A table for two, please."
      And a broken writer replaced the stored message "A table for two, please." with "hello"
      Then loading the context fails, rather than leaving messages out

    Scenario: A session another service overwrote with another kind of value fails to load
      Given the user said "My booking reference is K7Q2."
      And another service overwrote the stored message "My booking reference is K7Q2." with another kind of value
      Then loading the context fails, rather than leaving messages out

    Scenario: A message for a session another service overwrote leaves the other value as it was
      Given sessions expire after 30 minutes of inactivity
      And the user said "My booking reference is K7Q2."
      And another service overwrote the stored message "My booking reference is K7Q2." with another kind of value
      When the user tries to say "A table for two, please."
      Then the message is refused or stored apart, and the other service's value stays

    Scenario: Taking back a damaged newest message fails, and the message stays
      Given the user said "My booking reference is K7Q2."
      And the user said "A table for two, please."
      And a broken writer cut off the stored message "A table for two, please."
      Then taking back the newest message fails, and the damaged message stays
