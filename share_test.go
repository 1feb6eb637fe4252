package mcpkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// busLog records the events published on a topic of a bus.
type busLog struct {
	mu     sync.Mutex
	events []shareEvent
}

// shareEvent is the documented JSON of a ShareChanges event.
type shareEvent struct {
	Origin string `json:"origin"`
	Seq    uint64 `json:"seq"`
}

func watchBus(t *testing.T, bus mcpkit.EventBus, topic string) *busLog {
	t.Helper()
	l := &busLog{}
	unsub, err := bus.Subscribe(t.Context(), topic, func(p []byte) {
		var ev shareEvent
		if err := json.Unmarshal(p, &ev); err != nil || ev.Origin == "" || ev.Seq == 0 {
			t.Errorf("event %q: not the documented format (%v)", p, err)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.events = append(l.events, ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unsub)
	return l
}

func (ev shareEvent) json() []byte {
	b, _ := json.Marshal(ev)
	return b
}

func (l *busLog) list() []shareEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// origins returns the distinct origins of the events, in order of first
// appearance.
func (l *busLog) origins() []string {
	var out []string
	for _, ev := range l.list() {
		if !slices.Contains(out, ev.Origin) {
			out = append(out, ev.Origin)
		}
	}
	return out
}

// settle lets every goroutine of the bubble run, then the fake clock pass
// every delay, then everything run again.
func settle() {
	synctest.Wait()
	time.Sleep(time.Minute)
	synctest.Wait()
}

// perRequest is a Visibility that shows everything, and says that it
// decides per request: Refresh then always notifies.
type perRequest struct{}

func (perRequest) Enabled(*mcpkit.Tool) bool                                 { return true }
func (perRequest) PerRequest() bool                                          { return true }
func (perRequest) Allowed(context.Context, *mcpkit.Tool, mcpkit.Caller) bool { return true }

func okTool(name string) *mcpkit.Tool {
	return tool(name, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(name), nil
	})
}

func share(t *testing.T, srv *mcpkit.Server, bus mcpkit.EventBus, opts *mcpkit.ShareOptions) func() {
	t.Helper()
	stop, err := srv.ShareChanges(bus, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stop
}

// TestShareChangesPublishes checks which changes of the registry are
// published: one event for each change that sends list_changed locally,
// none for what changes nothing.
func TestShareChangesPublishes(t *testing.T) {
	passThrough := func(next mcpkit.Handler) mcpkit.Handler { return next }
	for _, tc := range []struct {
		name   string
		change func(*mcpkit.Server)
		want   int
	}{
		{"Add", func(s *mcpkit.Server) { s.Add(okTool("b")) }, 1},
		{"Remove", func(s *mcpkit.Server) { s.Remove("a") }, 1},
		{"RemoveVersion", func(s *mcpkit.Server) { s.RemoveVersion("v", "2") }, 1},
		{"Transform", func(s *mcpkit.Server) {
			s.Transform(func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
				c := t.Clone()
				c.Description = "changed"
				return c, nil
			})
		}, 1},
		{"SetVisibility", func(s *mcpkit.Server) { s.SetVisibility(perRequest{}) }, 1},
		{"Refresh per request", func(s *mcpkit.Server) {
			s.SetVisibility(perRequest{})
			settle()
			s.Refresh()
		}, 2},
		// Middleware change no definition: no list changed.
		{"Use", func(s *mcpkit.Server) { s.Use(passThrough) }, 0},
		{"UseList", func(s *mcpkit.Server) {
			s.UseList(func(next mcpkit.Lister) mcpkit.Lister { return next })
		}, 1},

		{"Add refused", func(s *mcpkit.Server) { s.Add(okTool("a")) }, 0},
		{"Remove unknown", func(s *mcpkit.Server) { s.Remove("nope") }, 0},
		{"RemoveVersion unknown", func(s *mcpkit.Server) { s.RemoveVersion("v", "9") }, 0},
		{"Refresh, nothing changed", func(s *mcpkit.Server) { s.Refresh() }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bus := mcpkit.NewMemoryBus()
				events := watchBus(t, bus, mcpkit.DefaultShareTopic)
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "a"}, nil)
				v1, v2 := okTool("v"), okTool("v")
				v1.Version, v2.Version = "1", "2"
				if err := srv.Add(okTool("a"), v1, v2); err != nil {
					t.Fatal(err)
				}
				share(t, srv, bus, nil)
				tc.change(srv)
				settle()
				if got := len(events.list()); got != tc.want {
					t.Errorf("%d events, want %d", got, tc.want)
				}
			})
		})
	}
}

