package transform_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// tenantServices are the services of the tenants' own tools: words no
// registered tool of the labelled catalog has.
var tenantServices = strings.Fields("ledger vault harbor orchard quarry beacon summit canyon meadow glacier")

// tenants provides each tenant (the verified user ID of the caller, a
// number) 100 tools of its own, in the words of the labelled catalog, and
// a tool tagged secret: a provider in front of a database, without
// registering a tool per tenant. It keeps the tools of the last keep
// tenants, so that a tool seen again is the same *Tool.
type tenants struct {
	keep int

	mu     sync.Mutex
	recent map[string][]*mcpkit.Tool
	order  []string
}

func newTenants(keep int) *tenants { return &tenants{keep: keep, recent: map[string][]*mcpkit.Tool{}} }

// tenantCatalog returns tenant k's tools, sorted by name.
func tenantCatalog(k int) []*mcpkit.Tool {
	svc := tenantServices[k%len(tenantServices)]
	tenant := strconv.Itoa(k)
	tool := func(name, desc string, tags ...string) *mcpkit.Tool {
		return &mcpkit.Tool{
			Tool: mcp.Tool{Name: name, Description: desc,
				InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer"}}}`)},
			Tags: tags,
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " of tenant " + tenant}}}, nil
			}),
		}
	}
	var ts []*mcpkit.Tool
	for i := range 100 {
		// (verb, object) pairs repeat every 150 tools: these 100 differ.
		verb, obj := searchVerbs[(k+i)%len(searchVerbs)], searchObjects[(7*k+i)%len(searchObjects)]
		ts = append(ts, tool(svc+"_"+verb+"_"+obj, fmt.Sprintf("%s the %s of the %s service.", strings.ToUpper(verb[:1])+verb[1:], obj, svc)))
	}
	ts = append(ts, tool(svc+"_purge_everything", "Purge every record of the "+svc+" service.", "secret"))
	slices.SortFunc(ts, func(a, b *mcpkit.Tool) int { return strings.Compare(a.Name, b.Name) })
	return ts
}

// plain returns the tools of ts that are not secret.
func plain(ts []*mcpkit.Tool) []*mcpkit.Tool {
	return slices.DeleteFunc(slices.Clone(ts), func(t *mcpkit.Tool) bool { return slices.Contains(t.Tags, "secret") })
}

func (p *tenants) catalog(c mcpkit.Caller) []*mcpkit.Tool {
	if c == nil || c.TokenInfo() == nil {
		return nil
	}
	tenant := c.TokenInfo().UserID
	k, err := strconv.Atoi(tenant)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ts, ok := p.recent[tenant]; ok {
		return ts
	}
	ts := tenantCatalog(k)
	if len(p.order) == p.keep {
		delete(p.recent, p.order[0])
		p.order = p.order[1:]
	}
	p.recent[tenant] = ts
	p.order = append(p.order, tenant)
	return ts
}

func (p *tenants) ListTools(_ context.Context, c mcpkit.Caller, after string, limit int) ([]*mcpkit.Tool, error) {
	ts := p.catalog(c)
	i, found := slices.BinarySearchFunc(ts, after, func(t *mcpkit.Tool, name string) int { return strings.Compare(t.Name, name) })
	if found {
		i++
	}
	ts = ts[i:]
	if limit > 0 && len(ts) > limit {
		ts = ts[:limit]
	}
	return ts, nil
}

func (p *tenants) LookupTool(_ context.Context, c mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	ts := p.catalog(c)
	if i, found := slices.BinarySearchFunc(ts, name, func(t *mcpkit.Tool, name string) int { return strings.Compare(t.Name, name) }); found {
		return ts[i], nil
	}
	return nil, nil
}

// searchingTenants is tenants with a search of its own, as a database's
// full-text search would be: the tools with the most words of the query in
// their names, best first.
type searchingTenants struct{ *tenants }

