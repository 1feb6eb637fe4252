package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// Helpers shared by the tests of this package.

var objectSchema = &jsonschema.Schema{Type: "object"}

// newTool returns a tool named name with an empty object schema.
func newTool(name string, h mcpkit.HandlerFunc) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: objectSchema}, Handler: h}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func ok(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return textResult("ok"), nil
}

// resultText returns the text of the single text content of res.
func resultText(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) != 1 {
		t.Fatalf("got %+v, want one content block", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// call calls h with a request for tool and args.
func call(t testing.TB, h mcpkit.Handler, tool *mcpkit.Tool, args any) (*mcp.CallToolResult, error) {
	t.Helper()
	return h.ServeTool(context.Background(), mcpkittest.NewRequest(tool, args))
}

// newServer returns a server with mw in its server-wide chain and tools.
func newServer(t testing.TB, mw []mcpkit.Middleware, tools ...*mcpkit.Tool) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "middleware-test"}, nil)
	srv.Use(mw...)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return srv
}

// transports runs f once on stateful and once on stateless streamable
// HTTP, the two transports where results reach a real client over the wire.
func transports(t *testing.T, f func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server)) {
	variants := []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"stateful", mcpkittest.NewServer},
		{"stateless", mcpkittest.NewStatelessServer},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f(t, func(s *mcpkit.Server) *mcpkittest.Server { return v.connect(t, s, nil) })
		})
	}
}

// logBuffer collects JSON log records; it is safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// logger returns a logger writing JSON records of every level to b.
func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records returns the records written so far.
func (b *logBuffer) records(t testing.TB) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var recs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(b.buf.Bytes()))
	for {
		var r map[string]any
		if err := dec.Decode(&r); err == io.EOF {
			return recs
		} else if err != nil {
			t.Fatalf("bad log record: %v", err)
		}
		recs = append(recs, r)
	}
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// recordingTransport records every byte of the HTTP responses a client
// receives.
type recordingTransport struct {
	base *http.Transport
	mu   sync.Mutex
	body bytes.Buffer
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &recordingBody{rc: resp.Body, rt: rt}
	return resp, nil
}

func (rt *recordingTransport) String() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.body.String()
}

type recordingBody struct {
	rc io.ReadCloser
	rt *recordingTransport
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.rt.mu.Lock()
	b.rt.body.Write(p[:n])
	b.rt.mu.Unlock()
	return n, err
}

func (b *recordingBody) Close() error { return b.rc.Close() }

// recordingSession connects a second client session to ts whose HTTP
// responses are recorded in the returned transport.
func recordingSession(t *testing.T, ts *mcpkittest.Server, version string) (*mcp.ClientSession, *recordingTransport) {
	t.Helper()
	rt := &recordingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(rt.base.CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "recorder", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, rt
}

// mustNotContain fails t if any of the texts contains secret.
func mustNotContain(t *testing.T, secret string, texts map[string]string) {
	t.Helper()
	for what, s := range texts {
		if strings.Contains(s, secret) {
			t.Errorf("%s contains the secret %q: %s", what, secret, s)
		}
	}
}

// TestForToolsTimeouts is the per-tool setting docs/concepts.md
// shows: 30s for every tool, 5 minutes for report, as two selections.
func TestForToolsTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		blocked := func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		report := mcpkit.Named("report")
		srv := newServer(t, []mcpkit.Middleware{
			mcpkit.ForTools(mcpkit.Not(report), middleware.Timeout(30*time.Second, nil)),
			mcpkit.ForTools(report, middleware.Timeout(5*time.Minute, nil)),
		}, newTool("report", blocked), newTool("search", blocked))
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		for name, want := range map[string]time.Duration{"report": 5 * time.Minute, "search": 30 * time.Second} {
			start := time.Now()
			res, err := ts.CallTool(t.Context(), name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took != want || !res.IsError || !strings.Contains(resultText(t, res), "timed out after "+want.String()) {
				t.Errorf("%s: answered after %v with %q, want a timeout after %v", name, took, resultText(t, res), want)
			}
			if ms, _ := res.Meta[middleware.MetaKeyTimeout].(float64); ms != float64(want.Milliseconds()) {
				t.Errorf("%s: _meta timeout = %v", name, res.Meta[middleware.MetaKeyTimeout])
			}
		}
		layers, _ := srv.Pipeline("search")
		if len(layers) < 2 || layers[0].Name != "middleware.Timeout" || layers[0].Skipped || !layers[1].Skipped {
			t.Errorf("search's pipeline: %+v", layers)
		}
	})
}

// TestUnselectedLayersCostNothing checks that middleware ForTools does not
// select for a tool is never even built for it, and that its calls cost
// what they cost without it.
func TestUnselectedLayersCostNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool allocate")
	}
	built := 0
	counting := func(next mcpkit.Handler) mcpkit.Handler {
		built++
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return next.ServeTool(ctx, req)
		})
	}
	allocs := func(mw ...mcpkit.Middleware) float64 {
		srv := newServer(t, mw, newTool("t", ok))
		h, _ := srv.Handler("t")
		tl, _ := srv.Lookup("t")
		req := mcpkittest.NewRequest(tl, nil)
		return testing.AllocsPerRun(100, func() { h.ServeTool(context.Background(), req) })
	}
	bare := allocs()
	skipped := allocs(mcpkit.ForTools(mcpkit.Named("other"), counting, middleware.Timeout(time.Minute, nil)))
	if built != 0 || skipped != bare {
		t.Errorf("an unselected layer was built %d times and costs %v allocations per call (bare: %v)", built, skipped, bare)
	}
}
