Feature: Erasing a user
  On request (the GDPR's right to erasure) everything of one user goes: every
  session, every message, the metadata and the list itself. Nobody else's
  data may go with it, however alike the ids, and asking twice is safe.

  Rule: Forgetting a user removes every key of the user, and reports what it removed

    Scenario: Every session of the user is erased
      Given user "ada" said "Plan my Paris trip" in session "paris"
      And user "ada" gave session "paris" the title "Paris trip"
      And user "ada" said "Help me with my CV" in session "cv"
      When user "ada" is forgotten
      Then the erasure removed the sessions "paris" and "cv"
      And user "ada" has nothing stored

    Scenario: A session another service listed under an id chat-memory cannot read is erased too, named as stored
      Given user "ada" said "Plan my Paris trip" in session "paris"
      And another service listed a copy of session "paris" of user "ada" as "trip%FF", which is not UTF-8 once decoded
      When user "ada" is forgotten
      Then the erasure removed the sessions "paris" and "trip%FF"
      And user "ada" has nothing stored

    Scenario: Forgetting a user twice is safe
      Given user "ada" said "hello" in session "paris"
      When user "ada" is forgotten
      And user "ada" is forgotten
      Then the erasure removed nothing
      And user "ada" has nothing stored

    Scenario: A user with thousands of sessions is erased completely, in batches
      Given user "ada" has 1200 sessions
      When user "ada" is forgotten
      Then the erasure removed 1200 sessions
      And user "ada" has nothing stored

    Scenario: A user is erased through a client that decodes responses as text
      Given the memory's client decodes responses as text
      And user "ada" said "Plan my Paris trip" in session "paris/1"
      When user "ada" is forgotten
      Then the erasure removed the sessions "paris/1"
      And user "ada" has nothing stored

  Rule: Nobody else's data goes with it

    Scenario Outline: Forgetting "ada" leaves user "<other>" intact
      Given user "ada" said "I am Ada" in session "chat"
      And user "<other>" said "I am someone else" in session "chat"
      When user "ada" is forgotten
      And the sessions of user "<other>" are listed
      Then the sessions listed are "chat"
      And the context of user "<other>"'s session "chat" is:
        | role | content           |
        | user | I am someone else |

      Examples:
        | other   |
        | ada2    |
        | ad      |
        | ada:1   |
        | ad*     |
        | {ada}   |
        | ada}    |
        | Ada     |

    Scenario: Forgetting a user leaves sessions without a user intact
      Given a new session "chat"
      And the user said "I belong to nobody"
      And user "ada" said "I am Ada" in session "chat"
      When user "ada" is forgotten
      Then the context is:
        | role | content            |
        | user | I belong to nobody |
