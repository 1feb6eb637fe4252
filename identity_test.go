package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// The identity matrix: a call is judged by the tool it reaches, whichever
// way it came in. Each route below reaches one tool, delete_repo, by another
// way (a provider's tool included); each mechanism below makes a decision keyed on a tool, configured
// with delete_repo's identity only. Every pair runs through a real HTTP
// client, and TestIdentityMatrixIsComplete fails when a new route or keyed
// mechanism appears in the packages without a place here.

// identityTokens are the verified bearer tokens of the matrix's callers.
var identityTokens = map[string]*auth.TokenInfo{
	"admin": {UserID: "ada", Scopes: []string{"admin"}, Expiration: time.Now().Add(24 * time.Hour)},
	"user":  {UserID: "bob", Expiration: time.Now().Add(24 * time.Hour)},
}

// target is the tool every route reaches. Its handler counts its runs and,
// for a call with "block": true, holds until the fixture releases it.
type target struct {
	runs    atomic.Int64
	started chan struct{}
	release chan struct{}
}

func (tg *target) tool(version string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: "delete_repo", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"repo":{"type":"string"},"block":{"type":"boolean"}}}`),
			// Deleting twice leaves what deleting once leaves: the cache
			// may keep its results.
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
		Version: version,
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			tg.runs.Add(1)
			var in struct{ Block bool }
			json.Unmarshal(req.Arguments, &in)
			if in.Block {
				tg.started <- struct{}{}
				select {
				case <-tg.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + version}}}, nil
		}),
	}
}

// A route is one way to reach delete_repo. install registers what the
// route needs; the route's calls go to name with args renamed by rename;
// the origin's calls (delete_repo by its own name, as the route's tool is
// served) go to origin.
type route struct {
	name     string
	install  func(t *testing.T, srv *mcpkit.Server, tg *target, m *tasks.Manager) mcpkit.ToolID
	call     string            // the name the route calls
	origin   string            // the name that reaches delete_repo without the route
	rename   map[string]string // argument names on the route
	pin      string            // the version every call pins, if any
	meta     bool              // through call_tool
	task     bool              // the route's calls declare the tasks extension
	sameCall bool              // the route's call is, on the wire, the origin's call
	// rules are visibility rules the route needs in effect, whatever a
	// mechanism attaches: a server has one Visibility.
	rules []*visibility.Rule
}

var identityRoutes = []route{
	{
		name:   "name",
		call:   "delete_repo",
		origin: "delete_repo", sameCall: true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			return add(t, srv, tg.tool(""))
		},
	},
	{
		name:   "alias",
		call:   "remove_repo",
		origin: "delete_repo",
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			tl := tg.tool("")
			alias, err := transform.Alias(tl, "remove_repo", nil)
			if err != nil {
				t.Fatal(err)
			}
			add(t, srv, alias)
			return add(t, srv, tl)
		},
	},
	{
		name:   "derived",
		call:   "drop_repo",
		origin: "delete_repo",
		rename: map[string]string{"repo": "repository"},
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			tl := tg.tool("")
			d, err := transform.Tool(tl, transform.Spec{Name: "drop_repo", Arguments: map[string]transform.Arg{"repo": {Name: "repository"}}})
			if err != nil {
				t.Fatal(err)
			}
			add(t, srv, d)
			return add(t, srv, tl)
		},
	},
	{
		name:   "namespace",
		call:   "gh.delete_repo",
		origin: "gh.delete_repo", sameCall: true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			id := add(t, srv, tg.tool(""))
			if err := srv.Transform(transform.Namespace("gh", ".")); err != nil {
				t.Fatal(err)
			}
			return id
		},
	},
	{
		name:   "version pin",
		call:   "delete_repo",
		origin: "delete_repo", sameCall: true,
		pin: "1",
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			// Version 2 is another tool as far as identity goes: nothing
			// configured for version 1 may touch it, nor it for 1.
			add(t, srv, (&target{}).tool("2"))
			return add(t, srv, tg.tool("1"))
		},
	},
	{
		name: "discovery",
		call: transform.CallToolName,
		// call_tool runs delete_repo's own chain with the same
		// arguments: the same call as the origin's, one layer down.
		origin: "delete_repo", sameCall: true,
		meta: true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			id := add(t, srv, tg.tool(""))
			if err := transform.Discovery(srv, nil); err != nil {
				t.Fatal(err)
			}
			return id
		},
	},
	{
		name:   "provider",
		call:   "delete_repo",
		origin: "delete_repo", sameCall: true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			tl := tg.tool("")
			srv.AddProvider(oneTool{tl})
			return tl.ID()
		},
	},
	{
		// A provided tool behind call_tool: found in the provider by its
		// name for the caller, as a direct call of it is.
		name:   "provider discovery",
		call:   transform.CallToolName,
		origin: "delete_repo", sameCall: true,
		meta: true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			tl := tg.tool("")
			srv.AddProvider(oneTool{tl})
			if err := transform.Discovery(srv, nil); err != nil {
				t.Fatal(err)
			}
			return tl.ID()
		},
	},
	{
		// The parent serves delete_repo itself, and a child that serves
		// it too is mounted under gh: two routes to one identity.
		name:   "mount",
		call:   "gh_delete_repo",
		origin: "delete_repo",
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "gh"}, nil)
			add(t, child, tg.tool(""))
			if _, err := srv.Mount("gh", child); err != nil {
				t.Fatal(err)
			}
			return add(t, srv, tg.tool(""))
		},
	},
	{
		name:   "proxy",
		call:   "up.delete_repo",
		origin: "up.delete_repo", sameCall: true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			// delete_repo served by another MCP server, reached through an
			// SDK client: its identity here is its local name.
			remote := mcpkit.NewServer(&mcp.Implementation{Name: "remote"}, nil)
			add(t, remote, tg.tool(""))
			up, err := proxy.New(t.Context(), func(ctx context.Context) (mcp.Transport, error) {
				st, ct := mcp.NewInMemoryTransports()
				_, err := remote.Connect(ctx, st, nil)
				return ct, err
			}, &proxy.Options{Prefix: "up."})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { up.Close() })
			up.AddTo(srv)
			tl, _ := up.LookupTool(t.Context(), nil, "up.delete_repo")
			return tl.ID()
		},
	},
	{
		name:   "task",
		call:   "delete_repo",
		origin: "delete_repo",
		task:   true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, m *tasks.Manager) mcpkit.ToolID {
			return add(t, srv, tasks.Tool(tg.tool(""), m, nil))
		},
	},
	{
		// A provider that serves each caller (by the verified user) a task
		// tool delete_repo of its own, each made by tasks.Tool of the same
		// tool: one identity, whichever copy a caller reaches.
		name:   "tenant provider task",
		call:   "delete_repo",
		origin: "delete_repo",
		task:   true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, m *tasks.Manager) mcpkit.ToolID {
			p := perUser{}
			for _, info := range identityTokens {
				p[info.UserID] = tasks.Tool(tg.tool(""), m, nil)
			}
			srv.AddProvider(p)
			return tg.tool("").ID()
		},
	},
	{
		// A mounted server's task tool, run as a task of the parent's
		// manager: the task is created on the parent, through the mount.
		name:   "mount task",
		call:   "gh_delete_repo",
		origin: "gh_delete_repo",
		task:   true,
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, m *tasks.Manager) mcpkit.ToolID {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "gh"}, nil)
			id := add(t, child, tasks.Tool(tg.tool(""), m, nil))
			if _, err := srv.Mount("gh", child); err != nil {
				t.Fatal(err)
			}
			return id
		},
	},
	{
		// A registered tool served as delete_repo (derived from
		// legacy_delete: another identity) that hideLegacy hides from
		// everyone, and a provider's delete_repo: a hidden tool is as if
		// never registered, so the provider's is the one every caller
		// reaches.
		name:   "hidden registered + provided",
		call:   "delete_repo",
		origin: "delete_repo", sameCall: true,
		rules: []*visibility.Rule{hideLegacy},
		install: func(t *testing.T, srv *mcpkit.Server, tg *target, _ *tasks.Manager) mcpkit.ToolID {
			legacy := &mcpkit.Tool{Tool: mcp.Tool{Name: "legacy_delete", InputSchema: json.RawMessage(`{"type":"object"}`)},
				Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
					t.Errorf("the hidden registered delete_repo ran")
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "legacy"}}}, nil
				})}
			hidden, err := transform.Tool(legacy, transform.Spec{Name: "delete_repo"})
			if err != nil {
				t.Fatal(err)
			}
			add(t, srv, hidden)
			tl := tg.tool("")
			srv.AddProvider(oneTool{tl})
			return tl.ID()
		},
	},
}

// hideLegacy hides the tools of legacy_delete's identity from every caller
// of the matrix, per request: a rule on another identity than delete_repo's.
var hideLegacy = visibility.Require(visibility.Key("legacy_delete", ""), visibility.Scopes("legacy"))

// newRules returns visibility.New of the route's rules base and rules.
func newRules(base []*visibility.Rule, rules ...*visibility.Rule) *visibility.Rules {
	return visibility.New(append(slices.Clip(base), rules...)...)
}

// newAllowlist returns visibility.NewAllowlist of the route's rules base
// and rules.
func newAllowlist(base []*visibility.Rule, rules ...*visibility.Rule) *visibility.Rules {
	return visibility.NewAllowlist(append(slices.Clip(base), rules...)...)
}

// perUser is a Provider that serves each verified user its own tool.
type perUser map[string]*mcpkit.Tool

func (p perUser) of(c mcpkit.Caller) *mcpkit.Tool {
	if info := c.TokenInfo(); info != nil {
		return p[info.UserID]
	}
	return nil
}

func (p perUser) ListTools(_ context.Context, c mcpkit.Caller, after string, _ int) ([]*mcpkit.Tool, error) {
	if t := p.of(c); t != nil && t.Name > after {
		return []*mcpkit.Tool{t}, nil
	}
	return nil, nil
}

func (p perUser) LookupTool(_ context.Context, c mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if t := p.of(c); t != nil && t.Name == name {
		return t, nil
	}
	return nil, nil
}

// oneTool is a Provider of one tool, to everyone.
type oneTool struct{ t *mcpkit.Tool }

func (p oneTool) ListTools(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Tool, error) {
	if p.t.Name > after {
		return []*mcpkit.Tool{p.t}, nil
	}
	return nil, nil
}

func (p oneTool) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if name == p.t.Name {
		return p.t, nil
	}
	return nil, nil
}

func add(t *testing.T, srv *mcpkit.Server, tl *mcpkit.Tool) mcpkit.ToolID {
	t.Helper()
	if err := srv.Add(tl); err != nil {
		t.Fatal(err)
	}
	return tl.ID()
}

// outcome is what a call got, as the matrix tells outcomes apart.
type outcome struct {
	unknown bool   // the unknown-tool answer (JSON-RPC -32602, or call_tool's)
	isError bool   // a tool error
	text    string // the first text block
	task    bool   // a task was created
	// challenged is an HTTP 403 answer (RequireScopes's challenge).
	challenged bool
}

func (o outcome) ran() bool { return !o.unknown && !o.isError && !o.challenged }

func (o outcome) String() string {
	return fmt.Sprintf("unknown=%v isError=%v task=%v text=%q", o.unknown, o.isError, o.task, o.text)
}

// fixture is one route with one mechanism, served statelessly over HTTP.
type fixture struct {
	route route
	tg    *target
	id    mcpkit.ToolID
	url   string
}

func newFixture(t *testing.T, r route, install func(srv *mcpkit.Server, id mcpkit.ToolID)) *fixture {
	t.Helper()
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "identity-matrix", Version: "1"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(nil)
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	f := &fixture{route: r, tg: &target{started: make(chan struct{}, 4), release: make(chan struct{})}}
	f.id = r.install(t, srv, f.tg, m)
	if len(r.rules) > 0 {
		visibility.New(r.rules...).Attach(srv)
	}
	install(srv, f.id)
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "admin"})
	f.url = ts.URL
	return f
}

// callRoute calls delete_repo by the route, as the holder of token, with
// args in delete_repo's names and the extra _meta meta.
func (f *fixture) callRoute(t *testing.T, token string, args map[string]any, meta map[string]any) outcome {
	t.Helper()
	r := f.route
	renamed := make(map[string]any, len(args))
	for k, v := range args {
		if n, ok := r.rename[k]; ok {
			k = n
		}
		renamed[k] = v
	}
	params := map[string]any{"name": r.call, "arguments": renamed}
	if r.meta {
		params["arguments"] = map[string]any{"name": "delete_repo", "arguments": renamed}
	}
	return f.send(t, token, params, meta, r.task)
}

// callOrigin calls delete_repo by its own name (as served), without the
// route: no alias, no meta-tool, no task.
func (f *fixture) callOrigin(t *testing.T, token string, args map[string]any, meta map[string]any) outcome {
	t.Helper()
	return f.send(t, token, map[string]any{"name": f.route.origin, "arguments": args}, meta, false)
}

func (f *fixture) send(t *testing.T, token string, params, meta map[string]any, declared bool) outcome {
	t.Helper()
	m := maps.Clone(meta)
	if m == nil {
		m = map[string]any{}
	}
	if f.route.pin != "" {
		m[mcpkit.MetaKeyVersion] = f.route.pin
	}
	params["_meta"] = m
	raw := mcpkittest.RawClient{Endpoint: f.url, Token: token}
	if declared {
		raw.Capabilities = map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}
	}
	res, err := raw.Call(t.Context(), "tools/call", params)
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		if werr.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(werr.Message, "unknown tool") {
			return outcome{unknown: true}
		}
		t.Fatalf("tools/call: unexpected JSON-RPC error %v", werr)
	}
	if err != nil && strings.Contains(err.Error(), "HTTP 403") {
		return outcome{challenged: true}
	}
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ResultType string `json:"resultType"`
		IsError    bool   `json:"isError"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	o := outcome{isError: out.IsError, task: out.ResultType == "task"}
	if len(out.Content) > 0 {
		o.text = out.Content[0].Text
	}
	if o.isError && f.route.meta && strings.HasPrefix(o.text, "unknown tool") {
		o = outcome{unknown: true}
	}
	return o
}

