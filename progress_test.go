package mcpkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

// stepper is a typed tool that reports progress at each of its steps, a
// step every 30 ms: it has the context, not the Request.
func stepper(t testing.TB) *mcpkit.Tool {
	type in struct {
		Steps int `json:"steps" minimum:"1" maximum:"100"`
	}
	return tools.Must(tools.New("stepper", func(ctx context.Context, in in) (string, error) {
		for i := 1; i <= in.Steps; i++ {
			time.Sleep(30 * time.Millisecond)
			mcpkit.ReportProgress(ctx, float64(i), float64(in.Steps), "step")
		}
		return "done", nil
	}, nil))
}

// heard collects the progress notifications a client receives.
type heard struct {
	mu     sync.Mutex
	values []float64
}

func (h *heard) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		h.mu.Lock()
		h.values = append(h.values, r.Params.Progress)
		h.mu.Unlock()
	}}
}

func (h *heard) got() []float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]float64(nil), h.values...)
}

func (h *heard) reset() {
	h.mu.Lock()
	h.values = nil
	h.mu.Unlock()
}

// A wire records what a client reads off its transport, in order: each
// progress notification as its progress value, each response as "result".
// It sees the order the server sent them in, which the client's handlers
// may not: the SDK client may hand a notification to its handler after
// the call it concerns has returned.
type wire struct {
	mu     sync.Mutex
	events []string
}

func (w *wire) read(msg jsonrpc.Message) {
	var event string
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method != "notifications/progress" {
			return
		}
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			event = "bad progress: " + err.Error()
		} else {
			event = fmt.Sprint(p.Progress)
		}
	case *jsonrpc.Response:
		event = "result"
	default:
		return
	}
	w.mu.Lock()
	w.events = append(w.events, event)
	w.mu.Unlock()
}

func (w *wire) got() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}

func (w *wire) reset() {
	w.mu.Lock()
	w.events = nil
	w.mu.Unlock()
}

// progress returns how many progress notifications w has seen.
func (w *wire) progress() int {
	n := 0
	for _, e := range w.got() {
		if e != "result" {
			n++
		}
	}
	return n
}

// wireTransport is a client transport whose reads w records.
type wireTransport struct {
	mcp.Transport
	w *wire
}

func (t wireTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wireConn{c, t.w}, nil
}

type wireConn struct {
	mcp.Connection
	w *wire
}

func (c wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.w.read(msg)
	}
	return msg, err
}

// wireRoundTripper records in w the messages of the event streams an HTTP
// client reads, as the client reads their bytes.
type wireRoundTripper struct {
	next http.RoundTripper
	w    *wire
}

func (rt wireRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := rt.next.RoundTrip(req)
	if err == nil && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body = &sseBody{ReadCloser: res.Body, w: rt.w}
	}
	return res, err
}

type sseBody struct {
	io.ReadCloser
	w    *wire
	line []byte
}

func (b *sseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			b.line = append(b.line, c)
			continue
		}
		if data, ok := bytes.CutPrefix(bytes.TrimSuffix(b.line, []byte("\r")), []byte("data:")); ok {
			if msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data)); err == nil {
				b.w.read(msg)
			}
		}
		b.line = b.line[:0]
	}
	return n, err
}

