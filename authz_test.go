package mcpkit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/visibility"
)

// stepUpTokens are what a test's authorization "server" hands out, by the
// scope asked for, and what the resource server's verifier accepts.
var stepUpTokens = map[string]*auth.TokenInfo{
	"t-read":  {UserID: "ada", Scopes: []string{"repo:read"}, Expiration: time.Now().Add(24 * time.Hour)},
	"t-admin": {UserID: "ada", Scopes: []string{"repo:read", "repo:admin"}, Expiration: time.Now().Add(24 * time.Hour)},
}

const testResourceMetadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

// authzServer returns a server with a tool anyone with a token may call
// and one that needs repo:admin, served over HTTP behind the SDK's
// bearer-token check, its URL.
func authzServer(t *testing.T, sessions bool) string {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "authz", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	for _, name := range []string{"read_repo", "delete_repo"} {
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " done"}}}, nil
			}),
		})
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := stepUpTokens[token]; ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}
	h := srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: sessions, ResourceMetadataURL: testResourceMetadata})
	h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: testResourceMetadata})(h)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// stepUp is a client's OAuth handler: it starts with a token, and on a
// challenge records it and gets the token for the scope it names.
type stepUp struct {
	mu         sync.Mutex
	token      string
	challenges []seenChallenge
}

type seenChallenge struct {
	status                   int
	err, scope, resourceMeta string
}

func (s *stepUp) TokenSource(context.Context) (oauth2.TokenSource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == "" {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.token}), nil
}

func (s *stepUp) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil || len(cs) != 1 || cs[0].Scheme != "bearer" {
		return errors.New("no bearer challenge")
	}
	c := seenChallenge{status: resp.StatusCode, err: cs[0].Params["error"], scope: cs[0].Params["scope"], resourceMeta: cs[0].Params["resource_metadata"]}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challenges = append(s.challenges, c)
	switch {
	case c.scope == "repo:admin":
		s.token = "t-admin"
	case c.status == http.StatusUnauthorized:
		s.token = "t-read"
	default:
		return errors.New("no token grants " + c.scope)
	}
	return nil
}

func (s *stepUp) seen() []seenChallenge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.challenges)
}

// TestRequireScopesStepUp: a client whose token lacks the scope a tool
// needs is answered 403 with the spec's challenge, gets a token with the
// scope named, and its call succeeds on the retry, on both protocol eras;
// the tool it may call anyway is never challenged.
func TestRequireScopesStepUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		version  string
		sessions bool
	}{
		{"2026-07-28", mcpkittest.StatelessVersion, false},
		{"2025-11-25 stateless", mcpkittest.StatefulVersion, false},
		{"2025-11-25 session", mcpkittest.StatefulVersion, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := authzServer(t, tc.sessions)
			h := &stepUp{token: "t-read"}
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: h},
				&mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_repo"})
			if err != nil || res.IsError {
				t.Fatalf("read_repo: %v %v", res, err)
			}
			if got := h.seen(); len(got) != 0 {
				t.Fatalf("read_repo was challenged: %+v", got)
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_repo"})
			if err != nil || res.IsError {
				t.Fatalf("delete_repo after step-up: %v %v", res, err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; text != "delete_repo done" {
				t.Errorf("delete_repo answered %q", text)
			}
			want := []seenChallenge{{status: http.StatusForbidden, err: "insufficient_scope", scope: "repo:admin", resourceMeta: testResourceMetadata}}
			if got := h.seen(); !slices.Equal(got, want) {
				t.Errorf("challenges = %+v, want %+v", got, want)
			}
		})
	}
}