func (p searchingTenants) SearchTools(_ context.Context, c mcpkit.Caller, query string, limit int) ([]*mcpkit.Tool, error) {
	type hit struct {
		t *mcpkit.Tool
		n int
	}
	var hits []hit
	words := strings.Fields(strings.ToLower(query))
	for _, t := range p.catalog(c) {
		n := 0
		for _, part := range strings.Split(t.Name, "_") {
			if slices.Contains(words, part) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, hit{t, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.n, a.n) })
	var out []*mcpkit.Tool
	for _, h := range hits[:min(len(hits), limit)] {
		out = append(out, h.t)
	}
	return out, nil
}

// providerKinds are the two ways a search reaches a provider's tools: its
// own search, or a listing of the caller's tools.
var providerKinds = []struct {
	name string
	make func(keep int) mcpkit.Provider
}{
	{"searcher", func(keep int) mcpkit.Provider { return searchingTenants{newTenants(keep)} }},
	{"scan", func(keep int) mcpkit.Provider { return newTenants(keep) }},
}

// providerSearchTokens: ann is tenant 3 and bob tenant 4; root is tenant
// 3 with the admin scope, which the secret tools require.
var providerSearchTokens = map[string]*auth.TokenInfo{
	"ann":  {UserID: "3"},
	"bob":  {UserID: "4"},
	"root": {UserID: "3", Scopes: []string{"admin"}},
}

// providerSearchServer serves n tools of the labelled catalog and the
// tenants' tools of p, all behind the meta-tools, with the secret tools
// visible to the admin scope only.
func providerSearchServer(t testing.TB, n int, p mcpkit.Provider) (*mcpkit.Server, []*mcpkit.Tool) {
	t.Helper()
	srv, tools := searchServer(t, n)
	srv.AddProvider(p)
	visibility.New(visibility.Require(mcpkit.Tagged("secret"), visibility.Scopes("admin"))).Attach(srv)
	return srv, tools
}

// searchNames returns the names search_tools finds for query.
func searchNames(t *testing.T, ts *mcpkittest.Server, query string) []string {
	t.Helper()
	res, err := ts.CallTool(t.Context(), transform.SearchToolName, map[string]any{"query": query})
	if err != nil || res.IsError {
		t.Fatalf("search_tools %q = %v, %v", query, res, err)
	}
	var out transform.SearchOut
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range out.Tools {
		names = append(names, f.Name)
	}
	return names
}

