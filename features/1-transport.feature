# Spec §1 (general rules 1-4, base addresses), §4 (all operations: POST,
# application/json) and §9 (the version is the path segment /v3).
Feature: Transport, JSON and the versioned base address
  The service speaks JSON over HTTPS. Every operation lives under a base
  address whose path ends in /v3/partner/webhook, and every operation is a
  POST with a JSON body.

  @normative @spec-1
  Scenario: The base address uses HTTPS
    Then the base address should use HTTPS
    When the client calls Campaign List for page 1 with limit 1
    Then the exchange should have used HTTPS

  @normative @spec-1 @spec-9
  Scenario: The base address ends in the versioned path prefix
    Then the base address should end in "/v3/partner/webhook"

  @normative @spec-1 @spec-4
  Scenario Outline: <operation> answers a POST with a JSON body
    When the client calls <operation> with a valid request
    Then the response status should be 200
    And the response body should be JSON
    And the response should be labelled as JSON

    Examples:
      | operation      |
      | Campaign List  |
      | Campaign Stats |

    @writes
    Examples:
      | operation   |
      | Add Contact |

  @normative @spec-1 @spec-7
  Scenario Outline: Error answers of <operation> are JSON too
    Given the "x-api-secret" header is wrong
    When the client calls <operation> with a valid request
    Then the response status should be 401
    And the response body should be JSON
    And the response should be labelled as JSON

    Examples:
      | operation      |
      | Add Contact    |
      | Campaign List  |
      | Campaign Stats |

  # Rule framing (issue 27): the same valid request of each operation, its
  # body framed with Content-Length and chunked over HTTP/1.1, and as
  # HTTP/2 DATA frames with and without a content-length, is served alike:
  # 200 and the body of §4.x. HTTP/1.1 recipients must parse chunked bodies
  # (RFC 9112 §7.1). HTTP/2 is not required by the spec: without it those
  # cells are a warning. An in-process run has no framing: unverified.
  @normative @spec-1 @spec-4 @rule-framing
  Scenario: Every operation serves a valid request however its body is framed
    When each account sends a valid request of every operation framed with Content-Length, chunked, and as HTTP/2 DATA frames with and without a length
    Then every framing should be served alike

  @normative @spec-1 @spec-4
  Scenario Outline: <operation> is not served for another HTTP method
    When the client sends a GET request to <operation>
    Then the response should not be a success

    Examples:
      | operation      |
      | Add Contact    |
      | Campaign List  |
      | Campaign Stats |

  @simulator @spec-1 @spec-4
  Scenario Outline: The simulator answers <method> with 405 and names POST
    When the client sends a <method> request to Campaign List
    Then the response should be 405 with an "error" field mentioning "POST"
    And the response header "Allow" should contain "POST"

    Examples:
      | method |
      | GET    |
      | PUT    |
      | DELETE |

  @simulator @spec-1
  Scenario: The simulator refuses a body that is not declared as JSON
    When the client calls Campaign List with content type "text/plain" and body:
      """
      {"limit": 10, "page": 1}
      """
    Then the response status should be 415
    And the response body should be a JSON object with exactly these fields:
      | field | type   |
      | error | string |

  # §1 rule 2: the body is sent with Content-Type application/json; the
  # media type is the same with a charset parameter (RFC 8259 JSON is
  # UTF-8), which clients often add.
  @simulator @spec-1
  Scenario: The simulator accepts application/json with a charset parameter
    When the client calls Campaign List with content type "application/json; charset=utf-8" and body:
      """
      {"limit": 10, "page": 1}
      """
    Then the response status should be 200

  @simulator @spec-1
  Scenario: The simulator refuses malformed JSON with a JSON error
    When the client calls Campaign List with the raw body:
      """
      {"limit": 10, "page":
      """
    Then the response status should be 400
    And the response body should be a JSON object with exactly these fields:
      | field | type   |
      | error | string |

  @simulator @spec-1 @spec-8
  Scenario: The simulator refuses a body over its 64 KiB cap
    When the client calls Add Contact with a body of 65 KiB
    Then the response status should be 413
    And the response body should be JSON

  @simulator @spec-1 @spec-9
  Scenario: The simulator answers an unknown operation with 404 and JSON
    When the client calls the unknown operation "campaign/delete"
    Then the response status should be 404
    And the response body should be JSON

  @simulator @spec-1
  Scenario: The simulator labels its answers application/json
    When the client calls Campaign List for page 1 with limit 1
    Then the response header "Content-Type" should contain "application/json"
