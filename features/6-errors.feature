# Spec §7 (the common error rows: 401, 403, 429, 500; the operation rows: the
# two 400s) and §4.1-§4.3 (each operation's error list).
#
# Where each row is checked:
#   401, 403     -> 2-auth.feature, for every operation
#   400 rows     -> 3-contact.feature and 5-campaign-stats.feature
#   429          -> 7-rate-limit.feature, for every operation
#   500          -> here. A normative scenario cannot make a foreign service
#                   fail on purpose, so the 500 row is checked only against the
#                   simulator, whose control API injects the failure. When
#                   certifying another implementation this row is NOT verified.
Feature: Errors common to all operations
  An unexpected server-side problem is answered with 500 and the message
  "Internal server error".

  @simulator @spec-7 @spec-4.1 @spec-4.2 @spec-4.3
  Scenario Outline: An unexpected failure of <operation> is answered with 500
    Given the simulator will answer the next <operation> request with an unexpected failure
    When the client calls <operation> with a valid request
    Then the response should be 500 with the message "Internal server error"

    Examples:
      | operation      |
      | Add Contact    |
      | Campaign List  |
      | Campaign Stats |

  @simulator @spec-7
  Scenario: The service recovers once the injected failure is used up
    Given the simulator will answer the next Campaign List request with an unexpected failure
    When the client calls Campaign List for page 1 with limit 1
    Then the response status should be 500
    When the client calls Campaign List for page 1 with limit 1
    Then the response status should be 200
