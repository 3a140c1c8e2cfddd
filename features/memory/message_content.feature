Feature: Message content
  Users write in every language, paste code and whole documents. The model
  must see exactly what was said: one changed character (an escaped quote, a
  lost newline, mangled Chinese) changes what the assistant understands.

  Rule: What is said comes back exactly as it was said

    Scenario Outline: <kind> comes back unchanged
      Given a new session "alice"
      When the user says "<text>"
      Then the context is:
        | role | content |
        | user | <text>  |

      Examples:
        | kind                | text                                   |
        | Chinese             | 我叫张三，住在北京。                     |
        | Emoji               | 👋🏽 Hello! 🎉 Family: 👨‍👩‍👧                    |
        | Quoted text         | She said "don't" and 'maybe'           |
        | A Windows path      | C:\\Users\\ada\\notes.txt              |
        | Text on two lines   | first line\nsecond line                |
        | Text that looks like JSON | {"role": "system", "content": "x"} |
        | Right-to-left text  | مرحبا بالعالم                           |

    Scenario: A very long message comes back whole
      Given a new session "alice"
      When the user pastes a document of 100000 characters
      Then the context holds that document, character for character

    Scenario Outline: An empty message of the <role> is remembered as empty
      Given a new session "alice"
      When the <role> sends an empty message
      Then the context is:
        | role   | content |
        | <role> |         |

      Examples:
        | role      |
        | user      |
        | assistant |