// TestShareChangesCoalesces checks that a burst of changes costs one event,
// and that the delay is a window from the first change, not a debounce
// that a steady trickle of changes could postpone for ever.
func TestShareChangesCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := mcpkit.NewMemoryBus()
		events := watchBus(t, bus, mcpkit.DefaultShareTopic)
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "burst"}, nil)
		share(t, srv, bus, &mcpkit.ShareOptions{Delay: 50 * time.Millisecond})

		for i := range 100 {
			if err := srv.Add(okTool("t" + strings.Repeat("x", i))); err != nil {
				t.Fatal(err)
			}
		}
		settle()
		if got := events.list(); len(got) != 1 || got[0].Seq != 1 {
			t.Fatalf("100 Adds in a row: events %+v, want one with seq 1", got)
		}

		// A change every 20ms for 200ms: one event per 50ms window.
		for i := range 10 {
			srv.Remove("t" + strings.Repeat("x", i))
			time.Sleep(20 * time.Millisecond)
		}
		settle()
		got := events.list()
		if n := len(got) - 1; n < 4 || n > 5 {
			t.Errorf("10 changes over 200ms: %d events, want 4 or 5", n)
		}
		for i, ev := range got {
			if ev.Seq != uint64(i+1) || ev.Origin != got[0].Origin {
				t.Errorf("event %d: %+v, want seq %d from %s", i, ev, i+1, got[0].Origin)
			}
		}
	})
}

// gatedBus holds each Publish until the test opens the gate.
type gatedBus struct {
	mcpkit.EventBus
	gate chan struct{}
}

func (b gatedBus) Publish(ctx context.Context, topic string, payload []byte) error {
	<-b.gate
	return b.EventBus.Publish(ctx, topic, payload)
}

// TestShareChangesNoDelay checks that a negative Delay publishes at once,
// and still gathers into one event the changes made while the bus is busy.
func TestShareChangesNoDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := mcpkit.NewMemoryBus()
		events := watchBus(t, mem, mcpkit.DefaultShareTopic)
		bus := gatedBus{mem, make(chan struct{})}
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "now"}, nil)
		share(t, srv, bus, &mcpkit.ShareOptions{Delay: -1})
		srv.Add(okTool("first"))
		synctest.Wait() // publishing "first", held at the gate
		for i := range 10 {
			srv.Add(okTool("t" + strings.Repeat("x", i)))
		}
		close(bus.gate)
		synctest.Wait() // no time passed
		if got := len(events.list()); got != 2 {
			t.Errorf("%d events, want 2: the first change, then the ten made meanwhile", got)
		}
	})
}

// TestShareChangesTwice shares one server on two topics: each sharing
// publishes its changes, and neither takes the other's events for another
// replica's.
func TestShareChangesTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := mcpkit.NewMemoryBus()
		onT, onU := watchBus(t, bus, "t"), watchBus(t, bus, "u")
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "twice"}, nil)
		var resyncs atomic.Int32
		onChange := func(context.Context) error { resyncs.Add(1); return nil }
		share(t, srv, bus, &mcpkit.ShareOptions{Topic: "t", OnChange: onChange})
		share(t, srv, bus, &mcpkit.ShareOptions{Topic: "u", OnChange: onChange})
		srv.Add(okTool("x"))
		settle()
		if len(onT.list()) != 1 || len(onU.list()) != 1 {
			t.Fatalf("events on t: %d, on u: %d; want 1 each", len(onT.list()), len(onU.list()))
		}
		// The event of the sharing on t, seen on u.
		bus.Publish(t.Context(), "u", onT.list()[0].json())
		settle()
		if resyncs.Load() != 0 {
			t.Errorf("OnChange ran %d times for the server's own events", resyncs.Load())
		}
	})
}

