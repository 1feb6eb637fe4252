package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	// mg: github.com/mark3labs/mcp-go, whose packages share their names
	// with the go-sdk's.
	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/tools"
)

// BenchmarkFloorMCPGo measures what the server spends on one tools/call over
// streamable HTTP, the way BenchmarkFloor in the repository's root does
// (floor_bench_test.go): a real client's tools/call is recorded once, then
// replayed into the server's http.Handler, with no network and no client. It
// puts mcp-go (its defaults, and with schema validation on) beside the
// go-sdk's raw handler (the floor) and a typed mcpkit tool, in each mode: stateful (2025-11-25), stateless with a 2025-11-25
// client, and stateless with a 2026-07-28 client. Run it with
// scripts/floor-mcpgo.sh, which prints the ratios.
//
// Besides ns/op, it reports cpu-ns/op: the CPU time (user and system, all
// threads, garbage collection included) the process spent per call. Other
// load on the machine inflates ns/op, hardly cpu-ns/op.
func BenchmarkFloorMCPGo(b *testing.B) {
	for _, m := range floorModes {
		for _, tool := range []string{"tiny", "obj50"} {
			for _, server := range floorServers {
				b.Run(m.name+"/"+tool+"/"+server, func(b *testing.B) {
					r := newReplayer(b, server, m, tool)
					// The first answer is checked in full; every replay must
					// then give the same bytes.
					w := r.serve()
					if err := checkAnswer(w, tool); err != nil {
						b.Fatal(err)
					}
					want := w.Body.Bytes()
					b.ReportAllocs()
					cpu0, ok0 := processCPU()
					for b.Loop() {
						w := r.serve()
						if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), want) {
							b.Fatalf("HTTP %d: %.300s\nwant %.300s", w.Code, w.Body.String(), want)
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

// TestFloorMCPGoAnswers replays each server's recorded call twice, as the
// benchmark does many times, and checks the answers, so that a benchmark
// measuring errors or a changed result fails here first.
func TestFloorMCPGoAnswers(t *testing.T) {
	for _, m := range floorModes {
		for _, tool := range []string{"tiny", "obj50"} {
			for _, server := range floorServers {
				t.Run(m.name+"/"+tool+"/"+server, func(t *testing.T) {
					r := newReplayer(t, server, m, tool)
					first := r.serve()
					if err := checkAnswer(first, tool); err != nil {
						t.Fatal(err)
					}
					again := r.serve()
					if err := checkAnswer(again, tool); err != nil {
						t.Fatalf("second replay: %v", err)
					}
					if !bytes.Equal(first.Body.Bytes(), again.Body.Bytes()) {
						t.Errorf("replays differ:\n%s\n%s", first.Body, again.Body)
					}
				})
			}
		}
	}
}

// The tools, their argument and their result are those of BenchmarkFloor.

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

var floorTools = map[string]func(context.Context, floorIn) (floorOut, error){"tiny": floorTiny, "obj50": floorObj50}

// floorArg is the argument every recorded call carries.
const floorArg = 1

type floorMode struct {
	name      string
	stateless bool
	version   string
}

var floorModes = []floorMode{
	{"stateful", false, "2025-11-25"},
	{"stateless-2025", true, "2025-11-25"},
	{"stateless-2026", true, "2026-07-28"},
}

// floorServers are the servers compared, in the order scripts/floor-mcpgo.sh
// prints them. mcpkit validates the arguments and the structured result
// against the tool's schemas; mcp-go does so only when asked, hence both
// of its setups.
var floorServers = []string{"sdk-raw", "mcpkit", "mcp-go", "mcp-go+validation"}

// sdkRaw is the floor: a go-sdk server with a hand-written handler that
// decodes and encodes with encoding/json and validates nothing.
func sdkRaw() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "floor"}, nil)
	for name, fn := range floorTools {
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

// kit is mcpkit with typed tools and no middleware.
func kit() *mcp.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "floor"}, nil)
	for name, fn := range floorTools {
		if err := srv.Add(tools.Must(tools.New(name, fn, nil))); err != nil {
			panic(err)
		}
	}
	return srv.MCPServer()
}

// mcpGo is mcp-go's streamable HTTP server with its typed tools: arguments
// bound to floorIn, the result sent as structured content and as its JSON
// in a text block, as the other servers do. With validate, the arguments and
// the structured result are checked against the tool's schemas, which
// mcp-go does not do by default.
func mcpGo(stateless, validate bool) *mgserver.StreamableHTTPServer {
	opts := []mgserver.ServerOption{mgserver.WithToolCapabilities(false)}
	if validate {
		opts = append(opts, mgserver.WithInputSchemaValidation(), mgserver.WithOutputSchemaValidation())
	}
	s := mgserver.NewMCPServer("floor", "1.0.0", opts...)
	for name, fn := range floorTools {
		s.AddTool(mgmcp.NewTool(name, mgmcp.WithInputSchema[floorIn](), mgmcp.WithOutputSchema[floorOut]()),
			mgmcp.NewStructuredToolHandler(func(ctx context.Context, _ mgmcp.CallToolRequest, in floorIn) (floorOut, error) {
				return fn(ctx, in)
			}))
	}
	if stateless {
		return mgserver.NewStreamableHTTPServer(s, mgserver.WithStateLess(true))
	}
	return mgserver.NewStreamableHTTPServer(s, mgserver.WithStateful(true))
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

// only returns the one tools/call recorded.
func (r *recorder) only(tb testing.TB) recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) != 1 {
		tb.Fatalf("recorded %d calls", len(r.calls))
	}
	return r.calls[0]
}

// replayer is a server ready to serve one recorded tools/call again and again.
type replayer struct {
	h    http.Handler
	call recorded
}

// serve replays the call into the server's handler.
func (r *replayer) serve() *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(r.call.body))
	req.Header = r.call.header.Clone()
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return w
}

