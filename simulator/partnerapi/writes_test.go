package partnerapi

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/edge"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// countingListener counts the writes to its connections' sockets: TLS
// records included, so each is one write system call.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestWritesPerAnswer: every answer of the three operations over HTTPS
// keep-alive is one write to the socket (issue 21: under load, TLS writes
// are a fifth of all CPU): headers and body leave together, no Flush, no
// body past the buffers.
func TestWritesPerAnswer(t *testing.T) {
	cert, err := edge.LoadOrCreateCertificate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newFuzzServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	// Served as package sim serves it: through the edge.
	o := edge.Options{TLS: edge.TLSConfig(cert.TLSConfig(), s.ServesHTTP2()), WriteTimeout: MaxFaultDelay + 30*time.Second}
	srv := edge.NewServer(s.Handler(), o)
	go srv.Serve(edge.NewListener(countingListener{Listener: ln, writes: &writes}, o))
	t.Cleanup(func() { srv.Close() })
	client := &http.Client{Transport: &http.Transport{
		// One keep-alive connection over HTTP/1.1, as cmd/load's.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxConnsPerHost: 1,
	}}
	t.Cleanup(client.CloseIdleConnections)
	base := "https://" + ln.Addr().String() + spec.BasePath + "/"
	tests := []struct {
		name, op, body string
	}{
		{"Campaign Stats", spec.PathCampaignStats, `{"campaignId":1}`},
		{"Campaign List", spec.PathCampaignList, `{"limit":50,"page":1}`},
		{"Add Contact", spec.PathContactAdd, `{"email":"a@example.com","firstName":"A","tag":["x"]}`},
		{"a refusal", spec.PathCampaignStats, `{}`},
	}
	send := func(t *testing.T, op, body string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+op, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", spec.ContentType)
		req.Header.Set(spec.HeaderAPIKey, "key")
		req.Header.Set(spec.HeaderAPISecret, "secret")
		req.Header.Set(spec.HeaderAccountID, "acc")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 1 {
			t.Fatalf("answered over HTTP/%d, want HTTP/1.1", resp.ProtoMajor)
		}
	}
	send(t, spec.PathCampaignStats, `{"campaignId":1}`) // the handshake's writes
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 20
			before := writes.Load()
			for range n {
				send(t, tt.op, tt.body)
			}
			if got := writes.Load() - before; got != n {
				t.Fatalf("%d answers took %d writes, want %d", n, got, n)
			}
		})
	}
}
