Feature: Setting up the memory
  A memory set up wrong forgets silently: a history limit of 0, an expiry of
  "NaN" seconds, or 1800 taken for milliseconds. Every setting is checked when
  the memory is built, and a wrong one is refused at once, naming the setting.
  Settings are given as the app gives them: ttl in seconds, or as a duration.

  Rule: Without settings, a session keeps its newest 20 messages and never expires

    Scenario: By default the newest 20 messages are kept
      When the user and the assistant exchange 21 messages
      Then the context is messages 2 to 21 of the exchange
      And the session's keys never expire
      And the memory reports no time left for the session

    Scenario: The memory reports no time left for a session it does not hold
      Given a new session "nobody"
      Then the memory reports no time left for the session

  Rule: Expiry can be given in seconds

    Scenario: A session set to expire after 1800 seconds expires in 1800 seconds
      Given the memory is set up with ttl = 1800
      When the user says "hello"
      Then the session expires in 1800 seconds
      And the session's keys expire in 1800 seconds

    Scenario: A session may be set to expire after 100 years, the longest allowed
      Given the memory is set up with ttl = 3155760000
      When the user says "hello"
      Then the session expires in 3155760000 seconds

  Rule: A wrong setting is refused when the memory is built, naming it

    Scenario Outline: <setting> = <value> is refused
      When the app sets up the memory with <setting> = <value>
      Then the setup is refused with the reason "<reason>"

      Examples:
        | setting            | value               | reason                                                                  |
        | max_history        | 0                   | max_history must be a whole number from 1 to 9223372036854775807, not 0 |
        | max_history        | 9223372036854775808 | max_history must be a whole number from 1 to 9223372036854775807        |
        | max_history        | true                | max_history must be a whole number from 1 to                            |
        | max_history        | 2.5                 | max_history must be a whole number from 1 to                            |
        | max_message_bytes  | 0                   | max_message_bytes must be a whole number from 1 to 536870912, not 0     |
        | max_message_bytes  | 536870913           | max_message_bytes must be a whole number from 1 to 536870912            |
        | idempotency_window | 19                  | idempotency_window must be a whole number from 20 to                    |
        | idempotency_window | 9223372036854775808 | idempotency_window must be a whole number from 20 to                    |
        | ttl                | 0                   | ttl must be a positive, finite number of seconds                        |
        | ttl                | -1                  | ttl must be a positive, finite number of seconds                        |
        | ttl                | NaN                 | not nan                                                                 |
        | ttl                | Infinity            | not inf                                                                 |
        | ttl                | true                | not True                                                                |
        | ttl                | "1800"              | not '1800'                                                              |
        | ttl                | 3155760001          | of at most 36525 days                                                   |
        | namespace          | "has space"         | namespace must be 1 to 64 characters                                    |
        | namespace          | ""                  | namespace must be 1 to 64 characters                                    |
        | durability         | "2 replicas"        | durability must be a Durability or None, not '2 replicas'               |

  Rule: A wait for replicas that Redis's WAIT cannot take is refused when the memory is built

    Scenario Outline: A wait for replicas with <setting> = <value> is refused
      When the app sets up the memory to wait for replicas with <setting> = <value>
      Then the setup is refused with the reason "<reason>"

      Examples:
        | setting  | value    | reason                                                                      |
        | replicas | 0        | durability replicas must be a whole number >= 1, not 0                      |
        | replicas | true     | durability replicas must be a whole number >= 1, not True                   |
        | replicas | 1.5      | durability replicas must be a whole number >= 1, not 1.5                    |
        | timeout  | 0        | durability timeout must be a positive number of seconds (or a timedelta) of at most 3600, not 0 |
        | timeout  | -1       | durability timeout must be a positive number of seconds                     |
        | timeout  | 3600.001 | of at most 3600, not 3600.001                                               |
        | timeout  | NaN      | not nan                                                                     |
        | timeout  | Infinity | not inf                                                                     |
        | timeout  | true     | not True                                                                    |
        | timeout  | "1"      | not '1'                                                                     |

    Scenario Outline: A wait for replicas with <setting> = <value> is accepted
      When the app sets up the memory to wait for replicas with <setting> = <value>
      Then the memory is set up

      Examples:
        | setting  | value |
        | replicas | 2     |
        | timeout  | 3600  |
        | timeout  | 0.5   |

  Rule: The largest allowed settings are accepted

    Scenario Outline: <setting> = <value> is accepted
      Given the memory is set up with <setting> = <value>
      When the user says "hello"
      Then the context contains 1 message

      Examples:
        | setting            | value               |
        | max_history        | 9223372036854775807 |
        | max_message_bytes  | 536870912           |
        | idempotency_window | 20                  |