// newReplayer serves the named server in mode m, lets a real client (the
// go-sdk's for the go-sdk and mcpkit, mcp-go's for mcp-go) call tool once,
// and returns the handler with the recorded call. In stateful mode the
// client's session stays open until tb ends.
func newReplayer(tb testing.TB, server string, m floorMode, tool string) *replayer {
	switch server {
	case "sdk-raw":
		return recordSDK(tb, sdkRaw(), m, tool)
	case "mcpkit":
		return recordSDK(tb, kit(), m, tool)
	case "mcp-go":
		return recordMCPGo(tb, mcpGo(m.stateless, false), m, tool)
	case "mcp-go+validation":
		return recordMCPGo(tb, mcpGo(m.stateless, true), m, tool)
	}
	tb.Fatalf("unknown server %q", server)
	return nil
}

func recordSDK(tb testing.TB, s *mcp.Server, m floorMode, tool string) *replayer {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: m.stateless, JSONResponse: true})
	rec := &recorder{next: h}
	hs := httptest.NewServer(rec)
	tb.Cleanup(hs.Close)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "floor"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: m.version})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]int{"n": floorArg}}); err != nil || res.IsError {
		tb.Fatalf("%s: %v %v", tool, res, err)
	}
	return &replayer{h: h, call: rec.only(tb)}
}

func recordMCPGo(tb testing.TB, h *mgserver.StreamableHTTPServer, m floorMode, tool string) *replayer {
	rec := &recorder{next: h}
	hs := httptest.NewServer(rec)
	tb.Cleanup(hs.Close)
	ctx := context.Background()
	tr, err := mgtransport.NewStreamableHTTP(hs.URL)
	if err != nil {
		tb.Fatal(err)
	}
	c := mgclient.NewClient(tr, mgclient.WithProtocolVersion(m.version))
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	started, err := c.Initialize(ctx, mgmcp.InitializeRequest{Params: mgmcp.InitializeParams{ClientInfo: mgmcp.Implementation{Name: "floor"}}})
	if err != nil {
		tb.Fatal(err)
	}
	if started.ProtocolVersion != m.version {
		tb.Fatalf("mcp-go negotiated %s, want %s", started.ProtocolVersion, m.version)
	}
	if stateful := c.GetSessionId() != ""; stateful == m.stateless {
		tb.Fatalf("session %q in mode %s", c.GetSessionId(), m.name)
	}
	res, err := c.CallTool(ctx, mgmcp.CallToolRequest{Params: mgmcp.CallToolParams{Name: tool, Arguments: map[string]int{"n": floorArg}}})
	if err != nil || res.IsError {
		tb.Fatalf("%s: %v %v", tool, res, err)
	}
	tb.Cleanup(func() { h.Shutdown(context.Background()) })
	return &replayer{h: h, call: rec.only(tb)}
}

// checkAnswer reports whether w holds a successful tools/call answer whose
// structured content and text block are both the tool's result for floorArg.
func checkAnswer(w *httptest.ResponseRecorder, tool string) error {
	if w.Code != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.300s", w.Code, w.Body.String())
	}
	var resp struct {
		Result *struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		return fmt.Errorf("%v: %.300s", err, w.Body.String())
	}
	res := resp.Result
	if res == nil || res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
		return fmt.Errorf("not one text block and no error: %.300s", w.Body.String())
	}
	want, err := floorTools[tool](context.Background(), floorIn{N: floorArg})
	if err != nil {
		return err
	}
	for what, raw := range map[string][]byte{"structuredContent": res.StructuredContent, "text": []byte(res.Content[0].Text)} {
		var got floorOut
		if err := json.Unmarshal(raw, &got); err != nil {
			return fmt.Errorf("%s: %v: %.300s", what, err, raw)
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s = %.300s, want %+v", what, raw, want)
		}
	}
	return nil
}
