package nameindex

import (
	"sync"
	"testing"
)

// TestAttack45GetDuringMarking looks names up (Get, After from a key: the
// paths that binary-search a chunk) in an index while its line marks
// entries of the chunks it shares. Run with -race: a lookup must not read
// an entry's mark but atomically.
func TestAttack45GetDuringMarking(t *testing.T) {
	const n = 512
	x, keys := numbered(n, "k%04d")
	base := x
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[(i*13+r)%n]
				if _, ok := base.Get(k); !ok {
					t.Errorf("base lost %s", k)
					return
				}
				for range base.After(k) {
					break
				}
			}
		}()
	}
	// Fewer removals than a compaction needs: every one marks in place.
	for i := range maxChunk {
		x = x.Without(keys[(i*7)%n])
	}
	close(stop)
	wg.Wait()
	if base.Len() != n {
		t.Errorf("base Len %d", base.Len())
	}
}
