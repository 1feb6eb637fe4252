package middleware

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMemoryCacheBound sets keys and values of random sizes and checks
// that the bytes held never exceed the bound and are counted right.
func TestMemoryCacheBound(t *testing.T) {
	const max = 1000
	c := NewMemoryCache(max)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		key := fmt.Sprint(r.IntN(100))
		ttl := time.Duration(r.IntN(3)) * time.Hour // some zero: deletes
		c.Set(t.Context(), key, make([]byte, r.IntN(300)), ttl)
		if i%3 == 0 {
			c.Get(t.Context(), fmt.Sprint(r.IntN(100)))
		}
		var sum int64
		for _, el := range c.entries {
			sum += el.Value.(*cacheEntry).bytes()
		}
		if c.size != sum || c.size > max || c.lru.Len() != len(c.entries) {
			t.Fatalf("step %d: size %d, entries hold %d, bound %d, %d in the list and %d in the map", i, c.size, sum, max, c.lru.Len(), len(c.entries))
		}
	}
}

// TestMemoryIdempotencyStoreBound does the same for the idempotency store.
func TestMemoryIdempotencyStoreBound(t *testing.T) {
	const max = 2000
	s := NewMemoryIdempotencyStore(&MemoryIdempotencyStoreOptions{MaxBytes: max})
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		key := fmt.Sprint(r.IntN(100))
		tok := fmt.Sprint(i)
		if _, claimed, _ := s.Claim(t.Context(), key, IdempotencyRecord{Fingerprint: "fp", Token: tok}, time.Hour); claimed {
			switch r.IntN(3) {
			case 0:
				s.Complete(t.Context(), key, tok, make([]byte, r.IntN(500)), time.Hour)
			case 1:
				s.Release(t.Context(), key, tok)
			}
		}
		var sum int64
		for _, el := range s.records {
			sum += el.Value.(*idemEntry).bytes()
		}
		if s.size != sum || s.size > max || s.lru.Len() != len(s.records) {
			t.Fatalf("step %d: size %d, records hold %d, bound %d", i, s.size, sum, max)
		}
	}
}
