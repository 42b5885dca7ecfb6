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

  # Rule auth-served of the matrix (steps/matrix.go): every operation, every
  # account.
  @normative @spec-5 @spec-4 @rule-auth-served
  Scenario: Every operation serves each account's own three headers
    When each account sends a valid Add Contact, Campaign List and Campaign Stats request with its own credentials
    Then every one of them should be served

  # Rules auth-key, auth-secret and auth-account: each header wrong in every
  # way a comparison can be loose (a character changed at the start, middle
  # or end, case changed, a space inside, Unicode spaces around it, a prefix,
  # a suffix, truncated, half of it, a fullwidth or Cyrillic look-alike, the
  # other account's value, empty, missing), on every operation, for every
  # account, the other two headers right. ASCII spaces around a value are not
  # sent: HTTP strips them, so they leave the value right.
  @normative @spec-5 @spec-7 @rule-auth-key
  Scenario: Every operation refuses an x-api-key that is not exactly the account's
    When each account sends Add Contact, Campaign List and Campaign Stats with its "x-api-key" header changed in every way a comparison can be loose
    Then every answer should be 401 with the message "Invalid API credentials"

  @normative @spec-5 @spec-7 @rule-auth-secret
  Scenario: Every operation refuses an x-api-secret that is not exactly the account's
    When each account sends Add Contact, Campaign List and Campaign Stats with its "x-api-secret" header changed in every way a comparison can be loose
    Then every answer should be 401 with the message "Invalid API credentials"

  # The spec does not say whether a missing (or empty) account identifier is
  # a credential problem (401) or an account mismatch (403); both are
  # accepted for those two conditions only.
  @normative @spec-5 @spec-7 @rule-auth-account
  Scenario: Every operation refuses an x-account-id that is not exactly the account's
    When each account sends Add Contact, Campaign List and Campaign Stats with its "x-account-id" header changed in every way a comparison can be loose
    Then every answer should be 403 with the message "Unauthorized account access", or 401 with the message "Invalid API credentials" where the header is missing or empty

  # Rule auth-connection (issue 27): §5 judges each request, never the
  # connection that carries it. On one kept-alive HTTP/1.1 connection and
  # on one HTTP/2 connection that carried the account's served requests,
  # each header wrong (another value) is refused, and each right request
  # after a refusal is served; each header wrong on a connection of its own
  # is refused too. A cell whose connection the target closed in between
  # (Connection: close, an idle timeout), or an HTTP/2 cell of a target
  # without HTTP/2 (the spec does not ask for it), is a warning; an
  # in-process run has no connections, so its cells are unverified.
  @normative @spec-5 @spec-7 @rule-auth-connection
  Scenario: Every operation judges the credentials of each request, whatever connection carries it
    When each account sends, on a kept-alive HTTP/1.1 connection and on an HTTP/2 connection that carried its authenticated requests, each operation with each header wrong, then a right request; and each header wrong on a fresh connection
    Then every wrong header should be refused as §5 says and every right request served, whatever connection carried it

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