// connectWire connects a client with options opts to srv in memory, its
// reads recorded in w.
func connectWire(t *testing.T, srv *mcpkit.Server, w *wire, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wire", Version: "1"}, opts).Connect(t.Context(), wireTransport{clientT, w}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// checkCoalesced checks that reports made over elapsed were heard as at
// most one notification per ProgressInterval (and one more), at least one,
// in order.
func checkCoalesced(t *testing.T, values []float64, elapsed time.Duration) {
	t.Helper()
	most := int(elapsed/mcpkit.ProgressInterval) + 2
	if len(values) < 1 || len(values) > most {
		t.Errorf("heard %d notifications (%v) for reports over %v, want 1 to %d", len(values), values, elapsed, most)
	}
	for i := 1; i < len(values); i++ {
		if values[i] <= values[i-1] {
			t.Errorf("notifications out of order: %v", values)
		}
	}
}

// Progress reaches the client as notifications/progress, coalesced, in
// order, on both eras, in memory (on the fake clock) and over HTTP; a
// client that asked for none, or with a token that is neither a string nor
// a number, hears none, and its call works.
func TestReportProgress(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("inmemory/"+era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var h heard
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "progress"}, nil)
				srv.Add(stepper(t))
				ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: h.options(), ProtocolVersion: era})
				defer ts.Close()
				start := time.Now()
				res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "stepper", Arguments: map[string]any{"steps": 20}, Meta: mcp.Meta{"progressToken": "p-1"}})
				if err != nil || res.IsError {
					t.Fatalf("%+v, %v", res, err)
				}
				synctest.Wait()
				// 20 reports over 600 ms of the fake clock: at most 8.
				checkCoalesced(t, h.got(), time.Since(start))

				for _, token := range []any{nil, map[string]any{}, []any{}, true} {
					var none heard
					cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, &mcpkittest.Options{Client: none.options(), ProtocolVersion: era})
					if err != nil {
						t.Fatal(err)
					}
					meta := mcp.Meta{}
					if token != nil {
						meta["progressToken"] = token
					}
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "stepper", Arguments: map[string]any{"steps": 5}, Meta: meta})
					synctest.Wait()
					if err != nil || res.IsError || len(none.got()) != 0 {
						t.Errorf("token %v: %+v, %v, heard %v; want the result and no progress", token, res, err, none.got())
					}
					cs.Close()
				}
			})
		})
	}
	// Over HTTP, with the answers as event streams (the default of
	// srv.HTTPHandler): a 2025-11-25 session, and 2026-07-28's stateless
	// requests, whose notifications travel on the call's own stream.
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("http/"+era, func(t *testing.T) {
			var h heard
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "progress"}, nil)
			srv.Add(stepper(t))
			ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Client: h.options(), ProtocolVersion: era})
			callStepper(t, ts.Session, &h, 7)
		})
	}
}

// Over stdio's framing (newline-delimited JSON on a pair of pipes, as a
// host that launches the server speaks it), progress arrives too.
func TestReportProgressStdio(t *testing.T) {
	var h heard
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "progress"}, nil)
	srv.Add(stepper(t))
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go srv.Run(ctx, &mcp.IOTransport{Reader: c2sR, Writer: s2cW})
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, h.options())
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callStepper(t, cs, &h, "stdio-1")
}

// callStepper calls stepper for 20 steps with the progress token token,
// over a transport with real time, and checks what h heard.
func callStepper(t *testing.T, cs *mcp.ClientSession, h *heard, token any) {
	t.Helper()
	start := time.Now()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "stepper", Arguments: map[string]any{"steps": 20}, Meta: mcp.Meta{"progressToken": token}})
	if err != nil || res.IsError {
		t.Fatalf("%+v, %v", res, err)
	}
	elapsed := time.Since(start)
	// The client may hand notifications to its handler after the result:
	// give it a moment for the first.
	for deadline := time.Now().Add(5 * time.Second); len(h.got()) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	checkCoalesced(t, h.got(), elapsed)
}

// Through a real client: with an idle limit, a tool that keeps reporting
// runs past it, and one that goes quiet is stopped, its client told why.
func TestIdleTimeoutThroughClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "idle"}, nil)
		srv.Use(middleware.Timeout(time.Hour, &middleware.TimeoutOptions{Idle: 30 * time.Second}))
		work := func(reports int, rest time.Duration) mcpkit.HandlerFunc {
			return func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
				for i := range reports {
					time.Sleep(20 * time.Second)
					mcpkit.ReportProgress(ctx, float64(i+1), 0, "")
				}
				select {
				case <-time.After(rest):
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		// busy reports every 20s for 100s, then works 20s more; quiet
		// works 40s without a word.
		srv.Add(tool("busy", work(5, 20*time.Second)), tool("quiet", work(0, 40*time.Second)))
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		defer ts.Close()
		start := time.Now()
		res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "busy"})
		if err != nil || res.IsError || time.Since(start) != 2*time.Minute {
			t.Errorf("busy: %+v, %v after %v; want done after 2m0s", res, err, time.Since(start))
		}
		start = time.Now()
		res, err = ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "quiet"})
		if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != `tool "quiet" timed out: no progress for 30s` || time.Since(start) != 30*time.Second {
			t.Errorf("quiet: %+v, %v after %v; want the idle timeout after 30s", res, err, time.Since(start))
		}
	})
}

