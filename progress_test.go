package mcpkit_test

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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

// A notification is never sent after the call's result: the last report
// of a call that returns at once is dropped.
func TestReportProgressNothingAfterResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h heard
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "progress"}, nil)
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: "burst", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Handler: mcpkit.HandlerFunc(func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
				for i := 1; i <= 1000; i++ {
					mcpkit.ReportProgress(ctx, float64(i), 1000, "")
				}
				return &mcp.CallToolResult{}, nil
			}),
		})
		ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: h.options(), ProtocolVersion: "2025-11-25"})
		defer ts.Close()
		if _, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "burst", Meta: mcp.Meta{"progressToken": "b"}}); err != nil {
			t.Fatal(err)
		}
		n := len(h.got())
		time.Sleep(time.Second)
		synctest.Wait()
		if got := h.got(); len(got) != n || n > 1 {
			t.Errorf("heard %v: %d before the result, %d in all; want at most one, none after", got, n, len(got))
		}
	})
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
