@failover @cluster
Feature: A cluster master fails over to its replica
  In a Redis Cluster with a replica per master, the cluster promotes a
  master's replica when the master fails. With the durability setting, every
  acknowledged message of the sessions in its slots survives; the promoted
  master has no replica left, so each write to it is stored and reported as
  not confirmed, never acknowledged as safe.

  Scenario: A master is killed while writers append, every write confirmed by its replica
    Given the memory runs on a cluster of its own with a replica per master
    And every write waits for 1 replica to confirm it within 500 milliseconds
    When 4 writers append for 8 seconds while the first writer's master is killed after 1 second
    Then every failed call raised one of the memory's typed storage errors
    And every acknowledged message is stored exactly once, in its writer's order
    And the first writer's writes after the promotion were stored but reported as not confirmed
    And the other writers' writes were acknowledged throughout
