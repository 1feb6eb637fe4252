package visibility_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestTagRules disables the tools tagged "beta" and, while serving, a tool
// by name; disabled tools are neither listed nor callable, on every
// transport.
func TestTagRules(t *testing.T) {
	var r *visibility.Rules // the current subtest's: they run one at a time
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("a"), tool("b", "beta"), tool("c", "beta", "x"), tool("d", "x"))
		r = visibility.New(visibility.Disable(mcpkit.Tagged("beta")))
		r.Attach(srv)
		return srv
	}
	mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
		if got := joined(names(t, ts.Session)); got != "a,d" {
			t.Errorf("listed %s, want a,d", got)
		}
		wantServed(t, ts.Session, "a", nil, "a")
		wantUnknown(t, ts.Session, "b", nil)
		wantUnknown(t, ts.Session, "c", nil)

		noD := visibility.Disable(mcpkit.Named("d"))
		r.Add(noD)
		if got := joined(names(t, ts.Session)); got != "a" {
			t.Errorf("after Disable(d): listed %s, want a", got)
		}
		wantUnknown(t, ts.Session, "d", nil)
		r.Remove(noD)
		if got := joined(names(t, ts.Session)); got != "a,d" {
			t.Errorf("after removing Disable(d): listed %s, want a,d", got)
		}
		wantServed(t, ts.Session, "d", nil, "d")
	}, nil)
}

// TestAllowlist serves only what Enable rules select, and a Disable rule
// beats an Enable rule.
func TestAllowlist(t *testing.T) {
	var r *visibility.Rules // the current subtest's
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("a", "public"), tool("b", "public", "broken"), tool("c"), tool("d"))
		r = visibility.NewAllowlist(
			visibility.Enable(mcpkit.Tagged("public")),
			visibility.Disable(mcpkit.Tagged("broken")),
		)
		r.Attach(srv)
		return srv
	}
	mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
		if got := joined(names(t, ts.Session)); got != "a" {
			t.Errorf("listed %s, want a", got)
		}
		wantServed(t, ts.Session, "a", nil, "a")
		for _, name := range []string{"b", "c", "d"} {
			wantUnknown(t, ts.Session, name, nil)
		}
		d := visibility.Enable(mcpkit.Named("d", "b"))
		r.Add(d)
		if got := joined(names(t, ts.Session)); got != "a,d" {
			t.Errorf("after Enable(d, b): listed %s, want a,d (b stays disabled)", got)
		}
		wantServed(t, ts.Session, "d", nil, "d")
		wantUnknown(t, ts.Session, "b", nil)
	}, nil)

	t.Run("empty", func(t *testing.T) {
		srv := newServer(t, nil, tool("a"))
		visibility.NewAllowlist().Attach(srv)
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		if got := names(t, ts.Session); len(got) != 0 {
			t.Errorf("an empty allowlist lists %v", got)
		}
		wantUnknown(t, ts.Session, "a", nil)
	})
}

// httpModes are the streamable HTTP transports of the harness.
var httpModes = []struct {
	name    string
	connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
}{
	{"stateful", mcpkittest.NewServer},
	{"stateless", mcpkittest.NewStatelessServer},
}

// perUser runs f over stateful and stateless HTTP behind the SDK's
// bearer-token check, once per user, each on a new server from newSrv, and
// over in-memory transports as a stranger (user ""). want gives, per user,
// the tools they should see, comma-separated.
func perUser(t *testing.T, newSrv func(t *testing.T) *mcpkit.Server, opts *mcpkittest.Options, want map[string]string, f func(t *testing.T, ts *mcpkittest.Server, user string)) {
	t.Helper()
	check := func(t *testing.T, ts *mcpkittest.Server, user string) {
		t.Helper()
		if got := joined(names(t, ts.Session)); got != want[user] {
			t.Errorf("%s lists %s, want %s", userName(user), got, want[user])
		}
		if f != nil {
			f(t, ts, user)
		}
	}
	for _, mode := range httpModes {
		t.Run(mode.name, func(t *testing.T) {
			for user := range want {
				if user == "" {
					continue
				}
				check(t, mode.connect(t, newSrv(t), as(user, opts)), user)
			}
		})
	}
	t.Run("inmemory", func(t *testing.T) {
		check(t, mcpkittest.NewInMemoryServer(t, newSrv(t), opts), "")
	})
}

