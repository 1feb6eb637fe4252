package visibility

import (
	"maps"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// A checkCache maps tools, by identity, to the checks that the Require
// rules of one rule set compiled for them, so that Allowed costs a map
// lookup and no allocation.
//
// The server hands Allowed the same *mcpkit.Tool for a tool version until
// its registry or middleware changes, and then new ones. The cache must not
// keep the old ones alive (a server that adds and removes tools while its
// rules stay the same would otherwise hold every tool it ever served), so
// it is keyed by address and each entry holds a weak pointer that says
// whether the address still belongs to the tool the entry was made for.
// Go's garbage collector does not move heap objects; if it did, a moved
// tool would only miss the cache and be compiled again.
//
// Reads take no lock: read is an immutable map. New entries go to dirty,
// under mu, which is merged into a new read map once it has grown to half
// the size of read (so merges cost O(1) per entry, amortized), or once as
// many lookups were answered from it as it has entries (as sync.Map
// promotes its dirty map), so that a warm cache is read without locking.
// A merge drops the entries whose tool is gone.
//
// The cache is generic over what it keeps checks for: a tool, or a target of
// another kind ([mcpkit.Prompt]), each kind in a cache of its own.
type checkCache[T any] struct {
	compile func(*T) []Predicate

	read   atomic.Pointer[map[uintptr]*checks[T]]
	mu     sync.Mutex
	dirty  map[uintptr]*checks[T]
	misses int // lookups answered from dirty since the last merge
}

// checks are the per-request checks of one tool (or other target).
type checks[T any] struct {
	tool weak.Pointer[T]
	all  []Predicate // every one must hold
}

func newCheckCache[T any](compile func(*T) []Predicate) *checkCache[T] {
	c := &checkCache[T]{compile: compile, dirty: map[uintptr]*checks[T]{}}
	c.read.Store(&map[uintptr]*checks[T]{})
	return c
}

// get returns t's checks, compiling them on the first call for t.
func (c *checkCache[T]) get(t *T) []Predicate {
	key := uintptr(unsafe.Pointer(t))
	if e := (*c.read.Load())[key]; e != nil && e.tool.Value() == t {
		return e.all
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	read := *c.read.Load()
	if e := c.dirty[key]; e != nil && e.tool.Value() == t {
		if c.misses++; c.misses >= len(c.dirty) {
			c.merge(read)
		}
		return e.all
	}
	e := &checks[T]{tool: weak.Make(t), all: c.compile(t)}
	c.dirty[key] = e
	if len(c.dirty) > len(read)/2 {
		c.merge(read)
	}
	return e.all
}

// merge makes read and dirty the new read map, without the entries whose
// tool is gone. c.mu is held.
func (c *checkCache[T]) merge(read map[uintptr]*checks[T]) {
	merged := make(map[uintptr]*checks[T], len(read)+len(c.dirty))
	for k, e := range read {
		if e.tool.Value() != nil {
			merged[k] = e
		}
	}
	maps.Copy(merged, c.dirty)
	c.read.Store(&merged)
	c.dirty, c.misses = map[uintptr]*checks[T]{}, 0
}
