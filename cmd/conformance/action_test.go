package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionDir is the composite GitHub Action of the repository (issue 29).
const actionDir = "../../.github/actions/conformance"

// TestGitHubAction runs the action's logic (run.sh) as its steps do:
// against a simulator it records exit 0 and leaves the reports, with a
// wrong secret exit 2 and junit.xml's preflight case, and exits 0 itself
// either way so that the reports are uploaded; its verdict step fails
// the job on 1, 2 and 3. action.yml is read back: every CONFORMANCE_*
// variable it sets is one the runner reads, every input is used, and the
// steps call run.sh as tested here.
func TestGitHubAction(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs(filepath.Join(actionDir, "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("action.yml", func(t *testing.T) { checkActionYAML(t) })

	runner := buildBinary(t, t.TempDir(), "./cmd/conformance")
	s := MustOpenSimulator(t)
	as := devAccounts(t)
	ca, err := os.ReadFile(s.Cert.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		secret string
		want   string
		report string // a file of the report directory and what it holds
		holds  string
	}{
		{"a conforming deployment", as[0].APISecret, "0", "junit.xml", `<testsuite`},
		{"a wrong secret", as[0].APISecret + "-wrong", "2", "junit.xml", `preflight`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out, reports := filepath.Join(dir, "github-output"), filepath.Join(dir, "reports")
			cmd := exec.Command("bash", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(),
				"CONFORMANCE_RUNNER="+runner, "GITHUB_OUTPUT="+out, "REPORT_DIR="+reports, "CA_PEM="+string(ca),
				"CONFORMANCE_BASE_URL="+s.URL(), "CONFORMANCE_API_KEY="+as[0].APIKey,
				"CONFORMANCE_API_SECRET="+tt.secret, "CONFORMANCE_ACCOUNT_ID="+as[0].AccountID,
				// Empty, as the action passes inputs not given: the script
				// must not hand them to the runner as given.
				"CONFORMANCE_SECOND_API_KEY=", "CONFORMANCE_SECOND_API_SECRET=", "CONFORMANCE_SECOND_ACCOUNT_ID=",
				"CONFORMANCE_TAGS=@normative && @rule-auth-key", "CONFORMANCE_READ_ONLY=false",
				"CONFORMANCE_NO_PROFILE=true", "CONFORMANCE_NO_COLORS=true")
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("run.sh: %v (the script must exit 0 whatever the verdict, for the upload step)\n%s", err, b)
			}
			got, err := os.ReadFile(out)
			if err != nil || strings.TrimSpace(string(got)) != "exit-code="+tt.want {
				t.Fatalf("GITHUB_OUTPUT: %q (%v), want exit-code=%s\n%s", got, err, tt.want, b)
			}
			t.Logf("run.sh:\n%s", b)
			rep, err := os.ReadFile(filepath.Join(reports, tt.report))
			if err != nil || !bytes.Contains(rep, []byte(tt.holds)) {
				t.Errorf("%s: %v, want it to hold %q\n%s", tt.report, err, tt.holds, rep)
			}
			if bytes.Contains(b, []byte(as[0].APISecret)) || bytes.Contains(rep, []byte(as[0].APISecret)) {
				t.Errorf("the account's secret is in the step's log or the report")
			}
		})
	}

	t.Run("verdict", func(t *testing.T) {
		for code, says := range map[int]string{0: "conforms", 1: "does not conform", 2: "did not run", 3: "incomplete"} {
			b, err := exec.Command("bash", script, "verdict", strconv.Itoa(code)).CombinedOutput()
			got := 0
			if ee, ok := err.(*exec.ExitError); ok {
				got = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got != code || !strings.Contains(string(b), says) {
				t.Errorf("verdict %d: exit %d, said %q; want exit %d saying %q", code, got, b, code, says)
			}
		}
		if err := exec.Command("bash", script, "verdict", "").Run(); err == nil {
			t.Error("verdict without an exit status passed the job")
		}
	})
}

// checkActionYAML reads action.yml back: a composite action whose
// variables the runner reads, whose inputs are all used, and whose
// steps call run.sh.
func checkActionYAML(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(actionDir, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Inputs map[string]struct {
			Required bool `yaml:"required"`
		} `yaml:"inputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", a.Runs.Using)
	}
	var help bytes.Buffer
	run(context.Background(), []string{"--help"}, &help, &help)
	calls := 0
	for _, st := range a.Runs.Steps {
		if strings.Contains(st.Run, "$GITHUB_ACTION_PATH/run.sh") {
			calls++
		}
		for k := range st.Env {
			if strings.HasPrefix(k, "CONFORMANCE_") && !strings.Contains(help.String(), k) {
				t.Errorf("action.yml sets %s, which the runner does not read (conformance --help)", k)
			}
		}
	}
	if calls != 2 {
		t.Errorf("%d steps call run.sh, want 2 (the run, the verdict)", calls)
	}
	for name := range a.Inputs {
		if !regexp.MustCompile(`inputs\.` + regexp.QuoteMeta(name) + `\b`).Match(b) {
			t.Errorf("input %s is used by no step", name)
		}
	}
}
