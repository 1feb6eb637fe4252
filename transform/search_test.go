package transform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// The labelled catalog: one tool per service, verb and object, as an
// OpenAPI-generated server has them ("billing_list_invoices"), with a
// description in words of its own and an argument or two.
var (
	searchServices = strings.Fields("billing crm inventory shipping support payroll marketing analytics identity storage " +
		"calendar mail chat search maps weather news finance travel health " +
		"legal docs wiki build deploy monitor alerts logs metrics traces " +
		"orders cart catalog pricing tax refunds returns loyalty coupons reviews " +
		"fleet drivers routes warehouses suppliers contracts tenders assets tickets projects " +
		// 67 services in all: 100,500 tools, so that BenchmarkSearch has its
		// 100,000.
		"music video photos printing backup recovery compliance risk procurement hiring " +
		"onboarding training surveys forms notes tasks boards")
	searchVerbs = strings.Fields("list get create update delete archive restore export import approve " +
		"reject assign close reopen merge split count search sync validate " +
		"publish retract schedule cancel renew suspend resume rotate revoke audit")
	searchObjects = strings.Fields("invoices customers accounts contacts items orders shipments parcels tickets agents " +
		"employees salaries campaigns segments reports dashboards users roles buckets files " +
		"events meetings messages threads queries places forecasts articles budgets trips " +
		"cases contracts pages builds releases incidents entries series spans carts " +
		"products prices rates credits points vouchers ratings vehicles licenses stops")
)

func searchCatalog(n int) []*mcpkit.Tool {
	var tools []*mcpkit.Tool
	for _, svc := range searchServices {
		for _, verb := range searchVerbs {
			for _, obj := range searchObjects {
				if len(tools) == n {
					return tools
				}
				tools = append(tools, &mcpkit.Tool{
					Tool: mcp.Tool{
						Name:        svc + "_" + verb + "_" + obj,
						Description: fmt.Sprintf("%s the %s of the %s service.", strings.ToUpper(verb[:1])+verb[1:], obj, svc),
						InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer"}}}`),
					},
					Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }),
				})
			}
		}
	}
	return tools
}

// searchServer serves the labelled catalog of n tools behind the
// meta-tools.
func searchServer(t testing.TB, n int) (*mcpkit.Server, []*mcpkit.Tool) {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "search"}, nil)
	tools := searchCatalog(n)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	return srv, tools
}

// labelled returns queries and the tool each means: the words a person
// would type (verb and object, in either order, and the service, sometimes
// left out), never the tool's name as written.
func labelled(tools []*mcpkit.Tool, count int) (queries []string, want []string) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range count {
		t := tools[rng.IntN(len(tools))]
		parts := strings.Split(t.Name, "_")
		svc, verb, obj := parts[0], parts[1], parts[2]
		q := []string{verb, obj, svc}
		rng.Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] })
		queries = append(queries, strings.Join(q, " "))
		want = append(want, t.Name)
	}
	return queries, want
}

// recallAt10 runs the queries through search_tools and returns the share
// whose tool is among the first ten found.
func recallAt10(t testing.TB, cs *mcp.ClientSession, queries, want []string) float64 {
	t.Helper()
	hits := 0
	for i, q := range queries {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: transform.SearchToolName, Arguments: map[string]any{"query": q, "limit": 10}})
		if err != nil || res.IsError {
			t.Fatalf("search %q: %v %+v", q, err, res)
		}
		var out transform.SearchOut
		data, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(data, &out)
		for _, f := range out.Tools {
			if f.Name == want[i] {
				hits++
				break
			}
		}
	}
	return float64(hits) / float64(len(queries))
}

// TestSearchRecall checks search_tools' ranking on a labelled set over a
// catalog of 10,000 tools: the tool a query means is among the first ten
// for at least 95% of the queries. It also checks that the index follows
// the registry: a tool added after a search is found, one removed is not.
func TestSearchRecall(t *testing.T) {
	srv, tools := searchServer(t, 10_000)
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	queries, want := labelled(tools, 200)
	if r := recallAt10(t, ts.Session, queries, want); r < 0.95 {
		t.Errorf("recall@10 = %.3f, want at least 0.95", r)
	}

	late := &mcpkit.Tool{Tool: mcp.Tool{Name: "quantum_teleport_parcels", Description: "Teleport parcels.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil })}
	if err := srv.Add(late); err != nil {
		t.Fatal(err)
	}
	if r := recallAt10(t, ts.Session, []string{"teleport quantum"}, []string{late.Name}); r != 1 {
		t.Errorf("a tool added after the index was made is not found")
	}
	srv.Remove(late.Name)
	if r := recallAt10(t, ts.Session, []string{"teleport quantum"}, []string{late.Name}); r != 0 {
		t.Errorf("a removed tool is still found")
	}
}

// BenchmarkSearch measures one search_tools call at 1,000 and 100,000 tools
// (the index made once per registry generation), and reports recall@10 on
// the labelled set.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			srv, tools := searchServer(b, n)
			cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			queries, want := labelled(tools, 100)
			recall := recallAt10(b, cs, queries, want)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: transform.SearchToolName, Arguments: map[string]any{"query": q, "limit": 10}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(recall, "recall@10")
		})
	}
}

