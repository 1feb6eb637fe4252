package mcpkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

// The floor benchmarks measure what the server spends on one tools/call
// over streamable HTTP, without a network and without the client: a real
// SDK client's requests are recorded once, then replayed into the server's
// http.Handler. They compare the go-sdk (a raw handler, the floor, and a
// typed mcp.AddTool tool) with mcpkit (a typed tool, with no chain and with
// the recommended chain) in each mode: stateful (2025-11-25), stateless with a
// 2025-11-25 client, and stateless with a 2026-07-28 client. Run them with
// scripts/floor.sh, which prints the ratios.
//
// Besides ns/op, each reports cpu-ns/op: the CPU time (user and system, all
// threads, garbage collection included) the process spent per call. Other
// load on the machine inflates ns/op, hardly cpu-ns/op.

// floorIn is the argument of the tools: a small object.
type floorIn struct {
	N int `json:"n"`
}

// floorItem is one of the 50 items of the object tool's result.
type floorItem struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Score float64  `json:"score"`
}

type floorOut struct {
	Items []floorItem `json:"items"`
}

func floorTiny(_ context.Context, in floorIn) (floorOut, error) {
	return floorOut{Items: []floorItem{{ID: in.N, Name: "one"}}}, nil
}

func floorObj50(_ context.Context, in floorIn) (floorOut, error) {
	out := floorOut{Items: make([]floorItem, 50)}
	for i := range out.Items {
		out.Items[i] = floorItem{ID: in.N + i, Name: "item", Tags: []string{"a", "b"}, Score: float64(i) / 3}
	}
	return out, nil
}

// floorServers returns the servers compared, by name.
func floorServers() map[string]func() *mcp.Server {
	sdk := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "floor"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "tiny"}, func(ctx context.Context, _ *mcp.CallToolRequest, in floorIn) (*mcp.CallToolResult, floorOut, error) {
			out, err := floorTiny(ctx, in)
			return nil, out, err
		})
		mcp.AddTool(s, &mcp.Tool{Name: "obj50"}, func(ctx context.Context, _ *mcp.CallToolRequest, in floorIn) (*mcp.CallToolResult, floorOut, error) {
			out, err := floorObj50(ctx, in)
			return nil, out, err
		})
		return s
	}
	kit := func(recommended bool) func() *mcp.Server {
		return func() *mcp.Server {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "floor"}, nil)
			if recommended {
				srv.Use(middleware.Recommended(nil))
			}
			srv.Add(tools.Must(tools.New("tiny", floorTiny, nil)), tools.Must(tools.New("obj50", floorObj50, nil)))
			return srv.MCPServer()
		}
	}
	raw := func() *mcp.Server {
		// The floor: a hand-written handler that decodes and encodes with
		// encoding/json and validates nothing.
		s := mcp.NewServer(&mcp.Implementation{Name: "floor"}, nil)
		for name, fn := range map[string]func(context.Context, floorIn) (floorOut, error){"tiny": floorTiny, "obj50": floorObj50} {
			s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in floorIn
				if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
					return nil, err
				}
				out, err := fn(ctx, in)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(out)
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
			})
		}
		return s
	}
	return map[string]func() *mcp.Server{"sdk-raw": raw, "sdk-typed": sdk, "mcpkit": kit(false), "mcpkit+recommended": kit(true)}
}

// recorded is a request a client sent, to replay.
type recorded struct {
	header http.Header
	body   []byte
}

// recorder keeps the tools/call requests that pass through it.
type recorder struct {
	mu    sync.Mutex
	calls []recorded
	next  http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if bytes.Contains(body, []byte(`"tools/call"`)) {
		r.mu.Lock()
		r.calls = append(r.calls, recorded{header: req.Header.Clone(), body: body})
		r.mu.Unlock()
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.next.ServeHTTP(w, req)
}

// recordCall serves s in the given mode, lets a real client call tool once,
// and returns the handler and the recorded tools/call request, whose
// session (in stateful mode) stays open for replays.
func recordCall(b *testing.B, s *mcp.Server, stateless bool, version, tool string) (http.Handler, recorded, func()) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: true})
	rec := &recorder{next: h}
	hs := httptest.NewServer(rec)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "floor"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]int{"n": 1}}); err != nil || res.IsError {
		b.Fatalf("%s: %v %v", tool, res, err)
	}
	if len(rec.calls) != 1 {
		b.Fatalf("recorded %d calls", len(rec.calls))
	}
	return h, rec.calls[0], func() { cs.Close(); hs.Close() }
}

func BenchmarkFloor(b *testing.B) {
	modes := []struct {
		name      string
		stateless bool
		version   string
	}{
		{"stateful", false, "2025-11-25"},
		{"stateless-2025", true, "2025-11-25"},
		{"stateless-2026", true, "2026-07-28"},
	}
	servers := floorServers()
	for _, mode := range modes {
		for _, name := range []string{"sdk-raw", "sdk-typed", "mcpkit", "mcpkit+recommended"} {
			for _, tool := range []string{"tiny", "obj50"} {
				b.Run(mode.name+"/"+tool+"/"+name, func(b *testing.B) {
					h, call, done := recordCall(b, servers[name](), mode.stateless, mode.version, tool)
					defer done()
					b.ReportAllocs()
					cpu0, ok0 := processCPU()
					for b.Loop() {
						req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(call.body))
						req.Header = call.header.Clone()
						w := httptest.NewRecorder()
						h.ServeHTTP(w, req)
						if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"result"`) {
							b.Fatalf("HTTP %d: %.300s", w.Code, w.Body.String())
						}
					}
					if cpu1, ok1 := processCPU(); ok0 && ok1 {
						b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
					}
				})
			}
		}
	}
}
