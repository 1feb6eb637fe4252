package redisstore_test

import (
	"context"
	"math"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

func TestLimiterContract(t *testing.T) {
	t.Run("Redis", func(t *testing.T) {
		testLimiterContract(t, func(t *testing.T, r float64, burst int) middleware.Limiter {
			s := redistest.Shared(t)
			return redisstore.NewLimiter(s.Client(t), r, burst, &redisstore.LimiterOptions{Prefix: s.Prefix(t)})
		})
	})
	// The contract holds for the in-memory limiter too.
	t.Run("TokenBucket", func(t *testing.T) {
		testLimiterContract(t, func(t *testing.T, r float64, burst int) middleware.Limiter {
			return middleware.NewTokenBucket(rate.Limit(r), burst, nil)
		})
	})
}

func TestLimiterReplicasShareBudget(t *testing.T) {
	t.Run("Redis", func(t *testing.T) {
		s := redistest.Shared(t)
		prefix := s.Prefix(t)
		testLimiterReplicas(t, func() middleware.Limiter {
			// A client each, as two processes would have.
			return redisstore.NewLimiter(s.Client(t), 1.0/3600, 4, &redisstore.LimiterOptions{Prefix: prefix})
		})
	})
	// Replicas in one process share one TokenBucket.
	t.Run("TokenBucket", func(t *testing.T) {
		l := middleware.NewTokenBucket(rate.Limit(1.0/3600), 4, nil)
		testLimiterReplicas(t, func() middleware.Limiter { return l })
	})
}

func TestLimiterKeysExpireWhenIdle(t *testing.T) {
	s := redistest.Shared(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	ctx := context.Background()

	// 1 call a second, burst 5: after 3 calls the budget is full again in
	// 3s at most, and the key lives no longer than that.
	l := redisstore.NewLimiter(c, 1, 5, &redisstore.LimiterOptions{Prefix: prefix})
	for range 3 {
		l.Allow(ctx, "k")
	}
	ttl, err := c.PTTL(ctx, prefix+"rl:k").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > 3*time.Second {
		t.Errorf("PTTL after 3 calls at 1/s = %v, want in (0, 3s]", ttl)
	}

	// 100 calls a second: the key of one call lives 10ms; wait until
	// Redis has dropped it.
	fast := redisstore.NewLimiter(c, 100, 5, &redisstore.LimiterOptions{Prefix: prefix})
	if ok, _, err := fast.Allow(ctx, "fast"); err != nil || !ok {
		t.Fatalf("Allow = %v, %v", ok, err)
	}
	ttl, err = c.PTTL(ctx, prefix+"rl:fast").Result()
	if err != nil || ttl > 10*time.Millisecond {
		t.Fatalf("PTTL after one call at 100/s = %v, %v; want at most 10ms", ttl, err)
	}
	waitGone(t, c, prefix+"rl:fast")
}

func TestLimiterFailsClosed(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	l := redisstore.NewLimiter(c, 1, 5, &redisstore.LimiterOptions{Prefix: s.Prefix(t)})
	ctx := context.Background()
	if ok, _, err := l.Allow(ctx, "k"); err != nil || !ok {
		t.Fatalf("with Redis up: Allow = %v, %v", ok, err)
	}

	s.Stop(t)
	ok, after, err := l.Allow(ctx, "k")
	if err == nil || ok || after != 0 {
		t.Fatalf("with Redis down: Allow = %v, %v, %v; want false, 0, an error", ok, after, err)
	}
	t.Logf("error with Redis down: %v", err)

	s.Restart(t)
	if ok, _, err := l.Allow(ctx, "k"); err != nil || !ok {
		t.Fatalf("with Redis back: Allow = %v, %v", ok, err)
	}
}

func TestLimiterFailsClosedOnClosedPort(t *testing.T) {
	l := redisstore.NewLimiter(closedPortClient(t), 1, 5, nil)
	if ok, _, err := l.Allow(context.Background(), "k"); err == nil || ok {
		t.Fatalf("Allow = %v, %v; want false and an error", ok, err)
	}
}

func TestNewLimiterPanicsOnInvalidLimits(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		burst int
	}{{0, 1}, {-1, 1}, {math.NaN(), 1}, {math.Inf(1), 1}, {1, 0}, {1, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewLimiter(rate %v, burst %d) did not panic", tc.rate, tc.burst)
				}
			}()
			redisstore.NewLimiter(nil, tc.rate, tc.burst, nil)
		}()
	}
}
