@faults
Feature: Encrypted connections
  Managed Redis services and zero-trust networks require TLS. The memory must
  work over it, and a server it cannot verify (a certificate signed by another
  authority, or for another name) must be refused before any message is sent.

  Rule: Only a server the memory can verify receives messages

    Scenario: The memory works over TLS with the server's certificate authority
      Given the memory connects over TLS, trusting the server's certificate authority
      And a new session "alice"
      When the user says "hello"
      Then the context is:
        | role | content |
        | user | hello   |

    Scenario: A server whose certificate another authority signed is refused
      Given the memory connects over TLS, trusting another certificate authority
      And a new session "alice"
      When the user tries to say "hello"
      Then the message is refused by the server with the reason "certificate verify failed"
      And the server holds no key at all

    Scenario: A server reached under a name its certificate does not carry is refused
      Given the memory connects over TLS under a name the server's certificate does not carry
      And a new session "alice"
      When the user tries to say "hello"
      Then the message is refused by the server with the reason "certificate verify failed"
      And the server holds no key at all
