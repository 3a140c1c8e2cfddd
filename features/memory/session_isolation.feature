Feature: Session isolation
  Many users talk to the assistant at once. What one user says must never
  reach another user's context, however much their session ids look alike.

  Rule: What one session says never appears in another's context

    Scenario: Two users talking at the same time keep their own context
      Given a new session "alice"
      And the user said "I am Alice."
      And a new session "bob"
      When the user says "I am Bob."
      Then the context of session "alice" is:
        | role | content     |
        | user | I am Alice. |

    Scenario: A session that has not spoken stays empty while another talks
      Given a new session "alice"
      When the user says "Only Alice speaks."
      Then the context of session "bob" is empty

    Scenario Outline: Session "<first>" and session "<second>" keep apart
      Given a new session "<first>"
      And the user said "I belong to <first>."
      And a new session "<second>"
      When the user says "I belong to <second>."
      Then the context of session "<first>" is:
        | role | content               |
        | user | I belong to <first>. |

      Examples:
        | first       | second        |
        | user:1      | user:1:admin  |
        | *           | alice         |
        | {alice}     | alice         |
        | a}b{c       | a             |
        | a:b         | a%3Ab         |
        | Alice       | alice         |
        | 张三        | 李四          |
        | team chat   | team_chat     |
        | line\nbreak | line break    |
        | 👋🏽          | 👋            |
