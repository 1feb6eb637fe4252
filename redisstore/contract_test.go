package redisstore_test

// The behavioural checks of the store interfaces, written against the
// interfaces alone (middleware and mcpkit, the testing package, nothing of
// Redis), so that they can run against every implementation: the Redis ones
// here, the in-memory ones in the main module. They do not depend on wall
// time: rates are so slow that nothing refills during a test, and leases so
// long that nothing expires.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/middleware"
)

// testLimiterContract checks a Limiter made by newLimiter, which allows
// rate calls per second per key with bursts of burst.
func testLimiterContract(t *testing.T, newLimiter func(t *testing.T, rate float64, burst int) middleware.Limiter) {
	const hourly = 1.0 / 3600 // nothing refills during the test
	ctx := context.Background()

	t.Run("BurstThenRefuse", func(t *testing.T) {
		l := newLimiter(t, hourly, 3)
		for i := range 3 {
			ok, after, err := l.Allow(ctx, "k")
			if err != nil || !ok || after != 0 {
				t.Fatalf("call %d: Allow = %v, %v, %v; want true, 0, nil", i+1, ok, after, err)
			}
		}
		for i := range 2 {
			ok, after, err := l.Allow(ctx, "k")
			if err != nil || ok {
				t.Fatalf("call %d over the burst: Allow = %v, %v, %v; want false", i+1, ok, after, err)
			}
			// The next token is one interval (an hour) away, less the
			// little time the test took.
			if after <= time.Hour-time.Minute || after > time.Hour {
				t.Errorf("call %d over the burst: retryAfter = %v, want just under 1h", i+1, after)
			}
		}
	})

	t.Run("KeysApart", func(t *testing.T) {
		l := newLimiter(t, hourly, 1)
		if ok, _, err := l.Allow(ctx, "a"); err != nil || !ok {
			t.Fatalf("first call for a: %v, %v", ok, err)
		}
		if ok, _, err := l.Allow(ctx, "a"); err != nil || ok {
			t.Fatalf("second call for a: %v, %v; want refused", ok, err)
		}
		for _, key := range []string{"b", "", "a:b", "A"} {
			if ok, _, err := l.Allow(ctx, key); err != nil || !ok {
				t.Errorf("first call for %q: %v, %v; want allowed", key, ok, err)
			}
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		const burst, goroutines, calls = 37, 16, 8
		l := newLimiter(t, hourly, burst)
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range calls {
					ok, _, err := l.Allow(ctx, "k")
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						allowed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if n := allowed.Load(); n != burst {
			t.Errorf("%d of %d concurrent calls allowed, want exactly the burst, %d", n, goroutines*calls, burst)
		}
	})

	t.Run("RetryAfterAtSteadyRate", func(t *testing.T) {
		// Once the burst is spent, a call may wait at most one interval.
		l := newLimiter(t, 10, 2)
		for range 2 {
			l.Allow(ctx, "k")
		}
		ok, after, err := l.Allow(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if !ok && (after <= 0 || after > 100*time.Millisecond) {
			t.Errorf("retryAfter = %v, want in (0, 100ms]", after)
		}
	})
}

// testLimiterReplicas checks that Limiters made by newReplica (the same
// limit, on the same shared store) count against one budget, as replicas
// behind a load balancer must.
func testLimiterReplicas(t *testing.T, newReplica func() middleware.Limiter) {
	ctx := context.Background()
	a, b := newReplica(), newReplica()
	var allowed int
	for i := range 10 {
		l := a
		if i%2 == 1 {
			l = b
		}
		ok, _, err := l.Allow(ctx, "shared")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		}
	}
	if allowed != 4 {
		t.Errorf("two replicas allowed %d calls in all, want the burst of one budget, 4", allowed)
	}
}
