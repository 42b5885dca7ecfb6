package chart_test

import (
	"bufio"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRenderedPodServes runs the simulator (built from ../) with the
// environment the chart rendered for its pod, the Secrets' values resolved
// as the kubelet would and their files written where the pod mounts them
// (moved to a temporary directory, and bound to 127.0.0.1:0 instead of
// 0.0.0.0): what the probes ask answers 200 over TLS verified against the
// certificate's tls.crt for the Service's name, and GET /metrics on the
// control listener takes the token from the Secret. With SIM_REDIS_ADDR set
// it does the same with that Redis as externalRedis (REQUIRE_REDIS: CI).
func TestRenderedPodServes(t *testing.T) {
	tests := []struct {
		name     string
		values   map[string]any // nil: SIM_REDIS_ADDR as externalRedis
		replicas int
		backend  string
	}{
		{"one replica in memory", map[string]any{"replicaCount": 1, "redis": map[string]any{"enabled": false}}, 1, "memory"},
		{"external Redis", nil, 2, "redis"},
		{"one replica playing a learned profile", map[string]any{"replicaCount": 1, "redis": map[string]any{"enabled": false},
			"profile": map[string]any{"json": string(learnedProfile())}}, 1, "memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values := tt.values
			if values == nil {
				addr := os.Getenv("SIM_REDIS_ADDR")
				if addr == "" {
					if os.Getenv("REQUIRE_REDIS") != "" {
						t.Fatal("REQUIRE_REDIS is set but SIM_REDIS_ADDR is not")
					}
					t.Skip("set SIM_REDIS_ADDR to run against a Redis")
				}
				var b [6]byte
				_, _ = rand.Read(b[:])
				values = map[string]any{
					"externalRedis": map[string]any{"url": "redis://" + addr + "/0"},
					"config":        map[string]any{"redis-prefix": "charttest-" + hex.EncodeToString(b[:]) + ":"},
				}
			}
			r := render(t, values)
			c := checkSimulator(t, r, tt.replicas)
			runPod(t, r, c, tt.backend)
		})
	}
}

// runPod starts the simulator with the pod's environment and checks what
// the probes and a scraper would ask.
func runPod(t *testing.T, r manifests, c checked, backend string) {
	t.Helper()
	bin := simulatorBinary(t)
	dir := t.TempDir()
	mounts := map[string]string{} // mount path in the pod -> Secret
	for _, m := range c.sim.VolumeMounts {
		for _, v := range c.pod.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				mounts[m.MountPath] = v.Secret.SecretName
			}
		}
	}
	profileFile := "" // SIM_PROFILE's file, written from its ConfigMap
	var env []string
	for _, e := range c.sim.Env {
		value := e.Value
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			value = secretValue(t, r, *e.ValueFrom.SecretKeyRef)
		case e.Name == "SIM_ADDR" || e.Name == "SIM_ADMIN_ADDR":
			if host, _, ok := strings.Cut(value, ":"); ok {
				value = strings.Replace(host, "0.0.0.0", "127.0.0.1", 1) + ":0"
			}
		case e.Name == "SIM_DATA_DIR":
			value = filepath.Join(dir, "data")
		case e.Name == "SIM_PROFILE":
			// The ConfigMap's file, written where the test can.
			profileFile = filepath.Join(dir, filepath.Base(value))
			if err := os.WriteFile(profileFile, []byte(mountedProfile(t, r, c)), 0o600); err != nil {
				t.Fatal(err)
			}
			value = profileFile
		case mounts[filepath.Dir(value)] != "":
			// A file of a mounted Secret: write it where the test can.
			file := filepath.Join(dir, filepath.Base(value))
			content := secretValue(t, r, keyRef{mounts[filepath.Dir(value)], filepath.Base(value)})
			if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			value = file
		}
		env = append(env, e.Name+"="+value)
	}
	token := secretValue(t, r, c.admin)

	cmd := exec.Command(bin)
	cmd.Env = append(env, "PATH="+os.Getenv("PATH"), "HOME="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base, admin, ok := readBanner(stdout)
	if !ok {
		// It exited, or hangs: its error is on stderr once it is gone.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the simulator printed no base URL and control API; stderr:\n%s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	// Trust only the rendered tls.crt, for the partner Service's name.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(secretValue(t, r, keyRef{c.tlsSecret, "tls.crt"}))) {
		t.Fatal("tls.crt holds no certificate")
	}
	client := func(serverName string) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName},
		}}
	}
	partner := client(fullname + "." + namespace + ".svc")
	resp, err := partner.Get(base.Scheme + "://" + base.Host + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz on the partner port: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz=%d, want 200", resp.StatusCode)
	}

	if profileFile != "" {
		// The pod plays the profile: an unknown path is answered as the
		// learned deployment answers it, not as the simulator would.
		resp, err := partner.Post(base.Scheme+"://"+base.Host+"/v3/partner/webhook/nothing/here", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("POST an unknown path: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusGone || !strings.Contains(string(body), "Gone: /v3/partner/webhook/nothing/here is not an operation") {
			t.Errorf("an unknown path: %d %s, want the profile's 410 naming the path", resp.StatusCode, body)
		}
	}

	control := client(fullname + "-admin." + namespace + ".svc")
	for _, tt := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {token, http.StatusOK}} {
		req, _ := http.NewRequest("GET", admin+"/metrics", nil)
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		resp, err := control.Do(req)
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Fatalf("GET /metrics with token %q=%d, want %d", tt.token, resp.StatusCode, tt.want)
		}
		if tt.want == http.StatusOK && !strings.Contains(string(body), `backend="`+backend+`"`) {
			t.Errorf("GET /metrics: no partnersim_build_info with backend=%q", backend)
		}
	}
}

// readBanner reads the simulator's start banner for the two URLs it
// listens on; false if it ends without them or takes over 60 s.
func readBanner(stdout io.Reader) (*url.URL, string, bool) {
	type result struct{ base, admin string }
	done := make(chan result, 1)
	go func() {
		var res result
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) >= 3 && f[0] == "Base" && f[1] == "URL:":
				res.base = f[2]
			case len(f) >= 3 && f[0] == "Control" && f[1] == "API:":
				res.admin = f[2]
			}
			if (res.base != "" && res.admin != "") || sc.Text() == "  Accounts:" {
				break // the URLs come before the accounts
			}
		}
		done <- res
	}()
	select {
	case res := <-done:
		u, err := url.Parse(res.base)
		if err != nil || res.base == "" || res.admin == "" {
			return nil, "", false
		}
		return u, res.admin, true
	case <-time.After(60 * time.Second):
		return nil, "", false
	}
}

var (
	simOnce sync.Once
	simBin  string // the binary, or go build's output when simErr is set
	simErr  error
	simDir  string
)

// simulatorBinary builds cmd/simulator once per test binary.
func simulatorBinary(t *testing.T) string {
	t.Helper()
	simOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chart-simulator-")
		if err != nil {
			simErr = err
			return
		}
		simDir = dir
		simBin = filepath.Join(dir, "simulator")
		out, err := exec.Command("go", "build", "-o", simBin, "..").CombinedOutput()
		if err != nil {
			simErr = err
			simBin = string(out)
		}
	})
	if simErr != nil {
		t.Fatalf("go build ../: %v\n%s", simErr, simBin)
	}
	return simBin
}
