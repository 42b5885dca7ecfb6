package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestRun_MeasuresEveryOperationAgainstBothServers runs a very short load
// against an in-process simulator: every operation gets a row per pair of
// turns (bare then simulator) with the pair's ratio, a row "all" with the
// median ratio, and a half-rate row, with no errors (the rate limit is out
// of reach).
func TestRun_MeasuresEveryOperationAgainstBothServers(t *testing.T) {
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-duration", "300ms", "-warmup", "0", "-connections", "2", "-pairs", "2"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	rows := map[string]int{}
	half := false
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "# the simulator at half") {
			half = true
		}
		f := strings.Fields(line)
		if len(f) < 6 || strings.HasPrefix(line, "#") || f[0] == "operation" {
			continue
		}
		key := f[0] + " " + f[1]
		if half {
			key = f[0] + " half"
		} else if _, err := strconv.ParseFloat(f[len(f)-1], 64); err != nil {
			t.Errorf("row %q: no ratio simulator/bare", line)
		}
		rows[key]++
		if strings.Contains(line, "×") { // errorsOf lists the statuses of failed requests
			t.Errorf("errors in row %q", line)
		}
	}
	for _, op := range []string{"stats", "list", "add"} {
		for _, row := range []string{"1", "2", "all", "half"} {
			if rows[op+" "+row] != 1 {
				t.Errorf("no single row %s for %s in\n%s", row, op, out.String())
			}
		}
	}
	// In turn: each pair drives the bare server, then the simulator.
	var turns []string
	for _, line := range strings.Split(errs.String(), "\n") {
		if strings.HasPrefix(line, "load: stats, pair") {
			turns = append(turns, strings.Fields(line)[8])
		}
	}
	if want := []string{"bare", "simulator", "bare", "simulator"}; !slices.Equal(turns, want) {
		t.Errorf("the stats turns went %q, want %q\n%s", turns, want, errs.String())
	}
}

// TestLoads_FollowTheSpecsTable: the load has one request per operation of
// the spec's table, in its order, each sent to its path under a name of its
// own (the names --ops takes by default among them), and an operation that
// writes sends a new contact each time.
func TestLoads_FollowTheSpecsTable(t *testing.T) {
	ls, err := loads(7, "run")
	if err != nil {
		t.Fatal(err)
	}
	ops := spec.Operations()
	if len(ls) != len(ops) {
		t.Fatalf("%d loads, want one per operation (%d)", len(ls), len(ops))
	}
	names := map[string]bool{}
	for i, l := range ls {
		if l.op != ops[i].Path || names[l.name] || len(l.body()) == 0 {
			t.Errorf("load %d = %s at %s, want a body for %s under a name of its own", i, l.name, l.op, ops[i].Path)
		}
		names[l.name] = true
		if ops[i].Writes && string(l.body()) == string(l.body()) {
			t.Errorf("load %s sends the same body twice, want a new contact each time", l.name)
		}
	}
	for _, name := range []string{"stats", "list", "add"} { // --ops' default
		if !names[name] {
			t.Errorf("no load named %q, which --ops names by default", name)
		}
	}
}

// TestMedian: the middle value, or the mean of the two middle ones.
func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{0.7}, 0.7}, {[]float64{0.9, 0.5, 0.7}, 0.7}, {[]float64{0.8, 0.6}, 0.7}, {[]float64{3, 1, 4, 1}, 2}}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
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
	for _, want := range []string{"usage: load", "Measures how fast the simulator answers", "p50/p99/p99.9", "--rate-limit 1000000000", "--connections", "--pairs", "A B A B A B"} {
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
