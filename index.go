package mcpkit

import (
	"iter"
	"slices"
	"strings"
)

// An index is an immutable map from names to values, in name order, that
// the registry's state holds (the served names, the listed ones, the
// identities). A change makes a new index that shares all but one chunk of
// the old one: it copies that chunk (at most maxChunk entries) and the list
// of chunk pointers (one per chunk), so a change costs about the same at
// 100,000 names as at 100, and readers of the old index are not disturbed.
// A lookup is two binary searches; iteration from a name is in order.
//
// The zero index is empty and ready to use.
type index[V any] struct {
	chunks []*chunk[V] // in order; none empty
	n      int
}

type chunk[V any] struct {
	keys []string // sorted
	vals []V
}

// maxChunk is the most entries a chunk holds: a change copies one chunk and
// the chunk list, so that the two stay small together up to a few million
// names.
const maxChunk = 256

// find returns the index of the chunk that holds key or would hold it: the
// first whose last key is not below key, or the last chunk.
func (x *index[V]) find(key string) int {
	i, _ := slices.BinarySearchFunc(x.chunks, key, func(c *chunk[V], key string) int {
		return strings.Compare(c.keys[len(c.keys)-1], key)
	})
	return min(i, len(x.chunks)-1)
}

// get returns the value of key.
func (x *index[V]) get(key string) (V, bool) {
	var zero V
	if len(x.chunks) == 0 {
		return zero, false
	}
	c := x.chunks[x.find(key)]
	j, ok := slices.BinarySearch(c.keys, key)
	if !ok {
		return zero, false
	}
	return c.vals[j], true
}

// len returns the number of entries.
func (x *index[V]) len() int { return x.n }

// with returns an index that maps key to v, and x otherwise.
func (x *index[V]) with(key string, v V) *index[V] {
	if len(x.chunks) == 0 {
		return &index[V]{chunks: []*chunk[V]{{keys: []string{key}, vals: []V{v}}}, n: 1}
	}
	i := x.find(key)
	old := x.chunks[i]
	j, found := slices.BinarySearch(old.keys, key)
	c := &chunk[V]{keys: slices.Clone(old.keys), vals: slices.Clone(old.vals)}
	n := x.n
	if found {
		c.vals[j] = v
	} else {
		c.keys = slices.Insert(c.keys, j, key)
		c.vals = slices.Insert(c.vals, j, v)
		n++
	}
	chunks := make([]*chunk[V], 0, len(x.chunks)+1)
	chunks = append(chunks, x.chunks[:i]...)
	if len(c.keys) > maxChunk {
		half := len(c.keys) / 2
		chunks = append(chunks,
			&chunk[V]{keys: c.keys[:half:half], vals: c.vals[:half:half]},
			&chunk[V]{keys: c.keys[half:], vals: c.vals[half:]})
	} else {
		chunks = append(chunks, c)
	}
	chunks = append(chunks, x.chunks[i+1:]...)
	return &index[V]{chunks: chunks, n: n}
}

// without returns an index without key, and x otherwise.
func (x *index[V]) without(key string) *index[V] {
	if len(x.chunks) == 0 {
		return x
	}
	i := x.find(key)
	old := x.chunks[i]
	j, found := slices.BinarySearch(old.keys, key)
	if !found {
		return x
	}
	chunks := make([]*chunk[V], 0, len(x.chunks))
	chunks = append(chunks, x.chunks[:i]...)
	if len(old.keys) > 1 {
		chunks = append(chunks, &chunk[V]{
			keys: slices.Delete(slices.Clone(old.keys), j, j+1),
			vals: slices.Delete(slices.Clone(old.vals), j, j+1),
		})
	}
	chunks = append(chunks, x.chunks[i+1:]...)
	return &index[V]{chunks: chunks, n: x.n - 1}
}

// after yields the entries whose keys come after the key after, in order
// ("" yields them all).
func (x *index[V]) after(after string) iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		if len(x.chunks) == 0 {
			return
		}
		i, from := 0, after
		if from != "" {
			i = x.find(from)
		}
		for ; i < len(x.chunks); i++ {
			c := x.chunks[i]
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

// all yields every value, in key order.
func (x *index[V]) all() iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, c := range x.chunks {
			for _, v := range c.vals {
				if !yield(v) {
					return
				}
			}
		}
	}
}

// buildIndex returns the index of keys and vals, given in key order, as a
// full rebuild of the registry makes it; it keeps both slices.
func buildIndex[V any](keys []string, vals []V) *index[V] {
	x := &index[V]{n: len(keys)}
	const fill = maxChunk / 2
	for i := 0; i < len(keys); i += fill {
		end := min(i+fill, len(keys))
		x.chunks = append(x.chunks, &chunk[V]{keys: keys[i:end:end], vals: vals[i:end:end]})
	}
	return x
}
