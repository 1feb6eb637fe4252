// Package nameindex provides an immutable sorted map from names to values,
// which a change copies in part: the registry of package mcpkit keeps its
// served names, listed names and identities in them.
package nameindex

import (
	"iter"
	"slices"
	"strings"
	"sync/atomic"
)

// An Index is an immutable map from names to values, in name order. It is
// a tree of two levels: segments of up to maxSegment chunks of up to
// maxChunk entries. A change makes a new index that shares
// all but one chunk and one segment with the old one: it copies that chunk,
// that segment's list of chunks, and the list of segments, each short, so
// a change costs about the same at 1,000,000 names as at 100, and readers
// of the old index are not disturbed. A lookup is three binary searches;
// iteration from a name is in order.
//
// A removal from the newest index of a line (see lineage) copies nothing:
// it marks the entry removed as of the generation of the index it makes,
// which is one more than the old one's, and readers of an index ignore
// the entries marked at or below their own generation. Removed entries are
// swept from a chunk the next time it is copied, and all of them when they
// grow to an eighth of the index (see Without).
//
// Chunks and segments are held by value, so that a copying change
// allocates three times: the chunk's entries, its segment's chunks, and
// the segments. An Index is itself a value: a copy shares the chunks of
// its original, and [Index.Put] and [Index.Delete] change one without the
// other, so that an index kept in a larger structure costs no allocation
// of its own ([Index.With] and [Index.Without] return a new one).
//
// The zero Index is empty and ready to use.
type Index[V any] struct {
	segs []segment[V] // in order; none empty
	n    int          // entries not removed as of gen
	dead int          // entries of segs removed as of gen

	// gen is the index's generation in line, which marks removals in place
	// (nil for an index that may not: one made from an index that was not
	// the newest of its line).
	gen  uint64
	line *lineage
}

// A lineage is the history of one index through its changes: the indexes
// made one from the other, each from the newest. Only the newest may mark
// an entry removed in the chunks they share, since a mark is seen by the
// indexes of its generation and after.
type lineage struct {
	head atomic.Uint64 // the generation of the newest index of the line
}

// A segment is a list of chunks, in order; none empty.
type segment[V any] []chunk[V]

// A chunk is a list of entries sorted by key.
type chunk[V any] []entry[V]

type entry[V any] struct {
	key string
	val V

	// gone is the generation of the index that removed the entry, 0 while
	// no index has; read and written atomically, since it is written in
	// chunks older indexes share.
	gone uint64
}

const (
	maxChunk   = 64 // entries in a chunk
	maxSegment = 64 // chunks in a segment
)

func (c chunk[V]) last() string   { return c[len(c)-1].key }
func (g segment[V]) last() string { return g[len(g)-1].last() }

// find returns the index of key in c, or where it would be, and whether it
// is there (removed or not). It reads the keys alone: an entry's gone
// field is written while other indexes read the chunk.
func (c chunk[V]) find(key string) (int, bool) {
	lo, hi := 0, len(c)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c[m].key < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(c) && c[lo].key == key
}

// removed reports whether e is removed as of x's generation.
func (x *Index[V]) removed(e *entry[V]) bool {
	g := atomic.LoadUint64(&e.gone)
	return g != 0 && g <= x.gen
}

// next returns the generation and line of an index made from x: the next
// generation of x's line when x is its newest, which the line then
// records; otherwise x's own generation and no line, so that the index
// made reads the marks of the chunks it shares with x as x does, and
// makes none.
func (x *Index[V]) next() (uint64, *lineage) {
	if x.line != nil && x.line.head.CompareAndSwap(x.gen, x.gen+1) {
		return x.gen + 1, x.line
	}
	return x.gen, nil
}

// live returns a copy of c without the entries removed as of x's
// generation, with room for extra more, and how many it left out. The
// copy is unmarked: it belongs to the index being made alone.
func (x *Index[V]) live(c chunk[V], extra int) (chunk[V], int) {
	swept := 0
	for i := range c {
		if x.removed(&c[i]) {
			swept++
		}
	}
	out := make(chunk[V], 0, len(c)-swept+extra)
	for i := range c {
		if !x.removed(&c[i]) {
			out = append(out, entry[V]{key: c[i].key, val: c[i].val})
		}
	}
	return out, swept
}

// Len returns the number of entries.
func (x *Index[V]) Len() int { return x.n }