// burst is a tool that reports n steps in a tight loop, then returns.
func burst(n int) *mcpkit.Tool {
	return tool("burst", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		for i := 1; i <= n; i++ {
			mcpkit.ReportProgress(ctx, float64(i), float64(n), "")
		}
		return textResult("done"), nil
	})
}

// checkLastBeforeResult checks the events a wire saw during one call: one
// result, the notification of the last report (last) just before it, in
// order, and nothing after it.
func checkLastBeforeResult(t *testing.T, events []string, last float64) {
	t.Helper()
	i := slices.Index(events, "result")
	if i < 1 || i != len(events)-1 || events[i-1] != fmt.Sprint(last) {
		t.Errorf("the client read %v; want the progress of the last report, %v, then the result, and nothing after it", events, last)
	}
	for j := 1; j < i; j++ {
		a, _ := strconv.ParseFloat(events[j-1], 64)
		b, _ := strconv.ParseFloat(events[j], 64)
		if b <= a {
			t.Errorf("notifications out of order: %v", events)
		}
	}
}

// The last report a handler makes before it returns, coalesced with those
// before it or not, reaches the client before the result, on every
// transport and era: the final step of a tool (progress equal to total),
// and the last of a tight loop. Nothing is sent after the result.
func TestProgressLastReportBeforeResult(t *testing.T) {
	calls := []struct {
		name string
		args map[string]any
		last float64
	}{
		{"stepper", map[string]any{"steps": 5}, 5}, // 30 ms apart: the last is pending when it returns
		{"burst", nil, 1000},
	}
	call := func(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{"progressToken": "last"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("inmemory/"+era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var w wire
				var h heard
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "progress"}, nil)
				srv.Add(stepper(t), burst(1000))
				cs := connectWire(t, srv, &w, h.options(), era)
				for _, c := range calls {
					w.reset()
					h.reset()
					call(t, cs, c.name, c.args)
					checkLastBeforeResult(t, w.got(), c.last)
					time.Sleep(time.Second) // nothing follows, however long one waits
					synctest.Wait()
					checkLastBeforeResult(t, w.got(), c.last)
					if got := h.got(); len(got) == 0 || got[len(got)-1] != c.last {
						t.Errorf("%s: the client's handler heard %v; want %v last", c.name, got, c.last)
					}
				}
			})
		})
		t.Run("http/"+era, func(t *testing.T) {
			var w wire
			var h heard
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "progress"}, nil)
			srv.Add(stepper(t), burst(1000))
			ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Client: h.options(), ProtocolVersion: era,
				HTTPClient: &http.Client{Transport: wireRoundTripper{next: http.DefaultTransport, w: &w}}})
			for _, c := range calls {
				w.reset()
				h.reset()
				call(t, ts.Session, c.name, c.args)
				checkLastBeforeResult(t, w.got(), c.last)
				// The client may hand the notification to its handler
				// after the result: a safety net, not a measure.
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if got := h.got(); len(got) > 0 && got[len(got)-1] == c.last {
						break
					}
				}
				if got := h.got(); len(got) == 0 || got[len(got)-1] != c.last {
					t.Errorf("%s: the client's handler heard %v; want %v last", c.name, got, c.last)
				}
			}
		})
	}
}

// A client that cancels its call cancels the handler's context, on both
// eras: the handler stops instead of running on (the timeout and a task's
// cancel do the same: TestIdleTimeoutThroughClient, tasks' TestTaskCancel).
func TestClientCancelReachesHandler(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				started, stopped := make(chan struct{}), make(chan error, 1)
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "cancel"}, nil)
				srv.Add(tool("long", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
					close(started)
					select {
					case <-ctx.Done():
						stopped <- ctx.Err()
						return nil, ctx.Err()
					case <-time.After(time.Hour):
						stopped <- nil
						return &mcp.CallToolResult{}, nil
					}
				}))
				ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: era})
				defer ts.Close()
				ctx, cancel := context.WithCancel(t.Context())
				go func() { <-started; cancel() }()
				if _, err := ts.Session.CallTool(ctx, &mcp.CallToolParams{Name: "long"}); err == nil {
					t.Error("the cancelled call returned no error")
				}
				synctest.Wait()
				select {
				case err := <-stopped:
					if err == nil {
						t.Error("the handler ran to its end")
					}
				default:
					t.Error("the handler's context was not cancelled")
				}
			})
		})
	}
}