// A mechanism is a decision keyed on a tool, configured for delete_repo's
// identity alone, with the property every route must show.
type mechanism struct {
	name string
	// install configures the mechanism; a Visibility it attaches keeps
	// the route's rules base in effect (see newRules).
	install func(srv *mcpkit.Server, id mcpkit.ToolID, seen *atomic.Int64, base []*visibility.Rule)
	check   func(t *testing.T, f *fixture, seen *atomic.Int64)
}

var repo = map[string]any{"repo": "acme/site"}

// wantHidden checks that the route answers the holder of token as for a
// tool never registered.
func wantHidden(t *testing.T, f *fixture, token string) {
	t.Helper()
	if o := f.callRoute(t, token, repo, nil); !o.unknown {
		t.Errorf("%s: the route reached a hidden tool: %v", token, o)
	}
	if n := f.tg.runs.Load(); n != 0 {
		t.Errorf("delete_repo ran %d times", n)
	}
}

// wantServed checks that the route reaches delete_repo for the holder of
// token.
func wantServed(t *testing.T, f *fixture, token string) {
	t.Helper()
	if o := f.callRoute(t, token, repo, nil); !o.ran() {
		t.Errorf("%s: the route did not reach delete_repo: %v", token, o)
	}
}

var identityMechanisms = []mechanism{
	{
		name: "visibility.Require(Named)",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			newRules(base, visibility.Require(mcpkit.Named(id.Name), visibility.Scopes("admin"))).Attach(srv)
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantHidden(t, f, "user")
			wantServed(t, f, "admin")
		},
	},
	{
		name: "visibility.Require(Key)",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			newRules(base, visibility.Require(visibility.Key(id.Name, id.Version), visibility.Scopes("admin"))).Attach(srv)
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantHidden(t, f, "user")
			wantServed(t, f, "admin")
		},
	},
	{
		name: "visibility.Disable",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			newRules(base, visibility.Disable(visibility.Key(id.Name, id.Version))).Attach(srv)
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantHidden(t, f, "admin")
		},
	},
	{
		name: "visibility.NewAllowlist",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			// Everything but delete_repo: the meta-tools of discovery,
			// and delete_repo's other version.
			newAllowlist(base, visibility.Enable(func(t *mcpkit.Tool) bool { return t.ID() != id })).Attach(srv)
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantHidden(t, f, "admin")
		},
	},
	// The rules by name, added to Rules already attached, as a running
	// server gets them: the server asks again only about the tools whose
	// lineage has the name (Server.RefreshTools).
	{
		name: "visibility.RequireNames",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			r := newRules(base)
			r.Attach(srv)
			r.Add(visibility.RequireNames(visibility.Scopes("admin"), id.Name))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantHidden(t, f, "user")
			wantServed(t, f, "admin")
		},
	},
	{
		name: "visibility.DisableNames",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			r := newRules(base)
			r.Attach(srv)
			r.Add(visibility.DisableNames(id.Name))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantHidden(t, f, "admin")
		},
	},
	{
		name: "visibility.DisableVersion",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			r := newRules(base)
			r.Attach(srv)
			r.Add(visibility.DisableVersion(id.Name, id.Version))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantHidden(t, f, "admin")
		},
	},
	{
		name: "visibility.EnableNames",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, base []*visibility.Rule) {
			// An allowlist of everything but delete_repo, then
			// delete_repo by name: every route reaches it again.
			r := newAllowlist(base, visibility.Enable(func(t *mcpkit.Tool) bool { return t.ID() != id }))
			r.Attach(srv)
			r.Add(visibility.EnableNames(id.Name))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			wantServed(t, f, "admin")
		},
	},
	{
		name: "mcpkit.ForTools(Named)",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, seen *atomic.Int64, _ []*visibility.Rule) {
			srv.Use(mcpkit.ForTools(mcpkit.Named(id.Name), counting(seen)))
		},
		check: func(t *testing.T, f *fixture, seen *atomic.Int64) {
			wantServed(t, f, "admin")
			if n := seen.Load(); n != 1 {
				t.Errorf("the layer selected for delete_repo saw %d calls by the route, want 1", n)
			}
		},
	},
	{
		name: "mcpkit.For(a tool Named)",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, seen *atomic.Int64, _ []*visibility.Rule) {
			named := mcpkit.Named(id.Name)
			srv.Use(mcpkit.For(func(t mcpkit.Target) bool {
				tool, ok := t.(*mcpkit.Tool)
				return ok && named(tool)
			}, counting(seen)))
		},
		check: func(t *testing.T, f *fixture, seen *atomic.Int64) {
			wantServed(t, f, "admin")
			if n := seen.Load(); n != 1 {
				t.Errorf("the layer selected for delete_repo saw %d calls by the route, want 1", n)
			}
		},
	},
	{
		name: "mcpkit.RequireScopes",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, _ []*visibility.Rule) {
			srv.Use(mcpkit.ForTools(mcpkit.Named(id.Name), mcpkit.RequireScopes("admin")))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			if o := f.callRoute(t, "user", repo, nil); !o.challenged {
				t.Errorf("the route escaped delete_repo's scope requirement: %v", o)
			}
			if n := f.tg.runs.Load(); n != 0 {
				t.Errorf("delete_repo ran %d times for a caller without the scope", n)
			}
			wantServed(t, f, "admin")
		},
	},
	{
		name: "middleware.RateLimit",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, _ []*visibility.Rule) {
			srv.Use(middleware.RateLimit(middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil), nil))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			if o := f.callOrigin(t, "admin", repo, nil); !o.ran() {
				t.Fatalf("first call: %v", o)
			}
			if o := f.callRoute(t, "admin", repo, nil); !o.isError || !strings.Contains(o.text, "rate") {
				t.Errorf("the route got a fresh budget: %v", o)
			}
		},
	},
	{
		name: "middleware.Bulkhead",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, _ []*visibility.Rule) {
			srv.Use(middleware.Bulkhead(map[string]int{id.Name: 1}, nil))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			done := make(chan outcome, 1)
			go func() { done <- f.callOrigin(t, "admin", map[string]any{"block": true}, nil) }()
			select {
			case <-f.tg.started:
			case first := <-done: // a route that does not reach delete_repo fails here, not hangs
				t.Fatalf("the first call did not reach delete_repo: %v", first)
			}
			o := f.callRoute(t, "admin", repo, nil)
			close(f.tg.release)
			if first := <-done; !first.ran() {
				t.Errorf("the first call: %v", first)
			}
			if !o.isError || !strings.Contains(o.text, "busy") {
				t.Errorf("the route escaped delete_repo's pool: %v", o)
			}
		},
	},
	{
		name: "middleware.Idempotent",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, _ []*visibility.Rule) {
			srv.Use(middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			key := map[string]any{middleware.MetaKeyIdempotencyKey: "k-1"}
			if o := f.callOrigin(t, "admin", repo, key); !o.ran() {
				t.Fatalf("first call: %v", o)
			}
			o := f.callRoute(t, "admin", repo, key)
			if o.task {
				t.Fatalf("the route ran delete_repo again, as a task, for a used key")
			}
			if n := f.tg.runs.Load(); n != 1 {
				t.Errorf("delete_repo ran %d times for one idempotency key (route answered %v)", n, o)
			}
		},
	},
	{
		name: "middleware.CacheResults",
		install: func(srv *mcpkit.Server, id mcpkit.ToolID, _ *atomic.Int64, _ []*visibility.Rule) {
			srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil))
		},
		check: func(t *testing.T, f *fixture, _ *atomic.Int64) {
			if f.route.task {
				t.Skip("a task's result is the task's, read with tasks/get: the cache sees only CreateTaskResult, which it never keeps")
			}
			if o := f.callOrigin(t, "admin", repo, nil); !o.ran() {
				t.Fatalf("first call: %v", o)
			}
			if o := f.callRoute(t, "admin", repo, nil); !o.ran() {
				t.Fatalf("the route: %v", o)
			}
			// A route's arguments are in its own names, and a derived
			// tool may fill hidden ones: only the very same call may be
			// answered from the cache.
			want := int64(2)
			if f.route.sameCall {
				want = 1
			}
			if n := f.tg.runs.Load(); n != want {
				t.Errorf("delete_repo ran %d times, want %d: the route was answered with another route's result, or the same call missed", n, want)
			}
		},
	},
}

