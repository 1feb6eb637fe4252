package mcpkit

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mountBenchTool is a tool with a one-property schema, a pass-through
// middleware of its own, and a handler that answers at once.
func mountBenchTool() *Tool {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	return &Tool{
		Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)},
		Middleware: []Middleware{func(next Handler) Handler {
			return HandlerFunc(func(ctx context.Context, req *Request) (*mcp.CallToolResult, error) { return next.ServeTool(ctx, req) })
		}},
		Handler: HandlerFunc(func(context.Context, *Request) (*mcp.CallToolResult, error) { return res, nil }),
	}
}

// mountBenchServers returns a server that registers the tool t, and a
// parent that mounts, under "m", a child that registers the same tool.
func mountBenchServers(b testing.TB) (direct, parent *Server) {
	direct = NewServer(&mcp.Implementation{Name: "direct"}, nil)
	if err := direct.Add(mountBenchTool()); err != nil {
		b.Fatal(err)
	}
	child := NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := child.Add(mountBenchTool()); err != nil {
		b.Fatal(err)
	}
	parent = NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("m", child); err != nil {
		b.Fatal(err)
	}
	return direct, parent
}

// BenchmarkMount compares a call of a tool registered directly with a
// call of the same tool mounted from another server (as m_t): "server"
// is the server's own work for a call once the SDK has decoded it (find
// the tool the caller reaches, run its chain, map the outcome), and
// "inmemory" a whole tools/call through an SDK client over in-memory
// transports.
func BenchmarkMount(b *testing.B) {
	direct, parent := mountBenchServers(b)
	args := json.RawMessage(`{"a":1}`)
	// What call and serveRouted do once the SDK has decoded the call.
	serve := func(b *testing.B, srv *Server, name string) {
		call := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: args}}
		b.ReportAllocs()
		for b.Loop() {
			req := &Request{Call: call, Arguments: args}
			e := srv.reach(context.Background(), srv.state.Load(), req, KindTool, name, pinOf(call))
			if e == nil {
				b.Fatal(name, "not found")
			}
			req.Tool = e.tool
			if res, err := srv.run(context.Background(), e, req); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	b.Run("server/direct", func(b *testing.B) { serve(b, direct, "t") })
	b.Run("server/mounted", func(b *testing.B) { serve(b, parent, "m_t") })
	for _, c := range []struct {
		name, tool string
		srv        *Server
	}{{"inmemory/direct", "t", direct}, {"inmemory/mounted", "m_t", parent}} {
		b.Run(c.name, func(b *testing.B) {
			st, ct := mcp.NewInMemoryTransports()
			ss, err := c.srv.Connect(context.Background(), st, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close(); ss.Close() })
			params := &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"a": 1}}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}
