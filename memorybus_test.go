package mcpkit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// recorder collects what a subscription's fn receives.
type recorder struct {
	mu  sync.Mutex
	got []string // "<nil>" for a nil payload
}

func (r *recorder) fn(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == nil {
		r.got = append(r.got, "<nil>")
		return
	}
	r.got = append(r.got, string(p))
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func subscribe(t *testing.T, b *MemoryBus, topic string, fn func([]byte)) func() {
	t.Helper()
	unsub, err := b.Subscribe(t.Context(), topic, fn)
	if err != nil {
		t.Fatal(err)
	}
	return unsub
}

// TestMemoryBusDelivers checks that every subscriber of a topic, and only
// those, gets every payload in the order published, as its own copy.
func TestMemoryBusDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewMemoryBus()
		var r1, r2, other recorder
		defer subscribe(t, b, "t", r1.fn)()
		defer subscribe(t, b, "t", r2.fn)()
		defer subscribe(t, b, "u", other.fn)()

		buf := []byte("one")
		for _, p := range []string{"one", "two", "", "three"} {
			buf = append(buf[:0], p...)
			if err := b.Publish(t.Context(), "t", buf); err != nil {
				t.Fatal(err)
			}
			copy(buf, "XXXXX") // the bus must have copied it
		}
		if err := b.Publish(t.Context(), "nobody", []byte("lost")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		want := []string{"one", "two", "", "three"}
		for i, r := range []*recorder{&r1, &r2} {
			if got := r.list(); !slices.Equal(got, want) {
				t.Errorf("subscriber %d got %q, want %q", i, got, want)
			}
		}
		if got := other.list(); len(got) != 0 {
			t.Errorf("subscriber of another topic got %q", got)
		}
	})
}

// TestMemoryBusOrder publishes from several goroutines at once: every
// subscriber sees each publisher's payloads in its order, and all see the
// same interleaving.
func TestMemoryBusOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewMemoryBus()
		var r1, r2 recorder
		defer subscribe(t, b, "t", r1.fn)()
		defer subscribe(t, b, "t", r2.fn)()
		const publishers, each = 4, 50 // 200 < memoryQueue: nothing dropped
		var wg sync.WaitGroup
		for p := range publishers {
			wg.Go(func() {
				for i := range each {
					b.Publish(context.Background(), "t", fmt.Appendf(nil, "%d-%03d", p, i))
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		got := r1.list()
		if len(got) != publishers*each {
			t.Fatalf("got %d payloads, want %d", len(got), publishers*each)
		}
		if !slices.Equal(got, r2.list()) {
			t.Error("the two subscribers saw different orders")
		}
		last := make(map[byte]string)
		for _, p := range got {
			if p <= last[p[0]] {
				t.Errorf("publisher %c: %s after %s", p[0], p, last[p[0]])
			}
			last[p[0]] = p
		}
	})
}

// TestMemoryBusSlowSubscriber fills the queue of a subscriber that does not
// return: the publisher is never blocked, a fast subscriber loses nothing,
// and the slow one, once it catches up, gets what was queued, then one nil,
// then what is published after.
func TestMemoryBusSlowSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewMemoryBus()
		release := make(chan struct{})
		var slow, fast recorder
		defer subscribe(t, b, "t", func(p []byte) {
			if string(p) == "0" {
				<-release
			}
			slow.fn(p)
		})()
		defer subscribe(t, b, "t", fast.fn)()

		b.Publish(t.Context(), "t", []byte("0"))
		synctest.Wait() // the slow fn holds "0"
		const n = memoryQueue + 10
		for i := 1; i <= n; i++ {
			if err := b.Publish(t.Context(), "t", fmt.Append(nil, i)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // the fast one keeps up
		}
		synctest.Wait()
		if got := len(fast.list()); got != n+1 {
			t.Errorf("fast subscriber got %d payloads, want %d", got, n+1)
		}
		close(release)
		synctest.Wait()
		b.Publish(t.Context(), "t", []byte("after"))
		synctest.Wait()

		var want []string
		for i := 0; i <= memoryQueue; i++ {
			want = append(want, fmt.Sprint(i))
		}
		want = append(want, "<nil>", "after")
		if got := slow.list(); !slices.Equal(got, want) {
			t.Errorf("slow subscriber got %d payloads ending %q, want %d ending %q", len(got), got[max(0, len(got)-3):], len(want), want[len(want)-3:])
		}
	})
}

// TestMemoryBusUnsubscribe checks that unsubscribe is idempotent, safe to
// call concurrently, waits for a running fn, and that fn is never called
// after it returns. The bubble ends only if every goroutine has exited.
func TestMemoryBusUnsubscribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewMemoryBus()
		var r recorder
		entered, release := make(chan struct{}), make(chan struct{})
		unsub := subscribe(t, b, "t", func(p []byte) {
			if string(p) == "block" {
				close(entered)
				<-release
			}
			r.fn(p)
		})
		b.Publish(t.Context(), "t", []byte("block"))
		b.Publish(t.Context(), "t", []byte("queued"))
		<-entered
		var wg sync.WaitGroup
		done := make(chan struct{})
		for range 3 {
			wg.Go(unsub)
		}
		go func() { wg.Wait(); close(done) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("unsubscribe returned while fn was running")
		default:
		}
		close(release)
		<-done
		unsub()
		b.Publish(t.Context(), "t", []byte("late"))
		synctest.Wait()
		if got := r.list(); !slices.Equal(got, []string{"block"}) {
			t.Errorf("got %q, want only the payload fn was running with", got)
		}
		b.mu.Lock()
		n := len(b.subs)
		b.mu.Unlock()
		if n != 0 {
			t.Errorf("bus still holds %d topics", n)
		}
	})
}

// TestMemoryBusContextDone ends a subscription by its context.
func TestMemoryBusContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewMemoryBus()
		ctx, cancel := context.WithCancel(t.Context())
		var r recorder
		unsub, err := b.Subscribe(ctx, "t", r.fn)
		if err != nil {
			t.Fatal(err)
		}
		b.Publish(t.Context(), "t", []byte("a"))
		synctest.Wait()
		cancel()
		synctest.Wait()
		b.Publish(t.Context(), "t", []byte("b"))
		synctest.Wait()
		if got := r.list(); !slices.Equal(got, []string{"a"}) {
			t.Errorf("got %q, want [a]", got)
		}
		b.mu.Lock()
		n := len(b.subs)
		b.mu.Unlock()
		if n != 0 {
			t.Errorf("bus still holds %d topics after the context ended", n)
		}
		unsub() // does nothing, and does not block
	})
}

func TestMemoryBusErrors(t *testing.T) {
	b := NewMemoryBus()
	if _, err := b.Subscribe(t.Context(), "t", nil); err == nil || err.Error() != "mcpkit: MemoryBus.Subscribe: nil fn" {
		t.Errorf("Subscribe(nil fn) = %v", err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := b.Subscribe(done, "t", func([]byte) {}); err != context.Canceled {
		t.Errorf("Subscribe(done ctx) = %v, want context.Canceled", err)
	}
	if err := b.Publish(done, "t", nil); err != context.Canceled {
		t.Errorf("Publish(done ctx) = %v, want context.Canceled", err)
	}
}
