package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

func TestCacheContract(t *testing.T) {
	t.Run("Redis", func(t *testing.T) {
		testCacheContract(t, func(t *testing.T) middleware.Cache {
			s := redistest.Shared(t)
			return redisstore.NewCache(s.Client(t), &redisstore.CacheOptions{Prefix: s.Prefix(t)})
		})
	})
	t.Run("Memory", func(t *testing.T) {
		testCacheContract(t, func(*testing.T) middleware.Cache { return middleware.NewMemoryCache(64 << 20) })
	})
}

func TestCacheTTL(t *testing.T) {
	s := redistest.Shared(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	cache := redisstore.NewCache(c, &redisstore.CacheOptions{Prefix: prefix})
	ctx := context.Background()

	for _, tc := range []struct {
		ttl      time.Duration
		min, max time.Duration
	}{
		{time.Hour, time.Hour - time.Minute, time.Hour},
		{1500 * time.Millisecond, time.Second, 1500 * time.Millisecond},
		{2*time.Second + time.Microsecond, time.Second, 2001 * time.Millisecond}, // rounded up
	} {
		if err := cache.Set(ctx, "k", []byte("v"), tc.ttl); err != nil {
			t.Fatal(err)
		}
		ttl, err := c.PTTL(ctx, prefix+"cache:k").Result()
		if err != nil || ttl <= tc.min || ttl > tc.max {
			t.Errorf("PTTL after Set with ttl %v = %v, %v; want in (%v, %v]", tc.ttl, ttl, err, tc.min, tc.max)
		}
	}

	// A value set for a sub-millisecond ttl lives 1ms, then is gone.
	if err := cache.Set(ctx, "short", []byte("v"), time.Microsecond); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, prefix+"cache:short")
	if _, ok, err := cache.Get(ctx, "short"); ok || err != nil {
		t.Errorf("Get of an expired value = %v, %v; want a miss", ok, err)
	}
}

func TestCacheMaxValueSize(t *testing.T) {
	s := redistest.Shared(t)
	cache := redisstore.NewCache(s.Client(t), &redisstore.CacheOptions{Prefix: s.Prefix(t), MaxValueSize: 10})
	ctx := context.Background()
	if err := cache.Set(ctx, "k", bytes.Repeat([]byte("x"), 10), time.Hour); err != nil {
		t.Fatalf("Set of MaxValueSize bytes: %v", err)
	}
	err := cache.Set(ctx, "k", bytes.Repeat([]byte("y"), 11), time.Hour)
	if !errors.Is(err, redisstore.ErrValueTooLarge) {
		t.Fatalf("Set of MaxValueSize+1 bytes = %v, want ErrValueTooLarge", err)
	}
	t.Logf("error: %v", err)
	if got, ok, err := cache.Get(ctx, "k"); ok || err != nil {
		t.Errorf("Get after a refused Set = %q, %v, %v; want a miss: the Set replaced the earlier value", got, ok, err)
	}

	def := redisstore.NewCache(s.Client(t), &redisstore.CacheOptions{Prefix: s.Prefix(t)})
	if err := def.Set(ctx, "k", make([]byte, redisstore.DefaultMaxValueSize+1), time.Hour); !errors.Is(err, redisstore.ErrValueTooLarge) {
		t.Errorf("Set over DefaultMaxValueSize = %v, want ErrValueTooLarge", err)
	}
}

func TestCacheRedisDown(t *testing.T) {
	cache := redisstore.NewCache(closedPortClient(t), nil)
	ctx := context.Background()
	if _, ok, err := cache.Get(ctx, "k"); err == nil || ok {
		t.Errorf("Get with Redis down = %v, %v; want an error", ok, err)
	}
	if err := cache.Set(ctx, "k", []byte("v"), time.Hour); err == nil {
		t.Error("Set with Redis down succeeded")
	}
}
