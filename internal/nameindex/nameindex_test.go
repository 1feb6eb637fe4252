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
	check(-100, Build(keys, vals), want)
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
