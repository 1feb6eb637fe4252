package visibility_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestPrecedence checks Enabled against the precedence rules of the
// package documentation.
func TestPrecedence(t *testing.T) {
	a, b, x := tool("a", "x"), tool("b"), tool("c", "x")
	tests := []struct {
		name  string
		rules *visibility.Rules
		want  map[*mcpkit.Tool]bool
	}{
		{"no rule", visibility.New(), map[*mcpkit.Tool]bool{a: true, b: true, x: true}},
		{"enable changes nothing", visibility.New(visibility.Enable(mcpkit.Named("a"))), map[*mcpkit.Tool]bool{a: true, b: true, x: true}},
		{"disable by name", visibility.New(visibility.Disable(mcpkit.Named("a"))), map[*mcpkit.Tool]bool{a: false, b: true, x: true}},
		{"disable by tag", visibility.New(visibility.Disable(mcpkit.Tagged("x"))), map[*mcpkit.Tool]bool{a: false, b: true, x: false}},
		{"disable beats enable", visibility.New(visibility.Enable(mcpkit.Named("a")), visibility.Disable(mcpkit.Named("a"))), map[*mcpkit.Tool]bool{a: false, b: true, x: true}},
		{"disable beats enable, either order", visibility.New(visibility.Disable(mcpkit.Named("a")), visibility.Enable(mcpkit.Named("a"))), map[*mcpkit.Tool]bool{a: false, b: true, x: true}},
		{"empty allowlist", visibility.NewAllowlist(), map[*mcpkit.Tool]bool{a: false, b: false, x: false}},
		{"allowlist", visibility.NewAllowlist(visibility.Enable(mcpkit.Tagged("x"))), map[*mcpkit.Tool]bool{a: true, b: false, x: true}},
		{"allowlist, two enables", visibility.NewAllowlist(visibility.Enable(mcpkit.Tagged("x")), visibility.Enable(mcpkit.Named("b"))), map[*mcpkit.Tool]bool{a: true, b: true, x: true}},
		{"allowlist, disable beats enable", visibility.NewAllowlist(visibility.Enable(mcpkit.Tagged("x")), visibility.Disable(mcpkit.Named("a"))), map[*mcpkit.Tool]bool{a: false, b: false, x: true}},
		{"require does not disable", visibility.New(visibility.Require(visibility.AllTools, visibility.Authenticated())), map[*mcpkit.Tool]bool{a: true, b: true, x: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for tl, want := range tt.want {
				if got := tt.rules.Enabled(tl); got != want {
					t.Errorf("Enabled(%s) = %v, want %v", tl.Name, got, want)
				}
			}
		})
	}
}

// TestRequire checks that every Require rule that selects a tool must hold,
// that PerRequest says whether there is one, and that Allowed follows
// changes of rules.
func TestRequire(t *testing.T) {
	admin := mcpkittest.NewRequest(nil, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada", Scopes: []string{"read", "admin"}}))
	reader := mcpkittest.NewRequest(nil, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "bob", Scopes: []string{"read"}}))
	stranger := mcpkittest.NewRequest(nil, nil)
	del, get, open := tool("delete", "admin", "read"), tool("get", "read"), tool("open")

	r := visibility.New()
	if r.PerRequest() {
		t.Error("PerRequest without a Require rule")
	}
	reads := visibility.Require(mcpkit.Tagged("read"), visibility.Scopes("read"))
	admins := visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))
	r.Add(reads, admins)
	if !r.PerRequest() {
		t.Error("no PerRequest with Require rules")
	}
	check := func(when string, want map[*mcpkit.Request][3]bool) {
		t.Helper()
		for c, w := range want {
			for i, tl := range []*mcpkit.Tool{del, get, open} {
				if got := r.Allowed(context.Background(), tl, c); got != w[i] {
					t.Errorf("%s: Allowed(%s) for %v = %v, want %v", when, tl.Name, c.TokenInfo(), got, w[i])
				}
			}
		}
	}
	check("both rules", map[*mcpkit.Request][3]bool{admin: {true, true, true}, reader: {false, true, true}, stranger: {false, false, true}})
	r.Remove(admins)
	check("read rule", map[*mcpkit.Request][3]bool{admin: {true, true, true}, reader: {true, true, true}, stranger: {false, false, true}})
	r.Remove(reads, reads)
	check("no rule", map[*mcpkit.Request][3]bool{stranger: {true, true, true}})
	if r.PerRequest() {
		t.Error("PerRequest after removing the Require rules")
	}
}

