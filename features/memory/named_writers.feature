Feature: Who wrote each message
  In a group chat several people talk to one assistant, and an app may give
  its assistant or its instructions a name. Each message keeps the name of who
  wrote it: a memory that drops it leaves the model unable to tell Ann's
  question from Bob's answer.

  Rule: Each message is remembered with the name of who wrote it

    Scenario: In a group chat, each person's message keeps their name
      Given the user "ann" said "Shall we meet at noon?"
      And the user "bob" said "Noon works for me."
      When the assistant "planner" says "Booked: Friday at noon."
      Then the context is this JSON:
        """
        [
          {"role": "user", "content": "Shall we meet at noon?", "name": "ann"},
          {"role": "user", "content": "Noon works for me.", "name": "bob"},
          {"role": "assistant", "content": "Booked: Friday at noon.", "name": "planner"}
        ]
        """

    Scenario: Named instructions keep their name beside unnamed messages
      Given the system "house-rules" said "Answer in one sentence."
      When the user says "Where do we meet?"
      Then the context is this JSON:
        """
        [
          {"role": "system", "content": "Answer in one sentence.", "name": "house-rules"},
          {"role": "user", "content": "Where do we meet?"}
        ]
        """
