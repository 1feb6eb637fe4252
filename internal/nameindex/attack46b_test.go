package nameindex

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// atk46bSnap is an index kept as it was, with what it must hold.
type atk46bSnap struct {
	x    Index[int]
	want map[string]int
	fork bool
}

// check compares s.x with s.want: Len, Get of every key ever present,
// and After from a random key.
func (s *atk46bSnap) check(t *testing.T, rng *rand.Rand, keys []string, when string) {
	t.Helper()
	if s.x.Len() != len(s.want) {
		t.Fatalf("%s: Len %d, want %d", when, s.x.Len(), len(s.want))
	}
	for _, k := range keys {
		v, ok := s.x.Get(k)
		w, wok := s.want[k]
		if ok != wok || v != w {
			t.Fatalf("%s: Get(%s) = %d, %v; want %d, %v", when, k, v, ok, w, wok)
		}
	}
	from := keys[rng.IntN(len(keys))]
	var got []string
	for k, v := range s.x.After(from) {
		if s.want[k] != v {
			t.Fatalf("%s: After(%s) yields %s = %d, want %d", when, from, k, v, s.want[k])
		}
		got = append(got, k)
	}
	var want []string
	for _, k := range slices.Sorted(maps.Keys(s.want)) {
		if k > from {
			want = append(want, k)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: After(%s) yields %d keys, want %d", when, from, len(got), len(want))
	}
}

// TestAttack46bCompactionsKeepSnapshots removes keys in random order from
// an index of 2,000, one at a time from the newest (marks, then a
// compaction each time the removed pass an eighth), keeping a snapshot
// after every removal, while readers look up and iterate old snapshots
// (run with -race). Now and then a snapshot is forked (a copy of an index
// that is no longer the newest of its line) and removes keys of its own,
// past a compaction too. Every snapshot, old and forked, must still hold
// exactly what it held, and compactions must have happened on both paths.
func TestAttack46bCompactionsKeepSnapshots(t *testing.T) {
	const n = 2000
	rng := rand.New(rand.NewPCG(46, 5))
	x, keys := numbered(n, "k%05d")
	want := map[string]int{}
	for i, k := range keys {
		want[k] = i
	}
	snaps := []*atk46bSnap{{x: *x, want: maps.Clone(want)}}
	var mu sync.Mutex // guards snaps for the readers
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(r), 6))
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				s := snaps[rr.IntN(len(snaps))]
				mu.Unlock()
				k := keys[rr.IntN(n)]
				v, ok := s.x.Get(k)
				if w, wok := s.want[k]; ok != wok || v != w {
					t.Errorf("reader: Get(%s) = %d, %v; want %d, %v", k, v, ok, w, wok)
					return
				}
				c := 0
				for range s.x.After(k) {
					if c++; c == 70 { // across a chunk's end
						break
					}
				}
			}
		}()
	}
	compactions, forkCompactions := 0, 0
	order := rng.Perm(n)
	for step, i := range order[:n*3/4] {
		cur := snaps[len(snaps)-1]
		y := cur.x
		dead := y.dead
		if _, had := y.Delete(keys[i]); !had {
			t.Fatalf("step %d: Delete(%s) had nothing", step, keys[i])
		}
		if y.dead == 0 && dead > 0 {
			compactions++
		}
		w := maps.Clone(cur.want)
		delete(w, keys[i])
		mu.Lock()
		snaps = append(snaps, &atk46bSnap{x: y, want: w})
		mu.Unlock()
		if step%97 == 50 {
			// A fork from an older snapshot removes keys of its own,
			// past a compaction (more than an eighth and a chunk).
			old := snaps[rng.IntN(len(snaps)-1)]
			f := &atk46bSnap{x: old.x, want: maps.Clone(old.want), fork: true}
			for _, k := range slices.Sorted(maps.Keys(f.want)) {
				if len(f.want) <= old.x.Len()*3/4 {
					break
				}
				if rng.IntN(3) != 0 {
					continue
				}
				fd := f.x.dead
				if _, had := f.x.Delete(k); !had {
					t.Fatalf("fork: Delete(%s) had nothing", k)
				}
				if f.x.dead == 0 && fd > 0 {
					forkCompactions++
				}
				delete(f.want, k)
			}
			f.check(t, rng, keys, fmt.Sprintf("step %d, the fork", step))
			mu.Lock()
			snaps = append(snaps, f)
			mu.Unlock()
			// The fork is not the newest of the line: go on from the
			// newest of the line.
			mu.Lock()
			snaps = append(snaps, snaps[len(snaps)-2])
			mu.Unlock()
		}
		if step%151 == 0 {
			for si, s := range snaps {
				if si%29 == step%29 {
					s.check(t, rng, keys, fmt.Sprintf("step %d, snapshot %d", step, si))
				}
			}
		}
	}
	close(stop)
	wg.Wait()
	for si, s := range snaps {
		if s.fork || si%13 == 0 {
			s.check(t, rng, keys, fmt.Sprintf("at the end, snapshot %d", si))
		}
	}
	if compactions < 2 || forkCompactions == 0 {
		t.Errorf("compactions: %d of the line, %d of forks; want 2 and more, and some", compactions, forkCompactions)
	}
	// The newest, put and deleted in after the compactions.
	last := snaps[len(snaps)-1]
	y := last.x
	w := maps.Clone(last.want)
	for _, i := range order[n*3/4:] {
		if rng.IntN(2) == 0 {
			y.Put(keys[i]+"b", -i)
			w[keys[i]+"b"] = -i
		}
		y.Delete(keys[i])
		delete(w, keys[i])
	}
	(&atk46bSnap{x: y, want: w}).check(t, rng, keys, "after the rest")
	last.check(t, rng, keys, "the snapshot before the rest")
}

// TestAttack46bDeleteEverything deletes every key in random order, from
// the newest and from a copy kept at each compaction, until the index is
// empty, then puts keys back: the empty index left by a compaction is a
// usable index, and the copies kept are as they were.
func TestAttack46bDeleteEverything(t *testing.T) {
	const n = 600
	rng := rand.New(rand.NewPCG(46, 9))
	x, keys := numbered(n, "k%04d")
	y := *x
	want := map[string]int{}
	for i, k := range keys {
		want[k] = i
	}
	var kept []*atk46bSnap
	for _, i := range rng.Perm(n) {
		dead := y.dead
		if _, had := y.Delete(keys[i]); !had {
			t.Fatalf("Delete(%s) had nothing", keys[i])
		}
		delete(want, keys[i])
		if y.dead == 0 && dead > 0 {
			kept = append(kept, &atk46bSnap{x: y, want: maps.Clone(want)})
		}
	}
	if y.Len() != 0 || len(kept) == 0 {
		t.Fatalf("Len %d after deleting everything; %d compactions", y.Len(), len(kept))
	}
	for k := range y.After("") {
		t.Fatalf("the empty index yields %s", k)
	}
	if _, ok := y.Get(keys[0]); ok {
		t.Fatal("the empty index has a key")
	}
	for i, k := range keys[:100] {
		y.Put(k, -i)
		want[k] = -i
	}
	(&atk46bSnap{x: y, want: want}).check(t, rng, keys, "put back")
	for i, s := range kept {
		s.check(t, rng, keys, fmt.Sprintf("compaction %d", i))
	}
}