func userName(token string) string {
	if token == "" {
		return "a stranger"
	}
	return tokens[token].UserID
}

// TestScopes shows admin tools only to tokens with the admin scope.
func TestScopes(t *testing.T) {
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("list_repos"), tool("delete_repo", "admin"), tool("audit", "admin", "read"))
		visibility.New(
			visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin")),
			visibility.Require(mcpkit.Tagged("read"), visibility.Scopes("read")),
		).Attach(srv)
		return srv
	}
	want := map[string]string{"admin-token": "audit,delete_repo,list_repos", "user-token": "list_repos", "": "list_repos"}
	perUser(t, newSrv, nil, want, func(t *testing.T, ts *mcpkittest.Server, user string) {
		wantServed(t, ts.Session, "list_repos", nil, "list_repos")
		if user == "admin-token" {
			wantServed(t, ts.Session, "delete_repo", nil, "delete_repo")
			wantServed(t, ts.Session, "audit", nil, "audit")
		} else {
			wantUnknown(t, ts.Session, "delete_repo", nil)
			wantUnknown(t, ts.Session, "audit", nil)
		}
	})

	t.Run("no auth", func(t *testing.T) {
		// Over HTTP without the bearer-token check there is no token:
		// everyone is a stranger.
		ts := mcpkittest.NewServer(t, newSrv(t), nil)
		if got := joined(names(t, ts.Session)); got != "list_repos" {
			t.Errorf("lists %s, want list_repos", got)
		}
		wantUnknown(t, ts.Session, "delete_repo", nil)
	})
}

// TestClaims shows tools by the claims of the token: a string, an element
// of a list, a number, a user.
func TestClaims(t *testing.T) {
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("acme_report"), tool("ops_panel"), tool("deep_dive"), tool("bobs_tool"), tool("tenant_any"), tool("open"))
		visibility.New(
			visibility.Require(mcpkit.Named("acme_report"), visibility.Claim("tenant", "acme")),
			visibility.Require(mcpkit.Named("ops_panel"), visibility.Claim("groups", "ops")),
			visibility.Require(mcpkit.Named("deep_dive"), visibility.Claim("level", 2, 3)),
			visibility.Require(mcpkit.Named("bobs_tool"), visibility.Users("bob")),
			visibility.Require(mcpkit.Named("tenant_any"), visibility.Claim("tenant")),
		).Attach(srv)
		return srv
	}
	want := map[string]string{
		"admin-token": "acme_report,deep_dive,open,ops_panel,tenant_any",
		"user-token":  "bobs_tool,open,tenant_any",
		"":            "open",
	}
	perUser(t, newSrv, nil, want, func(t *testing.T, ts *mcpkittest.Server, user string) {
		for _, name := range []string{"acme_report", "ops_panel", "deep_dive", "bobs_tool", "tenant_any", "open"} {
			if strings.Contains(","+want[user]+",", ","+name+",") {
				wantServed(t, ts.Session, name, nil, name)
			} else {
				wantUnknown(t, ts.Session, name, nil)
			}
		}
	})
}