// TestRequireScopesWireHeaders reads the refusals on the wire: 403 with
// the challenge for a token without the scope, 401 with the scope and the
// metadata (and no error code) for no token, as the SDK's 401s carry it.
func TestRequireScopesWireHeaders(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "authz", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin", "repo:write")))
	srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "delete_repo", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			t.Error("the handler ran")
			return nil, nil
		})})
	// No bearer-token check in front: a call without a token reaches
	// the requirement.
	ts := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: testResourceMetadata}))
	defer ts.Close()
	inner := srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: testResourceMetadata})
	withToken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
			return stepUpTokens["t-read"], nil
		}, nil)(inner).ServeHTTP(w, r)
	}))
	defer withToken.Close()

	for _, tc := range []struct {
		name, url, token string
		status           int
		header           string
	}{
		{"token without the scope", withToken.URL, "any", http.StatusForbidden,
			`Bearer error="insufficient_scope", scope="repo:admin repo:write", resource_metadata="` + testResourceMetadata + `"`},
		{"no token", ts.URL, "", http.StatusUnauthorized,
			`Bearer scope="repo:admin repo:write", resource_metadata="` + testResourceMetadata + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := mcpkittest.RawClient{Endpoint: tc.url, Token: tc.token, HTTPClient: &http.Client{Transport: &recordHeaders{}}}
			_, err := raw.Call(t.Context(), "tools/call", map[string]any{"name": "delete_repo", "arguments": map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), http.StatusText(tc.status)) {
				t.Fatalf("err = %v, want HTTP %d", err, tc.status)
			}
			got := raw.HTTPClient.Transport.(*recordHeaders).last
			if v := got.Values("WWW-Authenticate"); len(v) != 1 || v[0] != tc.header {
				t.Errorf("WWW-Authenticate = %q\nwant %q", v, tc.header)
			}
			if ct := got.Get("Content-Type"); strings.Contains(ct, "event-stream") || strings.Contains(ct, "json") {
				t.Errorf("Content-Type %q of the SDK's held answer leaked into the challenge", ct)
			}
		})
	}
}

// recordHeaders keeps the headers of the last response.
type recordHeaders struct{ last http.Header }

func (r *recordHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.last = resp.Header.Clone()
	}
	return resp, err
}

// TestRequireScopesWithoutHTTP: where no HTTP status can carry the
// challenge (in-memory, stdio), the refusal is a fatal tool error that
// names the scopes in _meta.
// Error masking further out does not hide it.
func TestRequireScopesWithoutHTTP(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "authz", Version: "1"}, nil)
	srv.Use(middleware.MaskErrors(nil), mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	ran := false
	srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "delete_repo", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			ran = true
			return nil, nil
		})})
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.CallTool(t.Context(), "delete_repo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ran || !res.IsError {
		t.Fatalf("ran=%v isError=%v", ran, res.IsError)
	}
	if got := mcpkit.ErrorClassOf(res); got != mcpkit.Fatal {
		t.Errorf("class %q, want fatal", got)
	}
	if got, _ := res.Meta[mcpkit.MetaKeyRequiredScopes].([]any); len(got) != 1 || got[0] != "repo:admin" {
		t.Errorf("_meta[%s] = %v", mcpkit.MetaKeyRequiredScopes, res.Meta[mcpkit.MetaKeyRequiredScopes])
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != `tool "delete_repo" requires authorization with scope "repo:admin"` {
		t.Errorf("text %q", text)
	}
}

// TestRequireToken checks a predicate over the token, through ServeTool:
// the check runs only with a token, and a refusal is an
// InsufficientScopeError that errors.Is ErrInsufficientScope.
func TestRequireToken(t *testing.T) {
	staff := mcpkit.RequireToken(func(_ context.Context, info *auth.TokenInfo) bool {
		return info.Extra["department"] == "ops"
	})
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "restart"},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})}
	h := staff(tool.Handler)
	for _, tc := range []struct {
		name string
		info *auth.TokenInfo
		want error
	}{
		{"ops", &auth.TokenInfo{Extra: map[string]any{"department": "ops"}}, nil},
		{"sales", &auth.TokenInfo{Extra: map[string]any{"department": "sales"}}, &mcpkit.InsufficientScopeError{Tool: "restart"}},
		{"no token", nil, &mcpkit.InsufficientScopeError{Tool: "restart", Unauthenticated: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []mcpkittest.RequestOption
			if tc.info != nil {
				opts = append(opts, mcpkittest.WithTokenInfo(tc.info))
			}
			_, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, opts...))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ise *mcpkit.InsufficientScopeError
			if !errors.As(err, &ise) || !errors.Is(err, mcpkit.ErrInsufficientScope) {
				t.Fatalf("err = %v", err)
			}
			if want := tc.want.(*mcpkit.InsufficientScopeError); ise.Tool != want.Tool || ise.Unauthenticated != want.Unauthenticated || len(ise.Scopes) != 0 {
				t.Errorf("err = %+v, want %+v", ise, want)
			}
		})
	}
}

