@llm_smoke
Feature: Memory with a real model
  Fake models prove the prompt is right; these few scenarios prove a real
  OpenAI-compatible model answers from the remembered session. They assert
  what the model remembers, never its wording, and run only when LLM_BASE_URL
  (with LLM_API_KEY and LLM_MODEL) points at an endpoint.

  Rule: A real model answers from the remembered session

    Scenario: A real model recalls the name the user gave earlier
      Given a new session "smoke-ada"
      And the user asked "Hi! My name is Ada Lovelace."
      When the user asks "What is my name? Answer with my name only."
      Then the answer mentions "Ada"

    Scenario: A real model recalls a detail from several turns back
      Given a new session "smoke-lisbon"
      And the user asked "I live in Lisbon."
      And the user asked "I enjoy long walks by the sea."
      When the user asks "Which city do I live in? Answer with the city only."
      Then the answer mentions "Lisbon"

    Scenario: A real model's streamed answer is remembered whole
      Given a new session "smoke-stream"
      And the user asked "Hi! My name is Ada Lovelace."
      When the user asks "What is my name? Answer with my name only." with the answer streamed
      Then the answer mentions "Ada"
      And the context contains 4 messages

    Scenario: A real model's tool call is remembered as the assistant's side of the turn
      Given a new session "smoke-weather"
      And the model must call the tool "weather", which takes a "city"
      When the user asks "What is the weather in Paris?"
      Then the context ends with the assistant calling "weather" with "city" set to "Paris"
