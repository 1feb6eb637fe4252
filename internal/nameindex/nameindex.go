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
// The zero Index is empty and ready to use.
type Index[V any] struct {
	segs []*segment[V] // in order; none empty
	n    int
}

type segment[V any] struct {
	chunks []*chunk[V] // in order; none empty
}

type chunk[V any] struct {
	keys []string // sorted
	vals []V
}

const (
	maxChunk   = 64 // entries in a chunk
	maxSegment = 64 // chunks in a segment
)

func (c *chunk[V]) last() string   { return c.keys[len(c.keys)-1] }
func (g *segment[V]) last() string { return g.chunks[len(g.chunks)-1].last() }

// Len returns the number of entries.
func (x *Index[V]) Len() int { return x.n }

// locate returns the segment and the chunk within it that hold key or
// would hold it: the first whose last key is not below key, or the last.
func (x *Index[V]) locate(key string) (si, ci int) {
	si, _ = slices.BinarySearchFunc(x.segs, key, func(g *segment[V], key string) int { return strings.Compare(g.last(), key) })
	si = min(si, len(x.segs)-1)
	g := x.segs[si]
	ci, _ = slices.BinarySearchFunc(g.chunks, key, func(c *chunk[V], key string) int { return strings.Compare(c.last(), key) })
	return si, min(ci, len(g.chunks)-1)
}

// Get returns the value of key.
func (x *Index[V]) Get(key string) (V, bool) {
	var zero V
	if len(x.segs) == 0 {
		return zero, false
	}
	si, ci := x.locate(key)
	c := x.segs[si].chunks[ci]
	j, ok := slices.BinarySearch(c.keys, key)
	if !ok {
		return zero, false
	}
	return c.vals[j], true
}

// With returns an index that maps key to v, and x otherwise.
func (x *Index[V]) With(key string, v V) *Index[V] {
	if len(x.segs) == 0 {
		c := &chunk[V]{keys: []string{key}, vals: []V{v}}
		return &Index[V]{segs: []*segment[V]{{chunks: []*chunk[V]{c}}}, n: 1}
	}
	si, ci := x.locate(key)
	old := x.segs[si].chunks[ci]
	j, found := slices.BinarySearch(old.keys, key)
	if found {
		c := &chunk[V]{keys: old.keys, vals: slices.Clone(old.vals)}
		c.vals[j] = v
		return x.replace(si, ci, []*chunk[V]{c}, x.n)
	}
	// The copies are made to measure: an index of a large registry is
	// mostly chunks, and room to grow in each would be kept for good.
	c := &chunk[V]{keys: inserted(old.keys, j, key), vals: inserted(old.vals, j, v)}
	return x.replace(si, ci, split(c, maxChunk), x.n+1)
}

// inserted returns a copy of s, of its length, with v inserted at i.
func inserted[T any](s []T, i int, v T) []T {
	out := make([]T, len(s)+1)
	copy(out, s[:i])
	out[i] = v
	copy(out[i+1:], s[i:])
	return out
}

// deleted returns a copy of s, of its length, without s[i].
func deleted[T any](s []T, i int) []T {
	out := make([]T, len(s)-1)
	copy(out, s[:i])
	copy(out[i:], s[i+1:])
	return out
}

// Without returns an index without key, and x otherwise.
func (x *Index[V]) Without(key string) *Index[V] {
	if len(x.segs) == 0 {
		return x
	}
	si, ci := x.locate(key)
	old := x.segs[si].chunks[ci]
	j, found := slices.BinarySearch(old.keys, key)
	if !found {
		return x
	}
	var cs []*chunk[V]
	if len(old.keys) > 1 {
		cs = []*chunk[V]{{keys: deleted(old.keys, j), vals: deleted(old.vals, j)}}
	}
	return x.replace(si, ci, cs, x.n-1)
}

// replace returns x with chunk ci of segment si replaced by cs (none, one
// or two chunks) and n entries.
func (x *Index[V]) replace(si, ci int, cs []*chunk[V], n int) *Index[V] {
	old := x.segs[si]
	chunks := make([]*chunk[V], 0, len(old.chunks)+1)
	chunks = append(chunks, old.chunks[:ci]...)
	chunks = append(chunks, cs...)
	chunks = append(chunks, old.chunks[ci+1:]...)
	var gs []*segment[V]
	switch {
	case len(chunks) == 0:
	case len(chunks) > maxSegment:
		half := len(chunks) / 2
		gs = []*segment[V]{{chunks: chunks[:half:half]}, {chunks: chunks[half:]}}
	default:
		gs = []*segment[V]{{chunks: chunks}}
	}
	segs := make([]*segment[V], 0, len(x.segs)+1)
	segs = append(segs, x.segs[:si]...)
	segs = append(segs, gs...)
	segs = append(segs, x.segs[si+1:]...)
	return &Index[V]{segs: segs, n: n}
}

// split returns c, or its two halves when it holds more than limit.
func split[V any](c *chunk[V], limit int) []*chunk[V] {
	if len(c.keys) <= limit {
		return []*chunk[V]{c}
	}
	// Each half gets arrays of its own: a half that shared c's would keep
	// all of it (as the left half does for good when names come in order).
	half := len(c.keys) / 2
	return []*chunk[V]{
		{keys: slices.Clone(c.keys[:half]), vals: slices.Clone(c.vals[:half])},
		{keys: slices.Clone(c.keys[half:]), vals: slices.Clone(c.vals[half:])},
	}
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
			for g := x.segs[si]; ci < len(g.chunks); ci++ {
				c := g.chunks[ci]
				j := 0
				if from != "" {
					var found bool
					j, found = slices.BinarySearch(c.keys, from)
					if found {
						j++
					}
					from = ""
				}
				for ; j < len(c.keys); j++ {
					if !yield(c.keys[j], c.vals[j]) {
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
			for _, c := range g.chunks {
				for _, v := range c.vals {
					if !yield(v) {
						return
					}
				}
			}
		}
	}
}

// Build returns the index of keys and vals, given in key order, as a
// full rebuild of the registry makes it; it keeps both slices.
func Build[V any](keys []string, vals []V) *Index[V] {
	x := &Index[V]{n: len(keys)}
	const fill, segFill = maxChunk / 2, maxSegment / 2
	var g *segment[V]
	for i := 0; i < len(keys); i += fill {
		if g == nil || len(g.chunks) == segFill {
			g = &segment[V]{}
			x.segs = append(x.segs, g)
		}
		end := min(i+fill, len(keys))
		g.chunks = append(g.chunks, &chunk[V]{keys: keys[i:end:end], vals: vals[i:end:end]})
	}
	return x
}
