package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// newRedisBus returns an EventBus on the shared Redis, under a prefix of
// t's own, closed when t ends.
func newRedisBus(t *testing.T) mcpkit.EventBus {
	s := redistest.Shared(t)
	bus := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: s.Prefix(t)})
	t.Cleanup(func() { bus.Close() })
	return bus
}

func TestEventBusContract(t *testing.T) {
	t.Run("Redis", func(t *testing.T) { testEventBusContract(t, newRedisBus) })
	t.Run("Memory", func(t *testing.T) {
		testEventBusContract(t, func(*testing.T) mcpkit.EventBus { return mcpkit.NewMemoryBus() })
	})
}

func TestEventBusReplicas(t *testing.T) {
	t.Run("Redis", func(t *testing.T) {
		s := redistest.Shared(t)
		prefix := s.Prefix(t)
		a := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: prefix})
		b := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: prefix})
		testEventBusReplicas(t, a, b)
	})
	// Servers in one process share one MemoryBus.
	t.Run("Memory", func(t *testing.T) {
		bus := mcpkit.NewMemoryBus()
		testEventBusReplicas(t, bus, bus)
	})
}

// TestEventBusUnsubscribeFromFn calls unsubscribe from fn, which the Redis
// bus allows. The EventBus interface leaves it open, and MemoryBus rules it
// out (its unsubscribe waits for fn to return), so it is no part of the
// shared contract.
func TestEventBusUnsubscribeFromFn(t *testing.T) {
	bus := newRedisBus(t)
	var unsubscribe func()
	var ready sync.WaitGroup
	ready.Add(1)
	var calls atomic.Int64
	unsubscribe = subscribe(t, bus, "t", func([]byte) {
		ready.Wait()
		calls.Add(1)
		unsubscribe()
	})
	ready.Done()
	control := newSink("control")
	subscribe(t, bus, "t", control.fn)
	publish(t, bus, "t", "1", "2", "3")
	control.expect(t, "1", "2", "3")
	if n := calls.Load(); n > 1 {
		t.Errorf("fn called %d times, after it unsubscribed in the first", n)
	}
}

// TestEventBusServerRestart restarts Redis under a subscription: the
// subscriber gets a nil payload once the subscription is back, and the
// events published after.
func TestEventBusServerRestart(t *testing.T) {
	s := redistest.Start(t)
	prefix := s.Prefix(t)
	a := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: prefix})
	b := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: prefix})
	onA, onB := newSink("on a"), newSink("on b")
	subscribe(t, a, "t", onA.fn)
	subscribe(t, b, "t", onB.fn)
	publish(t, b, "t", "before")
	onA.expect(t, "before")
	onB.expect(t, "before")

	s.Stop(t)
	s.Restart(t)
	for _, sk := range []*sink{onA, onB} {
		if p := sk.next(t); p != nil {
			t.Fatalf("%s: first payload after the restart = %q, want nil", sk.name, p)
		}
	}
	// The publisher's pooled connection may be the old one: a failed
	// Publish is the publisher's to retry.
	deadline := time.Now().Add(eventWait)
	for b.Publish(context.Background(), "t", []byte("after")) != nil {
		if time.Now().After(deadline) {
			t.Fatal("cannot publish after the restart")
		}
		time.Sleep(5 * time.Millisecond)
	}
	onA.expect(t, "after")
	onB.expect(t, "after")
	select {
	case p := <-onA.ch:
		t.Errorf("on a: unexpected payload %q (nil: %v)", p, p == nil)
	default:
	}
}

// TestEventBusConnectionKilled kills the subscription's connection, the
// server staying up: go-redis reconnects at once.
func TestEventBusConnectionKilled(t *testing.T) {
	s := redistest.Shared(t)
	prefix := s.Prefix(t)
	// A name for this test's connections, to kill them and no other.
	name := fmt.Sprintf("redisstore-test-%d", time.Now().UnixNano())
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ClientName: name})
	t.Cleanup(func() { c.Close() })
	bus := redisstore.NewEventBus(c, &redisstore.EventBusOptions{Prefix: prefix})
	sk := newSink("s")
	subscribe(t, bus, "t", sk.fn)

	ctx := context.Background()
	list, err := c.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var killed int
	for line := range strings.Lines(list) {
		fields := strings.Fields(line)
		if !slices.Contains(fields, "name="+name) || slices.Contains(fields, "sub=0") {
			continue
		}
		for _, f := range fields {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				if err := c.Do(ctx, "client", "kill", "id", id).Err(); err != nil {
					t.Fatal(err)
				}
				killed++
			}
		}
	}
	if killed != 1 {
		t.Fatalf("killed %d connections, want the subscription's one:\n%s", killed, list)
	}
	if p := sk.next(t); p != nil {
		t.Fatalf("first payload after the kill = %q, want nil", p)
	}
	publish(t, bus, "t", "after")
	sk.expect(t, "after")
}

