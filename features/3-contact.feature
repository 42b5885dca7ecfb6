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

  # Rule contact-created of the matrix (steps/matrix.go): email only, phoneNo
  # only and both, each alone and with every optional field of §2.1, for
  # each account; every contact gets a contactId of its own. Whether a
  # repeated contact gets its first identifier again is not shown, so no
  # contact repeats.
  @normative @spec-2.1 @spec-4.1 @writes @rule-contact-created
  Scenario: Each account creates a contact of every form of §2.1, each with a contactId of its own
    When each account calls Add Contact with a contact of every form of §2.1
    Then every answer should be 200 with status "success" and a contactId of its own

  # Rule contact-values: each allowed value of gender, emailOptStatus and
  # smsOptStatus, each country code §2.1 lists as an example (UK among them,
  # not ISO 3166's GB: a service that refuses one contradicts the spec's own
  # list) and a dateOfBirth in its format, for each account.
  @normative @spec-2.1 @spec-4.1 @writes @rule-contact-values
  Scenario: Each value §2.1 lists is accepted, for either account
    When each account calls Add Contact with each value §2.1 lists for gender, emailOptStatus, smsOptStatus, country and dateOfBirth
    Then every answer should be 200 with status "success" and a contactId of its own

  # Rule contact-realdata: a valid contact is created whatever valid data it
  # carries, one request per condition for each account (22 each): every
  # optional field at once; names as people write them (an apostrophe, a
  # hyphen, spaces; diacritics within and beyond Latin-1; Cyrillic, Greek,
  # Arabic, Hebrew, Devanagari, CJK and Hangul); a namesake of another
  # contact; emails and phones as they really come; dates at the calendar's
  # edges (2000-02-29, 1900-01-01, 1970-01-01, 1999-12-31, today at UTC-12);
  # lists empty and long; long values. Every contact gets a contactId of its
  # own. Tiers: a 5xx is a FAILURE for every condition (§7's 500 is for an
  # unexpected server-side problem); a 4xx is a FAILURE for a value §2.1
  # allows without doubt (names in any script, dates, empty lists, every
  # field) and a WARNING where §2.1 leaves the shape or length open (email
  # and phone formats, many tags, long values), so a strict deployment
  # passes.
  @normative @spec-2.1 @spec-4.1 @writes @rule-contact-realdata
  Scenario: Each account creates contacts with real-world data, each with a contactId of its own
    When each account calls Add Contact with a contact of every kind of real-world data
    Then every contact should be created with a contactId of its own, a refusal judged by what §2.1 leaves open

  # Rule contact-required: an empty body, and every optional field without
  # email or phoneNo, for each account.
  @normative @spec-2.1 @spec-4.1 @spec-7 @rule-contact-required
  Scenario: A contact with neither email nor phoneNo is refused, for either account
    When each account calls Add Contact with an empty body and with every optional field but neither email nor phoneNo
    Then every answer should be 400 with the message "Either email or phoneNo is required"

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
