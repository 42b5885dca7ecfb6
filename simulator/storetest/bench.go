package storetest

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// BenchmarkUpsertContact measures an Add Contact's store call, a new
// contact and a merge into a stored one by email, on stores that hold each
// of sizes contacts (two accounts) before the clock starts: with indexes,
// both cost the same whatever the size (issue 10). open returns an empty
// store.
func BenchmarkUpsertContact(b *testing.B, sizes []int, open func(b *testing.B) simulator.ContactSeeder) {
	ctx := context.Background()
	for _, stored := range sizes {
		s := open(b)
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
			// The first thousand of acc_a, stored if they are not yet.
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