// TestSearchProviders checks search_tools, describe_tool and call_tool on
// the tools of a provider that gives each tenant its own, through a real
// client over HTTP: each caller finds, describes and calls its tenant's
// tools and not another's, a tool hidden from the caller is unknown
// through every meta-tool, and registered and provided tools are ranked
// together.
func TestSearchProviders(t *testing.T) {
	for _, kind := range providerKinds {
		t.Run(kind.name, func(t *testing.T) {
			srv, _ := providerSearchServer(t, 1000, kind.make(8))
			session := func(who string) *mcpkittest.Server {
				return mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: providerSearchTokens, Token: who})
			}
			ann, bob, root := session("ann"), session("bob"), session("root")
			anon := mcpkittest.NewStatelessServer(t, srv, nil)
			ctx := t.Context()

			svc := tenantServices[3] // ann's service
			mine := plain(tenantCatalog(3))[0].Name
			q := strings.ReplaceAll(mine, "_", " ")
			if got := searchNames(t, ann, q); len(got) == 0 || got[0] != mine {
				t.Errorf("ann's search for %q = %v; want %s first", q, got, mine)
			}
			for _, who := range []*mcpkittest.Server{bob, anon} {
				if got := searchNames(t, who, q); slices.Contains(got, mine) {
					t.Errorf("another tenant found ann's %s: %v", mine, got)
				}
			}
			// What bob finds is his or registered, never ann's service.
			for _, name := range searchNames(t, bob, q) {
				if strings.HasPrefix(name, svc+"_") {
					t.Errorf("bob found %s, of ann's service", name)
				}
			}
			if got := listNames(t, ann); got != "call_tool,describe_tool,search_tools" {
				t.Errorf("ann's tools/list = %s; want only the meta-tools", got)
			}

			res, err := ann.CallTool(ctx, transform.CallToolName, map[string]any{"name": mine, "arguments": map[string]any{"id": "x"}})
			if err != nil || res.IsError || onlyText(res) != mine+" of tenant 3" {
				t.Errorf("ann's call_tool of %s = %v, %v", mine, res, err)
			}
			res, err = ann.CallTool(ctx, transform.DescribeToolName, map[string]any{"name": mine})
			if err != nil || res.IsError || !strings.Contains(onlyText(res), `"limit"`) {
				t.Errorf("ann's describe_tool of %s = %v, %v", mine, res, err)
			}
			// The provided tool's own validation runs behind call_tool.
			res, err = ann.CallTool(ctx, transform.CallToolName, map[string]any{"name": mine, "arguments": map[string]any{"limit": "ten"}})
			if err != nil || !res.IsError || !strings.Contains(onlyText(res), "limit") {
				t.Errorf("ann's call_tool with a bad limit = %v, %v; want the validation error", res, err)
			}

			// Another tenant's tool and a hidden tool answer as a name
			// never served, through describe_tool and call_tool.
			secret := svc + "_purge_everything"
			for _, tool := range []string{transform.DescribeToolName, transform.CallToolName} {
				never, _ := bob.CallTool(ctx, tool, map[string]any{"name": "no_such_tool"})
				for _, c := range []struct {
					who  string
					ts   *mcpkittest.Server
					name string
				}{{"bob", bob, mine}, {"anon", anon, mine}, {"ann", ann, secret}} {
					res, err := c.ts.CallTool(ctx, tool, map[string]any{"name": c.name})
					if want := strings.ReplaceAll(onlyText(never), "no_such_tool", c.name); err != nil || onlyText(res) != want {
						t.Errorf("%s's %s of %s = %q, %v; want %q", c.who, tool, c.name, onlyText(res), err, want)
					}
				}
			}
			if got := searchNames(t, ann, "purge everything "+svc); slices.Contains(got, secret) {
				t.Errorf("ann found the secret tool: %v", got)
			}
			if got := searchNames(t, root, "purge everything "+svc); len(got) == 0 || got[0] != secret {
				t.Errorf("root's search for the secret tool = %v; want it first", got)
			}
			res, err = root.CallTool(ctx, transform.CallToolName, map[string]any{"name": secret})
			if err != nil || res.IsError || onlyText(res) != secret+" of tenant 3" {
				t.Errorf("root's call_tool of %s = %v, %v", secret, res, err)
			}

			// Verb and object alone: a registered tool (billing_...) and
			// ann's are both found, best first, at about the same score.
			parts := strings.Split(mine, "_")
			both := searchNames(t, ann, parts[1]+" "+parts[2])
			if !slices.Contains(both, "billing_"+parts[1]+"_"+parts[2]) || !slices.Contains(both, mine) {
				t.Errorf("ann's search for %q = %v; want billing's and ann's", parts[1]+" "+parts[2], both)
			}
			if len(both) > 10 {
				t.Errorf("the search returned %d tools; the limit is 10", len(both))
			}
		})
	}
}

// TestSearchRecallProviders holds recall@10 at 0.95 or more on labelled
// queries of which half mean one of the caller's provided tools and half a
// registered one, at 10,000 registered tools, for either kind of provider.
func TestSearchRecallProviders(t *testing.T) {
	for _, kind := range providerKinds {
		t.Run(kind.name, func(t *testing.T) {
			srv, registered := providerSearchServer(t, 10_000, kind.make(8))
			ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: providerSearchTokens, Token: "ann"})
			queries, want := labelled(registered, 50)
			pq, pw := labelled(plain(tenantCatalog(3)), 50)
			queries, want = append(queries, pq...), append(want, pw...)
			if r := recallAt10(t, ts.Session, queries, want); r < 0.95 {
				t.Errorf("recall@10 = %.3f, want at least 0.95", r)
			}
		})
	}
}

