package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// The tests of this file check the one route (which tool a call reaches,
// whether its caller may see it) and the one commit (what follows a
// change) where features meet, each through real clients as a user meets
// them. Each reproduced a defect found in a gap between two copies of one
// decision, before the engine had one of each.

// sessionAs serves srv statelessly over HTTP behind identityTokens and
// returns the session of a client that sends token.
func sessionAs(t *testing.T, srv *mcpkit.Server, token string) *mcp.ClientSession {
	t.Helper()
	return mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: token}).Session
}

// callText calls name (pinned to version pin unless it is empty) and
// returns the text of its result, or the error.
func callText(t *testing.T, cs *mcp.ClientSession, name, pin string, args map[string]any) (string, error) {
	t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if pin != "" {
		params.Meta = mcp.Meta{mcpkit.MetaKeyVersion: pin}
	}
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", onlyText(res))
	}
	return onlyText(res), nil
}

// geoCall is the call_tool call of geo with region "us" as its argument.
var geoCall = map[string]any{"name": transform.CallToolName, "arguments": map[string]any{
	"name": "geo", "arguments": map[string]any{"region": "us"}}}

// TestCallToolChecksParamHeaders: a client calls geo through call_tool with
// Mcp-Param-Region: eu and region "us": the call is refused as a header
// mismatch, as a direct call is, since req.ParamHeader promises agreement
// with the arguments; without the header, or with one that agrees, it runs.
func TestCallToolChecksParamHeaders(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "geo"}, nil)
	var (
		runs atomic.Int64
		mu   sync.Mutex
		read []string // what geo's middleware read from req.ParamHeader("Region")
	)
	geo := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "geo", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		Middleware: []mcpkit.Middleware{func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				h, _ := req.ParamHeader("Region")
				mu.Lock()
				read = append(read, h)
				mu.Unlock()
				return next.ServeTool(ctx, req)
			})
		}},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			runs.Add(1)
			var in struct{ Region string }
			json.Unmarshal(req.Arguments, &in)
			return textResult("geo " + in.Region), nil
		}),
	}
	if err := srv.Add(geo); err != nil {
		t.Fatal(err)
	}
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	for _, tc := range []struct {
		name   string
		header http.Header
		refuse bool
	}{
		{"no header", nil, false},
		{"agreeing header", http.Header{"Mcp-Param-Region": {"us"}}, false},
		{"disagreeing header", http.Header{"Mcp-Param-Region": {"eu"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runs.Load()
			mu.Lock()
			read = nil
			mu.Unlock()
			raw := mcpkittest.RawClient{Endpoint: ts.URL, Header: tc.header}
			res, err := raw.Call(t.Context(), "tools/call", geoCall)
			ran := runs.Load() - before
			mu.Lock()
			seen := slices.Clone(read)
			mu.Unlock()
			var werr *jsonrpc.Error
			if !tc.refuse {
				if err != nil || ran != 1 || !strings.Contains(string(res), `"text":"geo us"`) {
					t.Errorf("call_tool geo: %s, %v (geo ran %d times); want geo's answer", res, err, ran)
				}
				return
			}
			if !errors.As(err, &werr) || werr.Code != mcp.CodeHeaderMismatch || ran != 0 {
				t.Errorf("call_tool geo with Mcp-Param-Region: eu and region \"us\": answered %s, %v; geo ran %d times and its middleware read req.ParamHeader(\"Region\") = %q; want JSON-RPC %d (header mismatch) and geo not run",
					res, err, ran, seen, mcp.CodeHeaderMismatch)
			}
		})
	}
}

