#!/usr/bin/env bash
# The logic of the conformance action (action.yml), kept here so that `make test` runs it
# (cmd/conformance TestGitHubAction).
#
#   run.sh            builds the runner from the kit at $KIT_DIR (or takes $CONFORMANCE_RUNNER),
#                     runs it with the CONFORMANCE_* variables into $REPORT_DIR, and writes its exit
#                     status to $GITHUB_OUTPUT as exit-code; it exits 0 itself, so that the reports
#                     are uploaded whatever the verdict.
#   run.sh verdict N  says what exit status N means and exits with it: the job fails on 1, 2 and 3.
set -euo pipefail

if [ "${1:-}" = verdict ]; then
	code="${2:-}"
	case "$code" in
	0) echo "conformance: the deployment conforms (warnings, if any, are in summary.md)" ;;
	1) echo "::error::conformance: the deployment does not conform: the failed scenarios name their spec sections (junit.xml, report.html)" ;;
	2) echo "::error::conformance: the suite did not run: wrong credentials, URL or certificate; junit.xml's preflight case says what to fix" ;;
	3) echo "::error::conformance: incomplete: a rule could not be decided even after retries; run again" ;;
	*) echo "::error::conformance: the runner gave no exit status (${code:-none}): see the step above"; exit 1 ;;
	esac
	exit "$code"
fi

report_dir="${REPORT_DIR:-conformance-reports}"
mkdir -p "$report_dir"
runner="${CONFORMANCE_RUNNER:-}"
if [ -z "$runner" ]; then
	runner="${RUNNER_TEMP:-/tmp}/conformance"
	(cd "${KIT_DIR:?KIT_DIR must name the checkout of the kit}" && CGO_ENABLED=0 go build -trimpath -o "$runner" ./cmd/conformance)
fi
args=(--format pretty,junit,html --report-dir "$report_dir")
if [ -n "${CA_PEM:-}" ]; then
	printf '%s\n' "$CA_PEM" > "$report_dir/ca.pem"
	args+=(--ca-cert "$report_dir/ca.pem")
fi
# Empty inputs are unset: an empty CONFORMANCE_* variable would count as given.
for v in CONFORMANCE_SECOND_API_KEY CONFORMANCE_SECOND_API_SECRET CONFORMANCE_SECOND_ACCOUNT_ID CONFORMANCE_TAGS; do
	if [ -z "${!v:-}" ]; then unset "$v"; fi
done
code=0
"$runner" "${args[@]}" || code=$?
echo "exit-code=$code" >> "${GITHUB_OUTPUT:-/dev/null}"
echo "conformance: exit status $code; reports in $report_dir"