// counting returns a layer that counts the calls it sees.
func counting(n *atomic.Int64) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			n.Add(1)
			return next.ServeTool(ctx, req)
		})
	}
}

func TestIdentityMatrix(t *testing.T) {
	for _, r := range identityRoutes {
		t.Run(r.name, func(t *testing.T) {
			for _, m := range identityMechanisms {
				t.Run(m.name, func(t *testing.T) {
					var seen atomic.Int64
					f := newFixture(t, r, func(srv *mcpkit.Server, id mcpkit.ToolID) { m.install(srv, id, &seen, r.rules) })
					m.check(t, f, &seen)
				})
			}
		})
	}
}

// identityClassified names every exported function of the packages that make
// routes to a tool (transform, tasks) or decisions keyed on a tool
// (visibility, middleware, requeststate, the root), by what it is to the
// matrix: a route or a mechanism of it, or why it is neither. A function
// missing here fails TestIdentityMatrixIsComplete: wire it into the matrix,
// or say why it keys on no tool.
var identityClassified = map[string]string{
	// Routes.
	"transform.Alias":     "route: alias",
	"transform.Tool":      "route: derived",
	"transform.Namespace": "route: namespace",
	"transform.Discovery": "route: discovery",
	"proxy.New":           "route: proxy (an Upstream's tools, by their local names)",
	"tasks.Tool":          "route: task (resumed by tasks/update: tasks' TestTaskResumesItsVersion, TestTaskResumeRechecksVisibility)",
	// Server.Mount is a method, which the check below does not list: it is
	// the route "mount" all the same.
	// Routes that keep the name: they change what a tool is, not how it is
	// reached; the Server records the origin of what they make all the same.
	"transform.Versions": "keeps names: leaves versions out",
	"transform.Select":   "applies another transform",
	"transform.Portable": "keeps names: rewrites schemas",
	// Mechanisms.
	"visibility.Require":          "mechanism",
	"visibility.Key":              "mechanism",
	"visibility.Disable":          "mechanism",
	"visibility.NewAllowlist":     "mechanism",
	"visibility.Enable":           "mechanism (with NewAllowlist)",
	"visibility.EnableNames":      "mechanism",
	"visibility.DisableNames":     "mechanism",
	"visibility.DisableVersion":   "mechanism",
	"visibility.RequireNames":     "mechanism",
	"visibility.New":              "mechanism (holds the rules)",
	"mcpkit.ForTools":             "mechanism",
	"mcpkit.For":                  "mechanism: a tool's chain is selected by the tool reached, as ForTools",
	"mcpkit.RequireScopes":        "mechanism (with ForTools)",
	"mcpkit.RequireToken":         "mechanism (RequireScopes is one)",
	"mcpkit.Named":                "mechanism (with ForTools and the rules)",
	"mcpkit.NamedVersion":         "mechanism: visibility.Key returns it, in the matrix",
	"middleware.RateLimit":        "mechanism",
	"middleware.Bulkhead":         "mechanism",
	"middleware.Idempotent":       "mechanism",
	"middleware.CacheResults":     "mechanism",
	"requeststate.New":            "mechanism: bound to Tool.ID, TestSealer",
	"middleware.Confirm":          "mechanism: its state is the Sealer's, bound to Tool.ID; middleware's TestConfirmReplay, TestConfirmFollowsTheTool",
	"middleware.CircuitBreaker":   "keyed on Tool.ID by default, per tool: TestCircuitBreakerKeys",
	"middleware.ConcurrencyLimit": "mechanism only with a Key function of the user's; by default one limit for all tools",
	// Match functions and rules over what every route shares.
	"mcpkit.Tagged":                        "tags are copied to every derived tool",
	"mcpkit.Not":                           "composes match functions",
	"visibility.ReadOnlyFor":               "annotations, copied to every derived tool; a Require rule",
	"visibility.RequireClientCapabilities": "tags, copied; a Require rule",
	"visibility.AllTools":                  "every tool",
	"visibility.ReadOnly":                  "annotations, copied",
	"visibility.VersionRange":              "versions, kept by every derived tool unless its Spec says",
	// Keyed on no tool.
	"middleware.TokenBudget":       "per call, not per tool",
	"middleware.Timeout":           "per call",
	"middleware.Recover":           "per call",
	"middleware.Logging":           "per call",
	"middleware.MaskErrors":        "per call",
	"middleware.Recommended":       "per call (its layers)",
	"middleware.ArgumentSizeLimit": "per call",
	"middleware.ResultSizeLimit":   "per call",
	"mcpkit.Chain":                 "composition",
	"mcpkit.NamedMiddleware":       "names a layer",
}

