@cluster
Feature: Sessions on a Redis Cluster
  Teams that outgrow one Redis machine move to Redis Cluster, which spreads
  keys over many nodes. Sessions must spread with them, and each session must
  stay in one place so that its atomic append still works.

  Rule: Sessions spread over the whole cluster

    Scenario: Many sessions are stored across every node
      Given 30 users each said "hello" in a session of their own
      Then those sessions are stored on every node of the cluster

  Rule: Each session stays in one hash slot

    Scenario: A session's keys share one hash slot
      Given a new session "user:{42} *"
      When the user says "hello"
      Then all of the session's keys are in one hash slot

  Rule: Moving a session to another node loses and duplicates nothing

    @faults
    Scenario: Eight writers keep every message while the session's slot moves to another node
      Given the memory runs on a cluster of its own
      And the history limit is 2000 messages
      And a new session "busy"
      When 8 writers each send 200 messages to the session while its hash slot moves to another node
      Then the context keeps the newest messages of every writer, each writer's in order

  Rule: A session stays writable and readable while its slot is being migrated

    @faults
    Scenario: A session whose slot is being migrated, its keys not moved yet, keeps taking messages
      Given the memory runs on a cluster of its own
      And a new session "busy"
      And the user said "one"
      And the session's slot is being migrated to another node
      When the user says "two"
      Then the context is:
        | role | content |
        | user | one     |
        | user | two     |

    @faults
    Scenario: A session whose keys reached the new node, its slot still migrating, keeps taking messages
      Given the memory runs on a cluster of its own
      And a new session "busy"
      And the user said "one"
      And the session's slot is being migrated to another node, with its keys moved there
      When the user says "two"
      Then the context is:
        | role | content |
        | user | one     |
        | user | two     |

    @faults
    Scenario: A new session whose slot is being migrated takes its first message
      Given the memory runs on a cluster of its own
      And a new session "fresh"
      And the session's slot is being migrated to another node
      When the user says "hello"
      Then the context is:
        | role | content |
        | user | hello   |

    @faults
    Scenario: A new session whose slot is being migrated keeps taking messages
      Given the memory runs on a cluster of its own
      And a new session "fresh"
      And the session's slot is being migrated to another node
      And the user said "hello"
      When the user says "how are you?"
      Then the context is:
        | role | content      |
        | user | hello        |
        | user | how are you? |

    @faults
    Scenario: A message resent to a new session whose slot is being migrated is stored once
      Given the memory runs on a cluster of its own
      And a new session "fresh"
      And the session's slot is being migrated to another node
      And the user sent message "m-1" saying "hello"
      When message "m-1" is sent again
      Then the context is:
        | role | content |
        | user | hello   |

    @faults
    Scenario: A new session whose slot is being migrated remembers the ids of a retry window longer than its history
      Given the memory runs on a cluster of its own
      And message ids are remembered for the newest 2 messages
      And the history limit is 1 message
      And a new session "fresh"
      And the session's slot is being migrated to another node
      When the user sends message "m-1" saying "one"
      Then the session remembers exactly the ids "m-1"

    @faults
    Scenario: A user's new session whose slot is being migrated keeps taking messages
      Given the memory runs on a cluster of its own
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node
      And user "ada" said "Help me with my CV" in session "cv"
      When user "ada" says "I am a nurse" in session "cv"
      Then the context of user "ada"'s session "cv" is:
        | role | content            |
        | user | Help me with my CV |
        | user | I am a nurse       |

    @faults
    Scenario: A user's new session takes its first message once the user's keys reached the new node
      Given the memory runs on a cluster of its own
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node, with its keys moved there
      When user "ada" says "Help me with my CV" in session "cv"
      Then the context of user "ada"'s session "cv" is:
        | role | content            |
        | user | Help me with my CV |

    @faults
    Scenario: A new user's first session whose slot is being migrated takes its first message
      Given the memory runs on a cluster of its own
      And the slot of user "bea" is being migrated to another node
      When user "bea" says "hello" in session "first"
      Then the context of user "bea"'s session "first" is:
        | role | content |
        | user | hello   |

    @faults
    Scenario: A new session whose slot is being migrated, every write waiting for a replica, stores its message and says it is unconfirmed
      Given the memory runs on a cluster of its own
      And every write waits for 1 replica to confirm it within 200 milliseconds
      And a new session "fresh"
      And the session's slot is being migrated to another node
      When the user tries to say "hello"
      Then the message is reported as stored but not confirmed, its slot being migrated, with the message to resend
      And the context is:
        | role | content |
        | user | hello   |

    @faults
    Scenario: A new user's first session whose slot is being migrated, every write waiting for a replica, stores its message and says it is unconfirmed
      Given the memory runs on a cluster of its own
      And every write waits for 1 replica to confirm it within 200 milliseconds
      And the slot of user "bea" is being migrated to another node
      When user "bea" tries to say "hello" in session "first"
      Then the message is reported as stored but not confirmed, its slot being migrated, with the message to resend
      And the context of user "bea"'s session "first" is:
        | role | content |
        | user | hello   |

    @faults
    Scenario: A user's sessions written while the user's slot migrated are listed once it has moved
      Given the memory runs on a cluster of its own
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node
      And user "ada" said "Help me with my CV" in session "cv"
      When the migration of the slot of user "ada" completes
      And the sessions of user "ada" are listed
      Then the sessions listed are "cv" and "paris"

    @faults
    Scenario: A new user's first session, written while the user's slot migrated, is listed once it has moved
      Given the memory runs on a cluster of its own
      And the slot of user "bea" is being migrated to another node
      And user "bea" said "hello" in session "first"
      When the migration of the slot of user "bea" completes
      And the sessions of user "bea" are listed
      Then the sessions listed are "first"

    @faults
    Scenario: Listing a user whose slot is being migrated is refused as unavailable
      Given the memory runs on a cluster of its own
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node, with only the user's index moved there
      When the app tries to list the sessions of user "ada"
      Then the app was told within 2 seconds that the memory is unavailable

    @faults
    Scenario: Erasing a user whose slot is being migrated is refused as unavailable
      Given the memory runs on a cluster of its own
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node
      When the app tries to forget user "ada"
      Then the app was told within 2 seconds that the memory is unavailable

    @faults
    Scenario: A listing while the user's index is on the new node and the sessions are not drops nothing
      Given the memory runs on a cluster of its own
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node, with only the user's index moved there
      And the app tried to list the sessions of user "ada"
      When the migration of the slot of user "ada" completes
      And the sessions of user "ada" are listed
      Then the sessions listed are "paris"

    @faults
    Scenario: An erasure while the user's index is on the new node and the sessions are not is finished by asking again
      Given the memory runs on a cluster of its own
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node, with only the user's index moved there
      And the app tried to forget user "ada"
      When the migration of the slot of user "ada" completes
      And user "ada" is forgotten
      Then user "ada" has nothing stored

    @faults
    Scenario: A message to a session split between two nodes mid-migration is reported in time, and is not stored
      Given the memory runs on a cluster of its own
      And a new session "busy"
      And the user said "one"
      And the session's slot is being migrated to another node, with only its history moved there
      When the user tries to say "two"
      Then the user was told within 3 seconds that the message may not have been stored
      And the context is:
        | role | content |
        | user | one     |

  Rule: The README's permissions are enough on a cluster, a slot being migrated included

    @faults
    Scenario: A session whose keys reached the new node keeps taking messages under a user allowed only what the README lists
      Given the memory runs on a cluster of its own, as a Redis user allowed only what the README lists
      And a new session "trip"
      And the user said "one"
      And the session's slot is being migrated to another node, with its keys moved there
      When the user says "two"
      Then the context is:
        | role | content |
        | user | one     |
        | user | two     |

    @faults
    Scenario: A user is erased under a Redis user allowed only what the README lists
      Given the memory runs on a cluster of its own, as a Redis user allowed only what the README lists
      And user "ada" said "Plan my Paris trip" in session "paris"
      When user "ada" is forgotten
      Then the erasure removed the sessions "paris"
      And session "paris" of user "ada" is empty

  Rule: A Redis user who may not ask the nodes about a resharding cannot list or erase users there

    @faults
    Scenario Outline: Listing a user under a Redis user without "<command>" is refused
      Given the memory runs on a cluster of its own, as a Redis user allowed what the README lists except "<command>"
      And user "ada" said "Plan my Paris trip" in session "paris"
      When the app tries to list the sessions of user "ada"
      Then the app was told that it needs "<command>" to see whether the user's slot is moving, which the memory's Redis user may not run

      Examples:
        | command         |
        | cluster\|nodes   |
        | cluster\|keyslot |

    @faults
    Scenario: Erasing a user whose slot is being migrated, under a Redis user who may not ask the nodes, erases nothing
      Given the memory runs on a cluster of its own, as a Redis user allowed what the README lists except "cluster|nodes"
      And user "ada" said "Plan my Paris trip" in session "paris"
      And the slot of user "ada" is being migrated to another node, with only the user's index moved there
      When the app tries to forget user "ada"
      Then the app was told that it needs "cluster|nodes" to see whether the user's slot is moving, which the memory's Redis user may not run
      And the context of user "ada"'s session "paris" is:
        | role | content            |
        | user | Plan my Paris trip |
