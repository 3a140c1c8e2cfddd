Feature: A turn is stored whole or not at all
  A turn is several messages written in one call: the user's question and the
  assistant's answer, or an answer and the tool results it waits for. A model
  given half of one answers a question nobody asked, or calls a tool whose
  result it never sees. So another worker reading the session while the turn
  is written sees all of it or none of it, and a write that fails halfway
  leaves none of it behind.

  Rule: A reader never sees half a turn

    Scenario: A reader looking between every command of the write sees the turn whole or not at all
      Given a new session "alice"
      And the user and the assistant exchanged 2 messages
      When a turn of 3 messages is stored while a reader looks at the session before every command the write sends
      Then every look saw the session as it was before the turn or with the whole turn

  Rule: A write that fails stores none of the turn

    Scenario: A connection broken before any command of the write leaves the whole turn or none of it
      Given a new session "alice"
      When a turn of 3 messages is stored with the connection breaking before each command the write sends, one attempt per command
      Then each attempt left its session with the whole turn or none of it
