# Spec §7 (the common error rows: 401, 403, 429, 500; the operation rows: the
# two 400s) and §4.1-§4.3 (each operation's error list).
#
# Where each row is checked:
#   401, 403     -> 2-auth.feature, for every operation
#   400 rows     -> 3-contact.feature and 5-campaign-stats.feature
#   429          -> 7-rate-limit.feature, for every operation
#   every answer -> here: the whole-run observer holds EVERY answer of the
#                   run (whatever sent it) to §1 rule 3, the 429 body of §7,
#                   the messages of §5/§7 and the bodies of §4.1-§4.3 with
#                   §2.2/§2.3 (rule every-answer)
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

  # Rule every-answer: the step sends answers of every kind the rule speaks
  # of and judges none; the run's observer judges them with every other
  # answer of the run (the preflight's, the preparation reads', every
  # scenario's). Answers that come after this scenario (the @rate-limit
  # scenario's) are judged at the end of the run, and fail this scenario's
  # result if they break a rule.
  @normative @spec-1 @spec-2.2 @spec-2.3 @spec-4.1 @spec-4.2 @spec-4.3 @spec-5 @spec-7 @rule-every-answer
  Scenario: Every answer of the run holds to what the spec says of every response
    When each account sends every operation a valid request, one with a wrong "x-api-secret" and one with a wrong "x-account-id", judging none of the answers itself
    Then no answer the run has received breaks what the spec says of every response
