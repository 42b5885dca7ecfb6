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

  # Rules list-envelope, list-walk and list-fields of the matrix
  # (steps/matrix.go). The account's list is walked at limits 1, 7, 49 and 50:
  # full pages, the short last page, the page past the last (at limit 1 the
  # first 20 pages, then the last and the one past it). On every page: pageNo
  # the page asked for (past the last, an existing page served as itself is
  # a warning), pageSize the limit, totalPages the number of pages
  # the records after filtering make at that limit, filteredRecords and
  # totalRecords the same on every page and at every limit, totalRecords at
  # least filteredRecords, and as many campaigns as are left. Which campaigns
  # are listed is open (filtering is not shown): the pages follow
  # filteredRecords. Every campaign's fields are checked on every kind of
  # campaign: each channel, each type, deleted and active ones.
  @normative @spec-4.2 @spec-2.2 @spec-3 @rule-list-envelope @rule-list-walk @rule-list-fields
  Scenario Outline: The <account> account's campaign list, walked at every limit, pages its campaigns as §4.2 says
    When the <account> account walks its campaign list at limits 1, 7, 49 and 50
    Then every page of every walk should carry the envelope of §4.2
    And each walk should hold every campaign once, as many as filteredRecords, the same campaigns at every limit
    And every campaign of every kind should carry the fields of §2.2 in their formats:
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

    Examples:
      | account |
      | primary |

    @two-accounts
    Examples:
      | account |
      | second  |

  # Rule list-concurrent: the request names its page (§4.2), so two clients
  # reading one account's pages at the same time each get their own. For
  # each account, the first two pages at a limit that makes at least
  # two are read alone, then by two clients at once, page by page (both
  # requests of a page in flight together). Each of the two walks holds
  # every Id once, filteredRecords campaigns when it is whole, and the same
  # campaigns as the walk alone; a pager that keeps a cursor per account or
  # per connection skips or repeats. Six requests per account.
  @normative @spec-4.2 @rule-list-concurrent
  Scenario: Two clients walking an account's pages at once each get a consistent walk, for either account
    When each account walks its campaign list alone, then with two clients at once
    Then each of the two walks should hold every campaign once, as many as filteredRecords, the same campaigns as the walk alone

  # The spec gives the maximum (50) but not the answer to a larger limit: a
  # client error and a page capped at 50 are both accepted.
  @normative @spec-4.2 @spec-8 @rule-list-limit-max
  Scenario: A page size above 50 never yields more than 50 campaigns, for either account
    When each account calls Campaign List for page 1 with limits 51 and 500
    Then every answer should be a client error, or a success whose "pageSize" is at most 50 with at most 50 campaigns

  # The spec says page must be >= 1 but not how a page 0 is answered.
  @normative @spec-4.2 @spec-8 @rule-list-page-min
  Scenario: A page number below 1 is never served as such, for either account
    When each account calls Campaign List with limit 10 for pages 0 and -1
    Then every answer should be a client error, or a success whose "pageNo" is at least 1

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
