package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// tenantProvider serves each tenant (the verified user's "tenant" claim)
// its own tools, count of them, named prefix_000 ... in name order, built
// once and kept, as a provider backed by a database would cache them.
type tenantProvider struct {
	counts map[string]int // tenant -> number of tools
	prefix map[string]string

	mu    sync.Mutex
	tools map[string][]*mcpkit.Tool // by tenant
	lists atomic.Int64
}

func (p *tenantProvider) catalog(c mcpkit.Caller) []*mcpkit.Tool {
	info := c.TokenInfo()
	if info == nil {
		return nil
	}
	tenant, _ := info.Extra["tenant"].(string)
	p.mu.Lock()
	defer p.mu.Unlock()
	if ts, ok := p.tools[tenant]; ok {
		return ts
	}
	var ts []*mcpkit.Tool
	for i := range p.counts[tenant] {
		name := fmt.Sprintf("%s_%03d", p.prefix[tenant], i)
		ts = append(ts, &mcpkit.Tool{
			Tool: mcp.Tool{Name: name, Description: "A tool of " + tenant, InputSchema: json.RawMessage(
				`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"additionalProperties":false}`)},
			Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tenant + ":" + req.Tool.Name + ":" + string(req.Arguments)}}}, nil
			}),
		})
	}
	if ts != nil {
		ts[len(ts)-1].Tags = []string{"secret"}
	}
	if p.tools == nil {
		p.tools = map[string][]*mcpkit.Tool{}
	}
	p.tools[tenant] = ts
	return ts
}

func (p *tenantProvider) ListTools(_ context.Context, c mcpkit.Caller, after string, limit int) ([]*mcpkit.Tool, error) {
	p.lists.Add(1)
	ts := p.catalog(c)
	i := sort.Search(len(ts), func(i int) bool { return ts[i].Name > after })
	ts = ts[i:]
	if limit > 0 && len(ts) > limit {
		ts = ts[:limit]
	}
	return ts, nil
}

func (p *tenantProvider) LookupTool(_ context.Context, c mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	for _, t := range p.catalog(c) {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, nil
}

var tenantTokens = map[string]*auth.TokenInfo{
	"alice": {UserID: "alice", Extra: map[string]any{"tenant": "acme"}, Expiration: time.Now().Add(time.Hour)},
	"bob":   {UserID: "bob", Extra: map[string]any{"tenant": "globex"}, Expiration: time.Now().Add(time.Hour)},
	"root":  {UserID: "root", Scopes: []string{"admin"}, Extra: map[string]any{"tenant": "acme"}, Expiration: time.Now().Add(time.Hour)},
}

// newTenantServer serves two registered tools and a tenant provider (acme:
// 130 tools p_000..., globex: 70 tools q_000...), with pages of 40, a rule
// that shows the tools tagged secret to admins only, and a middleware that
// counts the calls it sees.
func newTenantServer(t *testing.T, seen *atomic.Int64) (*mcpkit.Server, *tenantProvider) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "tenants"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 40}})
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			seen.Add(1)
			return next.ServeTool(ctx, req)
		})
	})
	visibility.New(visibility.Require(mcpkit.Tagged("secret"), visibility.Scopes("admin"))).Attach(srv)
	for _, name := range []string{"alpha", "q_010x"} {
		if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, Handler: reply(name)}); err != nil {
			t.Fatal(err)
		}
	}
	p := &tenantProvider{counts: map[string]int{"acme": 130, "globex": 70}, prefix: map[string]string{"acme": "p", "globex": "q"}}
	srv.AddProvider(p)
	return srv, p
}

// listAll reads every page of tools/list.
func listAll(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	return names
}

// Through real clients: each tenant lists the registered tools and its own
// provided ones, merged in name order across pages; calls of provided
// tools go through the middleware and validation; a provided tool hidden
// from the caller is an unknown tool; another tenant's tool is unknown.
func TestProvider(t *testing.T) {
	var seen atomic.Int64
	srv, _ := newTenantServer(t, &seen)
	for _, token := range []string{"alice", "bob", "root"} {
		t.Run(token, func(t *testing.T) {
			ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tenantTokens, Token: token})
			cs := ts.Session
			var want []string
			switch token {
			case "alice":
				for i := range 129 { // p_129 is secret
					want = append(want, fmt.Sprintf("p_%03d", i))
				}
			case "root":
				for i := range 130 {
					want = append(want, fmt.Sprintf("p_%03d", i))
				}
			case "bob":
				for i := range 69 {
					want = append(want, fmt.Sprintf("q_%03d", i))
				}
			}
			want = append(want, "alpha", "q_010x")
			slices.Sort(want)
			if got := listAll(t, cs); !slices.Equal(got, want) {
				t.Errorf("listed %d tools, want %d: %v", len(got), len(want), got[:min(5, len(got))])
			}

			own, other := "p_007", "q_007"
			if token == "bob" {
				own, other = other, own
			}
			before := seen.Load()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: own, Arguments: map[string]any{"n": 2}})
			if err != nil || res.IsError || !strings.HasSuffix(res.Content[0].(*mcp.TextContent).Text, ":"+own+`:{"n":2}`) {
				t.Errorf("call %s: %+v, %v", own, res, err)
			}
			if seen.Load() != before+1 {
				t.Errorf("the server's middleware did not see the call of a provided tool")
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: own, Arguments: map[string]any{"n": 0}})
			if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "want >= 1") {
				t.Errorf("call %s with n=0: %+v, %v; want the validation error", own, res, err)
			}
			for _, name := range []string{other, "never_registered"} {
				_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name})
				if !isUnknown(err, name) {
					t.Errorf("call %s: %v; want unknown tool", name, err)
				}
			}
			if token != "bob" {
				_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "p_129", Arguments: map[string]any{"n": 1}})
				if hidden := token != "root"; hidden != isUnknown(err, "p_129") {
					t.Errorf("%s calls p_129 (secret): %v", token, err)
				}
			}
		})
	}
}

// isUnknown reports whether err is the answer to a call of a name never
// registered.
func isUnknown(err error, name string) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams && werr.Message == fmt.Sprintf("unknown tool %q", name)
}

// ProviderChanged tells listening clients that the list changed.
func TestProviderChanged(t *testing.T) {
	var seen atomic.Int64
	srv, _ := newTenantServer(t, &seen)
	heard := make(chan struct{}, 8)
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: tenantTokens, Token: "alice", Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { heard <- struct{}{} },
	}})
	listAll(t, ts.Session)
	for len(heard) > 0 {
		<-heard
	}
	srv.ProviderChanged("")
	select {
	case <-heard:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed after ProviderChanged")
	}
}