// TestReadOnlyMode puts some requests in read-only mode: those that send
// a header, those without the admin scope, and everyone.
func TestReadOnlyMode(t *testing.T) {
	tools := func() []*mcpkit.Tool {
		return []*mcpkit.Tool{readOnly("get"), readOnly("search"), tool("put"), tool("delete")}
	}

	t.Run("by header", func(t *testing.T) {
		newSrv := func(t *testing.T) *mcpkit.Server {
			srv := newServer(t, nil, tools()...)
			visibility.New(visibility.ReadOnlyFor(visibility.Header("X-Read-Only", "1"))).Attach(srv)
			return srv
		}
		for _, mode := range httpModes {
			t.Run(mode.name, func(t *testing.T) {
				ro := mode.connect(t, newSrv(t), &mcpkittest.Options{Header: http.Header{"X-Read-Only": {"1"}}})
				if got := joined(names(t, ro.Session)); got != "get,search" {
					t.Errorf("in read-only mode: lists %s, want get,search", got)
				}
				wantServed(t, ro.Session, "get", nil, "get")
				wantUnknown(t, ro.Session, "put", nil)
				rw := mode.connect(t, newSrv(t), &mcpkittest.Options{Header: http.Header{"X-Read-Only": {"0"}}})
				if got := joined(names(t, rw.Session)); got != "delete,get,put,search" {
					t.Errorf("not in read-only mode: lists %s", got)
				}
				wantServed(t, rw.Session, "put", nil, "put")
			})
		}
		t.Run("inmemory", func(t *testing.T) {
			ts := mcpkittest.NewInMemoryServer(t, newSrv(t), nil)
			if got := joined(names(t, ts.Session)); got != "delete,get,put,search" {
				t.Errorf("without headers: lists %s, want every tool", got)
			}
		})
	})

	t.Run("without admin scope", func(t *testing.T) {
		newSrv := func(t *testing.T) *mcpkit.Server {
			srv := newServer(t, nil, tools()...)
			visibility.New(visibility.Require(mcpkit.Not(visibility.ReadOnly), visibility.Scopes("admin"))).Attach(srv)
			return srv
		}
		perUser(t, newSrv, nil, map[string]string{"admin-token": "delete,get,put,search", "user-token": "get,search", "": "get,search"}, nil)
	})

	t.Run("everyone", func(t *testing.T) {
		srv := newServer(t, nil, tools()...)
		visibility.New(visibility.Disable(mcpkit.Not(visibility.ReadOnly))).Attach(srv)
		ts := mcpkittest.NewServer(t, srv, nil)
		if got := joined(names(t, ts.Session)); got != "get,search" {
			t.Errorf("lists %s, want get,search", got)
		}
		wantUnknown(t, ts.Session, "delete", nil)
		if res := list(t, ts.Session); res.CacheScope != "public" {
			t.Errorf("a global read-only mode lists with cacheScope %q, want public", res.CacheScope)
		}
	})
}

// TestClientCapabilities hides tools that need elicitation or sampling
// from clients that did not declare them, on every transport and protocol
// version (capabilities come from initialize up to 2025-11-25, from each
// request's _meta on 2026-07-28).
func TestClientCapabilities(t *testing.T) {
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("plain"), tool("ask", visibility.NeedsElicitation),
			tool("summarize", visibility.NeedsSampling), tool("interview", visibility.NeedsElicitation, visibility.NeedsSampling))
		visibility.New(visibility.RequireClientCapabilities()).Attach(srv)
		return srv
	}
	elicit := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	sample := func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("no model")
	}
	clients := []struct {
		name string
		opts *mcp.ClientOptions
		want string
	}{
		{"none", &mcp.ClientOptions{}, "plain"},
		{"elicitation", &mcp.ClientOptions{ElicitationHandler: elicit}, "ask,plain"},
		{"both", &mcp.ClientOptions{ElicitationHandler: elicit, CreateMessageHandler: sample}, "ask,interview,plain,summarize"},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
				if got := joined(names(t, ts.Session)); got != c.want {
					t.Errorf("lists %s, want %s", got, c.want)
				}
				for _, name := range []string{"plain", "ask", "summarize", "interview"} {
					if strings.Contains(","+c.want+",", ","+name+",") {
						wantServed(t, ts.Session, name, nil, name)
					} else {
						wantUnknown(t, ts.Session, name, nil)
					}
				}
			}, &mcpkittest.Options{Client: c.opts})
		})
	}
}

