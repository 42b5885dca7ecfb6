package partnerapi

import (
	"context"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// The request path's record of each partner request (simulator.RequestRecord)
// is made by record, filled by the steps that learn something of the
// request (the route, the account, the rate decision, a fault, the
// answer's finding, a stored contact) and handed, once answered, to
// API.Reports: the client report judges it there, in its own package.

// recordFrom returns the request's record, for the request path to fill.
func recordFrom(r *http.Request) *simulator.RequestRecord {
	if st := stateFrom(r); st != nil {
		return &st.record
	}
	return &simulator.RequestRecord{} // outside record: filled and dropped
}

// findingError is a client error that the report counts as a finding: its
// message and code are the wrapped error's. Error notes the finding in the
// request's record as it answers.
type findingError struct {
	kind, detail string
	err          error
}

func (e *findingError) Error() string { return e.err.Error() }
func (e *findingError) Unwrap() error { return e.err }

// withFinding makes err count as kind (detail) in the client report.
func withFinding(kind, detail string, err error) error {
	return &findingError{kind: kind, detail: detail, err: err}
}

// invalidField is a 400 naming field: the report counts it by field.
// field is always one of the operations' own field names, never the
// client's text, so the findings of an account stay a bounded set.
func invalidField(field, format string, args ...any) error {
	return withFinding(simulator.FindingInvalidField, field, simulator.Errorf(simulator.EINVALID, format, args...))
}

// noteFinding notes a finding on a request answered without an error (a
// page past the end is a 200).
func noteFinding(r *http.Request, kind, detail string) {
	rec := recordFrom(r)
	rec.Finding, rec.FindingDetail = kind, detail
}

// attribute answers the known account whose key (first) or account
// identifier a request refused before authentication carried, or nil. It
// is one lookup by key and identifier (AccountStore.LookupAccount), not a
// read of every account: a refusal costs the same with 10,000 throwaway
// accounts as with none. A store that cannot answer (Redis down) leaves
// the request unattributed rather than failing its answer or naming a
// wrong account; the configured accounts are named even then.
func (s *API) attribute(r *http.Request) *simulator.Account {
	keys, ids := r.Header.Values(spec.HeaderAPIKey), r.Header.Values(spec.HeaderAccountID)
	if len(keys) == 0 && len(ids) == 0 {
		return nil
	}
	a, err := s.Accounts.LookupAccount(context.WithoutCancel(r.Context()), simulator.AccountLookup{APIKeys: keys, AccountIDs: ids})
	if err != nil {
		return nil
	}
	return a
}
