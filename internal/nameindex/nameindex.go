// Package nameindex provides an immutable sorted map from names to values,
// which a change copies in part: the registry of package mcpkit keeps its
// served names, listed names and identities in them.
package nameindex

import (
	"iter"
	"slices"
	"strings"
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
// Chunks and segments are held by value, so that a change allocates four
// times: the chunk's entries, its segment's chunks, the segments, and the
// index.
//
// The zero Index is empty and ready to use.
type Index[V any] struct {
	segs []segment[V] // in order; none empty
	n    int
}

// A segment is a list of chunks, in order; none empty.
type segment[V any] []chunk[V]

// A chunk is a list of entries sorted by key.
type chunk[V any] []entry[V]

type entry[V any] struct {
	key string
	val V
}

const (
	maxChunk   = 64 // entries in a chunk
	maxSegment = 64 // chunks in a segment
)

func (c chunk[V]) last() string   { return c[len(c)-1].key }
func (g segment[V]) last() string { return g[len(g)-1].last() }

// find returns the index of key in c, or where it would be, and whether it
// is there.
func (c chunk[V]) find(key string) (int, bool) {
	return slices.BinarySearchFunc(c, key, func(e entry[V], key string) int { return strings.Compare(e.key, key) })
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
	if !ok {
		return zero, false
	}
	return c[j].val, true
}

// With returns an index that maps key to v, and x otherwise.
func (x *Index[V]) With(key string, v V) *Index[V] {
	if len(x.segs) == 0 {
		return &Index[V]{segs: []segment[V]{{{{key, v}}}}, n: 1}
	}
	si, ci := x.locate(key)
	old := x.segs[si][ci]
	j, found := old.find(key)
	if found {
		c := slices.Clone(old)
		c[j].val = v
		return x.replace(si, ci, c, nil, x.n)
	}
	// The copies are made to measure: an index of a large registry is
	// mostly chunks, and room to grow in each would be kept for good.
	c := make(chunk[V], len(old)+1)
	copy(c, old[:j])
	c[j] = entry[V]{key, v}
	copy(c[j+1:], old[j:])
	if len(c) <= maxChunk {
		return x.replace(si, ci, c, nil, x.n+1)
	}
	// Each half gets an array of its own: a half that shared c's would
	// keep all of it (as the left half does for good when names come in
	// order).
	half := len(c) / 2
	return x.replace(si, ci, slices.Clone(c[:half]), slices.Clone(c[half:]), x.n+1)
}

// Without returns an index without key, and x otherwise.
func (x *Index[V]) Without(key string) *Index[V] {
	if len(x.segs) == 0 {
		return x
	}
	si, ci := x.locate(key)
	old := x.segs[si][ci]
	j, found := old.find(key)
	if !found {
		return x
	}
	var c chunk[V]
	if len(old) > 1 {
		c = make(chunk[V], len(old)-1)
		copy(c, old[:j])
		copy(c[j:], old[j+1:])
	}
	return x.replace(si, ci, c, nil, x.n-1)
}

// replace returns x with chunk ci of segment si replaced by a and b (each
// nil for none) and n entries.
func (x *Index[V]) replace(si, ci int, a, b chunk[V], n int) *Index[V] {
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
	return &Index[V]{segs: segs, n: n}
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
				for _, e := range c {
					if !yield(e.val) {
						return
					}
				}
			}
		}
	}
}

// Build returns the index of keys and vals, given in key order, as a
// full rebuild of the registry makes it.
func Build[V any](keys []string, vals []V) *Index[V] {
	x := &Index[V]{n: len(keys)}
	entries := make(chunk[V], len(keys))
	for i, k := range keys {
		entries[i] = entry[V]{k, vals[i]}
	}
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
