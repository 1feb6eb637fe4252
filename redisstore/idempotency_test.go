package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

func TestIdempotencyContract(t *testing.T) {
	t.Run("Redis", func(t *testing.T) {
		testIdempotencyContract(t, func(t *testing.T) middleware.IdempotencyStore {
			s := redistest.Shared(t)
			return redisstore.NewIdempotencyStore(s.Client(t), &redisstore.IdempotencyOptions{Prefix: s.Prefix(t)})
		})
	})
	t.Run("Memory", func(t *testing.T) {
		testIdempotencyContract(t, func(*testing.T) middleware.IdempotencyStore {
			return middleware.NewMemoryIdempotencyStore(nil)
		})
	})
}

func TestIdempotencyExpiry(t *testing.T) {
	s := redistest.Shared(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	store := redisstore.NewIdempotencyStore(c, &redisstore.IdempotencyOptions{Prefix: prefix})
	ctx := context.Background()
	rec := middleware.IdempotencyRecord{Fingerprint: "f", Token: "t1"}

	// The claim lives for its lease, the done record for its ttl.
	store.Claim(ctx, "k", rec, 30*time.Second)
	if ttl, err := c.PTTL(ctx, prefix+"idem:k").Result(); err != nil || ttl <= 29*time.Second || ttl > 30*time.Second {
		t.Errorf("PTTL of a claim with a 30s lease = %v, %v", ttl, err)
	}
	store.Complete(ctx, "k", "t1", []byte("r"), time.Hour)
	if ttl, err := c.PTTL(ctx, prefix+"idem:k").Result(); err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("PTTL of a record completed with a 1h ttl = %v, %v", ttl, err)
	}

	// A lease that runs out frees the key for another claim, and the
	// first claimant has lost it.
	if _, claimed, err := store.Claim(ctx, "lease", rec, 50*time.Millisecond); err != nil || !claimed {
		t.Fatalf("Claim = %v, %v", claimed, err)
	}
	waitGone(t, c, prefix+"idem:lease")
	if _, claimed, err := store.Claim(ctx, "lease", middleware.IdempotencyRecord{Fingerprint: "f", Token: "t2"}, time.Hour); err != nil || !claimed {
		t.Fatalf("Claim after the lease ran out = %v, %v; want claimed", claimed, err)
	}
	if err := store.Complete(ctx, "lease", "t1", []byte("r"), time.Hour); !errors.Is(err, middleware.ErrClaimLost) {
		t.Errorf("Complete by the claimant whose lease ran out = %v, want ErrClaimLost", err)
	}
	if err := store.Release(ctx, "lease", "t1"); !errors.Is(err, middleware.ErrClaimLost) {
		t.Errorf("Release by the claimant whose lease ran out = %v, want ErrClaimLost", err)
	}

	if _, _, err := store.Claim(ctx, "x", rec, 0); err == nil {
		t.Error("Claim with lease 0 succeeded")
	}
	if err := store.Complete(ctx, "k", "t1", nil, -time.Second); err == nil {
		t.Error("Complete with a negative ttl succeeded")
	}
}

func TestIdempotencyMalformedRecord(t *testing.T) {
	s := redistest.Shared(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	store := redisstore.NewIdempotencyStore(c, &redisstore.IdempotencyOptions{Prefix: prefix})
	ctx := context.Background()
	for _, v := range []string{"", "\x02\x01t\x00\x01f", "\x01\x05t", "\x01\x01t\x07\x01f", "\x01\x01t\x00\x09f", "\x01\x01t\x00\x01fresult"} {
		c.Set(ctx, prefix+"idem:k", v, time.Hour)
		_, claimed, err := store.Claim(ctx, "k", middleware.IdempotencyRecord{Token: "t"}, time.Hour)
		if claimed || !errors.Is(err, redisstore.ErrMalformedRecord) {
			t.Errorf("Claim of a key holding %q = %v, %v; want ErrMalformedRecord", v, claimed, err)
		}
	}
	// A value the scripts cannot read is not the caller's claim.
	c.Set(ctx, prefix+"idem:k", "\x01\x01t\x00", time.Hour)
	if err := store.Complete(ctx, "k", "t", nil, time.Hour); err == nil || errors.Is(err, middleware.ErrClaimLost) {
		t.Errorf("Complete of a truncated record = %v, want an error", err)
	}
}

func TestIdempotencyRedisDown(t *testing.T) {
	store := redisstore.NewIdempotencyStore(closedPortClient(t), nil)
	ctx := context.Background()
	if _, claimed, err := store.Claim(ctx, "k", middleware.IdempotencyRecord{Token: "t"}, time.Hour); err == nil || claimed {
		t.Errorf("Claim with Redis down = %v, %v; want an error", claimed, err)
	}
	if err := store.Complete(ctx, "k", "t", nil, time.Hour); err == nil || errors.Is(err, middleware.ErrClaimLost) {
		t.Errorf("Complete with Redis down = %v; want an error that is not ErrClaimLost", err)
	}
	if err := store.Release(ctx, "k", "t"); err == nil || errors.Is(err, middleware.ErrClaimLost) {
		t.Errorf("Release with Redis down = %v; want an error that is not ErrClaimLost", err)
	}
}
