package nameindex

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIndex changes an index at random and checks it against a map after
// each change: lookups, length, order, iteration from any key, and that the
// indexes it was made from are unchanged.
func TestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := &Index[int]{}
	want := map[string]int{}
	type snapshot struct {
		x    *Index[int]
		want map[string]int
	}
	var kept []snapshot
	check := func(step int, x *Index[int], want map[string]int) {
		t.Helper()
		keys := slices.Sorted(maps.Keys(want))
		if x.Len() != len(keys) {
			t.Fatalf("step %d: len %d, want %d", step, x.Len(), len(keys))
		}
		var got []string
		for k, v := range x.After("") {
			if want[k] != v {
				t.Fatalf("step %d: %s = %d, want %d", step, k, v, want[k])
			}
			got = append(got, k)
		}
		if !slices.Equal(got, keys) {
			t.Fatalf("step %d: keys out of order or missing", step)
		}
		for _, g := range x.segs {
			if len(g) == 0 || len(g) > maxSegment {
				t.Fatalf("step %d: a segment of %d chunks", step, len(g))
			}
			for _, c := range g {
				if len(c) == 0 || len(c) > maxChunk {
					t.Fatalf("step %d: a chunk of %d", step, len(c))
				}
			}
		}
		probe := fmt.Sprintf("k%05d", rng.IntN(50_000))
		v, ok := x.Get(probe)
		if wv, wok := want[probe]; ok != wok || v != wv {
			t.Fatalf("step %d: get(%s) = %d, %v; want %d, %v", step, probe, v, ok, wv, wok)
		}
		i, _ := slices.BinarySearch(keys, probe)
		if i < len(keys) && keys[i] == probe {
			i++
		}
		var from []string
		for k := range x.After(probe) {
			from = append(from, k)
		}
		if !slices.Equal(from, keys[i:]) && !(len(from) == 0 && len(keys[i:]) == 0) {
			t.Fatalf("step %d: after(%s) gave %d keys, want %d", step, probe, len(from), len(keys)-i)
		}
	}
	for step := range 200_000 {
		k := fmt.Sprintf("k%05d", rng.IntN(50_000))
		if rng.IntN(3) == 0 {
			x = x.Without(k)
			delete(want, k)
		} else {
			x = x.With(k, step)
			want[k] = step
		}
		if step%10_000 == 0 {
			check(step, x, want)
			kept = append(kept, snapshot{x, maps.Clone(want)})
		}
	}
	check(-1, x, want)
	for i, s := range kept {
		check(-2-i, s.x, s.want)
	}
	keys := slices.Sorted(maps.Keys(want))
	vals := make([]int, len(keys))
	for i, k := range keys {
		vals[i] = want[k]
	}
	built := Build(keys, vals)
	check(-100, &built, want)
	check(-101, &Index[int]{}, map[string]int{})
}

// TestIndexKeepsNoSlack checks that the chunks of an index built one key at
// a time, in order and at random, hold arrays about their own length: a
// registry keeps its indexes for good.
func TestIndexKeepsNoSlack(t *testing.T) {
	const n = 10_000
	for _, order := range []string{"in order", "at random"} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%06d", i)
		}
		if order == "at random" {
			rand.New(rand.NewPCG(3, 4)).Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		}
		x := &Index[int]{}
		for i, k := range keys {
			x = x.With(k, i)
		}
		slots := 0
		for _, g := range x.segs {
			for _, c := range g {
				slots += cap(c)
			}
		}
		if slots > n*5/4 {
			t.Errorf("%s: %d slots for %d keys", order, slots, n)
		}
	}
}

// TestIndexForks changes an index that is no longer the newest of its
// line, as a discarded change would leave it: the marks its line made
// since must not show through, and the fork's own changes must not show
// in the line.
func TestIndexForks(t *testing.T) {
	base, _ := numbered(1_000, "k%04d")
	line := base.Without("k0001").Without("k0500")
	fork := base.Without("k0002").With("k0500", -1).Without("k0999")
	line = line.Without("k0003")

	has := func(x *Index[int], k string) bool { _, ok := x.Get(k); return ok }
	for _, tc := range []struct {
		x      *Index[int]
		key    string
		want   bool
		reason string
	}{
		{base, "k0001", true, "base keeps what its line removed after it"},
		{base, "k0002", true, "base keeps what a fork removed"},
		{line, "k0001", false, "line removed k0001"},
		{line, "k0002", true, "line keeps what the fork removed"},
		{line, "k0500", false, "line removed k0500"},
		{line, "k0999", true, "line keeps what the fork removed"},
		{fork, "k0001", true, "fork keeps what the line removed after base"},
		{fork, "k0003", true, "fork keeps what the line removed later"},
		{fork, "k0002", false, "fork removed k0002"},
		{fork, "k0999", false, "fork removed k0999"},
	} {
		if got := has(tc.x, tc.key); got != tc.want {
			t.Errorf("%s: has(%s) = %v", tc.reason, tc.key, got)
		}
	}
	if v, _ := fork.Get("k0500"); v != -1 {
		t.Errorf("fork's k0500 = %d, want -1", v)
	}
	if base.Len() != 1_000 || line.Len() != 997 || fork.Len() != 998 {
		t.Errorf("lengths base %d, line %d, fork %d; want 1000, 997, 998", base.Len(), line.Len(), fork.Len())
	}
	if n := count(fork); n != fork.Len() {
		t.Errorf("fork iterates %d entries, Len %d", n, fork.Len())
	}
	if n := count(line); n != line.Len() {
		t.Errorf("line iterates %d entries, Len %d", n, line.Len())
	}
}

