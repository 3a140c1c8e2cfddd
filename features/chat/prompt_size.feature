Feature: Prompt size
  A model takes only so many tokens. The prompt must drop the oldest history
  first, keep the newest messages in order, and never lose the system prompt,
  or the assistant forgets either its instructions or what was just said.
  In these scenarios every word counts as one token.

  Background:
    Given tokens are counted one per word

  Rule: The history limit decides which messages can reach the prompt

    Scenario: Only the newest remembered messages reach the prompt
      Given the history limit is 2 messages
      And a new session "ada"
      And the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I like Paris.    |
        | assistant | Paris is lovely. |
      When the user asks "Where should I go?"
      Then the model was prompted with:
        | role      | content            |
        | user      | I like Paris.      |
        | assistant | Paris is lovely.   |
        | user      | Where should I go? |

  Rule: The token budget keeps the newest history that fits

    Scenario: The oldest messages are left out when the budget is tight
      Given the system prompt is "Be brief."
      And the prompt budget is 12 tokens
      And a new session "ada"
      And the session remembers:
        | role      | content          |
        | user      | I am Ada.        |
        | assistant | Hello Ada.       |
        | user      | I like Paris.    |
        | assistant | Paris is lovely. |
      When the user asks "Where should I go?"
      Then the model was prompted with:
        | role      | content            |
        | system    | Be brief.          |
        | user      | I like Paris.      |
        | assistant | Paris is lovely.   |
        | user      | Where should I go? |

    Scenario: The system prompt is kept however small the budget
      Given the system prompt is "Be brief."
      And the prompt budget is 6 tokens
      And a new session "ada"
      And the session remembers:
        | role | content   |
        | user | I am Ada. |
      When the user asks "Where should I go?"
      Then the model was prompted with:
        | role   | content            |
        | system | Be brief.          |
        | user   | Where should I go? |

    Scenario: The whole history is kept when it fits the budget
      Given the prompt budget is 100 tokens
      And a new session "ada"
      And the session remembers:
        | role      | content    |
        | user      | I am Ada.  |
        | assistant | Hello Ada. |
      When the user asks "Where should I go?"
      Then the model was prompted with:
        | role      | content            |
        | user      | I am Ada.          |
        | assistant | Hello Ada.         |
        | user      | Where should I go? |

  Rule: A system prompt and new message over the budget are refused, and nothing is remembered

    Scenario: A question that cannot fit beside the system prompt is refused, saying by how much
      Given the system prompt is "Be brief."
      And the prompt budget is 5 tokens
      And a new session "ada"
      When the user tries to ask "Where should I go now?"
      Then the turn is refused with the reason "the system prompt and the new message need 2 tokens more than the budget of 5", word for word
      And nothing is stored

  Rule: A budget that is not a whole number of tokens is refused when the chat is built

    Scenario Outline: A prompt budget of <value> tokens is refused
      When the app sets up the chat with max_prompt_tokens = <value>
      Then the setup is refused with the reason "max_prompt_tokens must be a whole number >= 1, not <value>", word for word

      Examples:
        | value |
        | 0     |
        | 2.5   |
