package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// profileCommand is the subcommand that learns a deployment profile.
const profileCommand = "conformance profile"

// profileHelp is what `conformance profile --help` says besides the flags.
var profileHelp = flagenv.Help{
	Usage: "usage: conformance profile [target flags] [--out deployment-profile.json]",
	Intro: "Learns the deployment profile of a target: every choice it makes where the\n" +
		"Partner API v" + spec.Version + " spec says \"not shown\" (error bodies, a missing x-account-id,\n" +
		"duplicates, validation, paging, the rate-limit window and headers, HTTP details,\n" +
		"latency), each with the exchanges that showed it, credentials masked. The probes stay\n" +
		"within the account's rate budget (spec §8) and spend it on purpose only to learn the\n" +
		"rate limit: without the simulator's control API that waits for two or three windows.\n" +
		"With --read-only no contact is created (the contact choices are then unknown).\n" +
		"The target flags are the runner's (conformance --help); the scenario and report flags\n" +
		"are ignored. The file is what `simulator --profile` plays and `conformance diff` compares.",
	Prefix: envPrefix,
	ExitCodes: []flagenv.ExitCode{
		{Code: exitPass, Meaning: "the profile was learned and written to --out"},
		{Code: exitUsage, Meaning: "not learned: a usage, configuration or connection error (the message says which)"},
	},
}

// learnProfile is `conformance profile`: preflight, the probes, the file.
func learnProfile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlagsOf(profileCommand, args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		flagenv.WriteHelp(stdout, o.fs, profileHelp)
		return exitPass
	}
	if err != nil {
		fmt.Fprintf(stderr, "conformance profile: usage error: %v\n", err)
		return exitUsage
	}
	if o.image.name != "" {
		fmt.Fprintln(stderr, "conformance profile: usage error: --image is not supported here: start the target and give its --base-url")
		return exitUsage
	}
	if o.out == "" {
		fmt.Fprintln(stderr, "conformance profile: usage error: --out is empty")
		return exitUsage
	}
	cfg, _, err := o.config(io.Discard, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "conformance profile: usage error: %v\n", err)
		return exitUsage
	}
	started := time.Now()
	p, err := suite.Learn(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "conformance profile: %v\n", err)
		return exitUsage
	}
	if err := writeProfileFile(o.out, p); err != nil {
		fmt.Fprintf(stderr, "conformance profile: %v\n", err)
		return exitUsage
	}
	known, unknown := countChoices(p)
	fmt.Fprintf(stdout, "conformance profile of %s: %d choices learned, %d unknown; %d requests, %s\n  written to %s\n",
		p.Source.Target, known, unknown, p.Source.Requests, time.Since(started).Round(time.Second), o.out)
	return exitPass
}

// writeProfileFile writes p to path.
func writeProfileFile(path string, p *profile.Profile) error {
	b, err := p.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write --out: %w", err)
	}
	return nil
}

// countChoices counts the choices of p that are known and unknown, by
// their JSON form (every choice has "value" or "unknown").
func countChoices(p *profile.Profile) (known, unknown int) {
	for _, u := range profileUnknowns(p) {
		if u == "" {
			known++
		} else {
			unknown++
		}
	}
	return known, unknown
}

// profileUnknowns is every choice's Unknown, by name.
func profileUnknowns(p *profile.Profile) map[string]string {
	return map[string]string{
		"errors.bodies": p.Errors.Bodies.Unknown, "auth.missingAccount": p.Auth.MissingAccount.Unknown,
		"auth.credentialsFirst": p.Auth.CredentialsFirst.Unknown, "contact.contactId": p.Contact.ID.Unknown,
		"contact.duplicateEmail": p.Contact.DuplicateEmail.Unknown, "contact.duplicatePhone": p.Contact.DuplicatePhone.Unknown,
		"contact.validation": p.Contact.Validation.Unknown, "campaignList.limitAboveMax": p.List.LimitAboveMax.Unknown,
		"campaignList.limitBelowOne": p.List.LimitBelowOne.Unknown, "campaignList.pageBelowOne": p.List.PageBelowOne.Unknown,
		"campaignList.limitMissing": p.List.LimitMissing.Unknown, "campaignList.pageMissing": p.List.PageMissing.Unknown,
		"campaignList.wrongType": p.List.WrongType.Unknown, "campaignList.extraField": p.List.ExtraField.Unknown,
		"campaignList.pastLast": p.List.PastLast.Unknown, "campaignList.filtered": p.List.Filtered.Unknown,
		"campaignList.order": p.List.Order.Unknown, "campaignStats.unknown": p.Stats.Unknown.Unknown,
		"campaignStats.numericString": p.Stats.NumericString.Unknown, "campaignStats.extraField": p.Stats.ExtraField.Unknown,
		"rateLimit.window": p.Rate.Window.Unknown, "rateLimit.countsRefused": p.Rate.CountsRefused.Unknown,
		"rateLimit.countsBadRequests": p.Rate.CountsBadRequests.Unknown, "rateLimit.countsUnauthenticated": p.Rate.CountsUnauthenticated.Unknown,
		"rateLimit.limitFirst": p.Rate.LimitFirst.Unknown, "rateLimit.retryAfter": p.Rate.RetryAfter.Unknown,
		"rateLimit.headers": p.Rate.Headers.Unknown, "http.unknownPath": p.HTTP.UnknownPath.Unknown,
		"http.otherMethod": p.HTTP.OtherMethod.Unknown, "http.requestContentType": p.HTTP.RequestContentType.Unknown,
		"http.bodyLimit": p.HTTP.BodyLimit.Unknown, "http.responseContentType": p.HTTP.ResponseContentType.Unknown,
		"http.successFields": p.HTTP.SuccessFields.Unknown, "http.recordFields": p.HTTP.RecordFields.Unknown, "http.http2": p.HTTP.HTTP2.Unknown, "http.gzip": p.HTTP.Gzip.Unknown,
		"latency.operations": p.Latency.Operations.Unknown, "vocabulary.statuses": p.Vocabulary.Statuses.Unknown,
		"vocabulary.timeZones": p.Vocabulary.TimeZones.Unknown, "vocabulary.reasons": p.Vocabulary.Reasons.Unknown,
		"vocabulary.autoResend": p.Vocabulary.AutoResend.Unknown,
		"auth.checkOrder":       p.Auth.CheckOrder.Unknown, "requestBody.malformedJSON": p.RequestBody.MalformedJSON.Unknown,
		"requestBody.integralFloat": p.RequestBody.IntegralFloat.Unknown, "requestBody.notObject": p.RequestBody.NotObject.Unknown,
		"requestBody.endOfInput":  p.RequestBody.EndOfInput.Unknown,
		"campaignList.notInteger": p.List.NotInteger.Unknown, "campaignList.null": p.List.Null.Unknown,
		"campaignStats.notInteger": p.Stats.NotInteger.Unknown, "campaignStats.null": p.Stats.Null.Unknown,
	}
}
