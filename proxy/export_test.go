package proxy

import "time"

// SetSessionClock makes u's callers' sessions read the time from now.
func SetSessionClock(u *Upstream, now func() time.Time) {
	u.sessions.mu.Lock()
	u.sessions.now = now
	u.sessions.mu.Unlock()
}

// Sessions returns the number of callers' sessions u keeps.
func Sessions(u *Upstream) int { return u.sessions.len() }
