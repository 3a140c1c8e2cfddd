Feature: A turn is stored whole or not at all
  A turn is several messages written in one call: the user's question and the
  assistant's answer, or an answer and the tool results it waits for. A model
  given half of one answers a question nobody asked, or calls a tool whose
  result it never sees. So another worker reading the session while the turn
  is written sees all of it or none of it, and a write that fails halfway
  leaves none of it behind.

  Rule: A reader never sees half a turn

    Scenario: Another worker reading the session during the write sees the whole turn or none of it
      Given a new session "alice"
      And the user and the assistant exchanged 2 messages
      When a turn of 3 messages is stored while another worker reads the session at every step of the write
      Then every read saw the session as it was before the turn or with the whole turn

  Rule: A write that fails stores none of the turn

    Scenario: A write cut off at any of its steps leaves the whole turn or none of it
      Given a new session "alice"
      When a turn of 3 messages is stored again and again, the connection lost at a later step of the write each time
      Then each cut-off write left its session with the whole turn or none of it