// TestProtocolVersion shows a tool only to clients of protocol 2026-07-28
// or later.
func TestProtocolVersion(t *testing.T) {
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("old"), tool("new", "mrtr"))
		visibility.New(visibility.Require(mcpkit.Tagged("mrtr"), visibility.ProtocolAtLeast("2026-07-28"))).Attach(srv)
		return srv
	}
	for _, tt := range []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
		want    string
	}{
		{"stateful 2025-11-25", mcpkittest.NewServer, "old"},
		{"stateless 2026-07-28", mcpkittest.NewStatelessServer, "new,old"},
		{"inmemory 2026-07-28", mcpkittest.NewInMemoryServer, "new,old"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := tt.connect(t, newSrv(t), nil)
			if got := joined(names(t, ts.Session)); got != tt.want {
				t.Errorf("lists %s, want %s", got, tt.want)
			}
		})
	}
}

// TestHiddenIsUnknown compares, on each transport, the answer to a call of
// a hidden tool with the answer to a call of the same name on a server
// where it was never registered: same JSON-RPC code, message and data,
// whether the tool is disabled, outside an allowlist, hidden from the
// caller, or called pinned to a hidden version.
func TestHiddenIsUnknown(t *testing.T) {
	cases := []struct {
		name  string
		tools []*mcpkit.Tool
		rules *visibility.Rules
		meta  mcp.Meta
	}{
		{"disabled", []*mcpkit.Tool{tool("secret")}, visibility.New(visibility.Disable(mcpkit.Named("secret"))), nil},
		{"disabled by tag", []*mcpkit.Tool{tool("secret", "internal")}, visibility.New(visibility.Disable(mcpkit.Tagged("internal"))), nil},
		{"not allowed", []*mcpkit.Tool{tool("secret")}, visibility.NewAllowlist(visibility.Enable(mcpkit.Named("other"))), nil},
		{"hidden from caller", []*mcpkit.Tool{tool("secret")}, visibility.New(visibility.Require(mcpkit.Named("secret"), visibility.Scopes("admin"))), nil},
		{"pinned to a disabled version", []*mcpkit.Tool{versioned("secret", "1"), versioned("secret", "2")},
			visibility.New(visibility.Disable(visibility.Key("secret", "2"))), pin("2")},
		{"pinned to a version hidden from caller", []*mcpkit.Tool{versioned("secret", "1"), versioned("secret", "2")},
			visibility.New(visibility.Require(visibility.VersionRange("2", ""), visibility.Scopes("admin"))), pin("2")},
		{"pinned, every version hidden", []*mcpkit.Tool{versioned("secret", "1"), versioned("secret", "2")},
			visibility.New(visibility.Require(mcpkit.Named("secret"), visibility.Scopes("admin"))), pin("1")},
		{"pinned to a version never registered", []*mcpkit.Tool{versioned("secret", "1")}, visibility.New(), pin("7")},
	}
	connects := []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"inmemory", mcpkittest.NewInMemoryServer},
		{"stateful", mcpkittest.NewServer},
		{"stateless", mcpkittest.NewStatelessServer},
	}
	for _, c := range connects {
		t.Run(c.name, func(t *testing.T) {
			control := c.connect(t, newServer(t, nil, tool("other")), as("user-token", nil))
			_, want := call(t.Context(), control.Session, "secret", nil)
			if msg := unknownMismatch(want, "secret"); msg != "" {
				t.Fatalf("never registered: %s", msg)
			}
			_, wantPinned := call(t.Context(), control.Session, "secret", pin("2"))
			if wantPinned.Error() != want.Error() {
				t.Fatalf("never registered, pinned: %v; unpinned: %v", wantPinned, want)
			}
			for _, tt := range cases {
				t.Run(tt.name, func(t *testing.T) {
					srv := newServer(t, nil, append(tt.tools, tool("other"))...)
					tt.rules.Attach(srv)
					ts := c.connect(t, srv, as("user-token", nil))
					_, got := call(t.Context(), ts.Session, "secret", tt.meta)
					var gw, ww *jsonrpc.Error
					if !errors.As(got, &gw) || !errors.As(want, &ww) {
						t.Fatalf("hidden: %v; never registered: %v", got, want)
					}
					if gw.Code != ww.Code || gw.Message != ww.Message || string(gw.Data) != string(ww.Data) || got.Error() != want.Error() {
						t.Errorf("hidden: %d %q %s (%v); never registered: %d %q %s (%v)", gw.Code, gw.Message, gw.Data, got, ww.Code, ww.Message, ww.Data, want)
					}
					if slices.Contains(names(t, ts.Session), "secret") && tt.meta == nil {
						t.Errorf("secret is listed")
					}
				})
			}
		})
	}
}