func TestChallengeHeader(t *testing.T) {
	for _, tc := range []struct {
		err  mcpkit.InsufficientScopeError
		meta string
		want string
	}{
		{mcpkit.InsufficientScopeError{Scopes: []string{"a", "b"}}, "https://x/.well-known/oauth-protected-resource",
			`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource"`},
		{mcpkit.InsufficientScopeError{}, "", `Bearer error="insufficient_scope"`},
		{mcpkit.InsufficientScopeError{Unauthenticated: true}, "", `Bearer`},
		{mcpkit.InsufficientScopeError{Unauthenticated: true}, `https://x/"q"`, `Bearer resource_metadata="https://x/\"q\""`},
	} {
		if got := mcpkit.ChallengeHeader(&tc.err, tc.meta); got != tc.want {
			t.Errorf("ChallengeHeader(%+v, %q) = %s, want %s", tc.err, tc.meta, got, tc.want)
		}
	}
}

func TestRequireScopesPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"no scope":    func() { mcpkit.RequireScopes() },
		"empty scope": func() { mcpkit.RequireScopes("") },
		"space":       func() { mcpkit.RequireScopes("a b") },
		"quote":       func() { mcpkit.RequireToken(func(context.Context, *auth.TokenInfo) bool { return true }, `a"`) },
		"nil check":   func() { mcpkit.RequireToken(nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if v := recover(); v == nil || !strings.HasPrefix(v.(string), "mcpkit: ") {
					t.Errorf("recover() = %v", v)
				}
			}()
			f()
		})
	}
}

// TestVerifiedPrincipalIssuer: a verifier's issuer qualifies the principal,
// so that one subject at two issuers is two principals, and no issuer and
// subject spell another pair's principal.
func TestVerifiedPrincipalIssuer(t *testing.T) {
	principal := func(info *auth.TokenInfo) string {
		return mcpkit.VerifiedPrincipal(mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(info)))
	}
	tests := []struct {
		info *auth.TokenInfo
		want string
	}{
		{&auth.TokenInfo{UserID: "ada"}, "sub:ada"},
		{&auth.TokenInfo{UserID: "ada", Extra: map[string]any{"iss": "https://a.example"}}, `iss:"https://a.example" sub:ada`},
		{&auth.TokenInfo{UserID: "ada", Extra: map[string]any{"iss": "https://b.example"}}, `iss:"https://b.example" sub:ada`},
		{&auth.TokenInfo{UserID: `x" sub:ada`, Extra: map[string]any{"iss": "https://a.example"}}, `iss:"https://a.example" sub:x" sub:ada`},
		{&auth.TokenInfo{UserID: "ada", Extra: map[string]any{"iss": `https://a.example" sub:x`}}, `iss:"https://a.example\" sub:x" sub:ada`},
		{&auth.TokenInfo{UserID: "ada", Extra: map[string]any{"iss": 7}}, "sub:ada"},
		{&auth.TokenInfo{Extra: map[string]any{"iss": "https://a.example"}}, ""},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		got := principal(tc.info)
		if got != tc.want {
			t.Errorf("VerifiedPrincipal(%+v) = %s, want %s", tc.info, got, tc.want)
		}
		if got != "" && got != "sub:ada" && seen[got] {
			t.Errorf("two token infos share the principal %s", got)
		}
		seen[got] = true
	}
}

