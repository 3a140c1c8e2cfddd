@real_redis
Feature: Concurrent writes
  Production runs many app workers at once, and two messages of one session
  can reach Redis in the same instant. The history limit, the order of each
  worker's messages and every message that should be kept must survive that;
  only a real server shows it.

  Rule: Writers to one session never break the limit or their own order

    Scenario: Eight writers to one session keep the limit and their order
      Given the history limit is 20 messages
      And a new session "busy"
      When 8 writers each send 500 messages to the session at once, while a reader watches
      Then the reader never saw more than 20 messages
      And the context keeps the newest messages of every writer, each writer's in order

  Rule: Writers to different sessions lose nothing

    Scenario: Eight writers to eight sessions lose nothing
      Given the history limit is 500 messages
      When 8 writers each send 500 messages to a session of their own at once
      Then every writer's session holds its 500 messages in order

  Rule: Under load, every session keeps exactly its newest messages

    Scenario: Sixteen writers over a hundred sessions keep every session's newest messages
      Given the history limit is 20 messages
      When 16 writers send 10000 messages over 100 sessions at once, while a reader watches
      Then the reader never saw more than 20 messages
      And every session keeps its newest messages, each writer's in order, none twice

  Rule: Many writers of one process share the memory safely

    Scenario: Two hundred writers to one session keep the limit and their order
      Given the history limit is 20 messages
      And a new session "busy"
      When 200 writers each send 5 messages to the session at once, while a reader watches
      Then the reader never saw more than 20 messages
      And the context keeps the newest messages of every writer, each writer's in order

    Scenario: A hundred writers to sessions of their own lose nothing
      Given the history limit is 20 messages
      When 100 writers each send 20 messages to a session of their own at once
      Then every writer's session holds its 20 messages in order
