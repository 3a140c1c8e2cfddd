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