// On 2026-07-28 the headers name the method and the tool, so a call of a
// registered tool whose requirement the caller fails is refused before the
// SDK reads the body: the SDK's middleware never sees it, and a body the
// SDK could not parse gets the challenge all the same. A name the headers
// cannot decide (a version the caller reaches without a requirement, a
// 2025-11-25 request) goes on to the SDK and is refused once the call
// reaches its tool, with the same answer on the wire.
func TestRequireScopesBeforeTheBody(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "authz", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(visibility.Key("deploy", "2"), mcpkit.RequireScopes("deploy:v2")))
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	var seen atomic.Int32
	srv.MCPServer().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				seen.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	ok := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	for _, tl := range []*mcpkit.Tool{
		{Tool: mcp.Tool{Name: "delete_repo", InputSchema: map[string]any{"type": "object"}}, Handler: ok},
		{Tool: mcp.Tool{Name: "deploy", InputSchema: map[string]any{"type": "object"}}, Handler: ok, Version: "1"},
		{Tool: mcp.Tool{Name: "deploy", InputSchema: map[string]any{"type": "object"}}, Handler: ok, Version: "2"},
	} {
		if err := srv.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	inner := srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: testResourceMetadata})
	ts := httptest.NewServer(auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return stepUpTokens["t-read"], nil
	}, nil)(inner))
	defer ts.Close()

	post := func(version, name, body string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer t-read")
		req.Header.Set("Mcp-Protocol-Version", version)
		if version >= "2026-07-28" {
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	}
	call := func(version, name string) string {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
		if version < "2026-07-28" {
			meta = `"_meta":{}`
		}
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},` + meta + `}}`
	}
	challenge := `Bearer error="insufficient_scope", scope="repo:admin", resource_metadata="` + testResourceMetadata + `"`

	// Refused by its headers: the SDK never sees the call.
	if status, h := post("2026-07-28", "delete_repo", call("2026-07-28", "delete_repo")); status != http.StatusForbidden || h != challenge {
		t.Errorf("delete_repo on 2026-07-28: %d %q", status, h)
	}
	if status, h := post("2026-07-28", "delete_repo", `{"jsonrpc": not json`); status != http.StatusForbidden || h != challenge {
		t.Errorf("delete_repo with a broken body: %d %q", status, h)
	}
	if n := seen.Load(); n != 0 {
		t.Errorf("the SDK saw %d calls refused by their headers", n)
	}
	// deploy v1 needs nothing, and a pin in the body could choose it: the
	// headers do not decide, and the call of v2 is refused when it reaches v2.
	if status, h := post("2026-07-28", "deploy", call("2026-07-28", "deploy")); status != http.StatusForbidden ||
		h != `Bearer error="insufficient_scope", scope="deploy:v2", resource_metadata="`+testResourceMetadata+`"` {
		t.Errorf("deploy (v2) on 2026-07-28: %d %q", status, h)
	}
	if n := seen.Load(); n != 1 {
		t.Errorf("the SDK saw %d calls, want the deploy call", n)
	}
	// 2025-11-25 has no such headers: the SDK reads the body, and the
	// answer is the same.
	if status, h := post("2025-11-25", "delete_repo", call("2025-11-25", "delete_repo")); status != http.StatusForbidden || h != challenge {
		t.Errorf("delete_repo on 2025-11-25: %d %q", status, h)
	}
	if n := seen.Load(); n != 2 {
		t.Errorf("the SDK saw %d calls, want 2", n)
	}
}

// TestRefusalEndsSDKSession checks what docs/testing.md says of the go-sdk
// client, so that the page changes when the SDK does: a call refused with
// 403 ends the client's session, and the next call on it fails whatever
// its tool, on both protocol versions; a session per token goes on.
func TestRefusalEndsSDKSession(t *testing.T) {
	tokens := map[string]*auth.TokenInfo{
		"reader": {UserID: "ada", Scopes: []string{"orders:read"}, Expiration: time.Now().Add(time.Hour)},
		"admin":  {UserID: "root", Scopes: []string{"orders:read", "orders:admin"}, Expiration: time.Now().Add(time.Hour)},
	}
	newServer := func() *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "orders"}, nil)
		srv.Use(mcpkit.ForTools(mcpkit.Named("deleteOrder"), mcpkit.RequireScopes("orders:admin")))
		if err := srv.Add(tool("deleteOrder", reply("deleted")), tool("listOrders", reply("[]"))); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	for name, start := range map[string]func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{
		"stateless": mcpkittest.NewStatelessServer,
		"sessions":  mcpkittest.NewServer,
	} {
		t.Run(name, func(t *testing.T) {
			ts := start(t, newServer(), &mcpkittest.Options{Tokens: tokens, Token: "reader"})
			if _, err := ts.CallTool(t.Context(), "deleteOrder", nil); err == nil || !strings.Contains(err.Error(), "Forbidden") {
				t.Fatalf("a call without the scope: %v, want Forbidden", err)
			}
			if _, err := ts.CallTool(t.Context(), "listOrders", nil); err == nil || !strings.Contains(err.Error(), "connection closed") {
				t.Errorf("a call after the refusal, on the same session: %v; docs/testing.md says the session is closed", err)
			}
			admin := start(t, newServer(), &mcpkittest.Options{Tokens: tokens, Token: "admin"})
			if res, err := admin.CallTool(t.Context(), "deleteOrder", nil); err != nil || resultText(t, res) != "deleted" {
				t.Errorf("a session of its own for the better token: %v, %v", res, err)
			}
		})
	}
}

// TestRequireScopesGuardsTargets: a server-wide requirement guards
// prompts and resources as it guards tools: over HTTP, on both eras, a
// prompts/get or resources/read without the scope is answered 403 with the
// challenge, and the client's step-up then gets the prompt (resource); in
// memory, the refusal is a JSON-RPC error that says what the prompt
// (resource) requires. Nothing is served before.
func TestRequireScopesGuardsTargets(t *testing.T) {
	newServer := func(served *atomic.Int32) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "authz", Version: "1"}, nil)
		srv.Use(mcpkit.RequireScopes("repo:admin"))
		err := srv.AddPrompts(&mcpkit.Prompt{
			Prompt: mcp.Prompt{Name: "release_notes"},
			Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
				served.Add(1)
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "notes"}}}}, nil
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		err = srv.AddResources(&mcpkit.Resource{
			Resource: mcp.Resource{URI: "repo://secrets", Name: "secrets"},
			Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
				served.Add(1)
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "s3cr3t"}}}, nil
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	if layers, _ := newServer(new(atomic.Int32)).PromptPipeline("release_notes"); len(layers) != 1 || layers[0].Skipped {
		t.Errorf("the prompt's pipeline: %+v", layers)
	}
	if layers, _ := newServer(new(atomic.Int32)).ResourcePipeline("repo://secrets"); len(layers) != 1 || layers[0].Skipped {
		t.Errorf("the resource's pipeline: %+v", layers)
	}
	kinds := []struct {
		name    string
		request func(context.Context, *mcp.ClientSession) error
		refusal string
	}{
		{"prompt", func(ctx context.Context, cs *mcp.ClientSession) error {
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "release_notes"})
			if err == nil && len(res.Messages) != 1 {
				err = fmt.Errorf("got %+v", res)
			}
			return err
		}, `prompt "release_notes" requires authorization with scope "repo:admin"`},
		{"resource", func(ctx context.Context, cs *mcp.ClientSession) error {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "repo://secrets"})
			if err == nil && len(res.Contents) != 1 {
				err = fmt.Errorf("got %+v", res)
			}
			return err
		}, `resource "repo://secrets" requires authorization with scope "repo:admin"`},
	}
	for _, tc := range []struct {
		name     string
		version  string
		sessions bool
	}{
		{"2026-07-28", mcpkittest.StatelessVersion, false},
		{"2025-11-25 stateless", mcpkittest.StatefulVersion, false},
		{"2025-11-25 session", mcpkittest.StatefulVersion, true},
	} {
		for _, k := range kinds {
			t.Run(tc.name+"/"+k.name, func(t *testing.T) {
				var served atomic.Int32
				srv := newServer(&served)
				verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
					if info, ok := stepUpTokens[token]; ok {
						return info, nil
					}
					return nil, auth.ErrInvalidToken
				}
				h := srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: tc.sessions, ResourceMetadataURL: testResourceMetadata})
				ts := httptest.NewServer(auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: testResourceMetadata})(h))
				defer ts.Close()
				up := &stepUp{token: "t-read"}
				client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
				cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, OAuthHandler: up},
					&mcp.ClientSessionOptions{ProtocolVersion: tc.version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if err := k.request(t.Context(), cs); err != nil {
					t.Fatalf("%s after step-up: %v", k.name, err)
				}
				want := []seenChallenge{{status: http.StatusForbidden, err: "insufficient_scope", scope: "repo:admin", resourceMeta: testResourceMetadata}}
				if got := up.seen(); !slices.Equal(got, want) {
					t.Errorf("challenges = %+v, want %+v", got, want)
				}
				if n := served.Load(); n != 1 {
					t.Errorf("the %s was served %d times, want once (after the step-up)", k.name, n)
				}
			})
		}
	}
	for _, k := range kinds {
		t.Run("in memory/"+k.name, func(t *testing.T) {
			var served atomic.Int32
			cs, err := mcpkittest.ConnectInMemory(t.Context(), newServer(&served), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if err := k.request(t.Context(), cs); err == nil || !strings.Contains(err.Error(), k.refusal) {
				t.Errorf("without a token: %v", err)
			}
			if n := served.Load(); n != 0 {
				t.Errorf("served %d times without a token", n)
			}
		})
	}
}