// TestCacheScope checks that tools/list answers with cacheScope "private"
// exactly while a per-request rule is in effect, and "public" otherwise,
// also for a caller who sees every tool.
func TestCacheScope(t *testing.T) {
	var r *visibility.Rules
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("a"), tool("b", "admin"))
		r = visibility.New(visibility.Disable(mcpkit.Named("nothing")))
		r.Attach(srv)
		return srv
	}
	mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
		scope := func(when, want string) {
			t.Helper()
			if got := list(t, ts.Session).CacheScope; got != want {
				t.Errorf("%s: cacheScope %q, want %q", when, got, want)
			}
		}
		scope("global rules only", "public")
		admin := visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))
		r.Add(admin)
		scope("with a Require rule", "private")
		everyone := visibility.Require(mcpkit.Named("none"), visibility.Authenticated())
		r.Add(everyone)
		r.Remove(admin)
		scope("with a Require rule that selects no tool", "private")
		r.Remove(everyone)
		scope("after removing the Require rules", "public")
	}, as("admin-token", nil))
}

// TestVersionFallback hides the highest version of a tool, for everyone
// and from one caller: the next visible version is listed (with its own
// version in _meta) and called, and a call pinned to the hidden one is
// answered as unknown.
func TestVersionFallback(t *testing.T) {
	versions := func() []*mcpkit.Tool {
		return []*mcpkit.Tool{versioned("search", "1.9"), versioned("search", "1.10"), versioned("search", "2.0")}
	}
	// listedVersion returns the version of search that cs lists, and
	// checks that the versions it says can be pinned are those from it
	// down.
	listedVersion := func(t *testing.T, cs *mcp.ClientSession) string {
		t.Helper()
		res := list(t, cs)
		if len(res.Tools) != 1 || res.Tools[0].Name != "search" {
			t.Fatalf("listed %v, want search", res.Tools)
		}
		v, _ := res.Tools[0].Meta[mcpkit.MetaKeyVersion].(string)
		want := map[string]string{"2.0": "2.0,1.10,1.9", "1.10": "1.10,1.9", "1.9": "1.9"}[v]
		var vs []string
		all, _ := res.Tools[0].Meta[mcpkit.MetaKeyVersions].([]any)
		for _, x := range all {
			s, _ := x.(string)
			vs = append(vs, s)
		}
		if joined(vs) != want {
			t.Errorf("search %s lists the versions %v, want %s", v, res.Tools[0].Meta[mcpkit.MetaKeyVersions], want)
		}
		return v
	}

	t.Run("disabled for everyone", func(t *testing.T) {
		var r *visibility.Rules
		newSrv := func(t *testing.T) *mcpkit.Server {
			srv := newServer(t, nil, versions()...)
			r = visibility.New(visibility.Disable(visibility.VersionRange("2", "")))
			r.Attach(srv)
			return srv
		}
		mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
			if v := listedVersion(t, ts.Session); v != "1.10" {
				t.Errorf("listed version %q, want 1.10", v)
			}
			wantServed(t, ts.Session, "search", nil, "search@1.10")
			wantServed(t, ts.Session, "search", pin("1.9"), "search@1.9")
			wantUnknown(t, ts.Session, "search", pin("2.0"))

			// Disable 1.10 too, while serving: 1.9 is served.
			no110 := visibility.Disable(visibility.Key("search", "1.10"))
			r.Add(no110)
			if v := listedVersion(t, ts.Session); v != "1.9" {
				t.Errorf("listed version %q, want 1.9", v)
			}
			wantServed(t, ts.Session, "search", nil, "search@1.9")
			wantUnknown(t, ts.Session, "search", pin("1.10"))
			r.Remove(no110)
			wantServed(t, ts.Session, "search", nil, "search@1.10")
		}, nil)
	})

	t.Run("hidden from a caller", func(t *testing.T) {
		newSrv := func(t *testing.T) *mcpkit.Server {
			srv := newServer(t, nil, versions()...)
			visibility.New(visibility.Require(visibility.VersionRange("2", ""), visibility.Scopes("admin"))).Attach(srv)
			return srv
		}
		want := map[string]string{"admin-token": "search", "user-token": "search", "": "search"}
		perUser(t, newSrv, nil, want, func(t *testing.T, ts *mcpkittest.Server, user string) {
			if user == "admin-token" {
				if v := listedVersion(t, ts.Session); v != "2.0" {
					t.Errorf("admin: listed version %q, want 2.0", v)
				}
				wantServed(t, ts.Session, "search", nil, "search@2.0")
				wantServed(t, ts.Session, "search", pin("2.0"), "search@2.0")
				return
			}
			if v := listedVersion(t, ts.Session); v != "1.10" {
				t.Errorf("%s: listed version %q, want 1.10", userName(user), v)
			}
			wantServed(t, ts.Session, "search", nil, "search@1.10")
			wantServed(t, ts.Session, "search", pin("1.9"), "search@1.9")
			wantUnknown(t, ts.Session, "search", pin("2.0"))
		})
	})
}

