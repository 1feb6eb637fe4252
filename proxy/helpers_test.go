package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/proxy"
)

// upstreamEnv, when set, makes the test binary an upstream MCP server over
// stdio (see TestMain): the tests proxy a command without building one.
const upstreamEnv = "MCPKIT_PROXY_TEST_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(upstreamEnv) != "" {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "stdio-upstream"}, nil)
		addTools(srv, newProbe())
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probe sees what the upstream's tools see, and holds the ones that wait.
type probe struct {
	started chan string   // the name of a tool that waits, when it starts
	release chan struct{} // lets a waiting tool return
	ended   chan error    // a waiting tool's context error, when it ends
	proceed chan struct{} // lets the progress tool finish
	mu      sync.Mutex
	metas   []mcp.Meta // the _meta of each call of "meta"
	calls   int        // calls of "echo"
}

func newProbe() *probe {
	return &probe{started: make(chan string, 8), release: make(chan struct{}), ended: make(chan error, 8), proceed: make(chan struct{}, 1)}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func objectSchema(props string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
}

// addTools registers the upstream's tools on srv.
func addTools(srv *mcpkit.Server, p *probe) {
	add := func(name, props string, h mcpkit.HandlerFunc) {
		if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: name, Description: "the " + name + " tool", InputSchema: objectSchema(props)}, Handler: h}); err != nil {
			panic(err)
		}
	}
	add("echo", `"say":{"type":"string"}`, func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		p.mu.Lock()
		p.calls++
		p.mu.Unlock()
		var in struct{ Say string }
		json.Unmarshal(req.Arguments, &in)
		return text("echo: " + in.Say), nil
	})
	add("fail", ``, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return nil, mcpkit.NewToolError(fmt.Errorf("no such repository"), mcpkit.Fatal)
	})
	add("rpcerr", ``, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return nil, mcpkit.NewProtocolError(jsonrpc.CodeInternalError, "database on fire")
	})
	add("meta", ``, func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		p.mu.Lock()
		p.metas = append(p.metas, req.Meta())
		p.mu.Unlock()
		return text("ok"), nil
	})
	add("wait", ``, func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		p.started <- "wait"
		select {
		case <-p.release:
			return text("released"), nil
		case <-ctx.Done():
			p.ended <- ctx.Err()
			return nil, ctx.Err()
		}
	})
	add("die", ``, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		os.Exit(3) // only the stdio upstream has a process of its own to end
		return nil, nil
	})
	add("huge", `"n":{"type":"integer"}`, func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		var in struct{ N int }
		json.Unmarshal(req.Arguments, &in)
		return text(strings.Repeat("x", in.N)), nil
	})
	add("steps", ``, func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		mcpkit.ReportProgress(ctx, 1, 2, "half way")
		<-p.proceed
		return text("done"), nil
	})
	add("ask", ``, func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		answer, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "name")
		if !ok {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
					Message:         "Your name?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
				}},
				RequestState: "asked-once",
			}, nil
		}
		if req.Call.Params.RequestState != "asked-once" {
			return nil, mcpkit.ToolErrorf("lost the request state: %q", req.Call.Params.RequestState)
		}
		return text(fmt.Sprintf("hello %v", answer.Content["name"])), nil
	})
}

// upstream is an upstream mcpkit server on a loopback HTTP port that
// records the Authorization headers it receives.
type upstream struct {
	srv   *mcpkit.Server
	probe *probe
	url   string

	close func()

	mu    sync.Mutex
	auths map[string]bool
}

// newUpstream serves the test tools over streamable HTTP; sessions gives
// older clients a session, so that list_changed notifications reach them.
// pageSize is the size of its tools/list pages.
func newUpstream(t *testing.T, sessions bool, pageSize int) *upstream {
	t.Helper()
	u := &upstream{probe: newProbe(), auths: map[string]bool{}}
	u.srv = mcpkit.NewServer(&mcp.Implementation{Name: "crm", Version: "1"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: pageSize}})
	addTools(u.srv, u.probe)
	h := u.srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: sessions})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auths[r.Header.Get("Authorization")] = true
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u.url = ts.URL
	u.close = func() { ts.Listener.Close(); ts.CloseClientConnections() }
	return u
}

// closeUpstream stops the upstream's HTTP server: it is gone.
func closeUpstream(t *testing.T, u *upstream) {
	t.Helper()
	u.close()
}

// authorizations returns the Authorization headers the upstream saw.
func (u *upstream) authorizations() map[string]bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := map[string]bool{}
	for k := range u.auths {
		out[k] = true
	}
	return out
}

// newProxy connects to dial and fails the test on error; the Upstream is
// closed when the test ends.
func newProxy(t testing.TB, dial proxy.Dial, opts *proxy.Options) *proxy.Upstream {
	t.Helper()
	up, err := proxy.New(t.Context(), dial, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return up
}

// inMemory returns a Dial to srv over the SDK's in-memory transports.
func inMemory(srv *mcpkit.Server) proxy.Dial {
	return func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}