// TestHiddenRegisteredLeavesNameToSources: a registered report hidden from
// a user is, for that user, a name never registered: the user is listed
// the report of a provider (or a mounted server), and calling it reaches
// that one, directly and through discovery's meta-tools.
func TestHiddenRegisteredLeavesNameToSources(t *testing.T) {
	for _, tc := range []struct {
		route   string
		name    string // the name the user lists and calls
		install func(t *testing.T, srv *mcpkit.Server, served *mcpkit.Tool)
	}{
		{"provider", "report", func(t *testing.T, srv *mcpkit.Server, served *mcpkit.Tool) {
			srv.AddProvider(oneTool{served})
		}},
		{"mount", "docs_report", func(t *testing.T, srv *mcpkit.Server, served *mcpkit.Tool) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
			add(t, child, served)
			if _, err := srv.Mount("docs", child); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.route, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
			visibility.New(visibility.Require(mcpkit.Tagged("internal"), visibility.Scopes("admin"))).Attach(srv)
			registered := okTool(tc.name)
			registered.Tags = []string{"internal"}
			registered.Handler = reply("registered " + tc.name)
			add(t, srv, registered)
			tc.install(t, srv, tool("report", reply(tc.route+" report")))

			for _, who := range []struct{ token, want string }{
				{"user", tc.route + " report"},
				{"admin", "registered " + tc.name},
			} {
				cs := sessionAs(t, srv, who.token)
				listed := listAll(t, cs)
				got, err := callText(t, cs, tc.name, "", nil)
				if n := strings.Count(strings.Join(listed, ","), tc.name); n != 1 || err != nil || got != who.want {
					t.Errorf("%s: listed %v (%s %d times); call %s = %q, %v; want it listed once and the call answered %q",
						who.token, listed, tc.name, n, tc.name, got, err, who.want)
				}
			}
		})
	}

	// Behind the meta-tools, the provider's report is neither found nor
	// callable for the user either.
	t.Run("provider behind discovery", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
		visibility.New(visibility.Require(mcpkit.Tagged("internal"), visibility.Scopes("admin"))).Attach(srv)
		registered := okTool("report")
		registered.Tags = []string{"internal"}
		registered.Handler = reply("registered report")
		add(t, srv, registered)
		srv.AddProvider(oneTool{tool("report", reply("provider report"))})
		if err := transform.Discovery(srv, nil); err != nil {
			t.Fatal(err)
		}
		for _, who := range []struct{ token, want string }{
			{"user", "provider report"},
			{"admin", "registered report"},
		} {
			cs := sessionAs(t, srv, who.token)
			found, ferr := callText(t, cs, transform.SearchToolName, "", map[string]any{"query": "report"})
			got, err := callText(t, cs, transform.CallToolName, "", map[string]any{"name": "report"})
			if ferr != nil || !strings.Contains(found, `"name":"report"`) || err != nil || got != who.want {
				t.Errorf("%s: search_tools report = %s, %v; call_tool report = %q, %v; want report found and the call answered %q",
					who.token, found, ferr, got, err, who.want)
			}
		}
	})
}

// TestVersionRuleThroughMount: the parent disables version 2 of a
// mounted report; a client's call of docs_report reaches version 1, and
// docs_report is listed at version 1.
func TestVersionRuleThroughMount(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	for _, v := range []string{"1", "2"} {
		tl := tool("report", reply("report v"+v))
		tl.Version = v
		add(t, child, tl)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	rules := visibility.New()
	rules.Attach(parent)
	cs := sessionAs(t, parent, "user")

	check := func(when, want string) {
		t.Helper()
		var listedAt any = "not listed"
		for tl, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tl.Name == "docs_report" {
				listedAt = tl.Meta[mcpkit.MetaKeyVersion]
			}
		}
		got, err := callText(t, cs, "docs_report", "", nil)
		if listedAt != want || err != nil || got != "report v"+want {
			t.Errorf("%s: docs_report listed at version %v, called (unpinned): %q, %v; want it listed at %s and served by report v%s",
				when, listedAt, got, err, want, want)
		}
	}
	check("without rules", "2")
	rules.Add(visibility.DisableVersion("report", "2"))
	check("with version 2 disabled", "1")
	if _, err := callText(t, cs, "docs_report", "2", nil); !isUnknown(err, "docs_report") {
		t.Errorf("docs_report pinned to the disabled version 2: %v; want unknown tool", err)
	}
}

// bearerTransport sends each request with a bearer token.
type bearerTransport string

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}

// changeListener is a 2025-11-25 client, with a session, that counts the
// notifications/tools/list_changed it hears.
type changeListener struct {
	name  string
	cs    *mcp.ClientSession
	ss    *mcp.ServerSession // its session on the server
	heard chan struct{}
}

// listenAs connects a client called name, which sends token, to the
// server srv serves at url, and returns once the server can reach it.
func listenAs(t *testing.T, srv *mcpkit.Server, url, name, token string) *changeListener {
	t.Helper()
	l := &changeListener{name: name, heard: make(chan struct{}, 64)}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { l.heard <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport(token)}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: mcpkittest.StatefulVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	l.cs = cs
	for ss := range srv.Sessions() {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name == name {
			l.ss = ss
		}
	}
	if l.ss == nil {
		t.Fatalf("no server session of %s", name)
	}
	l.flush(t)
	return l
}

