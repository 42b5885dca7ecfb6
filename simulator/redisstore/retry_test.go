package redisstore_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
)

// redisURLs are the Redis servers the retry tests run on.
var redisURLs = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"miniredis", func(t *testing.T) string { return "redis://" + miniredis.RunT(t).Addr() + "/0" }},
	{"redis-server", func(t *testing.T) string { return realRedisURL(t) }},
}

// go-redis re-sends a command whose reply it lost (spec §8 "exactly 100"
// must survive it): each state-changing script, sent twice with the same
// call id as the retry sends it, applies once and answers the same twice.
func TestRetriedScripts_ApplyOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fault := simulator.Fault{ID: "f1", Operation: "*", Kind: simulator.FaultError, Remaining: 2}
	tests := []struct {
		name string
		run  func(t *testing.T, db *redisstore.DB)
	}{
		{"a re-sent Take counts the request once", func(t *testing.T, db *redisstore.DB) {
			r := redisstore.NewRateCounter(db, 2, time.Minute)
			for range 3 {
				if d, err := r.TakeCall(ctx, "acc", now, "call-1"); err != nil || !d.Allowed || d.Count != 1 {
					t.Fatalf("Take sent again = %+v, %v; want allowed, count 1", d, err)
				}
			}
			if d, err := r.Take(ctx, "acc", now); err != nil || !d.Allowed || d.Count != 2 {
				t.Fatalf("the next Take = %+v, %v; want allowed, count 2", d, err)
			}
			if d, err := r.Take(ctx, "acc", now); err != nil || d.Allowed {
				t.Fatalf("the third request = %+v, %v; want refused", d, err)
			}
		}},
		{"a re-sent refused Take that counts refusals counts it once (issue 20)", func(t *testing.T, db *redisstore.DB) {
			r := redisstore.NewRateCounter(db, 1, time.Minute)
			p := simulator.RatePolicy{CountsRefused: true}
			if _, err := r.TakePolicy(ctx, "acc", now, p); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if d, err := r.TakePolicyCall(ctx, "acc", now.Add(time.Second), p, "call-1"); err != nil || d.Allowed || d.Count != 2 {
					t.Fatalf("refused Take sent again = %+v, %v; want refused, count 2", d, err)
				}
			}
			if n, err := r.CountPolicy(ctx, "acc", now.Add(time.Second), p); err != nil || n != 2 {
				t.Fatalf("Count = %d, %v; want 2", n, err)
			}
		}},
		{"a re-sent refused Take decides again and counts nothing", func(t *testing.T, db *redisstore.DB) {
			r := redisstore.NewRateCounter(db, 1, time.Minute)
			if _, err := r.Take(ctx, "acc", now); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if d, err := r.TakeCall(ctx, "acc", now.Add(time.Second), "call-1"); err != nil || d.Allowed || d.Count != 1 || d.RetryAfter != 59*time.Second {
					t.Fatalf("refused Take sent again = %+v, %v; want refused, count 1, retry after 59s", d, err)
				}
			}
		}},
		{"a re-sent Admit counts once and takes the fault once, even after the clock moved", func(t *testing.T, db *redisstore.DB) {
			c := redisstore.NewControlStore(db)
			g := redisstore.NewGate(db, 2, time.Minute)
			if err := c.AddFault(ctx, fault); err != nil {
				t.Fatal(err)
			}
			a := simulator.Arrival{AccountID: "acc", Operation: "addContact", Real: now}
			first, err := g.AdmitCall(ctx, a, "call-1")
			if err != nil || !first.Rate.Allowed || first.Rate.Count != 1 || first.Fault == nil || first.Fault.Remaining != 1 || !first.Now.Equal(now) {
				t.Fatalf("Admit = %+v, %v; want allowed, count 1, fault f1 with 1 left, at %v", first, err, now)
			}
			if err := c.SetClock(ctx, simulator.Clock{Offset: time.Second}); err != nil {
				t.Fatal(err)
			}
			again, err := g.AdmitCall(ctx, a, "call-1")
			if err != nil || !reflect.DeepEqual(again, first) {
				t.Fatalf("Admit sent again = %+v, %v; want the first reply %+v", again, err, first)
			}
			if fs, err := c.Faults(ctx); err != nil || len(fs) != 1 || fs[0].Remaining != 1 {
				t.Fatalf("Faults = %+v, %v; want f1 with 1 left", fs, err)
			}
			next, err := g.Admit(ctx, a)
			if err != nil || !next.Rate.Allowed || next.Rate.Count != 2 || next.Fault == nil || next.Fault.Remaining != 0 {
				t.Fatalf("the next Admit = %+v, %v; want allowed, count 2, the last occurrence of f1", next, err)
			}
		}},
		{"a re-sent Admit answers the same fault when its id and account hold spaces (issue 21: the reply is a plain string)", func(t *testing.T, db *redisstore.DB) {
			c := redisstore.NewControlStore(db)
			g := redisstore.NewGate(db, 2, time.Minute)
			spaced := simulator.Fault{ID: "f 1 two", Operation: "*", AccountID: "acc one", Kind: simulator.FaultError, Remaining: 1}
			if err := c.AddFault(ctx, spaced); err != nil {
				t.Fatal(err)
			}
			a := simulator.Arrival{AccountID: "acc one", Operation: "addContact", Real: now}
			first, err := g.AdmitCall(ctx, a, "call-1")
			if err != nil || !first.Rate.Allowed || first.Fault == nil || first.Fault.ID != spaced.ID || first.Fault.Remaining != 0 {
				t.Fatalf("Admit = %+v, %v; want allowed, the last occurrence of %q", first, err, spaced.ID)
			}
			again, err := g.AdmitCall(ctx, a, "call-1")
			if err != nil || !reflect.DeepEqual(again, first) {
				t.Fatalf("Admit sent again = %+v, %v; want the first reply %+v", again, err, first)
			}
		}},
		{"a re-sent refused Admit that counts refusals counts it once and answers the same (issue 21)", func(t *testing.T, db *redisstore.DB) {
			g := redisstore.NewGate(db, 1, time.Minute)
			p := simulator.RatePolicy{CountsRefused: true}
			if _, err := g.Admit(ctx, simulator.Arrival{AccountID: "acc", Real: now, Policy: p}); err != nil {
				t.Fatal(err)
			}
			a := simulator.Arrival{AccountID: "acc", Real: now.Add(time.Second), Policy: p}
			first, err := g.AdmitCall(ctx, a, "call-1")
			if err != nil || first.Rate.Allowed || first.Rate.Count != 2 || first.Rate.RetryAfter != time.Minute {
				t.Fatalf("Admit = %+v, %v; want refused, count 2, retry after 1m (its own refusal counts)", first, err)
			}
			again, err := g.AdmitCall(ctx, a, "call-1")
			if err != nil || !reflect.DeepEqual(again, first) {
				t.Fatalf("Admit sent again = %+v, %v; want the first reply %+v", again, err, first)
			}
			r := redisstore.NewRateCounter(db, 1, time.Minute)
			if n, err := r.CountPolicy(ctx, "acc", now.Add(time.Second), p); err != nil || n != 2 {
				t.Fatalf("Count = %d, %v; want 2", n, err)
			}
		}},
		{"a re-sent create answers created and stores the contact once; an id stored with other data is refused", func(t *testing.T, db *redisstore.DB) {
			s := redisstore.NewContactStore(db)
			c := &simulator.Contact{ID: "ct_1", AccountID: "acc", Email: "ann@example.com", PhoneNo: "+15550100", Tag: []string{"a"}, CreatedAt: now, UpdatedAt: now}
			for range 2 {
				got, created, err := s.AddContact(ctx, c, simulator.DuplicateRule{})
				if err != nil || !created || !reflect.DeepEqual(got, c) {
					t.Fatalf("AddContact sent again = %+v, %v, %v; want created %+v", got, created, err, c)
				}
			}
			if all, n, err := s.FindContacts(ctx, simulator.ContactFilter{AccountID: "acc"}); err != nil || n != 1 || len(all) != 1 {
				t.Fatalf("FindContacts = %d contacts, total %d, %v; want 1", len(all), n, err)
			}
			other := &simulator.Contact{ID: "ct_1", AccountID: "acc", Email: "bob@example.com", CreatedAt: now, UpdatedAt: now}
			if _, _, err := s.AddContact(ctx, other, simulator.DuplicateRule{}); err == nil {
				t.Fatal("AddContact of a stored id with other data = nil error, want refused")
			}
		}},
		{"a re-sent TakeFault takes one occurrence", func(t *testing.T, db *redisstore.DB) {
			c := redisstore.NewControlStore(db)
			if err := c.AddFault(ctx, fault); err != nil {
				t.Fatal(err)
			}
			q := simulator.FaultQuery{Operation: "addContact", AccountID: "acc"}
			for range 2 {
				if f, err := c.TakeFaultCall(ctx, q, "call-1"); err != nil || f == nil || f.ID != "f1" || f.Remaining != 1 {
					t.Fatalf("TakeFault sent again = %+v, %v; want f1 with 1 left", f, err)
				}
			}
			if fs, err := c.Faults(ctx); err != nil || len(fs) != 1 || fs[0].Remaining != 1 {
				t.Fatalf("Faults = %+v, %v; want f1 with 1 left", fs, err)
			}
		}},
		{"a re-sent DeleteFault answers the fault it deleted", func(t *testing.T, db *redisstore.DB) {
			c := redisstore.NewControlStore(db)
			if err := c.AddFault(ctx, fault); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if f, err := c.DeleteFaultCall(ctx, "f1", "call-1"); err != nil || f == nil || f.ID != "f1" || f.Remaining != 2 {
					t.Fatalf("DeleteFault sent again = %+v, %v; want f1 with 2 left", f, err)
				}
			}
			if _, err := c.DeleteFault(ctx, "f1"); simulator.ErrorCode(err) != simulator.ENOTFOUND {
				t.Fatalf("another DeleteFault = %v, want ENOTFOUND", err)
			}
		}},
		{"a re-sent AddFault does not give back an occurrence taken meanwhile", func(t *testing.T, db *redisstore.DB) {
			c := redisstore.NewControlStore(db)
			if err := c.AddFaultCall(ctx, fault, "call-1"); err != nil {
				t.Fatal(err)
			}
			if f, err := c.TakeFault(ctx, simulator.FaultQuery{Operation: "addContact", AccountID: "acc"}); err != nil || f == nil {
				t.Fatalf("TakeFault = %+v, %v; want f1", f, err)
			}
			if err := c.AddFaultCall(ctx, fault, "call-1"); err != nil {
				t.Fatal(err)
			}
			if fs, err := c.Faults(ctx); err != nil || len(fs) != 1 || fs[0].Remaining != 1 {
				t.Fatalf("Faults = %+v, %v; want f1 with 1 left", fs, err)
			}
		}},
	}
	for _, r := range redisURLs {
		t.Run(r.name, func(t *testing.T) {
			u := r.url(t)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.run(t, MustOpenDB(t, u)) })
			}
		})
	}
}

