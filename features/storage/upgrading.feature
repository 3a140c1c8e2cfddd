@storage_contract
Feature: Upgrading without losing or repeating a message
  Teams upgrade chat-memory one server at a time, so for a while servers of
  the previous version and of this one write the same sessions. This feature
  is about storage itself: the previous version remembered the ids of the
  newest 1,000 messages of a session in a list of its own, this one only the
  ids of the messages in the history. Whichever version stored a message, and
  whichever retries it, the session must hold it exactly once.

  Rule: Sessions the previous version wrote are read, extended and retried after the upgrade

    Scenario: A session the previous version wrote is read and extended after the upgrade
      Given a new session "alice"
      And the previous version stored message "m-1" saying "Book a table for two."
      When the user sends message "m-2" saying "Friday at eight, please."
      Then the context is:
        | role | content                  |
        | user | Book a table for two.    |
        | user | Friday at eight, please. |

    Scenario: A message the previous version stored is not stored again when retried after the upgrade
      Given a new session "alice"
      And the previous version stored message "m-1" saying "Book a table for two."
      When message "m-1" is sent again
      Then the context is:
        | role | content               |
        | user | Book a table for two. |

    Scenario: A message 0.1 stored, with its id in a list only, is not stored again when retried
      Given a new session "alice"
      And version 0.1 stored message "m-1" saying "Book a table for two."
      And the user sent message "m-2" saying "Friday at eight, please."
      When messages "m-1" and "m-2" are sent again
      Then the context is:
        | role | content                  |
        | user | Book a table for two.    |
        | user | Friday at eight, please. |

    Scenario: A message 0.1 stored is not stored again when it alone is retried
      Given a new session "alice"
      And version 0.1 stored message "m-1" saying "Book a table for two."
      When message "m-1" is sent again
      Then the context is:
        | role | content               |
        | user | Book a table for two. |

    Scenario: A message 0.1 stored is not stored again when retried to an app serving other sessions
      Given a new session "alice"
      And version 0.1 stored message "m-1" saying "Book a table for two."
      And the app has since served other sessions
      When message "m-1" is sent again
      Then the context is:
        | role | content               |
        | user | Book a table for two. |

  Rule: While both versions write one session, nothing is lost and nothing is stored twice

    Scenario: Each version's retry of the other's message stores nothing again
      Given a new session "alice"
      And the previous version stored message "m-1" saying "Book a table for two."
      And the user sent message "m-2" saying "Friday at eight, please."
      And the previous version stored message "m-3" saying "By the window."
      When the previous version sends message "m-2" saying "Friday at eight, please."
      And messages "m-1" and "m-3" are sent again
      Then the context is:
        | role | content                  |
        | user | Book a table for two.    |
        | user | Friday at eight, please. |
        | user | By the window.           |

    Scenario: Both versions trimming one session to its limit keep the newest messages once each
      Given the history limit is 20 messages
      And a new session "alice"
      And the user and the assistant exchanged 19 messages
      And the previous version stored message "m-1" saying "Book a table for two."
      And the user sent message "m-2" saying "Friday at eight, please."
      When the previous version sends message "m-1" saying "Book a table for two."
      And message "m-2" is sent again
      Then the context contains 20 messages
      And the context ends with:
        | role | content                  |
        | user | Book a table for two.    |
        | user | Friday at eight, please. |
