@faults
Feature: Least privilege
  A deployment gives the memory a Redis user that can reach only its own keys
  and run only the commands it needs, so a bug or a leaked password cannot
  touch anything else. The README's ACL SETUSER line must be exactly enough,
  and a user missing any part of it must get a truthful error, not half a
  message.

  Rule: The README's permissions are enough for everything the memory does

    Scenario: The memory remembers, expires and reads under a user allowed only what the README lists
      Given the memory runs as a Redis user allowed only what the README lists
      And sessions expire after 30 minutes of inactivity
      And a new session "alice"
      And the user said "hello"
      When the user says "are you there?"
      Then the context contains 2 messages
      And the session expires in 1800 seconds

    Scenario: The memory clears a session under a user allowed only what the README lists
      Given the memory runs as a Redis user allowed only what the README lists
      And a new session "alice"
      And the user said "hello"
      When the session is cleared
      Then the context is empty

    Scenario: Users' sessions are listed, moved and compacted under a user allowed only what the README lists
      Given the memory runs as a Redis user allowed only what the README lists
      And sessions expire after 30 minutes of inactivity
      And user "ada" said "hello" in session "paris"
      And user "ada" gave session "paris" the title "Paris trip"
      And user "ada" said "hi" in session "rome"
      And a new session "alice"
      And the user said "one"
      And the user said "two"
      And the session was exported
      And the export was imported as session "alice-copy"
      And the session was compacted, keeping the newest 1 message
      When the sessions of user "ada" are listed
      Then the sessions listed are "rome" and "paris"
      And session "paris" of user "ada" has this metadata:
        """
        {"title": "Paris trip"}
        """

    Scenario: A user's sessions are cleared and erased under a user allowed only what the README lists
      Given the memory runs as a Redis user allowed only what the README lists
      And sessions expire after 30 minutes of inactivity
      And user "ada" said "hello" in session "paris"
      And user "ada" said "hi" in session "rome"
      When user "ada" clears session "rome"
      And user "ada" is forgotten
      Then the erasure removed the sessions "paris"
      And the server holds no key at all

  Rule: Anything beyond those permissions is refused, and nothing is written

    Scenario: The memory's user cannot write into another namespace
      Given the memory runs as a Redis user allowed only what the README lists
      And a new session "alice"
      When the app sends a message in the namespace "billing"
      Then the message is refused by the server with the reason "may not run this command or touch this key"
      And the server holds no key at all

    Scenario Outline: A user without "<command>" gets a truthful refusal and nothing is written
      Given the memory runs as a Redis user allowed what the README lists except "<command>"
      And sessions expire after 30 minutes of inactivity
      And a new session "alice"
      When the user tries to say "hello"
      Then the message is refused by the server with the reason "'<command>'"
      And the server holds no key at all

      Examples: Commands sent, or run before the script's first write
        | command |
        | evalsha |
        | hmget   |
        | rpush   |

      # Redis 6.2 has no redis.acl_check_cmd: a script cannot ask in advance.
      @permission_precheck
      Examples: Commands the script runs after its first write (or to undo it), or Redis 7's subcommand names
        | command     |
        | script\|load |
        | lpop        |
        | hset        |
        | hdel        |
        | pexpire     |
        | rpop        |

    # An import with metadata is two writes: the refusal of the first is the import's own.
    Scenario: An import by a user without "rpush" is refused with the server's reason, and nothing is written
      Given the memory runs as a Redis user allowed what the README lists except "rpush"
      And a new session "alice"
      When the app imports this export into the session:
        """
        {"chat_memory_export": 1, "session_id": "paris", "metadata": {"title": "Paris"}}
        {"v": 1, "id": "m-1", "role": "user", "content": "hello", "created_at": 1796205600.0}
        """
      Then the message is refused by the server with the reason "'rpush'"
      And the server holds no key at all

    # The memory's first append asks about every command, on a session with history too.
    @permission_precheck
    Scenario Outline: A user without "<command>" is refused on a session with history, and nothing more is written
      Given the memory runs as a Redis user allowed what the README lists except "<command>"
      And sessions expire after 30 minutes of inactivity
      And a new session "alice"
      And the session already holds 2 messages, stored by a user with every permission
      When the user tries to say "hello"
      Then the message is refused by the server with the reason "'<command>'"
      And the context contains 2 messages

      Examples:
        | command |
        | rpush   |
        | lpop    |
        | hset    |
        | hdel    |
        | pexpire |

    @permission_precheck
    Scenario: A user without "persist" cannot store in a memory whose sessions never expire
      Given the memory runs as a Redis user allowed what the README lists except "persist"
      And a new session "alice"
      When the user tries to say "hello"
      Then the message is refused by the server with the reason "'persist'"
      And the server holds no key at all

    @permission_precheck
    Scenario: A user without "persist" is refused on a session with history that never expires
      Given the memory runs as a Redis user allowed what the README lists except "persist"
      And a new session "alice"
      And the session already holds 2 messages, stored by a user with every permission
      When the user tries to say "hello"
      Then the message is refused by the server with the reason "'persist'"
      And the context contains 2 messages

    # A refused append vouches for nothing: the next one asks about every write again.
    @permission_precheck
    Scenario: A user without "pexpire" is refused whole again on the next message
      Given the memory runs as a Redis user allowed what the README lists except "pexpire"
      And sessions expire after 30 minutes of inactivity
      And a new session "alice"
      And the session already holds 2 messages, stored by a user with every permission
      And the user tried to say "hello"
      When the user tries to say "are you there?"
      Then the message is refused by the server with the reason "'pexpire'"
      And the context contains 2 messages

  Rule: A permission revoked while the memory runs is found by the write it refuses

    # The memory asks every permission on its first append, then appends one message
    # without asking: Redis itself refuses a write whose permission was revoked since.
    Scenario: A user whose "hset" was revoked is refused, and nothing is written
      Given the memory runs as a Redis user allowed only what the README lists
      And sessions expire after 30 minutes of inactivity
      And the user said "hello"
      And the operator has since revoked "hset" from the memory's Redis user
      When the user tries to say "are you there?"
      Then the message is refused by the server with the reason "'hset'"
      And the context contains 1 message

    # Nor can a message no replica confirmed: the call failed.
    @permission_precheck
    Scenario: A message no replica confirmed does not spare the next one the permission check
      Given the memory runs as a Redis user allowed only what the README lists
      And sessions expire after 30 minutes of inactivity
      And every write waits for 1 replica to confirm it within 200 milliseconds
      And the user tried to say "hello"
      And the operator has since revoked "pexpire" from the memory's Redis user
      When the user tries to say "are you there?"
      Then the message is refused by the server with the reason "'pexpire'"
      And the context contains 1 message

    # A resent message appends nothing: it cannot vouch that the writes it would make are allowed.
    @permission_precheck
    Scenario: After a restart, a message sent again first does not spare the next one the permission check
      Given the memory runs as a Redis user allowed only what the README lists
      And sessions expire after 30 minutes of inactivity
      And the user sent message "m-1" saying "hello"
      And the app was restarted
      And the user sent message "m-1" saying "hello"
      And the operator has since revoked "pexpire" from the memory's Redis user
      When the user tries to say "are you there?"
      Then the message is refused by the server with the reason "'pexpire'"
      And the context contains 1 message

    # The history is at its default limit of 20: the next message drops the oldest.
    Scenario Outline: A user whose "<command>" was revoked is told the message was stored, and what was refused after it
      Given the memory runs as a Redis user allowed only what the README lists
      And sessions expire after 30 minutes of inactivity
      And the user and the assistant exchanged 20 messages
      And the operator has since revoked "<command>" from the memory's Redis user
      When the user tries to say "are you there?"
      Then the app is told that Redis refused "<command>" after storing the message
      And the app is told that sending the message again is safe
      And the app is told what is left undone: "<left undone>"

      Examples:
        | command | left undone                                                          |
        | lpop    | the history is over its limit until an append may trim it            |
        | hdel    | the ids of messages the history limit dropped are still remembered   |
        | pexpire | the session's expiry was not refreshed                               |

    Scenario: A user whose "hset" and "rpop" were revoked is told the message was stored but not its id
      Given the memory runs as a Redis user allowed only what the README lists
      And the user said "hello"
      And the operator has since revoked "hset" and "rpop" from the memory's Redis user
      When the user tries to say "are you there?"
      Then the app is told that Redis refused "hset" after storing the message
      And the app is told that sending the message again would store it twice

  Rule: A server that cannot check permissions in advance reports a refusal inside the script as possibly written

    @no_permission_precheck
    Scenario: On Redis 6.2, a user without "pexpire" is told the message may have been stored
      Given the memory runs as a Redis user allowed what the README lists except "pexpire"
      And sessions expire after 30 minutes of inactivity
      And a new session "alice"
      When the user tries to say "hello"
      Then the user was told within 2 seconds that the message may not have been stored
