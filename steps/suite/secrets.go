package suite

import (
	"maps"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
)

// secrets are the values of a run no report may show: the three
// credentials of spec §5 of both accounts, and the control API's token.
// This is the one list of them: the recorder (exchanges.har), the step
// library (exchanges, failures, warnings, skip reasons, and so godog's
// formatters), the control client's errors and the runner's own messages
// (Target, Flags, a preflight's reason, Run's errors) all hide what it
// holds, wherever it appears: headers, bodies, URLs, messages. See
// mask.Secrets for the forms it finds (JSON-escaped, percent-encoded, any
// case, a long enough part of a value) and how each is shown.
func (c Config) secrets() *mask.Secrets { return secretsOf(c.AdminToken, c.Primary, c.Second) }

// secretsOf lists the secrets of a control API's token and of accounts:
// the one place that says which value is shown how.
func secretsOf(adminToken string, accounts ...control.Credentials) *mask.Secrets {
	var vs []mask.Value
	for _, a := range accounts {
		vs = append(vs,
			mask.Value{Text: a.APIKey},
			mask.Value{Text: a.APISecret, Secret: true},
			mask.Value{Text: a.AccountID})
	}
	vs = append(vs, mask.Value{Text: adminToken, Secret: true})
	return mask.NewSecrets(vs...)
}

// MaskSecrets returns text with the configuration's secret values (both
// accounts' credentials, the control API's token) hidden as the reports
// hide them: for what a caller shows of the run besides them, such as the
// log of the target's container.
func (c Config) MaskSecrets(text string) string { return c.secrets().String(text) }

// maskedFlags returns flags with the secrets hidden in their values (the
// caller masks the credential flags by name; a value such as the base URL
// may hold one too).
func maskedFlags(sec *mask.Secrets, flags map[string]string) map[string]string {
	if flags == nil {
		return nil
	}
	out := maps.Clone(flags)
	for k, v := range out {
		out[k] = sec.String(v)
	}
	return out
}

// hiddenError is an error whose text hides the run's secrets; errors.Is
// and errors.As still see the error it wraps.
type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }

// hideSecrets returns err with the run's secrets hidden in its text: an
// error of Run is printed (stderr) and, as the reason a run did not run,
// written into every report.
func hideSecrets(sec *mask.Secrets, err error) error {
	if err == nil {
		return nil
	}
	msg := sec.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &hiddenError{msg: msg, err: err}
}
