package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the sessions the proxy opens per caller; see
// [Options.MaxSessions].
const (
	DefaultMaxSessions = 64
	DefaultSessionIdle = 5 * time.Minute
)

// ErrTooManySessions is the error of a call that needs a session of its
// own with the upstream (see [Options.MaxSessions]) when every one the
// proxy may keep is serving a call. It is retryable.
var ErrTooManySessions = errors.New("proxy: too many upstream sessions in use")

// sessions are the upstream sessions the proxy opens for callers, one per
// verified principal (or set of credentials, for a caller without one),
// when the upstream keeps sessions: such an upstream
// binds a session to the user who opened it and refuses another user's
// calls on it, so the proxy's own session serves only the proxy. Each is
// opened with the caller's credentials, has no event stream, and serves
// calls only. They are bounded in number, closed after an idle time, and
// opened again when the upstream forgets them.
type sessions struct {
	u    *Upstream
	max  int
	idle time.Duration
	now  func() time.Time

	mu     sync.Mutex
	byKey  map[string]*callerSession
	closed bool
}

// A callerSession is the upstream session of one set of credentials.
type callerSession struct {
	key   string
	ready chan struct{} // closed when cs or err is set
	cs    *mcp.ClientSession
	err   error
	inUse int       // calls holding it; guarded by sessions.mu
	used  time.Time // when the last call let it go
}

func newSessions(u *Upstream) *sessions {
	s := &sessions{u: u, max: u.opts.MaxSessions, idle: u.opts.SessionIdle, now: time.Now, byKey: map[string]*callerSession{}}
	if s.max <= 0 {
		s.max = DefaultMaxSessions
	}
	if s.idle <= 0 {
		s.idle = DefaultSessionIdle
	}
	return s
}

// canonical returns h with its keys in canonical form, the values of keys
// that differ only in case together.
func canonical(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], vs...)
	}
	return out
}

// sessionKey names a set of credentials, h in canonical form: a digest of
// the headers, so that no token is kept as a map key.
func sessionKey(h http.Header) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	d := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(d, "%s\x00%s\x00", k, strings.Join(h.Values(k), "\x00"))
	}
	return hex.EncodeToString(d.Sum(nil))
}

// acquire returns the session of the caller principal (or, without one,
// of the credentials h), opening it with h if need be, held for one call
// until release. It waits for the opening as long as ctx allows.
//
// A caller keeps its session when its credentials change (a token that
// expired, exchanged again): the upstream binds a session to its user,
// and each call carries its own credentials on its own request, so a
// caller's calls go with their own token whichever opened the session.
func (s *sessions) acquire(ctx context.Context, principal string, h http.Header) (*callerSession, error) {
	key := "credentials:" + sessionKey(h)
	if principal != "" {
		key = "principal:" + principal
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	idle := s.expire()
	c := s.byKey[key]
	if c == nil && len(s.byKey) >= s.max {
		if lru := s.leastRecent(); lru != nil {
			delete(s.byKey, lru.key)
			idle = append(idle, lru)
		}
	}
	if c == nil && len(s.byKey) < s.max {
		c = &callerSession{key: key, ready: make(chan struct{})}
		s.byKey[key] = c
		s.u.loops.Add(1)
		go s.open(c, h.Clone())
	}
	if c != nil {
		c.inUse++
	}
	s.mu.Unlock()
	for _, c := range idle {
		go c.cs.Close() // without holding up the call
	}
	if c == nil {
		return nil, fmt.Errorf("%w (the limit is %d)", ErrTooManySessions, s.max)
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		s.release(c)
		return nil, ctx.Err()
	}
	if c.err != nil {
		s.release(c)
		return nil, c.err
	}
	return c, nil
}

// release lets c go after a call.
func (s *sessions) release(c *callerSession) {
	s.mu.Lock()
	c.inUse--
	c.used = s.now()
	s.mu.Unlock()
}

// open connects c's session with the credentials h, on the proxy's own
// context (with h as its headers), and watches it until it ends.
func (s *sessions) open(c *callerSession, h http.Header) {
	defer s.u.loops.Done()
	ctx, cancel := s.u.ownContext()
	cs, err := s.u.dialSession(ctx, h)
	cancel()
	s.mu.Lock()
	c.cs, c.err = cs, err
	closed := s.closed
	if err != nil || closed {
		s.drop(c)
	} else {
		s.u.loops.Add(1)
	}
	s.mu.Unlock()
	close(c.ready)
	if err != nil {
		return
	}
	if closed {
		cs.Close()
		return
	}
	s.u.logger.Debug("proxy: opened an upstream session for a caller", "upstream", s.u.Name(), "session", cs.ID())
	go func() {
		defer s.u.loops.Done()
		cs.Wait()
		s.forget(c)
	}()
}

// forget removes c, whose session ended or was refused, so that the next
// call of its credentials opens another, and closes it without waiting
// (closing waits for the calls in flight on it).
func (s *sessions) forget(c *callerSession) {
	s.mu.Lock()
	s.drop(c)
	s.mu.Unlock()
	if c.cs != nil {
		go c.cs.Close()
	}
}

// drop removes c from the map if it is still there; s.mu is held.
func (s *sessions) drop(c *callerSession) {
	if s.byKey[c.key] == c {
		delete(s.byKey, c.key)
	}
}

// expire removes the sessions idle past s.idle and returns them, to be
// closed once s.mu is released; s.mu is held.
func (s *sessions) expire() []*callerSession {
	var out []*callerSession
	now := s.now()
	for k, c := range s.byKey {
		if c.inUse == 0 && c.cs != nil && now.Sub(c.used) >= s.idle {
			delete(s.byKey, k)
			out = append(out, c)
		}
	}
	return out
}

// leastRecent returns the open session no call holds that was let go the
// longest ago, or nil; s.mu is held.
func (s *sessions) leastRecent() *callerSession {
	var lru *callerSession
	for _, c := range s.byKey {
		if c.inUse == 0 && c.cs != nil && (lru == nil || c.used.Before(lru.used)) {
			lru = c
		}
	}
	return lru
}

// close closes every session and refuses new ones.
func (s *sessions) close() {
	s.mu.Lock()
	s.closed = true
	var open []*callerSession
	for k, c := range s.byKey {
		delete(s.byKey, k)
		if c.cs != nil {
			open = append(open, c)
		}
	}
	s.mu.Unlock()
	for _, c := range open {
		c.cs.Close()
	}
}

// len returns the number of sessions kept.
func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey)
}
