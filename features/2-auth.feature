# Spec §5 (three headers on every request; rule 1: 401 "Invalid API
# credentials"; rule 2: 403 "Unauthorized account access"), §7 (the common
# 401 and 403 rows) and §4 (the headers are required by all operations).
Feature: Authentication with key, secret and account identifier
  Every request to every operation carries x-api-key, x-api-secret and
  x-account-id. A wrong key or secret is refused with 401 "Invalid API
  credentials"; a right key and secret with an account identifier that does
  not match is refused with 403 "Unauthorized account access".

  The spec shows no body shape for these errors, so the suite checks the
  status and that the message appears in the (JSON) body, not a field name.

  @normative @spec-5 @spec-7 @spec-4
  Scenario Outline: <operation> accepts the three correct headers
    When the client calls <operation> with a valid request
    Then the response status should be 200

    Examples:
      | operation      |
      | Campaign List  |
      | Campaign Stats |

    @writes
    Examples:
      | operation   |
      | Add Contact |

  @normative @spec-5 @spec-7
  Scenario Outline: <operation> refuses the <header> header when it is <fault>
    Given the "<header>" header is <fault>
    When the client calls <operation> with a valid request
    Then the response should be 401 with the message "Invalid API credentials"

    Examples:
      | operation      | header       | fault   |
      | Add Contact    | x-api-key    | wrong   |
      | Campaign List  | x-api-key    | wrong   |
      | Campaign Stats | x-api-key    | wrong   |
      | Add Contact    | x-api-secret | wrong   |
      | Campaign List  | x-api-secret | wrong   |
      | Campaign Stats | x-api-secret | wrong   |
      | Add Contact    | x-api-key    | missing |
      | Campaign List  | x-api-key    | missing |
      | Campaign Stats | x-api-key    | missing |
      | Add Contact    | x-api-secret | missing |
      | Campaign List  | x-api-secret | missing |
      | Campaign Stats | x-api-secret | missing |

  # A value that differs only in its last character catches a service that
  # compares a prefix, or a hash cut short.
  @normative @spec-5 @spec-7
  Scenario Outline: <operation> refuses a <header> that differs from the right one in its last character
    Given the "<header>" header differs from the right one in its last character
    When the client calls <operation> with a valid request
    Then the response should be <status> with the message "<message>"

    Examples:
      | operation      | header       | status | message                     |
      | Add Contact    | x-api-key    | 401    | Invalid API credentials     |
      | Campaign List  | x-api-key    | 401    | Invalid API credentials     |
      | Campaign Stats | x-api-key    | 401    | Invalid API credentials     |
      | Add Contact    | x-api-secret | 401    | Invalid API credentials     |
      | Campaign List  | x-api-secret | 401    | Invalid API credentials     |
      | Campaign Stats | x-api-secret | 401    | Invalid API credentials     |
      | Add Contact    | x-account-id | 403    | Unauthorized account access |
      | Campaign List  | x-account-id | 403    | Unauthorized account access |
      | Campaign Stats | x-account-id | 403    | Unauthorized account access |

  @normative @spec-5 @spec-7
  Scenario Outline: <operation> refuses an account identifier that matches no account
    Given the "x-account-id" header is wrong
    When the client calls <operation> with a valid request
    Then the response should be 403 with the message "Unauthorized account access"

    Examples:
      | operation      |
      | Add Contact    |
      | Campaign List  |
      | Campaign Stats |

  @normative @spec-5 @spec-7 @two-accounts
  Scenario Outline: <operation> refuses the right key and secret with another account's identifier
    Given a second account is configured
    And the "x-account-id" header holds the second account's value
    When the client calls <operation> with a valid request
    Then the response should be 403 with the message "Unauthorized account access"

    Examples:
      | operation      |
      | Add Contact    |
      | Campaign List  |
      | Campaign Stats |

  @normative @spec-5 @spec-7 @two-accounts
  Scenario Outline: <operation> refuses a key paired with another account's secret
    Given a second account is configured
    And the "x-api-secret" header holds the second account's value
    When the client calls <operation> with a valid request
    Then the response should be 401 with the message "Invalid API credentials"

    Examples:
      | operation      |
      | Add Contact    |
      | Campaign List  |
      | Campaign Stats |

  # The spec does not say whether a missing account identifier is a
  # credential problem (401) or an account mismatch (403); both are accepted.
  @normative @spec-5 @spec-7
  Scenario Outline: <operation> refuses a request without an account identifier
    Given the "x-account-id" header is missing
    When the client calls <operation> with a valid request
    Then the response should be 401 with the message "Invalid API credentials" or 403 with the message "Unauthorized account access"

    Examples:
      | operation      |
      | Add Contact    |
      | Campaign List  |
      | Campaign Stats |

  @normative @spec-5 @two-accounts
  Scenario: The second account is served with its own credentials
    Given a second account is configured
    And the client uses the second account's credentials
    When the client calls Campaign List for page 1 with limit 1
    Then the response status should be 200

  @simulator @spec-5
  Scenario: The simulator answers a missing account identifier with 403
    Given the "x-account-id" header is missing
    When the client calls Campaign List for page 1 with limit 1
    Then the response should be 403 with an "error" field mentioning "Unauthorized account access"

  @simulator @spec-5
  Scenario: The simulator treats an empty key like a missing one
    Given the "x-api-key" header is empty
    When the client calls Campaign List for page 1 with limit 1
    Then the response should be 401 with an "error" field mentioning "Invalid API credentials"
