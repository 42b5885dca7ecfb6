package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRun_MeasuresEveryOperationAgainstBothServers runs a very short load
// against an in-process simulator: every operation gets a row for the
// simulator and one for the bare server, with no errors (the rate limit is
// out of reach), and a half-rate row.
func TestRun_MeasuresEveryOperationAgainstBothServers(t *testing.T) {
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-duration", "300ms", "-warmup", "0", "-connections", "2"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	rows := map[string]int{}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || strings.HasPrefix(line, "#") || f[0] == "operation" {
			continue
		}
		key := f[0] + " " + f[1]
		if f[1] != "simulator" && f[1] != "bare" {
			key = f[0] + " half"
		}
		rows[key]++
		if strings.Contains(line, "×") { // errorsOf lists the statuses of failed requests
			t.Errorf("errors in row %q", line)
		}
	}
	for _, op := range []string{"stats", "list", "add"} {
		for _, row := range []string{"simulator", "bare", "half"} {
			if rows[op+" "+row] != 1 {
				t.Errorf("no single %s row for %s in\n%s", row, op, out.String())
			}
		}
	}
}

// TestBare_AnswersTheSimulatorsBytes checks the ceiling is a fair one: the
// bare server answers each operation with the status, Content-Type and body
// the simulator answered.
func TestBare_AnswersTheSimulatorsBytes(t *testing.T) {
	ctx := context.Background()
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	simT, cert, closeSim, err := simulatorTarget(ctx, c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSim()
	ops, err := operations(ctx, c, simT)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := startBare(ctx, simT, cert, ops)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.close()
	for _, o := range ops {
		if o.name == "add" {
			continue // a new contact id each time
		}
		var bodies [2][]byte
		var types [2]string
		for i, tt := range []*target{simT, bare.target} {
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: tt.tls}, Timeout: 5 * time.Second}
			resp, err := do(ctx, client, tt, o.op, o.body())
			if err != nil {
				t.Fatal(err)
			}
			bodies[i], _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			types[i] = resp.Header.Get("Content-Type")
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s on %s: status %d", o.name, tt.name, resp.StatusCode)
			}
			client.CloseIdleConnections()
		}
		if !bytes.Equal(bodies[0], bodies[1]) || types[0] != types[1] {
			t.Errorf("%s: bare answers %q %s, simulator %q %s", o.name, types[1], bodies[1], types[0], bodies[0])
		}
	}
}

// TestHelpAndUsage: --help says what the tool measures, on stdout, exit 0;
// a duration without a unit says which unit (issue 27).
func TestHelpAndUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help: exit %d\n%s", code, stderr.String())
	}
	for _, want := range []string{"usage: load", "Measures how fast the simulator answers", "p50/p99/p99.9", "--rate-limit 1000000000", "--connections"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the help lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"--duration", "5"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), `write "5s"`) {
		t.Errorf("--duration 5: exit %d, stderr %q; want 2 and the unit to write", code, stderr.String())
	}
}
