package nameindex

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// TestAttack46CopiesAtRandom keeps a family of index values, each a copy of
// another changed in place by Put and Delete (as the registry's update
// changes a copy of the current state's indexes, and may discard it), and
// checks every member against its own map after every step: a change of
// one copy never shows in another, whether it was made from the newest of
// its line (marks) or not (a fork), and across compactions.
func TestAttack46CopiesAtRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 1))
	type member struct {
		x    Index[int]
		want map[string]int
	}
	fam := []*member{{want: map[string]int{}}}
	for i := range 300 {
		k := fmt.Sprintf("k%04d", i)
		fam[0].x.Put(k, i)
		fam[0].want[k] = i
	}
	check := func(step int) {
		t.Helper()
		for mi, m := range fam {
			if m.x.Len() != len(m.want) {
				t.Fatalf("step %d, member %d: Len %d, want %d", step, mi, m.x.Len(), len(m.want))
			}
			n := 0
			for k, v := range m.x.After("") {
				if w, ok := m.want[k]; !ok || w != v {
					t.Fatalf("step %d, member %d: %s = %d; want %d, %v", step, mi, k, v, w, ok)
				}
				n++
			}
			if n != len(m.want) {
				t.Fatalf("step %d, member %d: iterates %d, want %d", step, mi, n, len(m.want))
			}
		}
	}
	for step := range 4000 {
		// Mostly the newest member (the registry's path), sometimes an
		// older one (a copy discarded, then one made from the state kept).
		from := fam[len(fam)-1]
		if rng.IntN(4) == 0 {
			from = fam[rng.IntN(len(fam))]
		}
		m := &member{x: from.x, want: maps.Clone(from.want)}
		for range 1 + rng.IntN(3) {
			k := fmt.Sprintf("k%04d", rng.IntN(400))
			if rng.IntN(2) == 0 {
				prev, had := m.x.Delete(k)
				w, ok := m.want[k]
				if had != ok || had && prev != w {
					t.Fatalf("step %d: Delete(%s) = %d, %v; want %d, %v", step, k, prev, had, w, ok)
				}
				delete(m.want, k)
			} else {
				prev, had := m.x.Put(k, step)
				w, ok := m.want[k]
				if had != ok || had && prev != w {
					t.Fatalf("step %d: Put(%s) = %d, %v; want %d, %v", step, k, prev, had, w, ok)
				}
				m.want[k] = step
			}
		}
		fam = append(fam, m)
		if len(fam) > 40 {
			fam = fam[len(fam)-40:]
		}
		if step%50 == 0 {
			check(step)
		}
	}
	check(-1)
}