// flush returns once the client has handled every message the server sent
// it so far: the server pings it on the stream that carries its
// notifications, and the client handles that stream's messages in order,
// a notification before the ping that follows it.
func (l *changeListener) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := l.ss.Ping(ctx, nil); err != nil {
		t.Fatalf("ping %s: %v", l.name, err)
	}
}

// await waits for the next notification.
func (l *changeListener) await(t *testing.T, what string) {
	t.Helper()
	select {
	case <-l.heard:
	case <-time.After(10 * time.Second): // a bound, not an assertion: the notification must come
		t.Fatalf("%s heard no notifications/tools/list_changed after %s", l.name, what)
	}
}

// taken returns how many notifications l heard and nobody took yet.
func (l *changeListener) taken() int {
	for n := 0; ; n++ {
		select {
		case <-l.heard:
		default:
			return n
		}
	}
}

// listChangeSteps checks, on srv served at url, what two listeners hear:
// user (connected first, so that the server notifies it first) and admin.
// onlyAdmin must change admin's list alone: admin hears of it, and once
// the server has notified both, user must have heard nothing. both must
// change both lists: both hear of it, and then list userLists and
// adminLists.
func listChangeSteps(t *testing.T, srv *mcpkit.Server, url string, onlyAdmin, both func(), userLists, adminLists string) {
	t.Helper()
	user := listenAs(t, srv, url, "user-listener", "user")
	admin := listenAs(t, srv, url, "admin-listener", "admin")
	before := strings.Join(listAll(t, user.cs), ",")
	user.taken()
	admin.taken()

	onlyAdmin()
	admin.await(t, "a change of admin's list")
	user.flush(t) // the server notified user before admin, in the same round
	admin.flush(t)
	if n := user.taken(); n != 0 {
		t.Errorf("user heard %d notifications/tools/list_changed of a change of admin's list alone (user listed %s before and %s after)",
			n, before, strings.Join(listAll(t, user.cs), ","))
	}
	admin.taken()

	both()
	admin.await(t, "a change of everyone's list")
	user.await(t, "a change of everyone's list")
	if got := strings.Join(listAll(t, user.cs), ","); got != userLists {
		t.Errorf("user lists %s, want %s", got, userLists)
	}
	if got := strings.Join(listAll(t, admin.cs), ","); got != adminLists {
		t.Errorf("admin lists %s, want %s", got, adminLists)
	}
}

// adminTool returns a tool only callers with the admin scope see, under
// the rule of newListChangeServer.
func adminTool(name string) *mcpkit.Tool {
	tl := okTool(name)
	tl.Tags = []string{"admin"}
	return tl
}

// newListChangeServer returns a server whose tools tagged admin only
// callers with the admin scope see, with the tools a and secret (tagged
// admin), and the Rules that say so.
func newListChangeServer(t *testing.T, extra ...*visibility.Rule) (*mcpkit.Server, *visibility.Rules) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "listeners"}, nil)
	rules := visibility.New(append([]*visibility.Rule{visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))}, extra...)...)
	rules.Attach(srv)
	add(t, srv, okTool("a"))
	add(t, srv, adminTool("secret"))
	return srv, rules
}

// TestListChangedThroughMountOnlyToThoseConcerned: a tool only admins see
// is added to a mounted server: an admin's client is told its tool list
// changed, a user's, whose list did not, is not.
func TestListChangedThroughMountOnlyToThoseConcerned(t *testing.T) {
	srv, _ := newListChangeServer(t)
	child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	add(t, child, okTool("b"))
	if _, err := srv.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "admin"})
	listChangeSteps(t, srv, ts.URL,
		func() { add(t, child, adminTool("internal")) },
		func() { add(t, srv, okTool("c")) },
		"a,c,docs_b", "a,c,docs_b,docs_internal,secret")
}