func count(x *Index[int]) int {
	n := 0
	for range x.All() {
		n++
	}
	return n
}

// TestIndexRemovalCopiesNothing checks that a removal from the newest
// index of its line allocates the index alone, and that the entries it
// keeps marked stay within an eighth of the index (or a chunk).
func TestIndexRemovalCopiesNothing(t *testing.T) {
	const n = 20_000
	x, keys := numbered(n, "k%05d")
	rng := rand.New(rand.NewPCG(5, 6))
	order := rng.Perm(n)
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		x = x.Without(keys[order[i]])
		i++
	})
	if allocs > 1 {
		t.Errorf("a removal allocates %v times, want 1", allocs)
	}
	for ; i < n-10; i++ {
		x = x.Without(keys[order[i]])
		if x.dead > max(maxChunk, x.n/8)+1 {
			t.Fatalf("after %d removals: %d marked entries kept for %d", i+1, x.dead, x.n)
		}
		if x.Len() != n-i-1 {
			t.Fatalf("after %d removals: Len %d", i+1, x.Len())
		}
	}
	if got := count(x); got != 10 {
		t.Errorf("%d entries left, want 10", got)
	}
}

// TestIndexReadersDuringRemovals reads indexes while their line goes on
// removing and adding (for the race detector): each reader sees its own
// index whole.
func TestIndexReadersDuringRemovals(t *testing.T) {
	const n = 2_000
	x, keys := numbered(n, "k%04d")
	snaps := make(chan *Index[int], 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range snaps {
			want := s.Len()
			if got := count(s); got != want {
				t.Errorf("a reader iterated %d entries of %d", got, want)
				return
			}
		}
	}()
	for i := range 4_000 {
		k := keys[(i*7)%n]
		if i%3 == 2 {
			x = x.With(k, i)
		} else {
			x = x.Without(k)
		}
		if i%100 == 0 {
			snaps <- x
		}
	}
	close(snaps)
	<-done
}

// numbered returns the index of n keys named by format from their
// numbers, each mapped to its number, with the keys.
func numbered(n int, format string) (*Index[int], []string) {
	keys := make([]string, n)
	vals := make([]int, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(format, i)
		vals[i] = i
	}
	x := Build(keys, vals)
	return &x, keys
}

// TestValueChanges: Put and Delete change one copy of an index and return
// what the key had; the copy it was made from, and a second copy made from
// that one, read as before; a removal by marking allocates nothing.
func TestValueChanges(t *testing.T) {
	orig, keys := numbered(1000, "k%04d")
	a := *orig
	if v, had := a.Delete(keys[10]); !had || v != 10 {
		t.Errorf("Delete returned %d, %v; want 10, true", v, had)
	}
	if _, had := a.Delete(keys[10]); had {
		t.Error("a second Delete of the key found it")
	}
	if v, had := a.Put(keys[20], -20); !had || v != 20 {
		t.Errorf("Put over a key returned %d, %v; want 20, true", v, had)
	}
	if _, had := a.Put("new", 7); had {
		t.Error("Put of a new key reported a value")
	}
	b := *orig // made from the original after a changed: a fork
	if _, had := b.Delete(keys[30]); !had {
		t.Error("the fork's Delete did not find its key")
	}
	for _, c := range []struct {
		name string
		x    *Index[int]
		want map[string]int
	}{
		{"original", orig, nil},
		{"first copy", &a, map[string]int{keys[10]: -1, keys[20]: -20, "new": 7}},
		{"fork", &b, map[string]int{keys[30]: -1}},
	} {
		for i, k := range keys {
			want, ok := c.want[k]
			if !ok {
				want = i
			}
			got, found := c.x.Get(k)
			if want == -1 && found || want != -1 && (!found || got != want) {
				t.Errorf("%s: %s = %d, %v; want %d", c.name, k, got, found, want)
			}
		}
	}
	if _, found := orig.Get("new"); found {
		t.Error("the original reads the first copy's new key")
	}

	fresh, keys := numbered(1000, "k%04d")
	x := *fresh // the newest of its line: removals mark
	i := 0
	allocs := testing.AllocsPerRun(50, func() {
		x.Delete(keys[i])
		i++
	})
	if allocs != 0 {
		t.Errorf("a removal by marking allocates %v times, want 0", allocs)
	}
}

// TestCompactionSharesCleanChunks: the compaction that a removal past an
// eighth of the index makes keeps no removed entry, and shares the
// chunks that held none, so that removals among a few neighbours copy
// those chunks alone.
func TestCompactionSharesCleanChunks(t *testing.T) {
	x, keys := numbered(4096, "k%05d")
	before := map[*entry[int]]bool{}
	for _, g := range x.segs {
		for _, c := range g {
			before[&c[0]] = true
		}
	}
	// Remove the last keys, one after the other, until a compaction.
	i := len(keys) - 1
	for ; x.dead > 0 || i == len(keys)-1; i-- {
		x = x.Without(keys[i])
	}
	held, shared, chunks := 0, 0, 0
	for _, g := range x.segs {
		for _, c := range g {
			chunks++
			held += len(c)
			if before[&c[0]] {
				shared++
			}
		}
	}
	if held != x.Len() || x.Len() != i+1 {
		t.Errorf("after the compaction: %d entries held, Len %d, want %d", held, x.Len(), i+1)
	}
	if shared < chunks-2 {
		t.Errorf("%d of %d chunks shared after a compaction of removals at the end; want all but the last", shared, chunks)
	}
	for _, k := range keys[:i+1] {
		if _, ok := x.Get(k); !ok {
			t.Fatalf("%s lost in the compaction", k)
		}
	}
}
