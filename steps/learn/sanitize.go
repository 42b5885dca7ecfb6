package learn

import (
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// forget makes a choice Unknown, keeping its evidence.
func forget[T any](c *profile.Choice[T]) func(string) {
	return func(why string) {
		var zero T
		c.Value, c.Unknown = zero, why
	}
}

// choicePaths names every choice as profile.Check's problems do.
func choicePaths(p *profile.Profile) map[string]func(string) {
	return map[string]func(string){
		"errors.bodies":                   forget(&p.Errors.Bodies),
		"auth.missingAccount":             forget(&p.Auth.MissingAccount),
		"auth.credentialsFirst":           forget(&p.Auth.CredentialsFirst),
		"auth.checkOrder":                 forget(&p.Auth.CheckOrder),
		"requestBody.malformedJSON":       forget(&p.RequestBody.MalformedJSON),
		"requestBody.notObject":           forget(&p.RequestBody.NotObject),
		"requestBody.endOfInput":          forget(&p.RequestBody.EndOfInput),
		"requestBody.integralFloat":       forget(&p.RequestBody.IntegralFloat),
		"contact.contactId":               forget(&p.Contact.ID),
		"contact.duplicateEmail":          forget(&p.Contact.DuplicateEmail),
		"contact.duplicatePhone":          forget(&p.Contact.DuplicatePhone),
		"contact.validation":              forget(&p.Contact.Validation),
		"campaignList.limitAboveMax":      forget(&p.List.LimitAboveMax),
		"campaignList.limitBelowOne":      forget(&p.List.LimitBelowOne),
		"campaignList.pageBelowOne":       forget(&p.List.PageBelowOne),
		"campaignList.limitMissing":       forget(&p.List.LimitMissing),
		"campaignList.pageMissing":        forget(&p.List.PageMissing),
		"campaignList.wrongType":          forget(&p.List.WrongType),
		"campaignList.extraField":         forget(&p.List.ExtraField),
		"campaignList.notInteger":         forget(&p.List.NotInteger),
		"campaignList.null":               forget(&p.List.Null),
		"campaignList.pastLast":           forget(&p.List.PastLast),
		"campaignList.filtered":           forget(&p.List.Filtered),
		"campaignList.order":              forget(&p.List.Order),
		"campaignStats.unknown":           forget(&p.Stats.Unknown),
		"campaignStats.numericString":     forget(&p.Stats.NumericString),
		"campaignStats.extraField":        forget(&p.Stats.ExtraField),
		"campaignStats.notInteger":        forget(&p.Stats.NotInteger),
		"campaignStats.null":              forget(&p.Stats.Null),
		"rateLimit.window":                forget(&p.Rate.Window),
		"rateLimit.countsRefused":         forget(&p.Rate.CountsRefused),
		"rateLimit.countsBadRequests":     forget(&p.Rate.CountsBadRequests),
		"rateLimit.countsUnauthenticated": forget(&p.Rate.CountsUnauthenticated),
		"rateLimit.limitFirst":            forget(&p.Rate.LimitFirst),
		"rateLimit.retryAfter":            forget(&p.Rate.RetryAfter),
		"rateLimit.headers":               forget(&p.Rate.Headers),
		"http.unknownPath":                forget(&p.HTTP.UnknownPath),
		"http.otherMethod":                forget(&p.HTTP.OtherMethod),
		"http.requestContentType":         forget(&p.HTTP.RequestContentType),
		"http.bodyLimit":                  forget(&p.HTTP.BodyLimit),
		"http.responseContentType":        forget(&p.HTTP.ResponseContentType),
		"rateLimit.refusalContentType":    forget(&p.Rate.RefusalContentType),
		"http.successFields":              forget(&p.HTTP.SuccessFields),
		"http.recordFields":               forget(&p.HTTP.RecordFields),
		"http.http2":                      forget(&p.HTTP.HTTP2),
		"http.gzip":                       forget(&p.HTTP.Gzip),
		"latency.operations":              forget(&p.Latency.Operations),
		"vocabulary.statuses":             forget(&p.Vocabulary.Statuses),
		"vocabulary.timeZones":            forget(&p.Vocabulary.TimeZones),
		"vocabulary.reasons":              forget(&p.Vocabulary.Reasons),
		"vocabulary.autoResend":           forget(&p.Vocabulary.AutoResend),
	}
}

// sanitize makes Unknown every choice whose observed value profile.Check
// refuses: what the spec forbids is the verdict's to judge, and a profile
// never asks the simulator for it. The reason quotes Check's problem.
func sanitize(p *profile.Profile) {
	err := p.Check()
	if err == nil {
		return
	}
	paths := choicePaths(p)
	why := map[string][]string{}
	for _, line := range strings.Split(err.Error(), "\n")[1:] {
		line = strings.TrimSpace(line)
		for path := range paths {
			if line == path || strings.HasPrefix(line, path+".") || strings.HasPrefix(line, path+" ") {
				why[path] = append(why[path], line)
			}
		}
	}
	for path, lines := range why {
		paths[path]("seen, but outside what the spec allows a profile to ask: " + strings.Join(lines, "; "))
	}
}
