package partnerapi

import (
	"log/slog"

	"github.com/partner-v3/conformance-kit/simulator"
)

func levelFor(status int) slog.Level {
	if status >= 500 || status == 0 {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func slogAttrs(e *simulator.JournalEntry) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("request_id", e.RequestID),
		slog.String("method", e.Method),
		slog.String("path", e.Path),
		slog.Int("status", e.Status),
		slog.Float64("latency_ms", e.LatencyMS),
	}
	if e.AccountID != "" {
		attrs = append(attrs, slog.String("account_id", e.AccountID))
	}
	if e.AttributedTo != "" {
		attrs = append(attrs, slog.String("attributed_to", e.AttributedTo))
	}
	if e.Fault != "" {
		attrs = append(attrs, slog.String("fault", e.Fault), slog.String("fault_id", e.FaultID))
	}
	return attrs
}
