@failover @sentinel
Feature: Failover
  Teams that outgrow one Redis run a primary with replicas, and Sentinel
  promotes a replica when the primary fails. Replication is asynchronous: a
  message the primary acknowledged may not have reached the replica that is
  promoted. With the durability setting, every write waits until a replica
  confirms it, and no acknowledged message is lost; without it, the loss is
  measured and reported, never hidden.

  Background:
    Given the memory runs on a primary with 2 replicas watched by 3 Sentinels

  Rule: With the durability setting, no acknowledged message is lost when the primary fails

    Scenario: The primary is killed while writers append, every write confirmed by a replica
      Given every write waits for 1 replica to confirm it within 500 milliseconds
      When 4 writers append for 6 seconds while the primary is killed after 1 second
      Then a replica was promoted and writes resumed within 10 seconds of the failure
      And every failed call raised one of the memory's typed storage errors
      And every acknowledged message is stored exactly once, in its writer's order

    Scenario: The primary is paused while writers append, every write confirmed by a replica
      Given every write waits for 1 replica to confirm it within 500 milliseconds
      When 4 writers append for 6 seconds while the primary is paused after 1 second
      Then a replica was promoted and writes resumed within 10 seconds of the failure
      And every failed call raised one of the memory's typed storage errors
      And every acknowledged message is stored exactly once, in its writer's order

  Rule: With the durability setting, a message sent again is acknowledged only once a replica holds it

    A writer that got an error sends its message again with the same id. The
    memory finds it stored and appends nothing; it still waits for a replica,
    since the first write may never have reached one.

    Scenario: A message sent again while no replica answers is reported as not confirmed
      Given every write waits for 1 replica to confirm it within 500 milliseconds
      And the writer's next message was stored by another client while both replicas were paused
      When the writer sends that message again, with its id
      Then the message sent again is reported as stored but confirmed by no replica
      And the primary holds the writer's messages, each once

    Scenario: A message sent again once the replicas caught up is acknowledged
      Given every write waits for 1 replica to confirm it within 500 milliseconds
      And the writer's next message was stored by another client while both replicas were paused
      And the replicas have caught up
      When the writer sends that message again, with its id
      Then the message sent again is acknowledged as already stored
      And a replica holds the writer's messages, each once

  Rule: A write fewer replicas confirm than asked says how many did

    Scenario: A message more replicas are asked to confirm than the primary has is reported with how many did
      Given every write waits for 3 replicas to confirm it within 1000 milliseconds
      When the writer sends its first message
      Then the message is reported as stored but confirmed by 2 of 3 replicas

  Rule: Without it, what a failover loses is measured and reported

    Scenario: The primary is killed while writers append, without waiting for replicas
      When 4 writers append for 6 seconds while the primary is killed after 1 second
      Then a replica was promoted and writes resumed within 10 seconds of the failure
      And every failed call raised one of the memory's typed storage errors
      And every stored message is stored once, in its writer's order
      And the acknowledged messages lost are counted and reported

    Scenario: The primary is paused while writers append, without waiting for replicas
      When 4 writers append for 6 seconds while the primary is paused after 1 second
      Then a replica was promoted and writes resumed within 10 seconds of the failure
      And every failed call raised one of the memory's typed storage errors
      And every stored message is stored once, in its writer's order
      And the acknowledged messages lost are counted and reported
