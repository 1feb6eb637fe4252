package redisstore

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// recorder is a slog.Handler that keeps the records.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}

// take returns the records since the last take, as level, message and the
// value of attr.
func (r *recorder) take(attrs ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		s := rec.Level.String() + " " + rec.Message
		rec.Attrs(func(a slog.Attr) bool {
			for _, k := range attrs {
				if a.Key == k {
					s += " " + a.Key + "=" + a.Value.String()
				}
			}
			return true
		})
		out = append(out, s)
	}
	r.records = nil
	return out
}

func TestLimiterFailOpen(t *testing.T) {
	s := redistest.Start(t)
	var logs recorder
	var fallbackCalls int
	fallback := middleware.LimiterFunc(func(context.Context, string) (bool, time.Duration, error) {
		fallbackCalls++
		return true, 0, nil
	})
	l := NewLimiter(s.Client(t), 1.0/3600, 1, &LimiterOptions{
		Prefix:   s.Prefix(t),
		Logger:   slog.New(&logs),
		FailOpen: fallback,
	})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	ctx := context.Background()
	allow := func(wantOK bool) {
		t.Helper()
		ok, _, err := l.Allow(ctx, "k")
		if err != nil || ok != wantOK {
			t.Fatalf("Allow = %v, %v; want %v, nil", ok, err, wantOK)
		}
	}
	expectLogs := func(want ...string) {
		t.Helper()
		got := logs.take("fallbackCalls", "fallbackCallsSinceWarning")
		if len(got) != len(want) {
			t.Fatalf("logs = %q, want %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("log %d = %q, want %q", i, got[i], want[i])
			}
		}
	}

	allow(true) // Redis's, the one call of the burst
	allow(false)
	if fallbackCalls != 0 {
		t.Fatalf("the fallback was asked while Redis was up")
	}

	s.Stop(t)
	for range 5 {
		allow(true) // the first asks Redis, the others go straight to the fallback
	}
	if fallbackCalls != 5 {
		t.Fatalf("fallback asked %d times, want 5", fallbackCalls)
	}
	expectLogs("WARN redisstore: Redis unavailable, rate limits are per process (fail open) fallbackCalls=1")

	now = now.Add(warnEvery - time.Second)
	allow(true) // asks Redis again: a probe
	allow(true)
	expectLogs() // not yet: at most one warning every 10s

	now = now.Add(time.Second)
	allow(true)
	expectLogs("WARN redisstore: Redis unavailable, rate limits are per process (fail open) fallbackCalls=7")

	// A call whose context is done is not the fallback's to decide.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if ok, _, err := l.Allow(cctx, "k"); err == nil || ok {
		t.Errorf("Allow with a cancelled context and Redis down = %v, %v; want false and an error", ok, err)
	}

	s.Restart(t) // empty: the budget is full again
	allow(true)  // not asked: the last probe was less than a second ago
	now = now.Add(probeEvery)
	allow(true) // Redis's, the one call of the burst
	allow(false)
	expectLogs("INFO redisstore: Redis available again, rate limits are shared fallbackCallsSinceWarning=1")
	if fallbackCalls != 9 {
		t.Errorf("fallback asked %d times, want 9", fallbackCalls)
	}

	// A new outage within ten seconds of the last warning is not logged
	// at once, and so neither is its end.
	s.Stop(t)
	allow(true)
	s.Restart(t)
	now = now.Add(probeEvery)
	allow(true)
	expectLogs()
	// Ten seconds after the last warning, the next failure is, with the
	// calls that fell back since.
	s.Stop(t)
	now = now.Add(warnEvery)
	allow(true)
	expectLogs("WARN redisstore: Redis unavailable, rate limits are per process (fail open) fallbackCalls=2")
}
