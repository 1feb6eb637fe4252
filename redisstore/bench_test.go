package redisstore_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// The benchmarks measure one call's cost against a redis-server on
// loopback: mostly the round trip. The in-memory TokenBucket runs alongside
// the Redis Limiter for scale.

func BenchmarkLimiterAllow(b *testing.B) {
	s := redistest.Shared(b)
	// A budget that never runs out: the benchmark measures the decision.
	limiters := []struct {
		name string
		l    middleware.Limiter
	}{
		{"Redis", redisstore.NewLimiter(s.Client(b), 1e6, 1e6, &redisstore.LimiterOptions{Prefix: s.Prefix(b)})},
		{"TokenBucket", middleware.NewTokenBucket(rate.Limit(1e6), 1e6, nil)},
	}
	ctx := context.Background()
	for _, lim := range limiters {
		b.Run(lim.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := lim.l.Allow(ctx, "user-1"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(lim.name+"/Parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := lim.l.Allow(ctx, "user-1"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkCacheGetHit(b *testing.B) {
	s := redistest.Shared(b)
	cache := redisstore.NewCache(s.Client(b), &redisstore.CacheOptions{Prefix: s.Prefix(b)})
	ctx := context.Background()
	value := bytes.Repeat([]byte("x"), 1024)
	if err := cache.Set(ctx, "k", value, time.Hour); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := cache.Get(ctx, "k"); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkClaimComplete(b *testing.B) {
	s := redistest.Shared(b)
	store := redisstore.NewIdempotencyStore(s.Client(b), &redisstore.IdempotencyOptions{Prefix: s.Prefix(b)})
	ctx := context.Background()
	result := bytes.Repeat([]byte("r"), 256)
	rec := middleware.IdempotencyRecord{Fingerprint: "tool@1:0123456789abcdef0123456789abcdef", Token: "token-0123456789"}
	keys := make([]string, 0, 1<<16)
	for i := range cap(keys) {
		keys = append(keys, "key-"+strconv.Itoa(i))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		key := keys[i%len(keys)]
		i++
		if _, claimed, err := store.Claim(ctx, key, rec, time.Minute); err != nil {
			b.Fatal(err)
		} else if !claimed {
			// A key reused after len(keys) rounds: free it, outside the
			// pair measured.
			b.StopTimer()
			if err := store.Release(ctx, key, rec.Token); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, _, err := store.Claim(ctx, key, rec, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
		if err := store.Complete(ctx, key, rec.Token, result, time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPublish(b *testing.B) {
	s := redistest.Shared(b)
	bus := redisstore.NewEventBus(s.Client(b), &redisstore.EventBusOptions{Prefix: s.Prefix(b)})
	b.Cleanup(func() { bus.Close() })
	ctx := context.Background()
	payload := []byte(`{"tool":"search","version":"2"}`)
	b.Run("NoSubscriber", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := bus.Publish(ctx, "none", payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("OneSubscriber", func(b *testing.B) {
		unsubscribe, err := bus.Subscribe(ctx, "one", func([]byte) {})
		if err != nil {
			b.Fatal(err)
		}
		defer unsubscribe()
		b.ReportAllocs()
		for b.Loop() {
			if err := bus.Publish(ctx, "one", payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}