// locate returns the segment and the chunk within it that hold key or
// would hold it: the first whose last key is not below key, or the last.
func (x *Index[V]) locate(key string) (si, ci int) {
	si, _ = slices.BinarySearchFunc(x.segs, key, func(g segment[V], key string) int { return strings.Compare(g.last(), key) })
	si = min(si, len(x.segs)-1)
	g := x.segs[si]
	ci, _ = slices.BinarySearchFunc(g, key, func(c chunk[V], key string) int { return strings.Compare(c.last(), key) })
	return si, min(ci, len(g)-1)
}

// Get returns the value of key.
func (x *Index[V]) Get(key string) (V, bool) {
	var zero V
	if len(x.segs) == 0 {
		return zero, false
	}
	si, ci := x.locate(key)
	c := x.segs[si][ci]
	j, ok := c.find(key)
	if !ok || x.removed(&c[j]) {
		return zero, false
	}
	return c[j].val, true
}

// With returns an index that maps key to v, and x otherwise.
func (x *Index[V]) With(key string, v V) *Index[V] {
	y := *x
	y.Put(key, v)
	return &y
}

// Put maps key to v in x, and returns the value key had, if any. The
// indexes x was copied from, or that were copied from x, are left as they
// were: an Index is a value, and a copy shares what it can with its
// original.
func (x *Index[V]) Put(key string, v V) (prev V, had bool) {
	if len(x.segs) == 0 {
		*x = Index[V]{segs: []segment[V]{{{{key: key, val: v}}}}, n: 1, line: new(lineage)}
		return prev, false
	}
	si, ci := x.locate(key)
	old := x.segs[si][ci]
	// The copies are made to measure: an index of a large registry is
	// mostly chunks, and room to grow in each would be kept for good.
	j, found := old.find(key)
	found = found && !x.removed(&old[j])
	n := x.n
	if found {
		prev, had = old[j].val, true
	} else {
		n++
	}
	c, swept := x.live(old, n-x.n)
	if j, found := c.find(key); found {
		c[j].val = v
	} else {
		c = slices.Insert(c, j, entry[V]{key: key, val: v})
	}
	if len(c) <= maxChunk {
		x.replace(si, ci, c, nil, n, swept)
		return prev, had
	}
	// Each half gets an array of its own: a half that shared c's would
	// keep all of it (as the left half does for good when names come in
	// order).
	half := len(c) / 2
	x.replace(si, ci, slices.Clone(c[:half]), slices.Clone(c[half:]), n, swept)
	return prev, had
}

// Without returns an index without key, and x otherwise.
func (x *Index[V]) Without(key string) *Index[V] {
	y := *x
	y.Delete(key)
	return &y
}

// Delete removes key from x, and returns the value it had, if any; the
// indexes x was copied from, or that were copied from x, are left as they
// were (see Put).
//
// In the newest index of its line, it marks key's entry removed and
// shares all of x's chunks, unless the removed entries would then be an
// eighth of the index and more than a chunk: it then makes the index
// anew without them, so that they are not kept for long, at a cost in
// proportion to the index, every eighth of its length in removals.
func (x *Index[V]) Delete(key string) (prev V, had bool) {
	if len(x.segs) == 0 {
		return prev, false
	}
	si, ci := x.locate(key)
	old := x.segs[si][ci]
	j, found := old.find(key)
	if !found || x.removed(&old[j]) {
		return prev, false
	}
	prev = old[j].val
	if dead := x.dead + 1; dead > maxChunk && dead > (x.n-1)/8 {
		*x = x.compact(key)
		return prev, true
	}
	gen, line := x.next()
	if line != nil {
		atomic.StoreUint64(&old[j].gone, gen)
		x.n, x.dead, x.gen, x.line = x.n-1, x.dead+1, gen, line
		return prev, true
	}
	c, swept := x.live(old, 0)
	if k, ok := c.find(key); ok {
		c = slices.Delete(c, k, k+1)
	}
	if len(c) == 0 {
		c = nil
	}
	x.replace(si, ci, c, nil, x.n-1, swept)
	return prev, true
}