// replyDropper is a go-redis hook whose connections lose the reply of the
// next script sent after arm: they wait for the reply (so Redis ran the
// script), then either throw it away and let the read time out, or close
// the connection. go-redis then really retries, on a new connection.
type replyDropper struct {
	timeout bool // time out rather than close
	armed   atomic.Bool
	dropped atomic.Int64
}

func (d *replyDropper) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &droppingConn{Conn: conn, d: d}, nil
	}
}

func (d *replyDropper) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (d *replyDropper) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

type droppingConn struct {
	net.Conn
	d    *replyDropper
	drop bool
}

func (c *droppingConn) Write(p []byte) (int, error) {
	lower := bytes.ToLower(p)
	if (bytes.Contains(lower, []byte("\r\nevalsha\r\n")) || bytes.Contains(lower, []byte("\r\neval\r\n"))) && c.d.armed.CompareAndSwap(true, false) {
		c.drop = true
	}
	return c.Conn.Write(p)
}

func (c *droppingConn) Read(p []byte) (int, error) {
	if !c.drop {
		return c.Conn.Read(p)
	}
	// The reply's first bytes: Redis has run the script.
	if _, err := c.Conn.Read(p); err != nil {
		return 0, err
	}
	c.d.dropped.Add(1)
	if !c.d.timeout {
		c.Conn.Close()
		return 0, io.EOF
	}
	for {
		// Discard until go-redis's read deadline passes.
		if _, err := c.Conn.Read(p); err != nil {
			return 0, err
		}
	}
}