// caller is a Caller with what a test gives it.
type caller struct {
	info    *auth.TokenInfo
	header  http.Header
	version string
	caps    *mcp.ClientCapabilities
}

func (c caller) TokenInfo() *auth.TokenInfo                  { return c.info }
func (c caller) Header() http.Header                         { return c.header }
func (c caller) ProtocolVersion() string                     { return c.version }
func (c caller) ClientCapabilities() *mcp.ClientCapabilities { return c.caps }

func TestPredicates(t *testing.T) {
	token := func(scopes []string, user string, extra map[string]any) caller {
		return caller{info: &auth.TokenInfo{Scopes: scopes, UserID: user, Extra: extra}}
	}
	claims := token(nil, "", map[string]any{
		"tenant": "acme", "groups": []any{"ops", 7.0, true}, "roles": []string{"dev"},
		"level": 3.0, "count": 2, "big": json.Number("12"), "admin": true, "off": false, "none": nil,
		"verified": "true", "tier": "42", "flags": []string{"beta", "7"}, "zip": "01234",
	})
	tests := []struct {
		name string
		p    visibility.Predicate
		c    caller
		want bool
	}{
		{"authenticated", visibility.Authenticated(), token(nil, "", nil), true},
		{"authenticated, stranger", visibility.Authenticated(), caller{}, false},
		{"scopes", visibility.Scopes("a", "b"), token([]string{"b", "c", "a"}, "", nil), true},
		{"scopes, one missing", visibility.Scopes("a", "b"), token([]string{"a"}, "", nil), false},
		{"scopes, stranger", visibility.Scopes("a"), caller{}, false},
		{"users", visibility.Users("ada", "bob"), token(nil, "bob", nil), true},
		{"users, other", visibility.Users("ada"), token(nil, "bob", nil), false},
		{"users, no user", visibility.Users("ada"), token(nil, "", nil), false},
		{"claim string", visibility.Claim("tenant", "initech", "acme"), claims, true},
		{"claim string, other", visibility.Claim("tenant", "initech"), claims, false},
		{"claim in list", visibility.Claim("groups", "ops"), claims, true},
		{"claim number in list", visibility.Claim("groups", 7), claims, true},
		{"claim bool in list", visibility.Claim("groups", true), claims, true},
		{"claim not in list", visibility.Claim("groups", "dev"), claims, false},
		{"claim in string list", visibility.Claim("roles", "dev"), claims, true},
		{"claim float64, int wanted", visibility.Claim("level", 3), claims, true},
		{"claim int, float wanted", visibility.Claim("count", 2.0), claims, true},
		{"claim json.Number", visibility.Claim("big", uint8(12)), claims, true},
		{"claim number, other", visibility.Claim("level", 4), claims, false},
		// A value matches a claim of another JSON type that it spells.
		{"claim number, spelt as a string", visibility.Claim("level", "3"), claims, true},
		{"claim number, spelt otherwise", visibility.Claim("level", "3.0"), claims, true},
		{"claim number, spelt as another", visibility.Claim("level", "4"), claims, false},
		{"claim json.Number, spelt as a string", visibility.Claim("big", "12"), claims, true},
		{"claim bool, spelt as a string", visibility.Claim("admin", "true"), claims, true},
		{"claim false, spelt as a string", visibility.Claim("off", "false"), claims, true},
		{"claim bool, spelt as the other", visibility.Claim("admin", "false"), claims, false},
		{"claim bool in list, spelt as a string", visibility.Claim("groups", "true", "x"), claims, true},
		{"claim number in list, spelt as a string", visibility.Claim("groups", "7"), claims, true},
		{"claim string spelling a bool", visibility.Claim("verified", true), claims, true},
		{"claim string spelling a number", visibility.Claim("tier", 42), claims, true},
		{"claim string list spelling a number", visibility.Claim("flags", 7), claims, true},
		{"claim bool is not any text", visibility.Claim("admin", "yes", "1", "True"), claims, false},
		{"claim number is not any text", visibility.Claim("level", " 3", "+3", "03", "3.", "0x3"), claims, false},
		{"claim text with a leading zero is no number", visibility.Claim("zip", 1234), claims, false},
		{"claim bool", visibility.Claim("admin", true), claims, true},
		{"claim bool, other", visibility.Claim("off", true), claims, false},
		{"claim present", visibility.Claim("tenant"), claims, true},
		{"claim present, false", visibility.Claim("off"), claims, true},
		{"claim null", visibility.Claim("none"), claims, false},
		{"claim absent", visibility.Claim("missing"), claims, false},
		{"claim, stranger", visibility.Claim("tenant"), caller{}, false},
		{"header", visibility.Header("x-tier", "gold"), caller{header: http.Header{"X-Tier": {"silver", "gold"}}}, true},
		{"header, other", visibility.Header("X-Tier", "gold"), caller{header: http.Header{"X-Tier": {"gold, silver"}}}, false},
		{"header present", visibility.Header("X-Tier"), caller{header: http.Header{"X-Tier": {""}}}, true},
		{"header absent", visibility.Header("X-Tier"), caller{header: http.Header{}}, false},
		{"header, no HTTP", visibility.Header("X-Tier"), caller{}, false},
		{"protocol", visibility.ProtocolAtLeast("2025-11-25"), caller{version: "2026-07-28"}, true},
		{"protocol, same", visibility.ProtocolAtLeast("2026-07-28"), caller{version: "2026-07-28"}, true},
		{"protocol, older", visibility.ProtocolAtLeast("2026-07-28"), caller{version: "2025-11-25"}, false},
		{"protocol, unknown", visibility.ProtocolAtLeast("2024-11-05"), caller{}, false},
		{"any", visibility.Any(visibility.Users("ada"), visibility.Scopes("a")), token([]string{"a"}, "bob", nil), true},
		{"any, none", visibility.Any(visibility.Users("ada"), visibility.Scopes("a")), token(nil, "bob", nil), false},
		{"any of nothing", visibility.Any(), caller{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p(context.Background(), tt.c); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatchFunctions(t *testing.T) {
	v := func(ver string) *mcpkit.Tool { return versioned("t", ver) }
	tests := []struct {
		name  string
		match func(*mcpkit.Tool) bool
		tool  *mcpkit.Tool
		want  bool
	}{
		{"key", visibility.Key("t", "2"), v("2"), true},
		{"key, other version", visibility.Key("t", "2"), v("2.0"), false},
		{"key, unversioned", visibility.Key("t", ""), tool("t"), true},
		{"key, other name", visibility.Key("u", "2"), v("2"), false},
		{"range", visibility.VersionRange("1.2", "2"), v("1.10"), true},
		{"range, low end", visibility.VersionRange("1.2", "2"), v("v1.2.0"), true},
		{"range, below", visibility.VersionRange("1.2", "2"), v("1.1.9"), false},
		{"range, high end", visibility.VersionRange("1.2", "2"), v("2.0"), false},
		{"range, pre-release below its release", visibility.VersionRange("1.2", "2"), v("2.0-rc.1"), true},
		{"range, open low", visibility.VersionRange("", "2"), v("0.1"), true},
		{"range, open high", visibility.VersionRange("2", ""), v("30"), true},
		{"range, open", visibility.VersionRange("", ""), v("x"), true},
		{"range, unversioned", visibility.VersionRange("", ""), tool("t"), false},
		{"read-only", visibility.ReadOnly, readOnly("r"), true},
		{"read-only, not annotated", visibility.ReadOnly, tool("w"), false},
		{"read-only, hint false", visibility.ReadOnly, &mcpkit.Tool{Tool: mcp.Tool{Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool)}}}, false},
		{"all tools", visibility.AllTools, tool("w"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.match(tt.tool); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Enable(nil)":          func() { visibility.Enable[*mcpkit.Tool](nil) },
		"Disable(nil)":         func() { visibility.Disable[*mcpkit.Tool](nil) },
		"Require(nil, p)":      func() { visibility.Require[*mcpkit.Tool](nil, visibility.Authenticated()) },
		"Require(m, nil)":      func() { visibility.Require(visibility.AllTools, nil) },
		"ReadOnlyFor(nil)":     func() { visibility.ReadOnlyFor(nil) },
		"Scopes()":             func() { visibility.Scopes() },
		"Users()":              func() { visibility.Users() },
		"Claim with a slice":   func() { visibility.Claim("x", []string{"a"}) },
		"Any(nil)":             func() { visibility.Any(nil) },
		"VersionRange(2, 1)":   func() { visibility.VersionRange("2", "1") },
		"VersionRange(2, 2.0)": func() { visibility.VersionRange("2", "2.0") },
		"New(nil)":             func() { visibility.New(nil) },
		"Add(nil)":             func() { visibility.New().Add(visibility.Disable(visibility.AllTools), nil) },
		"Attach(nil)":          func() { visibility.New().Attach(nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if v := recover(); v == nil {
					t.Error("no panic")
				} else if s, ok := v.(string); !ok || len(s) < 12 || s[:12] != "visibility: " {
					t.Errorf("panic %v, want a message that starts with \"visibility: \"", v)
				}
			}()
			f()
		})
	}
}

// TestAllowedAllocs checks that Allowed allocates nothing once a tool's
// checks are known, with the predicates of this package.
func TestAllowedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := visibility.New(
		visibility.Require(mcpkit.Tagged("a"), visibility.Scopes("admin")),
		visibility.Require(mcpkit.Tagged("a"), visibility.Claim("groups", "ops", 3)),
		visibility.Require(mcpkit.Tagged("a"), visibility.Header("X-Tier", "gold")),
		visibility.ReadOnlyFor(visibility.Users("bob")),
		visibility.RequireClientCapabilities(),
	)
	tl := tool("t", "a", visibility.NeedsElicitation)
	c := mcpkittest.NewRequest(tl, nil,
		mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada", Scopes: []string{"admin"}, Extra: map[string]any{"groups": []any{"dev", "ops"}}}),
		mcpkittest.WithHeader(http.Header{"X-Tier": {"gold"}}))
	ctx := context.Background()
	r.Allowed(ctx, tl, c) // compiles t's checks
	if n := testing.AllocsPerRun(100, func() { r.Allowed(ctx, tl, c) }); n != 0 {
		t.Errorf("Allowed allocates %v times per call", n)
	}
}

func TestRequireClientCapabilities(t *testing.T) {
	r := visibility.New(visibility.RequireClientCapabilities())
	plain, elicit, sample, roots, all := tool("plain"), tool("e", visibility.NeedsElicitation), tool("s", visibility.NeedsSampling),
		tool("r", visibility.NeedsRoots), tool("all", visibility.NeedsElicitation, visibility.NeedsSampling, visibility.NeedsRoots)
	tests := []struct {
		name string
		caps *mcp.ClientCapabilities
		want map[*mcpkit.Tool]bool
	}{
		{"unknown", nil, map[*mcpkit.Tool]bool{plain: true, elicit: false, sample: false, roots: false, all: false}},
		{"none", &mcp.ClientCapabilities{}, map[*mcpkit.Tool]bool{plain: true, elicit: false, sample: false, roots: false, all: false}},
		{"elicitation", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, map[*mcpkit.Tool]bool{plain: true, elicit: true, sample: false, roots: false, all: false}},
		{"sampling", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}, map[*mcpkit.Tool]bool{plain: true, elicit: false, sample: true, roots: false, all: false}},
		{"roots", &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}, map[*mcpkit.Tool]bool{plain: true, elicit: false, sample: false, roots: true, all: false}},
		{"all", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}, Sampling: &mcp.SamplingCapabilities{}, RootsV2: &mcp.RootCapabilities{}},
			map[*mcpkit.Tool]bool{plain: true, elicit: true, sample: true, roots: true, all: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for tl, want := range tt.want {
				if got := r.Allowed(context.Background(), tl, &caller{caps: tt.caps}); got != want {
					t.Errorf("Allowed(%s) = %v, want %v", tl.Name, got, want)
				}
			}
		})
	}
}