// compact returns x without key and without the entries removed as of its
// generation. The chunks that hold none of them are shared, and so are the
// segments of such chunks alone; the others are copied without them. The
// index made is made from x (see next): the chunks it shares carry no mark
// of its line's generations up to x's, and the marks of later generations
// are for the indexes made from it.
func (x *Index[V]) compact(key string) Index[V] {
	segs := make([]segment[V], 0, len(x.segs))
	n := 0
	for _, g := range x.segs {
		var copied segment[V] // nil while g's chunks are shared
		for ci, c := range g {
			if !x.sweeps(c, key) {
				n += len(c)
				if copied != nil {
					copied = append(copied, c)
				}
				continue
			}
			if copied == nil {
				copied = make(segment[V], ci, len(g))
				copy(copied, g[:ci])
			}
			live := make(chunk[V], 0, len(c))
			for i := range c {
				if !x.removed(&c[i]) && c[i].key != key {
					live = append(live, entry[V]{key: c[i].key, val: c[i].val})
				}
			}
			if len(live) > 0 {
				copied = append(copied, live)
				n += len(live)
			}
		}
		switch {
		case copied == nil:
			segs = append(segs, g)
		case len(copied) > 0:
			segs = append(segs, copied)
		}
	}
	gen, line := x.next()
	return Index[V]{segs: segs, n: n, gen: gen, line: line}
}

// sweeps reports whether c holds key or an entry removed as of x's
// generation.
func (x *Index[V]) sweeps(c chunk[V], key string) bool {
	for i := range c {
		if x.removed(&c[i]) || c[i].key == key {
			return true
		}
	}
	return false
}

// replace makes x an index made from x (see next) with chunk ci of
// segment si replaced by a and b (each nil for none), n entries, and
// swept fewer removed entries.
func (x *Index[V]) replace(si, ci int, a, b chunk[V], n, swept int) {
	old := x.segs[si]
	g := make(segment[V], 0, len(old)+1)
	g = append(g, old[:ci]...)
	for _, c := range []chunk[V]{a, b} {
		if c != nil {
			g = append(g, c)
		}
	}
	g = append(g, old[ci+1:]...)
	segs := make([]segment[V], 0, len(x.segs)+1)
	segs = append(segs, x.segs[:si]...)
	switch {
	case len(g) == 0:
	case len(g) > maxSegment:
		half := len(g) / 2
		segs = append(segs, g[:half:half], g[half:])
	default:
		segs = append(segs, g)
	}
	segs = append(segs, x.segs[si+1:]...)
	gen, line := x.next()
	*x = Index[V]{segs: segs, n: n, dead: x.dead - swept, gen: gen, line: line}
}

// After yields the entries whose keys come after the key after, in order
// ("" yields them all).
func (x *Index[V]) After(after string) iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		if len(x.segs) == 0 {
			return
		}
		si, ci, from := 0, 0, after
		if from != "" {
			si, ci = x.locate(from)
		}
		for ; si < len(x.segs); si, ci = si+1, 0 {
			for g := x.segs[si]; ci < len(g); ci++ {
				c := g[ci]
				j := 0
				if from != "" {
					var found bool
					j, found = c.find(from)
					if found {
						j++
					}
					from = ""
				}
				for ; j < len(c); j++ {
					if x.removed(&c[j]) {
						continue
					}
					if !yield(c[j].key, c[j].val) {
						return
					}
				}
			}
		}
	}
}

// All yields every value, in key order.
func (x *Index[V]) All() iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, g := range x.segs {
			for _, c := range g {
				for i := range c {
					if x.removed(&c[i]) {
						continue
					}
					if !yield(c[i].val) {
						return
					}
				}
			}
		}
	}
}

// Build returns the index of keys and vals, given in key order, as a
// full rebuild of the registry makes it.
func Build[V any](keys []string, vals []V) Index[V] {
	entries := make(chunk[V], len(keys))
	for i, k := range keys {
		entries[i] = entry[V]{key: k, val: vals[i]}
	}
	return chunked(entries)
}

// chunked returns the index of entries, in key order and unmarked, cut
// into chunks half full.
func chunked[V any](entries chunk[V]) Index[V] {
	x := Index[V]{n: len(entries), line: new(lineage)}
	const fill, segFill = maxChunk / 2, maxSegment / 2
	for i := 0; i < len(entries); i += fill {
		if len(x.segs) == 0 || len(x.segs[len(x.segs)-1]) == segFill {
			x.segs = append(x.segs, make(segment[V], 0, segFill))
		}
		end := min(i+fill, len(entries))
		g := &x.segs[len(x.segs)-1]
		*g = append(*g, entries[i:end:end])
	}
	return x
}
