package redisstore_test

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
)

// benchContact is an Add Contact as the server makes it: every field given.
func benchContact(account string, i int) *simulator.Contact {
	one := 1
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	return &simulator.Contact{
		ID: fmt.Sprintf("ct_%024x", i), AccountID: account,
		Email: fmt.Sprintf("Player.%d@Example.com", i), PhoneNo: fmt.Sprintf("+1555%07d", i),
		FirstName: "Ada", LastName: "Lovelace", AddrOne: "1 Analytical Way", City: "London", Country: "UK",
		State: "LDN", ZipCode: "N1 9GU", Gender: "female", DateOfBirth: "1990-12-10",
		EmailOptStatus: &one, SMSOptStatus: &one, Tag: []string{"vip", "beta"}, PlayerType: []string{"casual"},
		CreatedAt: at, UpdatedAt: at,
	}
}

func benchContacts(n int) iter.Seq[*simulator.Contact] {
	return func(yield func(*simulator.Contact) bool) {
		for i := range n {
			if !yield(benchContact([]string{"acc_a", "acc_b"}[i%2], i)) {
				return
			}
		}
	}
}

// benchmarkUpsertContact measures UpsertContact, a new contact and a merge
// by email, on a store that holds none or a million contacts (two
// accounts, seeded with SeedContacts).
func benchmarkUpsertContact(b *testing.B, url string, sizes []int) {
	ctx := context.Background()
	for _, stored := range sizes {
		db := MustOpenDB(b, url)
		s := redisstore.NewContactStore(db)
		if _, err := s.SeedContacts(ctx, "bench", benchContacts(stored)); err != nil {
			b.Fatal(err)
		}
		next := stored
		b.Run(fmt.Sprintf("stored=%d/new", stored), func(b *testing.B) {
			cs := make([]*simulator.Contact, b.N)
			for i := range cs {
				next++
				cs[i] = benchContact("acc_a", 2*next)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for _, c := range cs {
				if _, created, err := s.UpsertContact(ctx, c); err != nil || !created {
					b.Fatalf("created %v, %v", created, err)
				}
			}
		})
		b.Run(fmt.Sprintf("stored=%d/merge", stored), func(b *testing.B) {
			for i := range 1000 {
				if _, _, err := s.UpsertContact(ctx, benchContact("acc_a", 2*i)); err != nil {
					b.Fatal(err)
				}
			}
			cs := make([]*simulator.Contact, b.N)
			for i := range cs {
				cs[i] = benchContact("acc_a", 2*(i%1000))
				cs[i].ID = "ct_ffffffffffffffffffffffff"
			}
			b.ReportAllocs()
			b.ResetTimer()
			for _, c := range cs {
				if _, created, err := s.UpsertContact(ctx, c); err != nil || created {
					b.Fatalf("created %v, %v", created, err)
				}
			}
		})
	}
}

// Miniredis keeps everything in Go maps: a million stored contacts there
// measure miniredis more than the store, so it stops at 100,000.
func BenchmarkUpsertContact_Miniredis(b *testing.B) {
	m := miniredis.RunT(b)
	benchmarkUpsertContact(b, "redis://"+m.Addr()+"/0", []int{0, 100_000})
}

func BenchmarkUpsertContact_RedisServer(b *testing.B) {
	benchmarkUpsertContact(b, realRedisURL(b), []int{0, 1_000_000})
}