// When go-redis really retries a script whose reply it lost (a read
// timeout or a closed connection after Redis ran it), the rate counter
// still allows exactly the limit, with every count once, and a fault's
// occurrences are taken once each.
func TestGoRedisRetry_CountsOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const limit = 5
	losses := []struct {
		name    string
		timeout bool
	}{
		{"when the reply times out", true},
		{"when the connection closes after the reply", false},
	}
	for _, r := range redisURLs {
		for _, loss := range losses {
			t.Run(r.name+"/"+loss.name, func(t *testing.T) {
				u := r.url(t)
				db := redisstore.NewDB(u)
				db.Prefix = MustOpenDB(t, u).Prefix // cleans the keys up
				db.Timeout = 100 * time.Millisecond
				if err := db.Open(); err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				drops := &replyDropper{timeout: loss.timeout}
				db.AddHook(drops)

				counter := redisstore.NewRateCounter(db, limit, time.Minute)
				gate := redisstore.NewGate(db, limit, time.Minute)
				control := redisstore.NewControlStore(db)
				// Load the scripts, so that every dropped reply is a
				// script's, not a NOSCRIPT error's.
				if _, err := counter.Take(ctx, "warm-up", now); err != nil {
					t.Fatal(err)
				}
				if _, err := gate.Admit(ctx, simulator.Arrival{AccountID: "warm-up", Real: now}); err != nil {
					t.Fatal(err)
				}
				if err := control.AddFault(ctx, simulator.Fault{ID: "f1", Operation: "*", Kind: simulator.FaultError, Remaining: 2}); err != nil {
					t.Fatal(err)
				}

				for i := 1; i <= limit; i++ {
					drops.armed.Store(true)
					d, err := counter.Take(ctx, "acc", now)
					if err != nil || !d.Allowed || d.Count != i {
						t.Fatalf("Take %d, reply lost once = %+v, %v; want allowed, count %d", i, d, err, i)
					}
				}
				if d, err := counter.Take(ctx, "acc", now); err != nil || d.Allowed {
					t.Fatalf("Take %d = %+v, %v; want refused", limit+1, d, err)
				}

				a := simulator.Arrival{AccountID: "gate", Operation: "addContact", Real: now}
				for i := 1; i <= limit; i++ {
					drops.armed.Store(true)
					ad, err := gate.Admit(ctx, a)
					if err != nil || !ad.Rate.Allowed || ad.Rate.Count != i {
						t.Fatalf("Admit %d, reply lost once = %+v, %v; want allowed, count %d", i, ad, err, i)
					}
					if wantFault := i <= 2; (ad.Fault != nil) != wantFault || (wantFault && ad.Fault.Remaining != 2-i) {
						t.Fatalf("Admit %d took fault %+v; want f1 with %d left: %v", i, ad.Fault, 2-i, wantFault)
					}
				}
				if ad, err := gate.Admit(ctx, a); err != nil || ad.Rate.Allowed {
					t.Fatalf("Admit %d = %+v, %v; want refused", limit+1, ad, err)
				}
				// Add Contact: the retried create answers "created" with
				// the same id, and stores one contact.
				contacts := redisstore.NewContactStore(db)
				warm := &simulator.Contact{ID: "ct_warm", AccountID: "warm-up", Email: "warm@example.com", CreatedAt: now, UpdatedAt: now}
				if _, _, err := contacts.UpsertContact(ctx, warm); err != nil {
					t.Fatal(err)
				}
				c := &simulator.Contact{ID: "ct_retry", AccountID: "acc", Email: "ann@example.com", CreatedAt: now, UpdatedAt: now}
				drops.armed.Store(true)
				stored, created, err := contacts.UpsertContact(ctx, c)
				if err != nil || !created || stored.ID != c.ID {
					t.Fatalf("UpsertContact, reply lost once = %+v, created %v, %v; want created %s", stored, created, err, c.ID)
				}
				if _, total, err := contacts.FindContacts(ctx, simulator.ContactFilter{AccountID: "acc"}); err != nil || total != 1 {
					t.Fatalf("contacts stored = %d, %v; want 1", total, err)
				}
				if got, want := drops.dropped.Load(), int64(2*limit+1); got != want {
					t.Errorf("replies lost = %d, want %d: go-redis did not retry every call", got, want)
				}
			})
		}
	}
}
