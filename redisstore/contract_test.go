package redisstore_test

// The behavioural checks of the store interfaces, written against the
// interfaces alone (middleware and mcpkit, the testing package, nothing of
// Redis), so that they can run against every implementation: the Redis ones
// here, the in-memory ones in the main module. They do not depend on wall
// time: rates are so slow that nothing refills during a test, and leases so
// long that nothing expires.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit"
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

// testCacheContract checks a Cache made by newCache.
func testCacheContract(t *testing.T, newCache func(t *testing.T) middleware.Cache) {
	ctx := context.Background()

	t.Run("RoundTrip", func(t *testing.T) {
		c := newCache(t)
		for _, v := range [][]byte{[]byte("v"), {}, {0, 1, 2, 0xff, 0}, bytes.Repeat([]byte("x"), 100_000)} {
			if err := c.Set(ctx, "k", v, time.Hour); err != nil {
				t.Fatal(err)
			}
			got, ok, err := c.Get(ctx, "k")
			if err != nil || !ok || !bytes.Equal(got, v) {
				t.Fatalf("Get after Set(%d bytes) = %d bytes, %v, %v", len(v), len(got), ok, err)
			}
		}
	})

	t.Run("Missing", func(t *testing.T) {
		c := newCache(t)
		got, ok, err := c.Get(ctx, "never set")
		if err != nil || ok || got != nil {
			t.Errorf("Get of a missing key = %q, %v, %v; want nil, false, nil", got, ok, err)
		}
	})

	t.Run("KeysApart", func(t *testing.T) {
		c := newCache(t)
		keys := []string{"a", "b", "", "a:b", "A"}
		for _, k := range keys {
			if err := c.Set(ctx, k, []byte("value of "+k), time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range keys {
			got, ok, err := c.Get(ctx, k)
			if err != nil || !ok || string(got) != "value of "+k {
				t.Errorf("Get(%q) = %q, %v, %v", k, got, ok, err)
			}
		}
	})

	t.Run("Overwrite", func(t *testing.T) {
		c := newCache(t)
		c.Set(ctx, "k", []byte("old"), time.Hour)
		c.Set(ctx, "k", []byte("new"), time.Hour)
		if got, _, _ := c.Get(ctx, "k"); string(got) != "new" {
			t.Errorf("Get after two Sets = %q, want the second value", got)
		}
	})

	t.Run("NonPositiveTTLRemoves", func(t *testing.T) {
		c := newCache(t)
		for _, ttl := range []time.Duration{0, -time.Second} {
			if err := c.Set(ctx, "k", []byte("old"), time.Hour); err != nil {
				t.Fatal(err)
			}
			if err := c.Set(ctx, "k", []byte("new"), ttl); err != nil {
				t.Fatal(err)
			}
			if got, ok, err := c.Get(ctx, "k"); ok || err != nil {
				t.Errorf("Get after Set with ttl %v = %q, %v, %v; want a miss", ttl, got, ok, err)
			}
		}
	})

	t.Run("ValueNotShared", func(t *testing.T) {
		// Changing the slice given to Set or returned by Get changes
		// nothing stored.
		c := newCache(t)
		v := []byte("abc")
		c.Set(ctx, "k", v, time.Hour)
		v[0] = 'X'
		got, _, _ := c.Get(ctx, "k")
		if string(got) != "abc" {
			t.Fatalf("Get = %q after the caller changed its slice, want abc", got)
		}
		got[1] = 'Y'
		if again, _, _ := c.Get(ctx, "k"); string(again) != "abc" {
			t.Errorf("Get = %q after the caller changed a returned slice, want abc", again)
		}
	})
}

// testIdempotencyContract checks an IdempotencyStore made by newStore. Its
// leases and ttls are long: nothing expires during the test.
func testIdempotencyContract(t *testing.T, newStore func(t *testing.T) middleware.IdempotencyStore) {
	ctx := context.Background()
	rec := func(token string) middleware.IdempotencyRecord {
		return middleware.IdempotencyRecord{Fingerprint: "tool@1:{\"a\":1}", Token: token}
	}

	t.Run("ClaimThenExisting", func(t *testing.T) {
		s := newStore(t)
		got, claimed, err := s.Claim(ctx, "k", rec("t1"), time.Hour)
		if err != nil || !claimed {
			t.Fatalf("first Claim = %+v, %v, %v; want claimed", got, claimed, err)
		}
		got, claimed, err = s.Claim(ctx, "k", middleware.IdempotencyRecord{Fingerprint: "other", Token: "t2"}, time.Hour)
		if err != nil || claimed {
			t.Fatalf("second Claim = %v, %v; want the existing record", claimed, err)
		}
		want := middleware.IdempotencyRecord{Fingerprint: "tool@1:{\"a\":1}", Token: "t1"}
		if got.Fingerprint != want.Fingerprint || got.Token != want.Token || got.Done || len(got.Result) != 0 {
			t.Errorf("existing record = %+v, want %+v", got, want)
		}
	})

	t.Run("CompleteThenExisting", func(t *testing.T) {
		s := newStore(t)
		s.Claim(ctx, "k", rec("t1"), time.Hour)
		result := []byte(`{"content":[{"type":"text","text":"done"}]}` + "\x00\xff")
		if err := s.Complete(ctx, "k", "t1", result, time.Hour); err != nil {
			t.Fatal(err)
		}
		got, claimed, err := s.Claim(ctx, "k", rec("t2"), time.Hour)
		if err != nil || claimed {
			t.Fatalf("Claim after Complete = %v, %v; want the existing record", claimed, err)
		}
		if !got.Done || !bytes.Equal(got.Result, result) || got.Token != "t1" || got.Fingerprint != rec("").Fingerprint {
			t.Errorf("record after Complete = %+v, want done with the result", got)
		}
	})

	t.Run("ReleaseThenClaimAgain", func(t *testing.T) {
		s := newStore(t)
		s.Claim(ctx, "k", rec("t1"), time.Hour)
		if err := s.Release(ctx, "k", "t1"); err != nil {
			t.Fatal(err)
		}
		if _, claimed, err := s.Claim(ctx, "k", rec("t2"), time.Hour); err != nil || !claimed {
			t.Errorf("Claim after Release = %v, %v; want claimed", claimed, err)
		}
	})

	t.Run("WrongToken", func(t *testing.T) {
		s := newStore(t)
		s.Claim(ctx, "k", rec("t1"), time.Hour)
		// Tokens that share a beginning with the real one, or that it
		// begins with, are other tokens.
		for _, tok := range []string{"t2", "t", "t10", "", "T1"} {
			if err := s.Complete(ctx, "k", tok, []byte("r"), time.Hour); !errors.Is(err, middleware.ErrClaimLost) {
				t.Errorf("Complete with token %q = %v, want ErrClaimLost", tok, err)
			}
			if err := s.Release(ctx, "k", tok); !errors.Is(err, middleware.ErrClaimLost) {
				t.Errorf("Release with token %q = %v, want ErrClaimLost", tok, err)
			}
		}
		// The record is untouched.
		got, claimed, err := s.Claim(ctx, "k", rec("t3"), time.Hour)
		if err != nil || claimed || got.Token != "t1" || got.Done {
			t.Errorf("record after wrong tokens = %+v, %v, %v; want t1's, running", got, claimed, err)
		}
	})

	t.Run("OnlyARunningClaimEnds", func(t *testing.T) {
		// Once completed, a record is no claimant's any more: neither a
		// second Complete nor a Release changes it.
		s := newStore(t)
		s.Claim(ctx, "k", rec("t1"), time.Hour)
		if err := s.Complete(ctx, "k", "t1", []byte("first"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, "k", "t1", []byte("second"), time.Hour); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("second Complete = %v, want ErrClaimLost", err)
		}
		if err := s.Release(ctx, "k", "t1"); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("Release after Complete = %v, want ErrClaimLost", err)
		}
		got, claimed, err := s.Claim(ctx, "k", rec("t2"), time.Hour)
		if err != nil || claimed || !got.Done || string(got.Result) != "first" {
			t.Errorf("record = %+v, %v, %v; want done with the first result", got, claimed, err)
		}
	})

	t.Run("GoneKey", func(t *testing.T) {
		s := newStore(t)
		if err := s.Complete(ctx, "never claimed", "t1", []byte("r"), time.Hour); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("Complete of a missing key = %v, want ErrClaimLost", err)
		}
		if err := s.Release(ctx, "never claimed", "t1"); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("Release of a missing key = %v, want ErrClaimLost", err)
		}
		s.Claim(ctx, "k", rec("t1"), time.Hour)
		s.Release(ctx, "k", "t1")
		if err := s.Release(ctx, "k", "t1"); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("second Release = %v, want ErrClaimLost", err)
		}
	})

	t.Run("LongFields", func(t *testing.T) {
		// Lengths that take more than one byte to encode, in a
		// length-prefixed form.
		s := newStore(t)
		r := middleware.IdempotencyRecord{Fingerprint: strings.Repeat("f", 300), Token: strings.Repeat("t", 200)}
		s.Claim(ctx, "k", r, time.Hour)
		result := bytes.Repeat([]byte("r"), 70_000)
		if err := s.Complete(ctx, "k", r.Token, result, time.Hour); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Claim(ctx, "k", rec("x"), time.Hour)
		if err != nil || got.Fingerprint != r.Fingerprint || got.Token != r.Token || !got.Done || !bytes.Equal(got.Result, result) {
			t.Errorf("record = fingerprint %d bytes, token %d bytes, done %v, result %d bytes, %v",
				len(got.Fingerprint), len(got.Token), got.Done, len(got.Result), err)
		}
	})

	t.Run("ClaimOnceConcurrently", func(t *testing.T) {
		s := newStore(t)
		const n = 32
		var claimed atomic.Int64
		var winner atomic.Value
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				tok := fmt.Sprint("t", i)
				got, ok, err := s.Claim(ctx, "k", rec(tok), time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					claimed.Add(1)
					winner.Store(tok)
				} else if got.Token == tok {
					t.Errorf("Claim by %s not claimed but returned its own record", tok)
				}
			})
		}
		wg.Wait()
		if c := claimed.Load(); c != 1 {
			t.Fatalf("%d of %d concurrent Claims claimed, want exactly 1", c, n)
		}
		got, _, _ := s.Claim(ctx, "k", rec("late"), time.Hour)
		if got.Token != winner.Load() {
			t.Errorf("record carries token %q, want the winner's, %q", got.Token, winner.Load())
		}
	})
}