// TestShareChangesNoEcho runs two replicas that resynchronise from shared
// configuration, both with a per-request Visibility, so that each Refresh
// of OnChange sends list_changed locally: a change on one replica is
// published once, the other catches up and tells its client, and nothing
// comes back.
func TestShareChangesNoEcho(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := mcpkit.NewMemoryBus()
		events := watchBus(t, bus, mcpkit.DefaultShareTopic)

		var (
			mu      sync.Mutex
			enabled = map[string]bool{}
		)
		// syncTools brings srv in line with enabled, as a real replica would
		// from a configuration store.
		syncTools := func(srv *mcpkit.Server) error {
			mu.Lock()
			defer mu.Unlock()
			for name, on := range enabled {
				_, have := srv.Lookup(name)
				switch {
				case on && !have:
					if err := srv.Add(okTool(name)); err != nil {
						return err
					}
				case !on && have:
					srv.Remove(name)
				}
			}
			srv.Refresh()
			return nil
		}
		type replica struct {
			srv     *mcpkit.Server
			resyncs atomic.Int32
			heard   atomic.Int32 // list_changed received by its client
		}
		newReplica := func(name string) *replica {
			r := &replica{srv: mcpkit.NewServer(&mcp.Implementation{Name: name}, nil)}
			r.srv.SetVisibility(perRequest{})
			if err := r.srv.Add(okTool("base")); err != nil {
				t.Fatal(err)
			}
			share(t, r.srv, bus, &mcpkit.ShareOptions{OnChange: func(ctx context.Context) error {
				r.resyncs.Add(1)
				return syncTools(r.srv)
			}})
			mcpkittest.NewInMemoryServer(t, r.srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { r.heard.Add(1) },
			}})
			return r
		}
		a, b := newReplica("a"), newReplica("b")
		settle()

		mu.Lock()
		enabled["fresh"] = true
		mu.Unlock()
		if err := syncTools(a.srv); err != nil {
			t.Fatal(err)
		}
		settle()
		time.Sleep(time.Hour) // an echo would have had all the time it needs
		settle()
		if got := events.list(); len(got) != 1 {
			t.Fatalf("one change on a: %d events %+v..., want 1", len(got), got[:min(len(got), 4)])
		}
		if _, ok := b.srv.Lookup("fresh"); !ok {
			t.Error("b did not catch up")
		}
		if a.resyncs.Load() != 0 || b.resyncs.Load() != 1 {
			t.Errorf("OnChange ran %d times on a, %d on b; want 0 and 1", a.resyncs.Load(), b.resyncs.Load())
		}
		if a.heard.Load() != 1 || b.heard.Load() != 1 {
			t.Errorf("clients heard list_changed %d times on a, %d on b; want 1 each", a.heard.Load(), b.heard.Load())
		}

		// And back: a change on b reaches a, once.
		mu.Lock()
		enabled["fresh"] = false
		mu.Unlock()
		if err := syncTools(b.srv); err != nil {
			t.Fatal(err)
		}
		settle()
		time.Sleep(time.Hour)
		settle()
		if got := events.list(); len(got) != 2 || got[0].Origin == got[1].Origin {
			t.Fatalf("after a change on each replica: %d events %+v..., want one from each", len(got), got[:min(len(got), 4)])
		}
		if _, ok := a.srv.Lookup("fresh"); ok {
			t.Error("a did not catch up")
		}
		if a.resyncs.Load() != 1 || b.resyncs.Load() != 1 {
			t.Errorf("OnChange ran %d times on a, %d on b; want 1 each", a.resyncs.Load(), b.resyncs.Load())
		}
	})
}