// searchFound returns what search_tools finds for query on ts, scores
// included.
func searchFound(t *testing.T, ts *mcpkittest.Server, query string) []transform.Found {
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
	return out.Tools
}

// TestSearchScoresHideHiddenTools checks that a caller's scores say
// nothing of the tools hidden from it: a user's search finds the same
// tools with the same scores whether the server has no tool hidden from
// the user or many, which have the query's words and which an admin sees.
// The admin's scores are those of a server where these tools are visible
// to all: each caller's statistics are those of what it reaches.
func TestSearchScoresHideHiddenTools(t *testing.T) {
	tokens := map[string]*auth.TokenInfo{
		"admin": {UserID: "ann", Scopes: []string{"admin"}},
		"user":  {UserID: "bob"},
	}
	// serve returns a search session of who on a server with the shared
	// tools and extra tools that have the query's words, tagged secret
	// (visible to admins only) when hidden is set.
	serve := func(extra int, hidden bool, who string) *mcpkittest.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "hidden"}, nil)
		var add []*mcpkit.Tool
		for _, d := range []struct{ name, desc string }{
			{"export_invoices", "Export the invoices of a month as CSV."},
			{"list_invoices", "List the invoices of a customer."},
			{"send_invoice", "Send an invoice to a customer by email."},
			{"export_orders", "Export the orders of a day."},
			{"get_weather", "Get the weather of a city."},
		} {
			tl := echoTool(d.name, "")
			tl.Description = d.desc
			add = append(add, tl)
		}
		for i := range extra {
			tl := echoTool(fmt.Sprintf("audit_invoices_%d", i), "")
			tl.Description = fmt.Sprintf("Export the invoices of ledger %d for the auditors.", i)
			if hidden {
				tl.Tags = []string{"secret"}
			}
			add = append(add, tl)
		}
		if err := srv.Add(add...); err != nil {
			t.Fatal(err)
		}
		visibility.New(visibility.Require(mcpkit.Tagged("secret"), visibility.Scopes("admin"))).Attach(srv)
		if err := transform.Discovery(srv, &transform.DiscoveryOptions{Limit: 50}); err != nil {
			t.Fatal(err)
		}
		return mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: who})
	}
	for _, query := range []string{"export invoices", "invoices", "customer"} {
		base := searchFound(t, serve(0, true, "user"), query)
		if len(base) == 0 {
			t.Fatalf("%q finds nothing", query)
		}
		for _, extra := range []int{3, 30} {
			if got := searchFound(t, serve(extra, true, "user"), query); !slices.Equal(got, base) {
				t.Errorf("%q, with %d tools hidden from the user:\n%v\nwith none:\n%v", query, extra, got, base)
			}
			admin, plain := searchFound(t, serve(extra, true, "admin"), query), searchFound(t, serve(extra, false, "user"), query)
			if !slices.Equal(admin, plain) {
				t.Errorf("%q, the admin's search with %d tools only admins see:\n%v\nthe user's, with them visible to all:\n%v", query, extra, admin, plain)
			}
		}
	}
}

// TestSearchLongQuery checks, through a client, that a query of one word
// repeated 20,000 times finds what the word alone finds, and that only the
// first MaxQueryWords distinct words of a query count (the cost of the
// words themselves is counted in TestQueryTerms).
func TestSearchLongQuery(t *testing.T) {
	srv, _ := searchServer(t, 1000)
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	once := searchFound(t, ts, "invoices")
	if len(once) != 10 {
		t.Fatalf("invoices finds %v; want 10 tools", once)
	}
	if got := searchFound(t, ts, strings.Repeat("invoices ", 20_000)); !slices.Equal(got, once) {
		t.Errorf("invoices 20,000 times finds %v; once: %v", got, once)
	}
	filler := make([]string, transform.MaxQueryWords)
	for i := range filler {
		filler[i] = fmt.Sprintf("zz%02d", i) // words no tool has
	}
	if got := searchFound(t, ts, strings.Join(filler, " ")+" invoices"); len(got) != 0 {
		t.Errorf("a word after %d others counts: found %v", transform.MaxQueryWords, got)
	}
	if got := searchFound(t, ts, strings.Join(filler[1:], " ")+" invoices"); !slices.Equal(got, once) {
		t.Errorf("the %dth word finds %v; want %v", transform.MaxQueryWords, got, once)
	}
}
