package mcpkit

import (
	"slices"
	"sync"
	"sync/atomic"
)

// maxLoggedNames bounds the names a Server's change log keeps: past it, the
// oldest generations are dropped, and ChangedSince no longer reaches back
// to them.
const maxLoggedNames = 4096

// A changeLog records, for the recent generations that changed registered
// names, which served names each changed, so that code deriving something
// from the served tools can bring it up to date with work in proportion to
// the change (see [Server.ChangedSince]).
type changeLog struct {
	mu      sync.Mutex
	entries []loggedChange // oldest first
	names   int            // the names in entries
	floor   uint64         // the oldest generation ChangedSince answers for
}

// loggedChange is one generation's change: the served names it changed,
// one (the most common change: one tool added or removed) or names.
type loggedChange struct {
	gen   uint64
	one   string
	names []string // sorted; nil for one
}

// count returns the number of names c changed.
func (c *loggedChange) count() int { return max(len(c.names), 1) }

// record moves gen on by one, logging names (none twice) as what
// the new generation changed, and returns the new generation. It keeps a
// copy of names, or the name alone. The log's lock is held across both,
// so that ChangedSince never sees a generation without its names. A
// change of more names than the log keeps empties it.
func (l *changeLog) record(gen *atomic.Uint64, names []string) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := gen.Add(1)
	if len(names) == 0 {
		return g
	}
	if len(names) > maxLoggedNames {
		l.entries, l.names, l.floor = nil, 0, g
		return g
	}
	c := loggedChange{gen: g, one: names[0]}
	if len(names) > 1 {
		c.one, c.names = "", slices.Sorted(slices.Values(names))
	}
	l.entries = append(l.entries, c)
	l.names += c.count()
	// The oldest are dropped by slicing, not by moving the others, and
	// cleared so that their names can go: append copies the entries kept
	// when the array is full.
	for l.names > maxLoggedNames {
		l.names -= l.entries[0].count()
		l.floor = l.entries[0].gen
		l.entries[0] = loggedChange{}
		l.entries = l.entries[1:]
	}
	return g
}

// ChangedSince returns the names (as served, after transforms, sorted)
// whose tools may have changed since generation gen of [Server.Generation]:
// added, removed, another version, another definition, enabled or
// disabled. now is the generation the answer reaches: what
// [Server.Lookup] gives for a name not returned is what it gave at gen, as
// far as generation now. A caller that keeps something derived from the
// served tools (a search index, say) looks up the names returned, and keeps
// now as its generation.
//
// ok is false when the server no longer knows: gen is older than the
// changes it keeps (the last 4,096 names changed), or a single change
// concerned more names than that (a transform of every tool, say), or gen
// is not one it has reached. The caller then reads every tool again, with
// [Server.Callable]. Changes of providers' tools change no name here.
//
// Its work is in proportion to the names changed since gen.
func (s *Server) ChangedSince(gen uint64) (names []string, now uint64, ok bool) {
	l := &s.changes
	l.mu.Lock()
	defer l.mu.Unlock()
	now = s.gen.Load()
	if gen < l.floor || gen > now {
		return nil, now, false
	}
	i, _ := slices.BinarySearchFunc(l.entries, gen+1, func(e loggedChange, g uint64) int {
		switch {
		case e.gen < g:
			return -1
		case e.gen > g:
			return 1
		}
		return 0
	})
	for _, e := range l.entries[i:] {
		if e.names == nil {
			names = append(names, e.one)
		} else {
			names = append(names, e.names...)
		}
	}
	if len(l.entries)-i > 1 {
		slices.Sort(names)
		names = slices.Compact(names)
	}
	return names, now, true
}

// Generation returns a number that changes whenever what the server serves
// may have changed: tools added or removed, transforms, middleware,
// visibility, providers, mounted servers. Code that derives something from
// the served tools (a search index, say) keeps the generation it was made
// for, and makes it again when the generation moves on.
func (s *Server) Generation() uint64 { return s.gen.Load() }