// TestShareChangesOnChangeContext checks that OnChange gets a context that
// is live while sharing lasts and done when stop is called, that stop waits
// for it, and that nothing is published or received after stop.
func TestShareChangesOnChangeContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := mcpkit.NewMemoryBus()
		events := watchBus(t, bus, mcpkit.DefaultShareTopic)
		a := mcpkit.NewServer(&mcp.Implementation{Name: "a"}, nil)
		b := mcpkit.NewServer(&mcp.Implementation{Name: "b"}, nil)
		stopA := share(t, a, bus, nil)
		var (
			calls   atomic.Int32
			entered = make(chan error, 1)
			after   = make(chan error, 1)
		)
		stopB := share(t, b, bus, &mcpkit.ShareOptions{OnChange: func(ctx context.Context) error {
			calls.Add(1)
			entered <- ctx.Err()
			<-ctx.Done()
			after <- ctx.Err()
			return ctx.Err()
		}})
		var heard atomic.Int32
		mcpkittest.NewInMemoryServer(t, b, &mcpkittest.Options{Client: &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { heard.Add(1) },
		}})
		settle()

		a.Add(okTool("x"))
		settle()
		if err := <-entered; err != nil {
			t.Fatalf("OnChange's context is done while sharing: %v", err)
		}
		// stop waits for OnChange, which returns when its context ends.
		stopped := make(chan struct{})
		go func() {
			stopB()
			stopB()
			close(stopped)
		}()
		<-stopped
		select {
		case err := <-after:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("after stop, OnChange's context: %v, want Canceled", err)
			}
		default:
			t.Fatal("stop returned before OnChange did")
		}

		a.Add(okTool("y"))
		settle()
		if calls.Load() != 1 {
			t.Errorf("OnChange ran %d times, want once (not after stop)", calls.Load())
		}
		if heard.Load() != 0 {
			t.Errorf("b's client heard list_changed %d times; stop came before the end of OnChange, want none", heard.Load())
		}
		n := len(events.list())
		b.Add(okTool("z")) // b no longer shares
		stopA()
		a.Add(okTool("w"))
		settle()
		if got := len(events.list()); got != n || n != 2 {
			t.Errorf("%d events, then %d after both stopped; want 2 and no more", n, got)
		}
	})
}

// captureBus is an EventBus whose subscribers the test calls itself, as a
// bus would after a reconnection, and whose Publish may fail.
type captureBus struct {
	mu        sync.Mutex
	fns       []func([]byte)
	published [][]byte
	err       error // returned by Publish
	subErr    error // returned by Subscribe
}

func (b *captureBus) Publish(ctx context.Context, topic string, payload []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.published = append(b.published, slices.Clone(payload))
	return b.err
}

func (b *captureBus) Subscribe(ctx context.Context, topic string, fn func([]byte)) (func(), error) {
	if b.subErr != nil {
		return nil, b.subErr
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fns = append(b.fns, fn)
	return func() {}, nil
}

func (b *captureBus) payloads() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.published)
}

func (b *captureBus) deliver(p []byte) {
	b.mu.Lock()
	fns := slices.Clone(b.fns)
	b.mu.Unlock()
	for _, fn := range fns {
		fn(p)
	}
}

