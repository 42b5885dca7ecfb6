# Spec §2.1 (the Contact fields; at least one of email and phoneNo), §4.1
# (Add Contact: 200 {"status":"success","contactId":"<string>"}; 400 "Either
# email or phoneNo is required") and §7 (the Add Contact 400 row).
Feature: Add Contact
  A partner creates a contact with POST /contact/add. Every field is
  optional, but at least one of email and phoneNo must be present. The
  answer is {"status": "success", "contactId": "<identifier>"}.

  In a request body, {{email}} stands for an address unique to the scenario
  (at example.com, or the runner's --email-domain), {{EMAIL}} for the same
  address in upper case and {{phone}} for a random number of the fictional
  +1 202 555 range, so that runs rarely collide.

  @normative @spec-2.1 @spec-4.1 @writes
  Scenario: A contact with only an email address is created
    When the client calls Add Contact with:
      """
      {"email": "{{email}}"}
      """
    Then the response status should be 200
    And the response body should be a JSON object with these fields:
      | field     | type   |
      | status    | string |
      | contactId | string |
    And the response field "status" should be "success"
    And the response field "contactId" should be a non-empty string

  @normative @spec-2.1 @spec-4.1 @writes
  Scenario: A contact with only a phone number is created
    When the client calls Add Contact with:
      """
      {"phoneNo": "{{phone}}"}
      """
    Then the response status should be 200
    And the response body should be a JSON object with these fields:
      | field     | type   |
      | status    | string |
      | contactId | string |
    And the response field "status" should be "success"
    And the response field "contactId" should be a non-empty string

  # A contactId is the "identifier of the created contact" (§4.1): three
  # different contacts cannot share one. Whether a repeated contact gets
  # its first identifier again is not shown, so no contact here repeats.
  @normative @spec-4.1 @spec-2.1 @writes
  Scenario: Each contact created gets a contactId of its own
    When the client calls Add Contact with:
      """
      {"email": "{{email}}"}
      """
    And the client calls Add Contact with:
      """
      {"phoneNo": "{{phone}}"}
      """
    And the client calls Add Contact with:
      """
      {"email": "{{email2}}", "phoneNo": "{{phone2}}", "firstName": "Grace"}
      """
    Then every answer should carry a contactId of its own

  @normative @spec-2.1 @spec-4.1 @writes
  Scenario: A contact with every field of the spec is created
    When the client calls Add Contact with:
      """
      {
        "email": "{{email}}",
        "phoneNo": "{{phone}}",
        "firstName": "Ada",
        "lastName": "Lovelace",
        "addrOne": "12 St James's Square",
        "addrTwo": "Flat 3",
        "city": "London",
        "country": "UK",
        "state": "LND",
        "zipCode": "SW1Y 4JH",
        "gender": "female",
        "dateOfBirth": "1990-12-10",
        "emailOptStatus": 1,
        "smsOptStatus": 0,
        "tag": ["vip", "newsletter"],
        "playerType": ["casual"]
      }
      """
    Then the response status should be 200
    And the response body should be a JSON object with these fields:
      | field     | type   |
      | status    | string |
      | contactId | string |
    And the response field "status" should be "success"
    And the response field "contactId" should be a non-empty string

  @normative @spec-2.1 @spec-4.1 @writes
  Scenario Outline: Each allowed value of <field> is accepted
    When the client calls Add Contact with:
      """
      {"email": "{{email}}", "<field>": <value>}
      """
    Then the response status should be 200
    And the response field "status" should be "success"

    Examples:
      | field          | value    |
      | gender         | "male"   |
      | gender         | "female" |
      | gender         | "other"  |
      | emailOptStatus | 0        |
      | emailOptStatus | 1        |
      | smsOptStatus   | 0        |
      | smsOptStatus   | 1        |

  # §2.1 lists these codes as examples of "country", UK among them (not
  # ISO 3166's GB): a service that refuses one contradicts the spec's own
  # list.
  @normative @spec-2.1 @spec-4.1 @writes
  Scenario Outline: The country code <country>, an example of the spec, is accepted
    When the client calls Add Contact with:
      """
      {"email": "{{email}}", "country": "<country>"}
      """
    Then the response status should be 200
    And the response field "status" should be "success"

    Examples:
      | country |
      | US      |
      | UK      |
      | CA      |
      | AU      |
      | NZ      |
      | IN      |

  @normative @spec-2.1 @spec-4.1 @spec-7
  Scenario: A contact with neither email nor phone number is refused
    When the client calls Add Contact with:
      """
      {"firstName": "Ada", "lastName": "Lovelace", "city": "London"}
      """
    Then the response should be 400 with the message "Either email or phoneNo is required"

  @normative @spec-2.1 @spec-4.1 @spec-7
  Scenario: An empty contact is refused
    When the client calls Add Contact with:
      """
      {}
      """
    Then the response should be 400 with the message "Either email or phoneNo is required"

  @simulator @spec-2.1 @spec-4.1 @writes
  Scenario: The simulator stores the contact it created
    Given the simulator's control API is available
    When the client calls Add Contact with:
      """
      {"email": "{{email}}", "firstName": "Grace"}
      """
    Then the response status should be 200
    And the simulator should hold a contact with the scenario's email address

  @simulator @spec-2.1 @spec-4.1 @writes
  Scenario: The simulator answers a repeated email address with the same contact
    When the client calls Add Contact with:
      """
      {"email": "{{email}}"}
      """
    And the client calls Add Contact with:
      """
      {"email": "{{EMAIL}}", "firstName": "Again"}
      """
    Then the response status should be 200
    And both answers should carry the same contactId

  @simulator @spec-2.1 @spec-4.1
  Scenario Outline: The simulator refuses <case> with a 400 naming <field>
    When the client calls Add Contact with:
      """
      {"email": "{{email}}", "<field>": <value>}
      """
    Then the response should be 400 with an "error" field mentioning "<field>"

    Examples:
      | case                      | field          | value          |
      | an unknown gender         | gender         | "robot"        |
      | a date that does not exist | dateOfBirth   | "1990-02-30"   |
      | a date in another format  | dateOfBirth    | "10/12/1990"   |
      | an opt status of 2        | emailOptStatus | 2              |
      | an opt status as a string | smsOptStatus   | "1"            |
      | a name that is a number   | firstName      | 42             |
      | tags that are not a list  | tag            | "vip"          |
      | an unknown field          | nickname       | "Ada"          |

  @simulator @spec-2.1 @spec-4.1
  Scenario Outline: The simulator refuses a malformed <field>
    When the client calls Add Contact with:
      """
      {"<field>": "<value>"}
      """
    Then the response should be 400 with an "error" field mentioning "<field>"

    Examples:
      | field   | value          |
      | email   | not-an-address |
      | phoneNo | call me maybe  |