// TestAttachSeveral attaches one Rules to two servers: a change reaches
// both.
func TestAttachSeveral(t *testing.T) {
	r := visibility.New()
	srv1, srv2 := newServer(t, nil, tool("a"), tool("b")), newServer(t, nil, tool("a"), tool("c"))
	r.Attach(srv1)
	r.Attach(srv2)
	r.Attach(srv1) // no further effect
	ts1, ts2 := mcpkittest.NewInMemoryServer(t, srv1, nil), mcpkittest.NewServer(t, srv2, nil)
	r.Add(visibility.Disable(mcpkit.Named("a")))
	if got := joined(names(t, ts1.Session)); got != "b" {
		t.Errorf("server 1 lists %s, want b", got)
	}
	if got := joined(names(t, ts2.Session)); got != "c" {
		t.Errorf("server 2 lists %s, want c", got)
	}
}

// TestManyVersions lists a tool of 70 versions, some hidden from the
// caller: its _meta names only those the caller may pin (beyond 64
// versions, the server computes them per request).
func TestManyVersions(t *testing.T) {
	var tools []*mcpkit.Tool
	for i := 1; i <= 70; i++ {
		tl := versioned("t", fmt.Sprint(i))
		if i%10 == 0 {
			tl.Tags = []string{"admin"} // 10, 20, ..., 70
		}
		tools = append(tools, tl)
	}
	srv := newServer(t, nil, tools...)
	visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))).Attach(srv)
	for _, c := range []struct {
		token, version string
		versions       int
	}{{"admin-token", "70", 70}, {"user-token", "69", 63}} {
		ts := mcpkittest.NewStatelessServer(t, srv, as(c.token, nil))
		for range 2 {
			tl := list(t, ts.Session).Tools[0]
			vs, _ := tl.Meta[mcpkit.MetaKeyVersions].([]any)
			if tl.Meta[mcpkit.MetaKeyVersion] != c.version || len(vs) != c.versions || vs[0] != c.version || slices.Contains(vs, any("60")) != (c.token == "admin-token") {
				t.Errorf("%s: listed %v, versions %v", userName(c.token), tl.Meta[mcpkit.MetaKeyVersion], vs)
			}
		}
		wantServed(t, ts.Session, "t", nil, "t@"+c.version)
	}
}