// TestShareChangesResync delivers by hand what a bus may: nil after a
// reconnection and foreign or unreadable payloads make the replica
// resynchronise and tell its clients, its own events do not. The replica
// serves no tool, so the notification comes without one to register again,
// and tools/list shows nothing all along, also when the SDK's list is read.
func TestShareChangesResync(t *testing.T) {
	for _, foreign := range []bool{false, true} {
		name := map[bool]string{false: "mcpkit lists", true: "SDK list read"}[foreign]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bus := &captureBus{}
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "r"}, nil)
				if foreign {
					srv.MCPServer()
				}
				var calls atomic.Int32
				share(t, srv, bus, &mcpkit.ShareOptions{OnChange: func(ctx context.Context) error {
					calls.Add(1)
					return nil
				}})
				var heard atomic.Int32
				ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
					ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { heard.Add(1) },
				}})
				settle()

				// An event of this replica's own.
				srv.Add(okTool("mine"))
				settle()
				srv.Remove("mine")
				settle()
				own := bus.payloads()
				if len(own) != 2 {
					t.Fatalf("published %d events, want 2", len(own))
				}
				heard.Store(0)
				bus.deliver(own[0])
				settle()
				if calls.Load() != 0 || heard.Load() != 0 {
					t.Errorf("own event: OnChange ran %d times, client heard %d; want 0, 0", calls.Load(), heard.Load())
				}

				for i, p := range [][]byte{nil, []byte(`{"origin":"someone-else","seq":7}`), []byte("garbage")} {
					bus.deliver(p)
					settle()
					if calls.Load() != int32(i+1) || heard.Load() != int32(i+1) {
						t.Errorf("payload %q: OnChange ran %d times, client heard %d; want %d each", p, calls.Load(), heard.Load(), i+1)
					}
					res, err := ts.Session.ListTools(t.Context(), nil)
					if err != nil {
						t.Fatal(err)
					}
					if len(res.Tools) != 0 {
						t.Errorf("payload %q: tools/list shows %d tools (%s), want none", p, len(res.Tools), res.Tools[0].Name)
					}
				}
				if n := len(bus.payloads()); n != 2 {
					t.Errorf("resynchronising published %d more events", n-2)
				}
			})
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for the log writes of other
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestShareChangesFailures checks that a failing bus never fails a local
// change, and that failures of the bus and of OnChange are logged, to the
// server's logger unless ShareOptions has one.
func TestShareChangesFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var serverLog, shareLog lockedBuffer
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "f"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(&serverLog, nil))})
		bus := &captureBus{err: errors.New("bus down")}
		share(t, srv, bus, nil)
		if err := srv.Add(okTool("x")); err != nil {
			t.Fatalf("Add with the bus down: %v", err)
		}
		settle()
		if _, ok := srv.Lookup("x"); !ok {
			t.Error("the change was not served")
		}
		if got := serverLog.String(); !strings.Contains(got, "publishing a change of the tools failed") || !strings.Contains(got, "bus down") {
			t.Errorf("server log: %q", got)
		}

		other := mcpkit.NewServer(&mcp.Implementation{Name: "g"}, nil)
		panicked := false
		share(t, other, bus, &mcpkit.ShareOptions{
			Logger: slog.New(slog.NewTextHandler(&shareLog, nil)),
			OnChange: func(context.Context) error {
				if !panicked {
					panicked = true
					panic("boom")
				}
				return errors.New("config store unreachable")
			},
		})
		bus.deliver(nil)
		settle()
		bus.deliver(nil)
		settle()
		got := shareLog.String()
		for _, want := range []string{"OnChange panicked", "boom", "OnChange failed", "config store unreachable"} {
			if !strings.Contains(got, want) {
				t.Errorf("share log lacks %q: %q", want, got)
			}
		}
	})

	if _, err := mcpkit.NewServer(&mcp.Implementation{Name: "n"}, nil).ShareChanges(nil, nil); err == nil || err.Error() != "mcpkit: ShareChanges: nil bus" {
		t.Errorf("ShareChanges(nil) = %v", err)
	}
	refused := errors.New("no such topic")
	_, err := mcpkit.NewServer(&mcp.Implementation{Name: "n"}, nil).ShareChanges(&captureBus{subErr: refused}, &mcpkit.ShareOptions{Topic: "cat"})
	if !errors.Is(err, refused) || !strings.Contains(err.Error(), `subscribing to "cat"`) {
		t.Errorf("ShareChanges with a refusing bus = %v", err)
	}
}

// listener is a client of one replica that records list_changed.
type listener struct {
	cs      *mcp.ClientSession
	changed chan struct{}
}

