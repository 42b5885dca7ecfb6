package main

// State (§4.1, §4.2, §4.3) against the alternative implementation: a pager
// that keeps a cursor, and reads that change what another operation
// answers, each caught by the scenario of its rule.

import (
	"sync"
	"testing"
	"time"
)

// altStateDefect is a defect of state and the rule whose scenario must
// catch it.
type altStateDefect struct {
	altDefectCase
	rule string
}

// altStateDefects keep state between requests where §4 has none.
func altStateDefects() []altStateDefect {
	const (
		pager   = "§4.2: pageNo: page number returned; the request names the page"
		reading = "§4.3: Campaign Stats retrieves statistics: reading changes nothing"
		contact = "§4.1: Add Contact creates a contact record, not a campaign"
	)
	s42, s43 := []string{"4.2"}, []string{"4.3", "4.1", "4.2"}
	// A cursor per account (told apart by how many campaigns it pages
	// over): page 1 starts it, every other page continues from it.
	var cmu sync.Mutex
	cursor := map[int]int{}
	// Campaign Ids a Stats call read, and when.
	var smu sync.Mutex
	read := map[any]string{}
	var added int
	return []altStateDefect{
		{altDefectCase{"state: Campaign List pages from a cursor kept per account, not from the page asked", pager, s42, altDefect{from: func(p altPage, from int) int {
			cmu.Lock()
			defer cmu.Unlock()
			if p.page > 1 {
				from = cursor[p.records]
			}
			cursor[p.records] = from + p.limit
			return from
		}}}, "list-concurrent"},
		{altDefectCase{"state: a Campaign Stats call stamps the campaign's updatedAt", reading, s43, altDefect{
			stats: func(c map[string]any, _ map[string]map[string]any) {
				smu.Lock()
				defer smu.Unlock()
				read[c["Id"]] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
			},
			campaign: func(_ altPage, c map[string]any) {
				smu.Lock()
				defer smu.Unlock()
				if ts, ok := read[c["Id"]]; ok {
					c["updatedAt"] = ts
				}
			},
		}}, "independence"},
		{altDefectCase{"state: an Add Contact counts the contact as sent in every email statistics", contact, s43, altDefect{
			contact: func(_ map[string]any, id string) (int, any) {
				smu.Lock()
				defer smu.Unlock()
				added++
				return 200, id
			},
			stats: func(_ map[string]any, st map[string]map[string]any) {
				smu.Lock()
				defer smu.Unlock()
				if n, ok := st["emailStat"]["Sent"].(int); ok {
					st["emailStat"]["Sent"] = n + added
				}
			},
		}}, "independence"},
	}
}

// TestAlternativeStateDefectsAreCaught: each defect of state fails the
// run (exit 1), and among the failed scenarios is the one of its rule.
func TestAlternativeStateDefectsAreCaught(t *testing.T) {
	waitsForWindows(t)
	defects := altStateDefects()
	altTable(t, len(defects), func(i int) (string, altTarget) {
		return defects[i].name, altTarget{defect: defects[i].defect, limit: altLimit}
	}, func(t *testing.T, i int, r altRun) {
		wantCaught(t, r, defects[i].String(), altCatch{rule: defects[i].rule})
	})
}