// Once the server has seen the client cancel a call, the client hears no
// more progress of it, however the handler, ignoring its context, goes on
// reporting: with ReportProgress or with Request.NotifyProgress, on both
// eras.
func TestProgressStopsAtCancel(t *testing.T) {
	reporters := map[string]func(context.Context, *mcpkit.Request, float64){
		"ReportProgress": func(ctx context.Context, _ *mcpkit.Request, done float64) {
			mcpkit.ReportProgress(ctx, done, 100, "")
		},
		"NotifyProgress": func(ctx context.Context, req *mcpkit.Request, done float64) {
			req.NotifyProgress(ctx, done, 100, "") // its error is ignored too
		},
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for name, report := range reporters {
			t.Run(era+"/"+name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					seen := make(chan struct{})
					srv := mcpkit.NewServer(&mcp.Implementation{Name: "cancel"}, nil)
					srv.Add(tool("stubborn", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
						context.AfterFunc(ctx, func() { close(seen) })
						for i := 1; i <= 100; i++ {
							report(ctx, req, float64(i))
							time.Sleep(time.Second)
						}
						return textResult("done"), nil
					}))
					var w wire
					cs := connectWire(t, srv, &w, nil, era)
					w.reset()
					ctx, cancel := context.WithCancel(t.Context())
					go func() {
						for w.progress() < 3 {
							time.Sleep(100 * time.Millisecond)
						}
						cancel()
					}()
					if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "stubborn", Meta: mcp.Meta{"progressToken": "c"}}); err == nil {
						t.Fatal("the cancelled call returned no error")
					}
					select {
					case <-seen:
					case <-time.After(10 * time.Second):
						t.Fatal("the server never saw the cancel")
					}
					synctest.Wait()
					n := w.progress()
					time.Sleep(2 * time.Minute) // the handler reports on, and returns
					synctest.Wait()
					if got := w.progress(); got != n {
						t.Errorf("the client heard %d notifications when the server saw the cancel, %d in all (%v); want none after it", n, got, w.got())
					}
				})
			})
		}
	}
}

// Request.NotifyProgress sends a notification only under a token the spec
// allows, a string or a number, as ReportProgress does: for any other it
// sends nothing and returns nil.
func TestNotifyProgressTokens(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				errs := make(chan error, 1)
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "notify"}, nil)
				srv.Add(tool("once", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					errs <- req.NotifyProgress(ctx, 1, 2, "half")
					return textResult("done"), nil
				}))
				var w wire
				var h heard
				cs := connectWire(t, srv, &w, h.options(), era)
				for _, tt := range []struct {
					token any
					sent  bool
				}{
					{"n-1", true},
					{7, true},
					{nil, false},
					{map[string]any{}, false},
					{map[string]any{"a": 1}, false},
					{[]any{}, false},
					{[]any{"x"}, false},
					{true, false},
				} {
					w.reset()
					h.reset()
					meta := mcp.Meta{}
					if tt.token != nil {
						meta["progressToken"] = tt.token
					}
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "once", Meta: meta})
					if err != nil || res.IsError {
						t.Fatalf("token %v: %+v, %v", tt.token, res, err)
					}
					if err := <-errs; err != nil {
						t.Errorf("token %v: NotifyProgress: %v", tt.token, err)
					}
					synctest.Wait()
					want, wantHeard := []string{"result"}, 0
					if tt.sent {
						want, wantHeard = []string{"1", "result"}, 1
					}
					if got := w.got(); !slices.Equal(got, want) || len(h.got()) != wantHeard {
						t.Errorf("token %#v: the client read %v and heard %v; want %v", tt.token, got, h.got(), want)
					}
				}
			})
		})
	}
}