// listen connects a client of protocol version to endpoint and, for
// 2026-07-28, waits until the server has acknowledged its
// subscriptions/listen stream, so that no notification can come before.
func listen(t *testing.T, endpoint, version string) *listener {
	t.Helper()
	l := &listener{changed: make(chan struct{}, 16)}
	acked := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "listener"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { l.changed <- struct{}{} },
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				acked <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	l.cs = cs
	if version >= "2026-07-28" {
		select {
		case <-acked:
		case <-time.After(10 * time.Second):
			t.Fatal("subscriptions/listen not acknowledged")
		}
	}
	return l
}

func (l *listener) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-l.changed:
	case <-time.After(10 * time.Second):
		t.Fatalf("no notifications/tools/list_changed: %s", what)
	}
}

func (l *listener) names(t *testing.T) []string {
	t.Helper()
	res, err := l.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestShareChangesHTTP is the scale-out case end to end: replicas A and B,
// each behind its own HTTP server, share a bus. A 2026-07-28 client
// listening on B (stateless, subscriptions/listen) and a 2025-11-25 client
// with a session on B both hear of a tool added on A, and find it on B,
// which caught up in OnChange; a tool removed on B is heard of by a client
// of A.
func TestShareChangesHTTP(t *testing.T) {
	bus := mcpkit.NewMemoryBus()
	events := watchBus(t, bus, mcpkit.DefaultShareTopic)
	var (
		mu      sync.Mutex
		enabled = map[string]bool{}
	)
	syncTools := func(srv *mcpkit.Server) error {
		mu.Lock()
		defer mu.Unlock()
		for name, on := range enabled {
			if _, have := srv.Lookup(name); on && !have {
				if err := srv.Add(okTool(name)); err != nil {
					return err
				}
			} else if !on && have {
				srv.Remove(name)
			}
		}
		return nil
	}
	replica := func(name string) (*mcpkit.Server, string, string) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: name}, nil)
		if err := srv.Add(okTool("base")); err != nil {
			t.Fatal(err)
		}
		share(t, srv, bus, &mcpkit.ShareOptions{OnChange: func(ctx context.Context) error { return syncTools(srv) }})
		stateless := httptest.NewServer(srv.HTTPHandler(nil))
		t.Cleanup(stateless.Close)
		sessions := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
		t.Cleanup(sessions.Close)
		return srv, stateless.URL, sessions.URL
	}
	a, aURL, _ := replica("a")
	b, bURL, bSessions := replica("b")

	onB := listen(t, bURL, "2026-07-28")
	onBSession := listen(t, bSessions, "2025-11-25")
	onA := listen(t, aURL, "2026-07-28")

	mu.Lock()
	enabled["fresh"] = true
	mu.Unlock()
	if err := syncTools(a); err != nil {
		t.Fatal(err)
	}
	onB.wait(t, "2026-07-28 client of B, tool added on A")
	onBSession.wait(t, "2025-11-25 client of B, tool added on A")
	onA.wait(t, "2026-07-28 client of A, tool added on A")
	for _, l := range []*listener{onB, onBSession} {
		if got := strings.Join(l.names(t), ","); got != "base,fresh" {
			t.Errorf("tools/list on B after the change: %s, want base,fresh", got)
		}
	}
	res, err := onB.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fresh"})
	if err != nil || onlyText(res) != "fresh" {
		t.Errorf("calling the new tool on B: %v, %v", res, err)
	}

	mu.Lock()
	enabled["fresh"] = false
	mu.Unlock()
	if err := syncTools(b); err != nil {
		t.Fatal(err)
	}
	onA.wait(t, "2026-07-28 client of A, tool removed on B")
	if got := strings.Join(onA.names(t), ","); got != "base" {
		t.Errorf("tools/list on A after the removal on B: %s, want base", got)
	}
	if got := events.origins(); len(got) != 2 {
		t.Errorf("events from %d replicas, want 2 (one change on each)", len(got))
	}
}
