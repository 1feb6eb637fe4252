package proxy

import (
	"context"
	"time"
)

// SetSessionClock makes u's callers' sessions read the time from now.
func SetSessionClock(u *Upstream, now func() time.Time) {
	u.sessions.mu.Lock()
	u.sessions.now = now
	u.sessions.mu.Unlock()
}

// Sessions returns the number of callers' sessions u keeps.
func Sessions(u *Upstream) int { return u.sessions.len() }

// A Clock is what NewWithClock's Upstream keeps time by.
type Clock = clock

// NewWithClock is New with the clock that times the Upstream's
// reconnections and retries.
func NewWithClock(ctx context.Context, dial Dial, opts *Options, c Clock) (*Upstream, error) {
	return newUpstream(ctx, dial, opts, c)
}
