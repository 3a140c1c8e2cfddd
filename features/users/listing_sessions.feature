Feature: A user's sessions, listed
  A chat product shows each user their conversations, the most recently
  active first, each with its title. The list must be exact: a conversation
  that expired or was cleared never shows, and a live one is never missing,
  whatever the timing of writes, retries and expiry.

  Rule: Sessions are listed most recently active first, with title, size and times

    Scenario: A user's sessions are listed newest activity first, with their titles
      Given the time is 2026-12-01 09:00:00 UTC
      And user "ada" said "Plan my Paris trip" in session "paris"
      And user "ada" gave session "paris" the title "Paris trip"
      And 10 minutes passed
      And user "ada" said "Help me with my CV" in session "cv"
      And 10 minutes passed
      And user "ada" said "Which museums?" in session "paris"
      When the sessions of user "ada" are listed
      Then the sessions listed are:
        | session | title      | messages | created             | last active         |
        | paris   | Paris trip | 2        | 2026-12-01 09:00:00 | 2026-12-01 09:20:00 |
        | cv      |            | 1        | 2026-12-01 09:10:00 | 2026-12-01 09:10:00 |

    Scenario: A long list is read page by page
      Given the time is 2026-12-01 09:00:00 UTC
      And user "ada" said "one" in session "s1"
      And 1 minutes passed
      And user "ada" said "two" in session "s2"
      And 1 minutes passed
      And user "ada" said "three" in session "s3"
      And 1 minutes passed
      And user "ada" said "four" in session "s4"
      And 1 minutes passed
      And user "ada" said "five" in session "s5"
      When the sessions of user "ada" are listed 2 per page, page 2
      Then the sessions listed are "s3" and "s2"

    Scenario: A user with no sessions has an empty list
      When the sessions of user "bob" are listed
      Then no sessions are listed

    Scenario: Each user sees only their own sessions
      Given user "ada" said "hello" in session "paris"
      And user "bob" said "hi" in session "rome"
      When the sessions of user "bob" are listed
      Then the sessions listed are "rome"

    Scenario: A user's session lives apart from a session of the same name without a user
      Given a new session "paris"
      And the user said "I am nobody's"
      And user "ada" said "I am Ada's" in session "paris"
      Then the context is:
        | role | content       |
        | user | I am nobody's |
      And the context of user "ada"'s session "paris" is:
        | role | content    |
        | user | I am Ada's |

  Rule: A user talks to the model in one of their own sessions

    Scenario: A user asks in their own session, which the listing then shows
      Given the model will reply "Three days in Paris, then."
      And the model will reply "The Louvre and the Orsay."
      And user "ada" asked "Plan my Paris trip" in session "paris"
      When user "ada" asks "Which museums?" in session "paris"
      And the sessions of user "ada" are listed
      Then the sessions listed are "paris"
      And the context of user "ada"'s session "paris" is:
        | role      | content                    |
        | user      | Plan my Paris trip         |
        | assistant | Three days in Paris, then. |
        | user      | Which museums?             |
        | assistant | The Louvre and the Orsay.  |
      And the context is empty

  Rule: The list never shows a session that has expired or been cleared

    Scenario: An expired session is gone from the list, a live one stays
      Given sessions expire after 30 minutes of inactivity
      And user "ada" said "old plans" in session "old"
      And 20 minutes passed
      And user "ada" said "new plans" in session "new"
      When 15 minutes pass
      And the sessions of user "ada" are listed
      Then the sessions listed are "new"

    Scenario: Activity keeps a session listed past its first expiry time
      Given sessions expire after 30 minutes of inactivity
      And user "ada" said "hello" in session "chat"
      And 20 minutes passed
      And user "ada" said "still here" in session "chat"
      When 20 minutes pass
      And the sessions of user "ada" are listed
      Then the sessions listed are "chat"

    Scenario: A cleared session is gone from the list
      Given user "ada" said "hello" in session "paris"
      And user "ada" said "hi" in session "rome"
      When user "ada" clears session "paris"
      And the sessions of user "ada" are listed
      Then the sessions listed are "rome"
      And session "paris" of user "ada" is empty

    Scenario: A retried message neither duplicates a session nor moves it up the list
      Given the time is 2026-12-01 09:00:00 UTC
      And user "ada" sent message "m-1" saying "hello" in session "paris"
      And 5 minutes passed
      And user "ada" said "hi" in session "rome"
      And 5 minutes passed
      When user "ada" sends message "m-1" saying "hello" in session "paris"
      And the sessions of user "ada" are listed
      Then the sessions listed are:
        | session | title | messages | created             | last active         |
        | rome    |       | 1        | 2026-12-01 09:05:00 | 2026-12-01 09:05:00 |
        | paris   |       | 1        | 2026-12-01 09:00:00 | 2026-12-01 09:00:00 |

    Scenario: Concurrent writers and retries never make the list show a session twice or lose one
      When 8 workers each send 10 messages twice to a session of user "ada"
      Then user "ada" has 8 sessions listed, each with 10 messages

  Rule: A session's metadata is stored with it, and expires with it

    Scenario: Metadata reads back exactly
      Given user "ada" said "hello" in session "paris"
      And user "ada" gave session "paris" this metadata:
        """
        {"title": "Paris trip", "tags": ["travel", "été"], "pinned": true, "budget": 1200.5}
        """
      Then session "paris" of user "ada" has this metadata:
        """
        {"title": "Paris trip", "tags": ["travel", "été"], "pinned": true, "budget": 1200.5}
        """

    Scenario: The listing carries each session's metadata, and a title only when it is text
      Given the time is 2026-12-02 10:00:00 UTC
      And user "ada" said "hello" in session "paris"
      And user "ada" gave session "paris" this metadata:
        """
        {"title": 42, "pinned": true}
        """
      When the sessions of user "ada" are listed
      Then the listing shows session "paris" with this metadata:
        """
        {"title": 42, "pinned": true}
        """
      And the sessions listed are:
        | session | title | messages | created             | last active         |
        | paris   |       | 1        | 2026-12-02 10:00:00 | 2026-12-02 10:00:00 |

    Scenario: Metadata expires with its session
      Given sessions expire after 30 minutes of inactivity
      And user "ada" said "hello" in session "paris"
      And user "ada" gave session "paris" the title "Paris trip"
      When 31 minutes pass
      Then session "paris" of user "ada" has this metadata:
        """
        {}
        """

    Scenario Outline: Metadata another service broke is reported, naming the session
      Given user "ada" said "Plan my Paris trip" in session "paris"
      And another service stored the metadata <stored> for session "paris" of user "ada"
      Then reading the metadata of session "paris" of user "ada" fails: "<reason>"
      And listing the sessions of user "ada" fails, naming session "paris": "<reason>"
      And exporting session "paris" of user "ada" fails: "<reason>"

      Examples:
        | stored   | reason                     |
        | not json | not valid UTF-8 JSON       |
        | [1, 2]   | not a JSON object but list |

    Scenario: Metadata that is not UTF-8 is reported, whatever the client decodes
      Given the memory's client decodes responses as text
      And user "ada" said "Plan my Paris trip" in session "paris"
      And another service stored metadata that is not UTF-8 for session "paris" of user "ada"
      Then reading the metadata of session "paris" of user "ada" fails: "not valid UTF-8 JSON"
      And listing the sessions of user "ada" fails, naming session "paris": "not valid UTF-8 JSON"

    Scenario: A session another service listed under an id chat-memory cannot read is reported, naming it
      Given user "ada" said "Plan my Paris trip" in session "paris"
      And another service listed a copy of session "paris" of user "ada" as "trip%FF", which is not UTF-8 once decoded
      Then listing the sessions of user "ada" fails, naming session "trip%FF": "not a session id chat-memory writes"

  Rule: All of a user's keys share one hash slot, so every change is one atomic script

    @cluster
    Scenario: A user's sessions and index are in one slot of the cluster
      Given user "ada" said "hello" in session "paris"
      And user "ada" said "hi" in session "rome"
      Then all of user "ada"'s keys are in one hash slot

  Rule: A listing shows 20 sessions unless asked for more

    Scenario: The first page holds the 20 most recent sessions
      Given user "ada" has 21 sessions
      When the first page of the sessions of user "ada" is listed
      Then 20 sessions are listed

    Scenario: A page may hold a single session
      Given user "ada" has 3 sessions
      When the sessions of user "ada" are listed 1 per page, page 3
      Then 1 session is listed

    Scenario Outline: A page outside those bounds is refused, naming the setting
      Given user "ada" said "hello" in session "paris"
      When the sessions of user "ada" are listed with <setting> = <value>
      Then the listing is refused with the reason "<reason>"

      Examples:
        | setting | value | reason                                                |
        | limit   | 0     | limit must be a whole number from 1 to 1000, not 0    |
        | limit   | 1001  | limit must be a whole number from 1 to 1000, not 1001 |
        | offset  | -1    | offset must be a whole number >= 0, not -1            |

    Scenario: A listing that names no user is refused
      When the app tries to list sessions without naming a user
      Then the listing is refused with the reason "list_sessions needs a user's memory: memory.for_user(user_id)"

  Rule: A session titled before its first message is listed from then on

    Scenario: A session created by its title is listed with the time it was titled
      Given the time is 2026-12-01 09:00:00 UTC
      And user "ada" gave session "plans" the title "Summer plans"
      And 5 minutes passed
      And user "ada" said "hello" in session "plans"
      When the sessions of user "ada" are listed
      Then the sessions listed are:
        | session | title        | messages | created             | last active         |
        | plans   | Summer plans | 1        | 2026-12-01 09:00:00 | 2026-12-01 09:05:00 |