// TestIdentityMatrixIsComplete parses the packages whose functions route to
// tools or key on them, and fails for each exported function that returns
// a tool, a transform, a middleware, a rule or a match function and that
// identityClassified does not name.
func TestIdentityMatrixIsComplete(t *testing.T) {
	keyed := []string{"*mcpkit.Tool", "mcpkit.CatalogTransform", "mcpkit.Middleware", "*Rule", "*Rules", "*Upstream",
		"func(*mcpkit.Tool) bool", "Middleware", "func(*Tool) bool", "*Sealer"}
	for _, dir := range []string{".", "transform", "tasks", "visibility", "middleware", "proxy", "requeststate"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !fn.Name.IsExported() || fn.Type.Results == nil {
					continue
				}
				var returns []string
				for _, r := range fn.Type.Results.List {
					returns = append(returns, types.ExprString(r.Type))
				}
				if !slices.ContainsFunc(returns, func(s string) bool { return slices.Contains(keyed, s) }) {
					continue
				}
				name := file.Name.Name + "." + fn.Name.Name
				if _, ok := identityClassified[name]; !ok {
					t.Errorf("%s (returns %s) is not in the identity matrix: wire it in as a route or a mechanism, or say in identityClassified why it keys on no tool",
						name, strings.Join(returns, ", "))
				}
			}
		}
	}
}