// TestListChangedWithSourcesOnlyToThoseConcerned: while a provider or a
// mounted server
// serves tools, a change of visibility that concerns only a tool hidden
// from a user tells the admin's client that its tool list changed, not the
// user's, whose list did not. A rule by name asks the provider about that
// name; a
// Refresh, which may concern any tool, is judged exactly through a mount,
// whose catalog the server holds.
func TestListChangedWithSourcesOnlyToThoseConcerned(t *testing.T) {
	for _, tc := range []struct {
		name string
		// source serves p to everyone beside the registered tools.
		source func(t *testing.T, srv *mcpkit.Server) string
		// change hides secret from admin, as a running server is told.
		change func(srv *mcpkit.Server, rules *visibility.Rules, off *atomic.Bool)
	}{
		{"provider, rule by name", provideP, func(_ *mcpkit.Server, rules *visibility.Rules, _ *atomic.Bool) {
			rules.Add(visibility.DisableNames("secret"))
		}},
		{"mount, rule by name", mountP, func(_ *mcpkit.Server, rules *visibility.Rules, _ *atomic.Bool) {
			rules.Add(visibility.DisableNames("secret"))
		}},
		{"mount, Refresh", mountP, func(srv *mcpkit.Server, _ *visibility.Rules, off *atomic.Bool) {
			off.Store(true)
			srv.Refresh()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var off atomic.Bool
			srv, rules := newListChangeServer(t, visibility.Require(mcpkit.Named("secret"), func(context.Context, mcpkit.Caller) bool { return !off.Load() }))
			p := tc.source(t, srv)
			ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "admin"})
			listChangeSteps(t, srv, ts.URL,
				func() { tc.change(srv, rules, &off) },
				func() { add(t, srv, okTool("c")) },
				"a,c,"+p, "a,c,"+p)
		})
	}
}

// provideP has a provider serve p to everyone, and returns its name.
func provideP(_ *testing.T, srv *mcpkit.Server) string {
	srv.AddProvider(oneTool{okTool("p")})
	return "p"
}

// mountP mounts a server that serves p, and returns p's mounted name.
func mountP(t *testing.T, srv *mcpkit.Server) string {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "m"}, nil)
	add(t, child, okTool("p"))
	if _, err := srv.Mount("m", child); err != nil {
		t.Fatal(err)
	}
	return "m_p"
}

// A Refresh, which may concern any tool, while a provider serves tools,
// tells every listener: a provider's catalog is never listed whole, so
// whose list changed cannot be told (docs/catalogs.md says so).
func TestRefreshWithProviderTellsEveryone(t *testing.T) {
	srv, _ := newListChangeServer(t)
	srv.AddProvider(oneTool{okTool("p")})
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "admin"})
	user := listenAs(t, srv, ts.URL, "user-listener", "user")
	user.taken()
	srv.Refresh()
	user.await(t, "a Refresh with a provider")
}

// failingProvider fails, or panics, in the methods it is told to.
type failingProvider struct {
	err          error
	panicList    bool
	panicLookup  bool
	lists, looks atomic.Int64
}

func (p *failingProvider) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	p.lists.Add(1)
	if p.panicList {
		panic("provider: " + p.err.Error())
	}
	return nil, p.err
}

func (p *failingProvider) LookupTool(context.Context, mcpkit.Caller, string) (*mcpkit.Tool, error) {
	p.looks.Add(1)
	if p.panicLookup {
		panic("provider: " + p.err.Error())
	}
	return nil, p.err
}

// errProviderDSN is what a provider's database driver says, with what the
// client must never read.
var errProviderDSN = errors.New("dial tcp 10.0.0.7:5432: secret-dsn")

// checkProviderLeftOut checks, through cs, that a server with a failing
// provider bad lists want and answers calls of each name in want, that a
// call of a name nobody serves is answered as an unknown tool, and that no
// error text of bad reaches the client.
func checkProviderLeftOut(t *testing.T, cs *mcp.ClientSession, bad *failingProvider, want ...string) {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	switch {
	case err != nil:
		t.Errorf("tools/list failed with the provider's error: %v; want %v listed", err, want)
	case bad.lists.Load() == 0:
		t.Errorf("the failing provider was never asked to list")
	default:
		var got []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("tools/list = %v, want %v", got, want)
		}
	}
	for _, name := range append([]string{"gamma"}, want...) {
		got, err := callText(t, cs, name, "", nil)
		if name == "gamma" {
			if !isUnknown(err, name) {
				t.Errorf("call gamma (nobody's) = %q, %v; want unknown tool", got, err)
			}
		} else if err != nil || !strings.HasSuffix(name, got) || got == "" {
			t.Errorf("call %s = %q, %v; want its answer", name, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-dsn") {
			t.Errorf("call %s: the provider's error reached the client: %v", name, err)
		}
	}
}

// newFailingProviderServer returns a server with the tool alpha, bad (a
// provider asked first), and a provider of beta, logging to log.
func newFailingProviderServer(t *testing.T, bad *failingProvider, log *lockedBuffer) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "providers"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(log, nil))})
	add(t, srv, okTool("alpha"))
	srv.AddProvider(bad)
	srv.AddProvider(oneTool{okTool("beta")})
	return srv
}

