package middleware

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// keys returns the number of keys b holds a bucket for.
func (b *TokenBucket) keys() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buckets)
}

func TestTokenBucketBoundsKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewTokenBucket(1, 2, &TokenBucketOptions{MaxKeys: 3}) // refills in 2s
		for i := range 10 {
			b.Allow(t.Context(), fmt.Sprint("key", i))
			if n := b.keys(); n > 3 {
				t.Fatalf("after %d keys: %d buckets, want at most 3", i+1, n)
			}
		}
		// key9 is held; key0 was pushed out and starts over with a full bucket.
		b.Allow(t.Context(), "key9")
		if ok, _, _ := b.Allow(t.Context(), "key9"); ok {
			t.Error("key9 got a third token in a burst of 2")
		}
		if ok, _, _ := b.Allow(t.Context(), "key0"); !ok {
			t.Error("key0 was not forgotten")
		}

		// Idle keys are dropped as calls arrive, once their buckets are full.
		time.Sleep(2 * time.Second)
		b.Allow(t.Context(), "fresh")
		if n := b.keys(); n != 1 {
			t.Errorf("after the idle time: %d buckets, want 1", n)
		}
	})
}