// BenchmarkSearchProviders measures one search_tools call (its handler,
// with the caller's token) at 1,000 and 100,000 registered tools, without
// providers and with a provider of 100 tools per tenant, of either kind,
// for a tenant drawn at random per search from 10 or from 10,000. The
// provider keeps the tools of its last 64 tenants: with 10 tenants a tool
// seen again is the same *Tool, with 10,000 it is mostly made anew, as a
// provider in front of a database with a small cache would. Half the
// queries mean a registered tool, half one of the tenant's.
func BenchmarkSearchProviders(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		srv, registered := searchServer(b, n)
		visibility.New(visibility.Require(mcpkit.Tagged("secret"), visibility.Scopes("admin"))).Attach(srv)
		search, h, ok := srv.Resolve(context.Background(), nil, transform.SearchToolName, nil)
		if !ok {
			b.Fatal("no search_tools")
		}
		queries, _ := labelled(registered, 100)
		for _, c := range []struct {
			name    string
			p       mcpkit.Provider
			tenants int
		}{
			{"registered-only", nil, 10_000},
			{"searcher/tenants=10", searchingTenants{newTenants(64)}, 10},
			{"searcher/tenants=10000", searchingTenants{newTenants(64)}, 10_000},
			{"scan/tenants=10", newTenants(64), 10},
			{"scan/tenants=10000", newTenants(64), 10_000},
		} {
			b.Run(fmt.Sprintf("tools=%d/%s", n, c.name), func(b *testing.B) {
				if c.p != nil {
					srv.AddProvider(c.p)
					defer srv.RemoveProvider(c.p)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				reqs := make([]*mcpkit.Request, 1000)
				for i := range reqs {
					k := rng.IntN(c.tenants)
					q := queries[i%len(queries)]
					if i%2 == 1 {
						q = strings.ReplaceAll(tenantCatalog(k)[rng.IntN(100)].Name, "_", " ")
					}
					reqs[i] = mcpkittest.NewRequest(search, map[string]any{"query": q, "limit": 10},
						mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: strconv.Itoa(k)}))
				}
				ctx := context.Background()
				h.ServeTool(ctx, reqs[0]) // makes the index of this generation
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					res, err := h.ServeTool(ctx, reqs[i%len(reqs)])
					if err != nil || res.IsError {
						b.Fatal(res, err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkSearchAfterChange measures a change and the search after it, at
// 100,000 registered tools behind the meta-tools: the search brings the
// index up to the server's generation. ProviderChanged changes no indexed
// tool; Add adds one (removed again outside the timing).
func BenchmarkSearchAfterChange(b *testing.B) {
	srv, registered := searchServer(b, 100_000)
	search, h, _ := srv.Resolve(context.Background(), nil, transform.SearchToolName, nil)
	queries, _ := labelled(registered, 100)
	req := mcpkittest.NewRequest(search, map[string]any{"query": queries[0], "limit": 10})
	ctx := context.Background()
	serve := func() {
		if res, err := h.ServeTool(ctx, req); err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
	serve()
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve()
		}
	})
	b.Run("ProviderChanged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			srv.ProviderChanged("")
			serve()
		}
	})
	b.Run("Add", func(b *testing.B) {
		late := &mcpkit.Tool{Tool: mcp.Tool{Name: "quantum_teleport_parcels", Description: "Teleport parcels.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil })}
		b.ReportAllocs()
		for b.Loop() {
			if err := srv.Add(late); err != nil {
				b.Fatal(err)
			}
			serve()
			b.StopTimer()
			srv.Remove(late.Name)
			serve()
			b.StartTimer()
		}
	})
}
