# Spec §4.2 (Campaign List: limit and page required, the envelope fields),
# §2.2 (the campaign record), §3 (status string, active and broadcast flags),
# §8 (page size at most 50, page at least 1).
Feature: Campaign List and pagination
  A partner reads its campaigns page by page with POST /campaign/list and a
  body {"limit": <records per page, at most 50>, "page": <page number, from 1>}.
  The answer holds pageNo, pageSize, totalPages, totalRecords,
  filteredRecords and the campaigns of that page.

  The scenarios use the target's own campaigns. When the account has too few
  campaigns for a scenario (for example only one page), the scenario is
  skipped with the reason, never passed.

  # A page size of 7 leaves a partial last page for most totals, so a
  # totalPages rounded down shows.
  @normative @spec-4.2
  Scenario: The first page carries every field of the page envelope
    When the client calls Campaign List for page 1 with limit 7
    Then the response status should be 200
    And the response body should be a JSON object with these fields:
      | field           | type    |
      | pageNo          | integer |
      | pageSize        | integer |
      | totalPages      | integer |
      | totalRecords    | integer |
      | filteredRecords | integer |
      | campaigns       | array   |
    And the response field "pageNo" should be 1
    And the response field "pageSize" should be 7
    And "totalPages" should be "totalRecords" divided by the page size, rounded up
    And "filteredRecords" should not exceed "totalRecords"
    And the page should hold as many campaigns as the page size and the total allow

  # A page size that divides the total leaves no partial page: a totalPages
  # computed as floor(total / limit) + 1 shows here and nowhere else.
  @normative @spec-4.2
  Scenario: totalPages is exact when the page size divides the total
    When the client calls Campaign List for page 1 with a page size that divides the total exactly
    Then the response status should be 200
    And "totalPages" should be "totalRecords" divided by the page size, rounded up
    And the page should hold as many campaigns as the page size and the total allow

  # A page past the last is a valid request (limit at most 50, page at least
  # 1) and §4.2 lists no error for it: the answer should be the envelope of
  # §4.2 with no campaigns. A client error is accepted with a warning.
  @normative @spec-4.2
  Scenario: A page past the last one is answered with the page envelope and no campaigns
    When the client calls Campaign List for the page after the last one with limit 10
    Then the response should be a success with the page envelope and no campaigns, or a client error

  @normative @spec-2.2 @spec-3 @spec-4.2
  Scenario: Every campaign carries the fields of the spec in their formats
    When the client reads every page of its campaign list with limit 50
    Then every campaign should have these fields:
      | field             | type           | format       |
      | Id                | integer        |              |
      | campaignName      | string         |              |
      | campaignType      | integer        | 0 or 1       |
      | campaignChannel   | string         | email or sms |
      | status            | string         |              |
      | statusColor       | string         | hex colour   |
      | active            | integer        | 0 or 1       |
      | scheduledOn       | string         | timestamp    |
      | scheduledTimeZone | string         |              |
      | offset            | string         | utc offset   |
      | autoResend        | integer        |              |
      | broadcastOn       | string         | timestamp    |
      | broadcast         | integer        |              |
      | createdAt         | string         | timestamp    |
      | updatedAt         | string         | timestamp    |
      | reason            | null or string |              |

  @normative @spec-4.2 @spec-8
  Scenario: A page size of 50, the maximum, is served
    When the client calls Campaign List for page 1 with limit 50
    Then the response status should be 200
    And the response field "pageSize" should be 50
    And the page should hold as many campaigns as the page size and the total allow

  @normative @spec-4.2
  Scenario: A later page carries its own page number
    Given the account has at least 3 campaigns
    When the client calls Campaign List for page 2 with limit 2
    Then the response status should be 200
    And the response field "pageNo" should be 2
    And the response field "pageSize" should be 2
    And the page should hold as many campaigns as the page size and the total allow

  @normative @spec-4.2
  Scenario: Pages never overlap and together hold every campaign exactly once
    When the client reads every page of its campaign list with a page size that gives at least two pages
    Then every page should report the same totalRecords and totalPages
    And every page but the last should be full
    And every campaign should appear exactly once across the pages

  # The spec gives the maximum (50) but not the answer to a larger limit: a
  # client error and a page capped at 50 are both accepted.
  @normative @spec-4.2 @spec-8
  Scenario: A page size above 50 never yields more than 50 campaigns
    When the client calls Campaign List for page 1 with limit 51
    Then the response should be a client error, or a success whose "pageSize" is at most 50 with at most 50 campaigns

  # The spec says page must be >= 1 but not how a page 0 is answered.
  @normative @spec-4.2 @spec-8
  Scenario Outline: A page number below 1 is never served as such
    When the client calls Campaign List with:
      """
      {"limit": 10, "page": <page>}
      """
    Then the response should be a client error, or a success whose "pageNo" is at least 1

    Examples:
      | page |
      | 0    |
      | -1   |

  # Both fields are required, but the answer to a missing one is not shown:
  # the suite only asks that it is not treated as a server failure.
  @normative @spec-4.2 @spec-1
  Scenario Outline: A request missing <missing> is not a server failure
    When the client calls Campaign List with:
      """
      <body>
      """
    Then the response should not be a server error
    And the response body should be JSON

    Examples:
      | missing        | body          |
      | the page       | {"limit": 10} |
      | the limit      | {"page": 1}   |
      | both fields    | {}            |

  @simulator @spec-4.2 @spec-8
  Scenario Outline: The simulator refuses <case> with a 400 naming <field>
    When the client calls Campaign List with:
      """
      <body>
      """
    Then the response should be 400 with an "error" field mentioning "<field>"

    Examples:
      | case                 | field | body                        |
      | a limit above 50     | limit | {"limit": 51, "page": 1}    |
      | a limit of 0         | limit | {"limit": 0, "page": 1}     |
      | a missing limit      | limit | {"page": 1}                 |
      | a limit as a string  | limit | {"limit": "10", "page": 1}  |
      | a fractional limit   | limit | {"limit": 2.5, "page": 1}   |
      | a page of 0          | page  | {"limit": 10, "page": 0}    |
      | a missing page       | page  | {"limit": 10}               |
      | a page as a string   | page  | {"limit": 10, "page": "1"}  |

  @simulator @spec-4.2
  Scenario: The simulator answers a page past the end with no campaigns
    When the client calls Campaign List for the page after the last one with limit 10
    Then the response status should be 200
    And the page should hold 0 campaigns

  @simulator @spec-4.2
  Scenario: The simulator lists campaigns by ascending Id, deleted ones included
    When the client reads every page of its campaign list with a page size that gives at least two pages
    Then the campaign Ids should be in ascending order across the pages
    And at least one campaign across the pages should be deleted

  @simulator @spec-4.2
  Scenario: The simulator reports filteredRecords equal to totalRecords
    When the client calls Campaign List for page 1 with limit 10
    Then the response field "filteredRecords" should equal the response field "totalRecords"

  @simulator @spec-2.2
  Scenario: The simulator writes colours as #RRGGBB and timestamps in order
    When the client calls Campaign List for page 1 with limit 50
    Then every campaign's "statusColor" should match "^#[0-9A-Fa-f]{6}$"
    And every campaign's "createdAt" should not be after its "updatedAt"

  @simulator @spec-4.2 @two-accounts
  Scenario: The simulator keeps each account's campaigns apart
    Given a second account is configured
    When the client calls Campaign List for page 1 with limit 50
    And the second account calls Campaign List for page 1 with limit 50
    Then the two accounts' pages should share no campaign Id
