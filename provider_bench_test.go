package mcpkit

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// manyTenants provides 100 tools to each of 10,000 tenants (the caller's
// user ID), built on demand and kept for the last 64 tenants only: a
// provider in front of a database, without 1,000,000 registrations.
type manyTenants struct {
	schema json.RawMessage
	mu     sync.Mutex
	recent map[string][]*Tool
	order  []string
}

func (p *manyTenants) catalog(c Caller) []*Tool {
	tenant := c.TokenInfo().UserID
	p.mu.Lock()
	defer p.mu.Unlock()
	if ts, ok := p.recent[tenant]; ok {
		return ts
	}
	ts := make([]*Tool, 100)
	for i := range ts {
		ts[i] = &Tool{
			Tool:    mcp.Tool{Name: fmt.Sprintf("op_%03d", i), Description: "An operation of " + tenant, InputSchema: p.schema},
			Handler: HandlerFunc(func(context.Context, *Request) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil }),
		}
	}
	if len(p.order) == 64 {
		delete(p.recent, p.order[0])
		p.order = p.order[1:]
	}
	p.recent[tenant] = ts
	p.order = append(p.order, tenant)
	return ts
}

func (p *manyTenants) ListTools(_ context.Context, c Caller, after string, limit int) ([]*Tool, error) {
	ts := p.catalog(c)
	ts = ts[sort.Search(len(ts), func(i int) bool { return ts[i].Name > after }):]
	if limit > 0 && len(ts) > limit {
		ts = ts[:limit]
	}
	return ts, nil
}

func (p *manyTenants) LookupTool(_ context.Context, c Caller, name string) (*Tool, error) {
	ts := p.catalog(c)
	if i := sort.Search(len(ts), func(i int) bool { return ts[i].Name >= name }); i < len(ts) && ts[i].Name == name {
		return ts[i], nil
	}
	return nil, nil
}

// BenchmarkProvider lists the first page (the 100 tools of a tenant) and
// calls one tool, for a tenant drawn from 10,000, on a server whose only
// tools come from a provider: per request cost, and the heap the server
// and the provider keep after the run (kept-bytes), which does not grow
// with the tenants.
func BenchmarkProvider(b *testing.B) {
	for _, tenants := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("tenants=%d", tenants), func(b *testing.B) {
			srv := NewServer(&mcp.Implementation{Name: "tenants"}, nil)
			p := &manyTenants{schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`), recent: map[string][]*Tool{}}
			srv.AddProvider(p)
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				info := &auth.TokenInfo{UserID: fmt.Sprintf("tenant-%05d", i%tenants)}
				i++
				extra := &mcp.RequestExtra{TokenInfo: info}
				st := srv.state.Load()
				lreq := &ListRequest{Call: &mcp.ListToolsRequest{Extra: extra}, Limit: 101, page: &pageState{}}
				page := srv.basePage(context.Background(), st, lreq)
				if len(page) != 100 {
					b.Fatalf("%d tools", len(page))
				}
				call := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "op_042", Arguments: json.RawMessage(`{"a":1}`)}, Extra: extra}
				req := &Request{Call: call, Arguments: call.Params.Arguments}
				e := srv.reach(context.Background(), st, req, KindTool, "op_042", pin{})
				if e == nil {
					b.Fatal("op_042 not found")
				}
				req.Tool = e.tool
				if _, err := srv.run(context.Background(), e, req); err != nil {
					b.Fatal(err)
				}
			}
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "kept-bytes")
		})
	}
}
