# Spec §4.1: success is HTTP 200 with status "success" and contactId, the
# identifier of the created contact (issue 27: under concurrency).
Feature: Contacts created at the same time
  Partners create contacts from many workers at once. Each created contact
  gets its own identifier, however many are created together: a counter
  read and written in two steps, or a store that fails a write while
  another is in flight, is only seen when calls overlap.

  # Rule contact-concurrent: each account sends its Add Contact calls of
  # distinct contacts at once, over connections of their own and HTTP/2
  # streams where there are connections (in an in-process run, as
  # concurrent calls of the handler).
  @normative @spec-4.1 @writes @rule-contact-concurrent
  Scenario: Contacts created at the same time each get their own contactId
    When each account calls Add Contact with distinct contacts, all at once
    Then every one should be 200 with a contactId of its own