// TestFailingProviderLeftOut: one provider's database is down (a
// server's own provider, or a mounted server's): every client's tools/list
// answers the other tools, the provider's error (its DSN in it) reaches no
// client, and the failure is logged.
func TestFailingProviderLeftOut(t *testing.T) {
	t.Run("provider", func(t *testing.T) {
		bad := &failingProvider{err: errProviderDSN}
		var log lockedBuffer
		srv := newFailingProviderServer(t, bad, &log)
		checkProviderLeftOut(t, sessionAs(t, srv, "user"), bad, "alpha", "beta")
		if !strings.Contains(log.String(), "secret-dsn") {
			t.Errorf("the provider's failure was not logged; the log:\n%s", log.String())
		}
	})
	t.Run("mounted server's provider", func(t *testing.T) {
		bad := &failingProvider{err: errProviderDSN}
		var log lockedBuffer
		child := newFailingProviderServer(t, bad, &log)
		parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
		add(t, parent, okTool("omega"))
		if _, err := parent.Mount("docs", child); err != nil {
			t.Fatal(err)
		}
		checkProviderLeftOut(t, sessionAs(t, parent, "user"), bad, "docs_alpha", "docs_beta", "omega")
	})
}

// TestPanickingProviderRecovered: a provider panics while listing or
// looking a tool up: the server survives, as it does a handler's panic,
// and answers the other tools.
func TestPanickingProviderRecovered(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  func() *failingProvider
	}{
		{"ListTools", func() *failingProvider { return &failingProvider{err: errProviderDSN, panicList: true} }},
		{"LookupTool", func() *failingProvider { return &failingProvider{err: errProviderDSN, panicLookup: true} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.bad()
			var log lockedBuffer
			srv := newFailingProviderServer(t, bad, &log)
			checkProviderLeftOut(t, sessionAs(t, srv, "user"), bad, "alpha", "beta")
		})
	}
}

// catalogProvider serves n tools, t00000 ..., to everyone, and counts what
// it is asked for.
type catalogProvider struct {
	tools    []*mcpkit.Tool
	calls    atomic.Int64 // ListTools calls
	returned atomic.Int64 // tools ListTools returned
	mu       sync.Mutex
	limits   []int // the limits ListTools was asked for
}

func newCatalogProvider(n int) *catalogProvider {
	p := &catalogProvider{}
	for i := range n {
		p.tools = append(p.tools, okTool(fmt.Sprintf("t%05d", i)))
	}
	return p
}

func (p *catalogProvider) ListTools(_ context.Context, _ mcpkit.Caller, after string, limit int) ([]*mcpkit.Tool, error) {
	p.calls.Add(1)
	p.mu.Lock()
	p.limits = append(p.limits, limit)
	p.mu.Unlock()
	i := sort.Search(len(p.tools), func(i int) bool { return p.tools[i].Name > after })
	ts := p.tools[i:]
	if limit > 0 && len(ts) > limit {
		ts = ts[:limit]
	}
	p.returned.Add(int64(len(ts)))
	return ts, nil
}

func (p *catalogProvider) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	i := sort.Search(len(p.tools), func(i int) bool { return p.tools[i].Name >= name })
	if i < len(p.tools) && p.tools[i].Name == name {
		return p.tools[i], nil
	}
	return nil, nil
}

// TestListAsksProvidersOnePage: with discovery on, none of a provider's
// 6,000 tools is listed; one tools/list of a client asks the provider for
// one page, about the page's size, not for its whole catalog.
func TestListAsksProvidersOnePage(t *testing.T) {
	const pageSize = 50
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "catalog"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: pageSize}})
	p := newCatalogProvider(6000)
	srv.AddProvider(p)
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	cs := sessionAs(t, srv, "user")
	p.calls.Store(0)
	p.returned.Store(0)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tl := range res.Tools {
		listed = append(listed, tl.Name)
	}
	if want := []string{transform.CallToolName, transform.DescribeToolName, transform.SearchToolName}; !slices.Equal(listed, want) {
		t.Errorf("tools/list = %v, want the meta-tools %v alone", listed, want)
	}
	p.mu.Lock()
	limits := slices.Clone(p.limits)
	p.mu.Unlock()
	calls, returned := p.calls.Load(), p.returned.Load()
	badLimit := slices.ContainsFunc(limits, func(l int) bool { return l <= 0 || l > 2*pageSize })
	if calls > 1 || returned > 2*pageSize || badLimit {
		t.Errorf("one tools/list (pages of %d) called the provider's ListTools %d times, which returned %d tools in all (limits asked %v); want at most one call, for about a page",
			pageSize, calls, returned, limits[:min(len(limits), 5)])
	}
}
