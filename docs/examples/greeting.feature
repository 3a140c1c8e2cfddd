Feature: Greeting
  An example with two mistakes, for the guide's --bdd-check sample.

  Scenario: Ada is greeted
    Given a new session "ada"
    When the user says "hi"
    Then the context contains 1 message

  Scenario: Ada is greeted
    Given a new session "ada"
    When the usr says "hi"
    Then the context contains 1 message