// eventWait bounds every wait for an event: far above any delivery time,
// so that it only ends tests that would otherwise hang.
const eventWait = 10 * time.Second

// sink collects the payloads a subscription delivers.
type sink struct {
	name string
	ch   chan []byte
}

func newSink(name string) *sink { return &sink{name: name, ch: make(chan []byte, 1024)} }

func (s *sink) fn(p []byte) { s.ch <- p }

// next returns the next payload delivered, nil included.
func (s *sink) next(t *testing.T) []byte {
	t.Helper()
	select {
	case p := <-s.ch:
		return p
	case <-time.After(eventWait):
		t.Fatalf("%s: no event within %v", s.name, eventWait)
		return nil
	}
}

// expect checks that the next payloads delivered are want, in order.
func (s *sink) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		p := s.next(t)
		if p == nil || string(p) != w {
			t.Fatalf("%s: got payload %q (nil: %v), want %q", s.name, p, p == nil, w)
		}
	}
}

func publish(t *testing.T, bus mcpkit.EventBus, topic string, payloads ...string) {
	t.Helper()
	for _, p := range payloads {
		if err := bus.Publish(context.Background(), topic, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
}

func subscribe(t *testing.T, bus mcpkit.EventBus, topic string, fn func([]byte)) func() {
	t.Helper()
	unsubscribe, err := bus.Subscribe(context.Background(), topic, fn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unsubscribe)
	return unsubscribe
}

// testEventBusContract checks an EventBus made by newBus, in one process.
func testEventBusContract(t *testing.T, newBus func(t *testing.T) mcpkit.EventBus) {
	t.Run("PublishReachesSubscribersOfTheTopic", func(t *testing.T) {
		bus := newBus(t)
		a, b, other := newSink("a"), newSink("b"), newSink("other")
		subscribe(t, bus, "t", a.fn)
		subscribe(t, bus, "t", b.fn)
		subscribe(t, bus, "u", other.fn)
		publish(t, bus, "t", "1", "2", "3")
		publish(t, bus, "u", "x")
		a.expect(t, "1", "2", "3")
		b.expect(t, "1", "2", "3")
		other.expect(t, "x")
	})

	t.Run("Payloads", func(t *testing.T) {
		// Empty and nil payloads arrive empty, never nil (which means
		// "reconnected"); bytes arrive as they were.
		bus := newBus(t)
		s := newSink("s")
		subscribe(t, bus, "t", s.fn)
		ctx := context.Background()
		for _, p := range [][]byte{{}, nil, {0, 0xff, '\n', 0}} {
			if err := bus.Publish(ctx, "t", p); err != nil {
				t.Fatal(err)
			}
			got := s.next(t)
			if got == nil || !bytes.Equal(got, p) {
				t.Errorf("published %q, delivered %q (nil: %v)", p, got, got == nil)
			}
		}
	})

	t.Run("Unsubscribe", func(t *testing.T) {
		bus := newBus(t)
		var gone atomic.Bool
		a := newSink("a")
		unsubscribe := subscribe(t, bus, "t", func(p []byte) {
			if gone.Load() {
				t.Errorf("payload %q delivered after unsubscribe returned", p)
			}
			a.fn(p)
		})
		b := newSink("b")
		subscribe(t, bus, "t", b.fn)
		publish(t, bus, "t", "before")
		a.expect(t, "before")
		b.expect(t, "before")
		unsubscribe()
		gone.Store(true)
		unsubscribe() // again: nothing happens
		publish(t, bus, "t", "after")
		b.expect(t, "after")
	})

	t.Run("ContextEndsSubscription", func(t *testing.T) {
		// A payload published once Subscribe's ctx is done reaches fn no
		// more, without unsubscribe.
		bus := newBus(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var done atomic.Bool
		s := newSink("s")
		unsubscribe, err := bus.Subscribe(ctx, "t", func(p []byte) {
			if done.Load() {
				t.Errorf("payload %q delivered after ctx was done", p)
			}
			s.fn(p)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(unsubscribe) // after ctx is done: nothing happens
		publish(t, bus, "t", "before")
		s.expect(t, "before")
		cancel()
		done.Store(true)
		control := newSink("control")
		subscribe(t, bus, "t", control.fn)
		publish(t, bus, "t", "1", "2", "3")
		control.expect(t, "1", "2", "3")
	})

	t.Run("SerialCallsInOrder", func(t *testing.T) {
		bus := newBus(t)
		var inFn atomic.Int64
		s := newSink("s")
		subscribe(t, bus, "t", func(p []byte) {
			if inFn.Add(1) != 1 {
				t.Error("fn called concurrently")
			}
			runtime.Gosched()
			inFn.Add(-1)
			s.fn(p)
		})
		const n = 200
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range n {
				publish(t, bus, "t", fmt.Sprint(i))
			}
		})
		for i := range n {
			s.expect(t, fmt.Sprint(i))
		}
		wg.Wait()
	})
}

// testEventBusReplicas checks that two buses a and b, as two replicas have
// them, reach each other's subscribers.
func testEventBusReplicas(t *testing.T, a, b mcpkit.EventBus) {
	onA, onB := newSink("on a"), newSink("on b")
	subscribe(t, a, "t", onA.fn)
	subscribe(t, b, "t", onB.fn)
	publish(t, a, "t", "from a")
	onA.expect(t, "from a")
	onB.expect(t, "from a")
	publish(t, b, "t", "from b")
	onA.expect(t, "from b")
	onB.expect(t, "from b")
}
