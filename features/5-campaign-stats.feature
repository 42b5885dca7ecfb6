# Spec §4.3 (Campaign Stats: campaignId required; 400 "CampaignId is
# required"), §2.3 (emailStat and smsStat keys, integer counts), §2.2 (the Id
# of a listed campaign is the campaignId) and §7 (the Campaign Stats 400 row).
Feature: Campaign Stats
  A partner reads the email and SMS delivery counts of one of its campaigns
  with POST /campaign/stats and a body {"campaignId": <Id from the list>}.
  The answer holds an emailStat object (Sent, Opened, Delivered, Hardbounce,
  Softbounce, Failed, Clicked, Unsubscribe, Complained) and an smsStat object
  (Sent, Delivered, Failed), every value an integer.

  The scenarios take campaign Ids from the target's own campaign list; an
  account with no campaigns makes them skip.

  @normative @spec-2.3 @spec-4.3 @spec-2.2
  Scenario: The statistics of a listed campaign carry every key of the spec
    When the client calls Campaign Stats for the first campaign of its list
    Then the response status should be 200
    And the response body should be a JSON object with these fields:
      | field     | type   |
      | emailStat | object |
      | smsStat   | object |
    And the "emailStat" object should have these fields:
      | field       | type    |
      | Sent        | integer |
      | Opened      | integer |
      | Delivered   | integer |
      | Hardbounce  | integer |
      | Softbounce  | integer |
      | Failed      | integer |
      | Clicked     | integer |
      | Unsubscribe | integer |
      | Complained  | integer |
    And the "smsStat" object should have these fields:
      | field     | type    |
      | Sent      | integer |
      | Delivered | integer |
      | Failed    | integer |
    And every statistic should be a count, an integer of 0 or more

  @normative @spec-2.3 @spec-4.3 @spec-2.2
  Scenario: The statistics of the last listed campaign carry every key too
    When the client calls Campaign Stats for the last campaign of its list
    Then the response status should be 200
    And the "emailStat" object should have these fields:
      | field       | type    |
      | Sent        | integer |
      | Opened      | integer |
      | Delivered   | integer |
      | Hardbounce  | integer |
      | Softbounce  | integer |
      | Failed      | integer |
      | Clicked     | integer |
      | Unsubscribe | integer |
      | Complained  | integer |
    And the "smsStat" object should have these fields:
      | field     | type    |
      | Sent      | integer |
      | Delivered | integer |
      | Failed    | integer |

  # Every campaign's statistics carry both objects with every key, whatever
  # its channel: the other channel's counts may be zero, never absent.
  @normative @spec-2.3 @spec-4.3
  Scenario Outline: The statistics of an <channel> campaign carry every key too
    When the client calls Campaign Stats for the first <channel> campaign of its list
    Then the response status should be 200
    And the response body should be a JSON object with these fields:
      | field     | type   |
      | emailStat | object |
      | smsStat   | object |
    And the "emailStat" object should have these fields:
      | field       | type    |
      | Sent        | integer |
      | Opened      | integer |
      | Delivered   | integer |
      | Hardbounce  | integer |
      | Softbounce  | integer |
      | Failed      | integer |
      | Clicked     | integer |
      | Unsubscribe | integer |
      | Complained  | integer |
    And the "smsStat" object should have these fields:
      | field     | type    |
      | Sent      | integer |
      | Delivered | integer |
      | Failed    | integer |
    And every statistic should be a count, an integer of 0 or more

    Examples:
      | channel |
      | email   |
      | sms     |

  # Rule stats-keys of the matrix (steps/matrix.go): a listed campaign of
  # each channel and type, and one whose counts are all zero, for each
  # account.
  @normative @spec-2.3 @spec-4.3 @spec-2.2 @rule-stats-keys
  Scenario: The statistics of every kind of campaign carry every key, for either account
    When each account calls Campaign Stats for a listed campaign of each channel and type, and for one whose counts are all zero
    Then every answer should be 200 with emailStat and smsStat carrying every key of §2.3, each a count

  # Rule stats-required. Only the plain case: a body with some other field
  # but no campaignId may also be refused for that field first (the spec
  # says nothing of unknown fields), so it would not tell a broken service
  # from a correct one.
  @normative @spec-4.3 @spec-7 @rule-stats-required
  Scenario: A request without a campaignId is refused, for either account
    When each account calls Campaign Stats with an empty body
    Then every answer should be 400 with the message "CampaignId is required"

  # Rule independence: Campaign Stats and Campaign List retrieve (§4.3,
  # §4.2), Add Contact creates a contact (§4.1): none changes what another
  # answers. For each account, ten requests: page 1 of the list twice with
  # nothing between, a Stats call of the page's last campaign, page 1, two
  # more Stats calls, page 1, an Add Contact, page 1 and the statistics
  # again. A live deployment's data may move on its own, so a change is a
  # FAILURE only when it is attributable (the reads before the operation
  # agreed and it shows right after it; for the statistics, every Stats call
  # moves them by the same amount); data that moved while nothing was sent
  # is a WARNING and leaves the cells it hides unjudged. Not tagged @writes:
  # a --read-only run sends no Add Contact here and lists its cells as
  # unverified, but still judges the Stats call.
  @normative @spec-4.3 @spec-4.2 @spec-4.1 @rule-independence
  Scenario: Reading statistics or adding a contact changes neither the list nor the statistics, for either account
    When each account reads its campaign list and statistics around a Campaign Stats call and an Add Contact
    Then neither operation should have changed what the other operations answer

  @simulator @spec-4.3
  Scenario: The simulator treats a null campaignId as missing
    When the client calls Campaign Stats with:
      """
      {"campaignId": null}
      """
    Then the response should be 400 with an "error" field mentioning "CampaignId is required"

  @simulator @spec-4.3
  Scenario Outline: The simulator refuses a campaignId that is <case>
    When the client calls Campaign Stats with:
      """
      {"campaignId": <value>}
      """
    Then the response should be 400 with an "error" field mentioning "campaignId"

    Examples:
      | case          | value  |
      | a string      | "12"   |
      | a fraction    | 1.5    |
      | a boolean     | true   |

  @simulator @spec-4.3
  Scenario: The simulator answers an unknown campaign with 404
    When the client calls Campaign Stats for a campaign Id that no listed campaign has
    Then the response should be 404 with an "error" field mentioning "Campaign not found"

  @simulator @spec-4.3 @two-accounts
  Scenario: The simulator hides another account's campaign behind the same 404
    Given a second account is configured
    When the client calls Campaign Stats for the first campaign of the second account's list
    Then the response should be 404 with an "error" field mentioning "Campaign not found"

  @simulator @spec-2.3
  Scenario: The simulator's counts form a coherent delivery funnel
    When the client calls Campaign Stats for the first campaign of its list
    Then the response status should be 200
    And no emailStat or smsStat count should exceed the count it derives from
