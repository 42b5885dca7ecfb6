package dashboard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Bounds of the journal stream (GET /ui/events).
const (
	// streamBuffer is how many entries a viewer may fall behind before the
	// journal drops the next ones for it (controlapi.Journal.Subscribe):
	// the partner API never waits for a viewer.
	streamBuffer = 512
	// streamBackfill is how many past entries a new viewer gets first.
	streamBackfill = 100
	// keepAlive is how often an idle stream sends a comment, so proxies
	// and the browser keep it open.
	keepAlive = 15 * time.Second
	// streamFlush is how long an entry may wait in the stream's buffer:
	// well within the second the issue allows a request to show.
	streamFlush = 100 * time.Millisecond
)

// handleEvents is the live journal: server-sent events, one "entry" per
// partner request (the journal's entry, its key masked and no secret, as
// GET /journal lists it), the latest ones first, then each as it is
// answered; a "dropped" event says how many a slow viewer missed. The
// page filters them by account, operation and status.
func (d *Dashboard) handleEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// The control listener's write timeout would cut the stream; it has
	// no end of its own.
	_ = rc.SetWriteDeadline(time.Time{})
	sub := d.api.Journal.Subscribe(streamBuffer)
	defer sub.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	// A buffer of its own, larger than net/http's 4 KiB, so that a busy
	// stream reaches the socket in few writes (streamFlush).
	bw := bufio.NewWriterSize(w, 64<<10)
	flush := func() error {
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	send := func(event string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s: %w", event, err)
		}
		if _, err := fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return fmt.Errorf("write %s: %w", event, err)
		}
		return nil
	}
	past := d.api.Journal.Latest(streamBackfill)
	for i := len(past) - 1; i >= 0; i-- { // oldest first, as live ones come
		if send("entry", past[i]) != nil {
			return
		}
	}
	if err := flush(); err != nil {
		return
	}
	// Entries are written as they come but flushed (one TLS record, one
	// write to the socket) at most every streamFlush: at thousands of
	// requests a second a flush per entry would cost the partner API the
	// CPU it shares with the stream.
	tick := time.NewTicker(streamFlush)
	defer tick.Stop()
	var reported int64
	dirty, lastFlush := false, time.Now()
	for {
		select {
		case <-r.Context().Done():
			return
		case e, ok := <-sub.C:
			if !ok {
				return
			}
			if send("entry", e) != nil {
				return
			}
			dirty = true
		case now := <-tick.C:
			if dropped := sub.Dropped(); dropped != reported {
				reported = dropped
				if send("dropped", map[string]int64{"dropped": dropped}) != nil {
					return
				}
				dirty = true
			}
			if !dirty && now.Sub(lastFlush) < keepAlive {
				continue
			}
			if !dirty {
				if _, err := fmt.Fprint(bw, ": keep-alive\n\n"); err != nil {
					return
				}
			}
			if flush() != nil {
				return
			}
			dirty, lastFlush = false, now
		}
	}
}