func TestEventBusStopsItsGoroutines(t *testing.T) {
	s := redistest.Shared(t)
	c := s.Client(t)
	bus := redisstore.NewEventBus(c, &redisstore.EventBusOptions{Prefix: s.Prefix(t)})
	// Those of earlier tests may still be on their way out: a
	// subscription stopped by its context, or from its own fn, is not
	// waited for.
	waitGoroutines(t)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	t.Cleanup(func() { bus.Close() })
	var unsubscribes []func()
	for range 5 {
		u, err := bus.Subscribe(context.Background(), "t", func([]byte) {})
		if err != nil {
			t.Fatal(err)
		}
		unsubscribes = append(unsubscribes, u)
		if _, err := bus.Subscribe(ctx, "t", func([]byte) {}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bus.Subscribe(context.Background(), "t", func([]byte) {}); err != nil {
		t.Fatal(err)
	}
	// A goroutine just started may not show in a stack dump yet.
	deadline := time.Now().Add(10 * time.Second)
	for n := subscriptionGoroutines(); n != 11; n = subscriptionGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscription goroutines with 11 subscriptions", n)
		}
		time.Sleep(time.Millisecond)
	}
	for _, u := range unsubscribes {
		u()
	}
	cancel() // 5 more
	bus.Close()
	bus.Close()
	waitGoroutines(t)

	if err := bus.Publish(context.Background(), "t", nil); !errors.Is(err, redisstore.ErrBusClosed) {
		t.Errorf("Publish after Close = %v, want ErrBusClosed", err)
	}
	if _, err := bus.Subscribe(context.Background(), "t", func([]byte) {}); !errors.Is(err, redisstore.ErrBusClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrBusClosed", err)
	}
	for _, u := range unsubscribes {
		u() // after Close: nothing happens
	}
}

func TestEventBusRedisDown(t *testing.T) {
	bus := redisstore.NewEventBus(closedPortClient(t), nil)
	if _, err := bus.Subscribe(context.Background(), "t", func([]byte) {}); err == nil {
		t.Error("Subscribe with Redis down succeeded")
	}
	if err := bus.Publish(context.Background(), "t", []byte("x")); err == nil {
		t.Error("Publish with Redis down succeeded")
	}
	waitGoroutines(t)
}

func TestEventBusSubscribeWithContextDone(t *testing.T) {
	s := redistest.Shared(t)
	bus := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: s.Prefix(t)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := bus.Subscribe(ctx, "t", func([]byte) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := bus.Subscribe(context.Background(), "t", nil); err == nil {
		t.Error("Subscribe with a nil fn succeeded")
	}
}

// subscriptionGoroutines returns the number of subscription goroutines
// running, of every bus.
func subscriptionGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "redisstore.(*subscription).run")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitGoroutines waits until no subscription goroutine runs, or fails t
// after a bound far above the time they take to end. Every test ends its
// subscriptions.
func waitGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for subscriptionGoroutines() > 0 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("subscription goroutines still running:\n%s", buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEventBusSilentConnection cuts a subscription's connection off
// without closing it, as a network partition does: the subscription's ping
// goes unanswered, it replaces the connection, and calls fn(nil) once the
// new one is subscribed.
func TestEventBusSilentConnection(t *testing.T) {
	s := redistest.Shared(t)
	p := newProxy(t, s.Addr)
	c := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	prefix := s.Prefix(t)
	bus := redisstore.NewEventBus(c, &redisstore.EventBusOptions{Prefix: prefix, HealthCheckInterval: 50 * time.Millisecond})
	sk := newSink("s")
	subscribe(t, bus, "t", sk.fn)
	publisher := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: prefix})
	// With pings this frequent, a slow machine may miss a pong and renew
	// a connection that was fine: a nil then, and what was published
	// meanwhile lost, or delivered after the nil. deliver publishes
	// name-1, name-2, ... until one of them arrives.
	deliver := func(name string) {
		t.Helper()
		for i := 1; ; i++ {
			publish(t, publisher, "t", fmt.Sprint(name, "-", i))
			got := sk.next(t)
			if got == nil {
				continue
			}
			if !strings.HasPrefix(string(got), name+"-") {
				t.Fatalf("payload %q, want %s-N", got, name)
			}
			return
		}
	}
	deliver("before")

	p.silenceExisting()
	for {
		got := sk.next(t)
		if got == nil {
			break
		}
		if !strings.HasPrefix(string(got), "before-") {
			t.Fatalf("payload %q after the connection went silent, want nil", got)
		}
	}
	deliver("after")
}

// proxy forwards TCP connections to a server; silenceExisting makes the
// connections open so far drop everything, in both directions, without
// closing them.
type proxy struct {
	l      net.Listener
	mu     sync.Mutex
	silent []*atomic.Bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			silent := new(atomic.Bool)
			p.mu.Lock()
			p.silent = append(p.silent, silent)
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					if err != nil {
						dst.Close()
						return
					}
					if !silent.Load() {
						dst.Write(buf[:n])
					}
				}
			}
			wg.Go(func() { pipe(out, in) })
			wg.Go(func() { pipe(in, out) })
		}
	})
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) silenceExisting() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.silent {
		s.Store(true)
	}
}
