package chart_test

// The chart, checked offline: helm lint --strict and helm template with
// several value sets, the rendered manifests parsed as YAML and held to what
// the simulator needs (kinds, ports, probes, env, secret references, a
// certificate valid for the Services' names). Helm comes from the Go module
// proxy, pinned as in the Makefile's HELM, built once per test binary.

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/partner-v3/conformance-kit/fixtures"
)

// helmPkg is the Helm the tests build, the Makefile's HELM. v3.20.2 is the
// newest Helm whose go.mod asks for go 1.25 (v3.21 and v3.22 ask for 1.26),
// so any toolchain the kit supports builds it without fetching another.
const helmPkg = "helm.sh/helm/v3/cmd/helm@v3.20.2"

const (
	release   = "rel"
	namespace = "sim"
	fullname  = "rel-partner-simulator"
)

var (
	helmOnce sync.Once
	helmBin  string
	helmSkip string // why helm could not be had, when that is no failure
	helmErr  error
	binDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{binDir, simDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// mustHelm returns the path of a helm binary built from helmPkg: one go
// install per test binary (1-2 min the first time on a cold build cache,
// some 7 s after: docs/scale.md), then every call is a plain exec. Without the module proxy
// it skips, unless REQUIRE_HELM or REQUIRE_MODULE_PROXY is set (CI).
func mustHelm(t *testing.T) string {
	t.Helper()
	helmOnce.Do(func() {
		dir, err := os.MkdirTemp("", "helm-bin-")
		if err != nil {
			helmErr = err
			return
		}
		binDir = dir
		cmd := exec.Command("go", "install", helmPkg)
		cmd.Dir = dir // outside the kit's module: the pin alone decides
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOBIN=") && !strings.HasPrefix(kv, "GOWORK=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "GOBIN="+dir, "GOWORK=off", "GOFLAGS=-buildvcs=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			required := os.Getenv("REQUIRE_HELM") != "" || os.Getenv("REQUIRE_MODULE_PROXY") != ""
			if networkFailure(string(out)) && !required {
				helmSkip = "go install " + helmPkg + " cannot fetch modules (set REQUIRE_HELM=1 to fail instead): " + string(out)
				return
			}
			helmErr = errors.New("go install " + helmPkg + ": " + err.Error() + "\n" + string(out))
			return
		}
		helmBin = filepath.Join(dir, "helm")
	})
	if helmSkip != "" {
		t.Skip(helmSkip)
	}
	if helmErr != nil {
		t.Fatal(helmErr)
	}
	return helmBin
}

// networkFailure reports whether go's output says a module could not be
// fetched, rather than that something is broken.
func networkFailure(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "GOPROXY=off", "network is unreachable", "TLS handshake timeout"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// chartDir is the chart: this package's directory.
func chartDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// helm runs helm with values written to a file (never --set: a Redis
// Cluster URL holds commas, which --set splits on) and returns its output
// and error.
func helm(t *testing.T, values map[string]any, args ...string) (string, error) {
	t.Helper()
	bin := mustHelm(t)
	data, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its name holds the subtest's, commas included, and
	// helm splits -f on commas.
	dir, err := os.MkdirTemp("", "chart-values-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append(args, "-f", file)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// No kubeconfig, no repositories: template and lint stay offline.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
	err = cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// object is one rendered manifest: its header, and the node to decode the
// rest from.
type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   meta   `yaml:"metadata"`
	node       yaml.Node
}

type meta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type deployment struct {
	Spec struct {
		Replicas int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata meta `yaml:"metadata"`
			Spec     struct {
				Containers []container `yaml:"containers"`
				Volumes    []volume    `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	Env            []envVar `yaml:"env"`
	StartupProbe   *probe   `yaml:"startupProbe"`
	ReadinessProbe *probe   `yaml:"readinessProbe"`
	LivenessProbe  *probe   `yaml:"livenessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *keyRef `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type keyRef struct {
	Name string `yaml:"name"`
	Key  string `yaml:"key"`
}

type probe struct {
	HTTPGet *struct {
		Path   string `yaml:"path"`
		Port   string `yaml:"port"`
		Scheme string `yaml:"scheme"`
	} `yaml:"httpGet"`
	TCPSocket *struct {
		Port string `yaml:"port"`
	} `yaml:"tcpSocket"`
}

type volume struct {
	Name   string `yaml:"name"`
	Secret *struct {
		SecretName string `yaml:"secretName"`
	} `yaml:"secret"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
}

type configMap struct {
	Data map[string]string `yaml:"data"`
}

type service struct {
	Spec struct {
		Type     string            `yaml:"type"`
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type secret struct {
	Type string            `yaml:"type"`
	Data map[string]string `yaml:"data"`
}

type serviceMonitor struct {
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Endpoints []struct {
			Port          string `yaml:"port"`
			Scheme        string `yaml:"scheme"`
			Path          string `yaml:"path"`
			Authorization struct {
				Type        string `yaml:"type"`
				Credentials keyRef `yaml:"credentials"`
			} `yaml:"authorization"`
			TLSConfig struct {
				CA struct {
					Secret keyRef `yaml:"secret"`
				} `yaml:"ca"`
				ServerName string `yaml:"serverName"`
			} `yaml:"tlsConfig"`
		} `yaml:"endpoints"`
	} `yaml:"spec"`
}

// manifests is what helm template rendered.
type manifests []object

// render runs helm template and parses every document; a document that is
// no YAML, or has no kind, fails the test.
func render(t *testing.T, values map[string]any) manifests {
	t.Helper()
	out, err := helm(t, values, "template", release, chartDir(t), "--namespace", namespace)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var r manifests
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("rendered manifests are no YAML: %v\n%s", err, out)
		}
		if len(n.Content) == 0 {
			continue // an empty document
		}
		var o object
		if err := n.Decode(&o); err != nil {
			t.Fatalf("manifest header: %v", err)
		}
		if o.Kind == "" || o.APIVersion == "" || o.Metadata.Name == "" {
			t.Fatalf("a manifest without kind, apiVersion or name: %+v", o)
		}
		o.node = n
		r = append(r, o)
	}
	return r
}

// kinds lists "Kind/name" of every manifest, sorted.
func (r manifests) kinds() []string {
	var s []string
	for _, o := range r {
		s = append(s, o.Kind+"/"+o.Metadata.Name)
	}
	sort.Strings(s)
	return s
}

// get decodes the manifest of that kind and name into v, and reports
// whether there is one.
func (r manifests) get(t *testing.T, kind, name string, v any) bool {
	t.Helper()
	for _, o := range r {
		if o.Kind == kind && o.Metadata.Name == name {
			if err := o.node.Decode(v); err != nil {
				t.Fatalf("%s/%s: %v", kind, name, err)
			}
			return true
		}
	}
	return false
}

func (r manifests) mustGet(t *testing.T, kind, name string, v any) {
	t.Helper()
	if !r.get(t, kind, name, v) {
		t.Fatalf("no %s/%s in %v", kind, name, r.kinds())
	}
}

// simulatorFlags are the flag names cmd/simulator/main.go defines: each
// SIM_ variable the chart sets must name one (flagenv: SIM_ + upper snake).
func simulatorFlags(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`fs\.\w*Var\([^,]+, "([a-z0-9-]+)"`).FindAllStringSubmatch(string(src), -1) {
		flags["SIM_"+strings.ToUpper(strings.ReplaceAll(m[1], "-", "_"))] = true
	}
	if !flags["SIM_REDIS_URL"] || !flags["SIM_TLS_CERT"] || !flags["SIM_ADMIN_TOKEN"] {
		t.Fatalf("found only %v in cmd/simulator/main.go: has the flag code changed shape?", flags)
	}
	return flags
}

// env returns the container's variable of that name, or nil.
func env(c container, name string) *envVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// secretRef returns the Secret a variable is read from, failing if it is a
// plain value.
func secretRef(t *testing.T, c container, name string) keyRef {
	t.Helper()
	e := env(c, name)
	if e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.Value != "" {
		t.Fatalf("%s is not read from a Secret: %+v", name, e)
	}
	return *e.ValueFrom.SecretKeyRef
}

// secretValue decodes one key of a rendered Secret.
func secretValue(t *testing.T, r manifests, ref keyRef) string {
	t.Helper()
	var s secret
	r.mustGet(t, "Secret", ref.Name, &s)
	b64, ok := s.Data[ref.Key]
	if !ok {
		t.Fatalf("Secret %s has no key %q (keys %v)", ref.Name, ref.Key, s.Data)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("Secret %s key %s: %v", ref.Name, ref.Key, err)
	}
	return string(b)
}

// checked is what checkSimulator found, for the cases' own checks.
type checked struct {
	pod       deployment
	sim       container
	tlsSecret string
	admin     keyRef
}

// checkSimulator holds what every value set must render: the simulator's
// Deployment with both ports, probes on /healthz over HTTPS, every SIM_
// variable a real flag, the control token and the certificate from
// Secrets, and the two Services in front of its pods.
func checkSimulator(t *testing.T, r manifests, replicas int) checked {
	t.Helper()
	var c checked
	r.mustGet(t, "Deployment", fullname, &c.pod)
	d := &c.pod.Spec
	if got, want := d.Replicas, replicas; got != want {
		t.Errorf("replicas=%d, want %d", got, want)
	}
	for k, v := range d.Selector.MatchLabels {
		if d.Template.Metadata.Labels[k] != v {
			t.Errorf("the selector's %s=%s is not on the pods (%v)", k, v, d.Template.Metadata.Labels)
		}
	}
	if len(d.Template.Spec.Containers) != 1 {
		t.Fatalf("containers=%d, want 1", len(d.Template.Spec.Containers))
	}
	sim := d.Template.Spec.Containers[0]
	c.sim = sim
	ports := map[string]int{}
	for _, p := range sim.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if got, want := ports, map[string]int{"https": 8443, "admin": 8444}; !maps.Equal(got, want) {
		t.Errorf("ports=%v, want %v", got, want)
	}
	flags := simulatorFlags(t)
	for _, e := range sim.Env {
		if !flags[e.Name] {
			t.Errorf("%s names no flag of cmd/simulator", e.Name)
		}
	}
	for name, want := range map[string]string{"SIM_ADDR": "0.0.0.0:8443", "SIM_ADMIN_ADDR": "0.0.0.0:8444"} {
		if e := env(sim, name); e == nil || e.Value != want {
			t.Errorf("%s=%+v, want %q", name, e, want)
		}
	}

	// Probes: /healthz over HTTPS on the partner port for startup and
	// readiness; liveness never asks Redis.
	for name, p := range map[string]*probe{"startup": sim.StartupProbe, "readiness": sim.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe=%+v, want GET /healthz over HTTPS on port https", name, p)
		} else if g := *p.HTTPGet; g.Path != "/healthz" || g.Port != "https" || g.Scheme != "HTTPS" {
			t.Errorf("%s probe GET %s on port %s over %s, want GET /healthz over HTTPS on port https", name, g.Path, g.Port, g.Scheme)
		}
	}
	if p := sim.LivenessProbe; p == nil || p.TCPSocket == nil || p.TCPSocket.Port != "https" {
		t.Errorf("liveness probe=%+v, want the https port opened", p)
	}

	// The control token from a Secret; the certificate from a mounted one.
	c.admin = secretRef(t, sim, "SIM_ADMIN_TOKEN")
	mounts := map[string]string{}
	for _, m := range sim.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	secretVolumes := map[string]string{}
	for _, v := range d.Template.Spec.Volumes {
		if v.Secret != nil {
			secretVolumes[v.Name] = v.Secret.SecretName
		}
	}
	c.tlsSecret = mountedSecret(t, sim, mounts, secretVolumes, "SIM_TLS_CERT")
	if got := mountedSecret(t, sim, mounts, secretVolumes, "SIM_TLS_KEY"); got != c.tlsSecret {
		t.Errorf("certificate from Secret %s, key from %s", c.tlsSecret, got)
	}
	if e := env(sim, "SIM_TLS_CERT"); e != nil && filepath.Base(e.Value) != "tls.crt" {
		t.Errorf("SIM_TLS_CERT=%s, want a kubernetes.io/tls Secret's tls.crt", e.Value)
	}

	// The partner Service on 443 and the control Service on 8444, both in
	// front of the simulator's pods.
	for _, s := range []struct {
		name, port string
		number     int
	}{{fullname, "https", 443}, {fullname + "-admin", "admin", 8444}} {
		var svc service
		r.mustGet(t, "Service", s.name, &svc)
		if !maps.Equal(svc.Spec.Selector, d.Selector.MatchLabels) {
			t.Errorf("Service %s selects %v, the pods are %v", s.name, svc.Spec.Selector, d.Selector.MatchLabels)
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != s.number || svc.Spec.Ports[0].TargetPort != s.port {
			t.Errorf("Service %s ports=%+v, want %d to %s", s.name, svc.Spec.Ports, s.number, s.port)
		}
	}
	return c
}

// mountedSecret returns the Secret a file variable points into.
func mountedSecret(t *testing.T, c container, mounts, secretVolumes map[string]string, name string) string {
	t.Helper()
	e := env(c, name)
	if e == nil {
		t.Fatalf("no %s", name)
	}
	for vol, path := range mounts {
		if filepath.Dir(e.Value) == path && secretVolumes[vol] != "" {
			return secretVolumes[vol]
		}
	}
	t.Fatalf("%s=%s is in no mounted Secret (mounts %v, secret volumes %v)", name, e.Value, mounts, secretVolumes)
	return ""
}

// checkGeneratedCert holds the certificate the chart makes: a key pair
// that loads as the simulator loads it, valid for both Services' names.
func checkGeneratedCert(t *testing.T, r manifests, name string) *x509.Certificate {
	t.Helper()
	var s secret
	r.mustGet(t, "Secret", name, &s)
	if s.Type != "kubernetes.io/tls" {
		t.Errorf("Secret %s type=%q, want kubernetes.io/tls", name, s.Type)
	}
	crt := secretValue(t, r, keyRef{name, "tls.crt"})
	key := secretValue(t, r, keyRef{name, "tls.key"})
	if _, err := tls.X509KeyPair([]byte(crt), []byte(key)); err != nil {
		t.Fatalf("tls.crt and tls.key: %v", err)
	}
	block, _ := pem.Decode([]byte(crt))
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{fullname, fullname + "." + namespace + ".svc", fullname + "-admin." + namespace + ".svc.cluster.local", "localhost"} {
		if err := cert.VerifyHostname(host); err != nil {
			t.Errorf("certificate: %v", err)
		}
	}
	return cert
}

// valueSets are the value sets every test below lints and renders.
var valueSets = []struct {
	name   string
	values map[string]any
	check  func(t *testing.T, r manifests)
}{
	{
		name:   "defaults: two replicas on the release's Redis",
		values: map[string]any{},
		check: func(t *testing.T, r manifests) {
			want := []string{
				"Deployment/" + fullname, "Deployment/" + fullname + "-redis",
				"Secret/" + fullname + "-admin", "Secret/" + fullname + "-tls",
				"Service/" + fullname, "Service/" + fullname + "-admin", "Service/" + fullname + "-redis",
			}
			if got := r.kinds(); !slices.Equal(got, want) {
				t.Fatalf("rendered %v, want %v", got, want)
			}
			c := checkSimulator(t, r, 2)
			checkGeneratedCert(t, r, c.tlsSecret)
			if tok := secretValue(t, r, c.admin); len(tok) < 32 {
				t.Errorf("generated control token %q: want 32 random characters", tok)
			}
			// The simulator's Redis URL names the Redis Service, on the port
			// the Redis pod listens on, and that Service selects that pod.
			var svc service
			r.mustGet(t, "Service", fullname+"-redis", &svc)
			if e := env(c.sim, "SIM_REDIS_URL"); e == nil || e.Value != "redis://"+fullname+"-redis:6379/0" {
				t.Errorf("SIM_REDIS_URL=%+v, want the Redis Service", e)
			}
			var redis deployment
			r.mustGet(t, "Deployment", fullname+"-redis", &redis)
			if redis.Spec.Replicas != 1 {
				t.Errorf("Redis replicas=%d, want 1: a second would split the state", redis.Spec.Replicas)
			}
			if !maps.Equal(svc.Spec.Selector, redis.Spec.Selector.MatchLabels) || maps.Equal(svc.Spec.Selector, c.pod.Spec.Selector.MatchLabels) {
				t.Errorf("the Redis Service selects %v: want the Redis pod (%v), not the simulator's", svc.Spec.Selector, redis.Spec.Selector.MatchLabels)
			}
			rc := redis.Spec.Template.Spec.Containers[0]
			if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 6379 || len(rc.Ports) != 1 || rc.Ports[0].ContainerPort != 6379 {
				t.Errorf("Redis Service ports %+v, container ports %+v: want 6379", svc.Spec.Ports, rc.Ports)
			}
			if !strings.Contains(strings.Join(rc.Args, " "), `--save  --appendonly no`) {
				t.Errorf("Redis args=%q, want nothing on disk (--save \"\" --appendonly no)", rc.Args)
			}
			// Metrics are off by default: no scrape annotations.
			for k := range c.pod.Spec.Template.Metadata.Annotations {
				if strings.HasPrefix(k, "prometheus.io/") {
					t.Errorf("annotation %s by default", k)
				}
			}
		},
	},
	{
		name: "an external Redis Cluster URL, passed through from a Secret the chart makes",
		values: map[string]any{"externalRedis": map[string]any{
			"url": "redis-cluster://:s3cret@redis-0.example:6379,redis-1.example:6379,redis-2.example:6379",
		}},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 2)
			for _, k := range r.kinds() {
				if strings.HasSuffix(k, "-redis") {
					t.Errorf("%s rendered with an external Redis", k)
				}
			}
			ref := secretRef(t, c.sim, "SIM_REDIS_URL")
			if got, want := secretValue(t, r, ref), "redis-cluster://:s3cret@redis-0.example:6379,redis-1.example:6379,redis-2.example:6379"; got != want {
				t.Errorf("SIM_REDIS_URL=%q, want %q unchanged", got, want)
			}
		},
	},
	{
		name: "an external Redis URL from a Secret of the user's",
		values: map[string]any{"externalRedis": map[string]any{
			"existingSecret": "team-redis", "existingSecretKey": "url",
		}},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 2)
			if got, want := secretRef(t, c.sim, "SIM_REDIS_URL"), (keyRef{"team-redis", "url"}); got != want {
				t.Errorf("SIM_REDIS_URL from %+v, want %+v", got, want)
			}
			if r.get(t, "Secret", "team-redis", &secret{}) || r.get(t, "Deployment", fullname+"-redis", &deployment{}) {
				t.Errorf("rendered the user's Secret or a Redis: %v", r.kinds())
			}
		},
	},
	{
		name:   "a learned profile, inline",
		values: map[string]any{"profile": map[string]any{"json": string(learnedProfile())}},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 2)
			if got := mountedProfile(t, r, c); got != string(learnedProfile()) {
				t.Errorf("SIM_PROFILE's file holds %d bytes, not the profile given (%d)", len(got), len(learnedProfile()))
			}
			// A new profile restarts the replicas: they read it at start.
			other := render(t, map[string]any{"profile": map[string]any{"json": strings.Replace(string(learnedProfile()), "410", "404", 1)}})
			var d deployment
			other.mustGet(t, "Deployment", fullname, &d)
			if a, b := c.pod.Spec.Template.Metadata.Annotations["checksum/config"], d.Spec.Template.Metadata.Annotations["checksum/config"]; a == b {
				t.Errorf("checksum/config %s is the same for two profiles", a)
			}
		},
	},
	{
		name:   "a profile from a ConfigMap of the user's",
		values: map[string]any{"profile": map[string]any{"existingConfigMap": "team-profile", "existingConfigMapKey": "deployment-profile.json"}},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 2)
			if e := env(c.sim, "SIM_PROFILE"); e == nil || e.Value != "/etc/simulator/profile/deployment-profile.json" {
				t.Fatalf("SIM_PROFILE=%+v, want the user's key under the profile mount", e)
			}
			if cm := profileVolume(t, c); cm != "team-profile" {
				t.Errorf("the profile is mounted from ConfigMap %q, want team-profile", cm)
			}
			if r.get(t, "ConfigMap", "team-profile", &configMap{}) || r.get(t, "ConfigMap", fullname+"-profile", &configMap{}) {
				t.Errorf("rendered a ConfigMap for the user's profile: %v", r.kinds())
			}
		},
	},
	{
		name: "five replicas, with flags",
		values: map[string]any{"replicaCount": 5, "config": map[string]any{
			"seed": 7, "rate-limit": 1000, "rate-window": "10s", "log-level": "warn",
			"violate": []string{"list-total-pages-floor", "stats-count-string"},
		}},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 5)
			for name, want := range map[string]string{
				"SIM_SEED": "7", "SIM_RATE_LIMIT": "1000", "SIM_RATE_WINDOW": "10s", "SIM_LOG_LEVEL": "warn", "SIM_LOG_FORMAT": "json",
				"SIM_VIOLATE": "list-total-pages-floor,stats-count-string", // the flag's comma-separated form
			} {
				if e := env(c.sim, name); e == nil || e.Value != want {
					t.Errorf("%s=%+v, want %q", name, e, want)
				}
			}
		},
	},
	{
		name:   "one replica in memory",
		values: map[string]any{"replicaCount": 1, "redis": map[string]any{"enabled": false}},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 1)
			if e := env(c.sim, "SIM_REDIS_URL"); e != nil {
				t.Errorf("SIM_REDIS_URL=%+v without Redis", e)
			}
			if r.get(t, "Deployment", fullname+"-redis", &deployment{}) {
				t.Errorf("a Redis with redis.enabled=false")
			}
		},
	},
	{
		name: "metrics on: scrape annotations and a ServiceMonitor",
		values: map[string]any{"metrics": map[string]any{
			"podAnnotations": true, "serviceMonitor": map[string]any{"enabled": true},
		}},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 2)
			cert := checkGeneratedCert(t, r, c.tlsSecret)
			want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/scheme": "https", "prometheus.io/port": "8444", "prometheus.io/path": "/metrics"}
			for k, v := range want {
				if got := c.pod.Spec.Template.Metadata.Annotations[k]; got != v {
					t.Errorf("pod annotation %s=%q, want %q", k, got, v)
				}
			}
			var sm serviceMonitor
			r.mustGet(t, "ServiceMonitor", fullname, &sm)
			var admin, partner object
			for _, o := range r {
				switch {
				case o.Kind == "Service" && o.Metadata.Name == fullname+"-admin":
					admin = o
				case o.Kind == "Service" && o.Metadata.Name == fullname:
					partner = o
				}
			}
			selects := func(o object) bool {
				for k, v := range sm.Spec.Selector.MatchLabels {
					if o.Metadata.Labels[k] != v {
						return false
					}
				}
				return true
			}
			if !selects(admin) || selects(partner) {
				t.Errorf("ServiceMonitor selects %v: want the control Service only", sm.Spec.Selector.MatchLabels)
			}
			if len(sm.Spec.Endpoints) != 1 {
				t.Fatalf("endpoints=%d, want 1", len(sm.Spec.Endpoints))
			}
			ep := sm.Spec.Endpoints[0]
			if ep.Port != "admin" || ep.Scheme != "https" || ep.Path != "/metrics" {
				t.Errorf("endpoint %s %s %s, want admin https /metrics", ep.Port, ep.Scheme, ep.Path)
			}
			if ep.Authorization.Type != "Bearer" || ep.Authorization.Credentials != c.admin {
				t.Errorf("authorization %+v, want Bearer from %+v (SIM_ADMIN_TOKEN's Secret)", ep.Authorization, c.admin)
			}
			if ep.TLSConfig.CA.Secret != (keyRef{c.tlsSecret, "tls.crt"}) {
				t.Errorf("CA from %+v, want %s tls.crt", ep.TLSConfig.CA.Secret, c.tlsSecret)
			}
			if err := cert.VerifyHostname(ep.TLSConfig.ServerName); err != nil {
				t.Errorf("serverName %q: %v", ep.TLSConfig.ServerName, err)
			}
		},
	},
	{
		name: "the user's own Secrets: certificate, control token, accounts",
		values: map[string]any{
			"tls":      map[string]any{"existingSecret": "team-tls"},
			"admin":    map[string]any{"existingSecret": "team-admin", "existingSecretKey": "token"},
			"accounts": map[string]any{"existingSecret": "team-accounts"},
		},
		check: func(t *testing.T, r manifests) {
			c := checkSimulator(t, r, 2)
			if c.tlsSecret != "team-tls" || c.admin != (keyRef{"team-admin", "token"}) {
				t.Errorf("certificate from %s, token from %+v: want the user's Secrets", c.tlsSecret, c.admin)
			}
			for _, k := range r.kinds() {
				if strings.HasPrefix(k, "Secret/") {
					t.Errorf("rendered %s though every Secret is the user's", k)
				}
			}
			mounts := map[string]string{}
			for _, m := range c.sim.VolumeMounts {
				mounts[m.Name] = m.MountPath
			}
			secretVolumes := map[string]string{}
			for _, v := range c.pod.Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					secretVolumes[v.Name] = v.Secret.SecretName
				}
			}
			if got := mountedSecret(t, c.sim, mounts, secretVolumes, "SIM_ACCOUNTS"); got != "team-accounts" {
				t.Errorf("SIM_ACCOUNTS from %s, want team-accounts", got)
			}
		},
	},
}

func TestChartLints(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			out, err := helm(t, vs.values, "lint", "--strict", chartDir(t))
			if err != nil {
				t.Fatalf("helm lint --strict: %v\n%s", err, out)
			}
		})
	}
}

func TestChartRenders(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			vs.check(t, render(t, vs.values))
		})
	}
}

// TestChartRefuses: value sets that would deploy something broken fail to
// render, with the reason.
func TestChartRefuses(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"replicas without Redis", map[string]any{"replicaCount": 3, "redis": map[string]any{"enabled": false}}, "without Redis"},
		{"a flag the chart sets", map[string]any{"config": map[string]any{"redis-url": "redis://elsewhere:6379"}}, "config.redis-url is set by the chart"},
		{"plain HTTP", map[string]any{"config": map[string]any{"insecure": true}}, "HTTPS only"},
		{"two sources of the Redis URL", map[string]any{"externalRedis": map[string]any{"url": "redis://r:6379", "existingSecret": "r"}}, "not both"},
		{"a profile that is no JSON", map[string]any{"profile": map[string]any{"json": "{not json"}}, "profile.json is not a deployment profile"},
		{"JSON that is no profile", map[string]any{"profile": map[string]any{"json": `{"rateLimit": 5}`}}, "profile.json is not a deployment profile"},
		{"two sources of the profile", map[string]any{"profile": map[string]any{"json": string(learnedProfile()), "existingConfigMap": "p"}}, "profile: give json or existingConfigMap, not both"},
		{"the profile as a flag", map[string]any{"config": map[string]any{"profile": "/p.json"}}, "config.profile is set by the chart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := helm(t, tt.values, "template", release, chartDir(t), "--namespace", namespace)
			if err == nil {
				t.Fatalf("rendered; want a refusal saying %q", tt.want)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("refused with %s; want it to say %q", out, tt.want)
			}
		})
	}
}

// TestHelmPinIsTheMakefiles: the Makefile's HELM and this test build the
// same Helm.
func TestHelmPinIsTheMakefiles(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^HELM\s*:=\s*` + regexp.QuoteMeta(helmPkg) + `\s*$`).Match(mk) {
		t.Errorf("the Makefile's HELM is not %s", helmPkg)
	}
}

// learnedProfile is the simulator's default profile played as if a
// deployment had been learned with other choices: an unknown path is
// answered 410 with a message of its own (docs/fidelity.md, http.unknownPath).
func learnedProfile() []byte {
	var p map[string]any
	if err := json.Unmarshal(fixtures.DefaultProfile, &p); err != nil {
		panic(err)
	}
	p["source"] = map[string]any{"name": "a learned deployment"}
	p["http"].(map[string]any)["unknownPath"].(map[string]any)["value"] = map[string]any{
		"status": 410, "message": "Gone: {path} is not an operation of this deployment",
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// profileVolume is the ConfigMap SIM_PROFILE's directory is mounted from.
func profileVolume(t *testing.T, c checked) string {
	t.Helper()
	e := env(c.sim, "SIM_PROFILE")
	if e == nil {
		t.Fatal("no SIM_PROFILE")
	}
	for _, m := range c.sim.VolumeMounts {
		if m.MountPath != filepath.Dir(e.Value) {
			continue
		}
		for _, v := range c.pod.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				return v.ConfigMap.Name
			}
		}
	}
	t.Fatalf("SIM_PROFILE=%s is in no mounted ConfigMap", e.Value)
	return ""
}

// mountedProfile is the content of the file SIM_PROFILE names, read from
// the rendered ConfigMap it is mounted from.
func mountedProfile(t *testing.T, r manifests, c checked) string {
	t.Helper()
	var cm configMap
	r.mustGet(t, "ConfigMap", profileVolume(t, c), &cm)
	key := filepath.Base(env(c.sim, "SIM_PROFILE").Value)
	v, ok := cm.Data[key]
	if !ok {
		t.Fatalf("ConfigMap has no key %q (keys %v)", key, slices.Sorted(maps.Keys(cm.Data)))
	}
	return v
}
