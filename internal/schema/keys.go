package schema

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// keySet is the set of the property names of one object that are not
// names of its schema, kept to find a name given twice. Its names are
// st.keys[base:], the top of that stack. Up to maxLinearKeys of them are
// compared one by one; beyond, they are indexed by a hash table that is
// st.ktab[tab:tab+size], the top of that stack: objects nest, and the one
// whose names are being read is always the innermost open one. Both
// stacks live in the pooled state, so that even an object of a million
// names allocates nothing once the pool holds a state large enough.
type keySet struct {
	base int
	tab  int
	size int // of the table, a power of two; 0 while there is none
}

// maxLinearKeys is the number of names of one object up to which a
// duplicate is looked for by comparing with each.
const maxLinearKeys = 32

// addKey adds k to ks and reports whether ks already had it.
func (st *state) addKey(ks *keySet, k keyRef) bool {
	b := st.keyBytes(k)
	if st.hasKey(ks, b) {
		return true
	}
	st.keys = append(st.keys, k)
	n := len(st.keys) - ks.base
	switch {
	case ks.size > 0 && 2*n <= ks.size:
		st.index(ks, n-1, b)
	case ks.size > 0 || n > maxLinearKeys:
		st.rehash(ks, max(4*n, 4*maxLinearKeys))
	}
	return false
}

// hasKey reports whether ks holds the name b.
func (st *state) hasKey(ks *keySet, b []byte) bool {
	if ks.size == 0 {
		for _, o := range st.keys[ks.base:] {
			if bytes.Equal(st.keyBytes(o), b) {
				return true
			}
		}
		return false
	}
	tab := st.ktab[ks.tab : ks.tab+ks.size]
	mask := uint64(ks.size - 1)
	for i := maphash.Bytes(st.seed, b) & mask; tab[i] != 0; i = (i + 1) & mask {
		if bytes.Equal(st.keyBytes(st.keys[ks.base+int(tab[i])-1]), b) {
			return true
		}
	}
	return false
}

// index enters the name b, the k-th of ks, in its table, which has room.
func (st *state) index(ks *keySet, k int, b []byte) {
	tab := st.ktab[ks.tab : ks.tab+ks.size]
	mask := uint64(ks.size - 1)
	i := maphash.Bytes(st.seed, b) & mask
	for tab[i] != 0 {
		i = (i + 1) & mask
	}
	tab[i] = int32(k + 1) // 0 is an empty slot
}

// rehash gives ks a table of at least want slots, at the top of st.ktab,
// holding all its names.
func (st *state) rehash(ks *keySet, want int) {
	size := 1
	for size < want {
		size <<= 1
	}
	if ks.size == 0 {
		ks.tab = len(st.ktab)
	}
	ks.size = size
	st.ktab = slices.Grow(st.ktab[:ks.tab], size)[:ks.tab+size]
	clear(st.ktab[ks.tab:])
	for k, o := range st.keys[ks.base:] {
		st.index(ks, k, st.keyBytes(o))
	}
}

// dropKeys pops ks, whose object is closed, off the stacks.
func (st *state) dropKeys(ks *keySet) {
	st.keys = st.keys[:ks.base]
	if ks.size > 0 {
		st.ktab = st.ktab[:ks.tab]
	}
}
