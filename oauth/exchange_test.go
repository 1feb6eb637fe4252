package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// tokenRecorder records the bearer tokens of the requests it passes on.
type tokenRecorder struct {
	mu   sync.Mutex
	seen []string
	next http.Handler
}

func (rec *tokenRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if tok, ok := bearerToken(r.Header.Get("Authorization")); ok {
		rec.mu.Lock()
		rec.seen = append(rec.seen, tok)
		rec.mu.Unlock()
	}
	rec.next.ServeHTTP(w, r)
}

func (rec *tokenRecorder) tokens() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.seen)
}

// TestTokenExchangeThroughProxy runs a gateway (proxy.Upstream with a
// TokenExchange as its Credentials) in front of an upstream MCP server,
// both resource servers of one OP, end to end with the SDK's client: the
// caller's token is for the gateway; each call reaches the upstream with
// a token the OP issued for the upstream, for the caller, with the
// gateway as its actor; the upstream never sees the caller's token; the
// second call reuses the exchanged token.
func TestTokenExchangeThroughProxy(t *testing.T) {
	upTS, gwTS := httptest.NewUnstartedServer(nil), httptest.NewUnstartedServer(nil)
	upstream := "http://" + upTS.Listener.Addr().String() + "/mcp"
	gateway := "http://" + gwTS.Listener.Addr().String() + "/mcp"
	o := newTestOP(t, map[string]testClient{
		"agent":   {secret: "agent-secret", resource: gateway},
		"gateway": {secret: "gateway-secret", resource: upstream},
	})

	// The upstream: tokens for itself only; its tool tells whom it serves.
	upSrv := mcpkit.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	upSrv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			info := req.TokenInfo()
			text := fmt.Sprintf("aud=%v sub=%s act=%v", info.Extra["aud"], info.UserID, info.Extra["act"])
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}),
	})
	upV := newVerifier(t, o.URL, upstream, &JWTOptions{AcceptPlainJWT: true})
	seen := &tokenRecorder{next: auth.RequireBearerToken(upV.Verify, nil)(upSrv.HTTPHandler(nil))}
	upTS.Config.Handler = seen
	upTS.Start()
	defer upTS.Close()

	// The gateway: its own token reads the catalog; calls carry exchanged ones.
	x, err := NewTokenExchange(o.URL, &TokenExchangeOptions{ClientID: "gateway", ClientSecret: "gateway-secret", Resource: upstream})
	if err != nil {
		t.Fatal(err)
	}
	own := o.token(t, "gateway", "")
	up, err := proxy.New(t.Context(), proxy.HTTP(upstream, &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer " + own}}}),
		&proxy.Options{Credentials: x.Credentials})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	gwSrv := mcpkit.NewServer(&mcp.Implementation{Name: "gateway", Version: "1"}, nil)
	up.AddTo(gwSrv)
	gwV := newVerifier(t, o.URL, gateway, &JWTOptions{AcceptPlainJWT: true})
	gwTS.Config.Handler = auth.RequireBearerToken(gwV.Verify, nil)(gwSrv.HTTPHandler(nil))
	gwTS.Start()
	defer gwTS.Close()

	caller := o.token(t, "agent", "", "repo:read")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: gateway, HTTPClient: &http.Client{Transport: &bearer{token: caller}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	want := fmt.Sprintf("aud=[%s] sub=agent act=map[sub:gateway]", upstream)
	for i := range 2 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i+1, res, err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != want {
			t.Errorf("call %d: the upstream served %q, want %q", i+1, got, want)
		}
	}
	if n := o.exchanges.Load(); n != 1 {
		t.Errorf("%d exchanges for two calls of one caller, want 1", n)
	}
	tokens := seen.tokens()
	if slices.Contains(tokens, caller) {
		t.Error("the upstream saw the caller's token")
	}
	var exchanged int
	for _, tok := range tokens {
		if tok != own {
			exchanged++
		}
	}
	if exchanged != 2 {
		t.Errorf("the upstream saw %d requests with an exchanged token, want 2 (the calls)", exchanged)
	}
}

// callOf returns a call that the verified token info of client's token
// and the token itself came with, as auth.RequireBearerToken passes them.
func callOf(t *testing.T, v *JWTVerifier, token string) *mcpkit.Request {
	t.Helper()
	info, err := v.Verify(t.Context(), token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(info),
		mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer " + token}}))
}

// TestTokenExchangeCache: concurrent first calls of one principal share
// one exchange; the token is reused until ExpiryMargin before its expiry;
// the cache keeps at most CacheSize principals; a refused exchange is not
// cached; calls without a verified token get no credentials.
func TestTokenExchangeCache(t *testing.T) {
	const gateway, upstream = "https://gw.example.com/mcp", "https://up.example.com/mcp"
	o := newTestOP(t, map[string]testClient{
		"agent":   {secret: "agent-secret", resource: gateway},
		"bot":     {secret: "bot-secret", resource: gateway},
		"gateway": {secret: "gateway-secret", resource: upstream},
	})
	v := newVerifier(t, o.URL, gateway, &JWTOptions{AcceptPlainJWT: true})
	clock := &testClock{t: time.Now()}
	x, err := NewTokenExchange(o.URL, &TokenExchangeOptions{
		ClientID: "gateway", ClientSecret: "gateway-secret", Resource: upstream, CacheSize: 1, Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	agentTok := o.token(t, "agent", "")
	agent, bot := callOf(t, v, agentTok), callOf(t, v, o.token(t, "bot", ""))

	var wg sync.WaitGroup
	headers := make([]http.Header, 20)
	errs := make([]error, 20)
	for i := range headers {
		wg.Go(func() { headers[i], errs[i] = x.Credentials(t.Context(), agent) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	first := headers[0].Get("Authorization")
	for _, h := range headers {
		if h.Get("Authorization") != first {
			t.Fatalf("concurrent calls got different tokens: %q and %q", first, h.Get("Authorization"))
		}
	}
	if !strings.HasPrefix(first, "Bearer ") || strings.Contains(first, agentTok) {
		t.Fatalf("Authorization: %q, want an exchanged bearer token", first)
	}
	exchanges := func(want int64, when string) {
		t.Helper()
		if n := o.exchanges.Load(); n != want {
			t.Errorf("%s: %d exchanges, want %d", when, n, want)
		}
	}
	exchanges(1, "20 concurrent first calls")

	credentials := func(req *mcpkit.Request) string {
		t.Helper()
		h, err := x.Credentials(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return h.Get("Authorization")
	}
	// The OP's tokens live 5 minutes: it says expires_in 299 or so.
	clock.Advance(5*time.Minute - DefaultExpiryMargin - 5*time.Second)
	if got := credentials(agent); got != first {
		t.Errorf("before the margin: %q, want the cached token", got)
	}
	exchanges(1, "a call before the margin")
	clock.Advance(10 * time.Second)
	second := credentials(agent)
	exchanges(2, "a call within the margin")
	if second == first {
		t.Error("the token within the margin was reused")
	}

	credentials(bot) // the cache holds one principal: the agent's token goes
	exchanges(3, "another principal")
	credentials(agent)
	exchanges(4, "a principal evicted from the cache")
	if n, _ := x.cache.len(); n != 1 {
		t.Errorf("the cache holds %d tokens, want at most 1", n)
	}

	wrong, err := NewTokenExchange(o.URL, &TokenExchangeOptions{ClientID: "gateway", ClientSecret: "wrong", Resource: upstream})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := wrong.Credentials(t.Context(), agent); err == nil || !strings.Contains(err.Error(), "the issuer refused: invalid_client") {
			t.Errorf("a refused exchange: %v", err)
		}
	}
	exchanges(6, "two refused exchanges")

	for name, req := range map[string]*mcpkit.Request{
		"anonymous":             mcpkittest.NewRequest(&mcpkit.Tool{}, nil),
		"unverified token":      mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer " + agentTok}})),
		"verified, no token":    mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(agent.TokenInfo())),
		"verified, not bearer":  mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(agent.TokenInfo()), mcpkittest.WithHeader(http.Header{"Authorization": {"Basic eDp5"}})),
		"verified, two fields+": mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(agent.TokenInfo()), mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer a b"}})),
	} {
		if h, err := x.Credentials(t.Context(), req); err == nil || h != nil {
			t.Errorf("%s: %v %v, want no credentials", name, h, err)
		}
	}
	exchanges(6, "calls without a verified token")
}

// TestTokenExchangeFaults: with the issuer down at start, a TokenExchange
// is made, fails calls at once, and exchanges once the issuer is up; a
// hung token endpoint fails the calls waiting for one exchange after the
// Timeout, while a principal with a cached token is served at once.
func TestTokenExchangeFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		x, err := NewTokenExchange(iss.URL, &TokenExchangeOptions{ClientID: "gw", ClientSecret: "s", Resource: "https://up.example.com/mcp", HTTPClient: n.client(t)})
		if err != nil {
			t.Fatalf("NewTokenExchange with the issuer down: %v", err)
		}
		call := func(sub string) *mcpkit.Request {
			return mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: sub, Extra: map[string]any{"iss": iss.URL}}),
				mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer token-of-" + sub}}))
		}
		timed := func(req *mcpkit.Request) (string, time.Duration, error) {
			start := time.Now()
			h, err := x.Credentials(context.Background(), req)
			return h.Get("Authorization"), time.Since(start), err
		}
		if _, d, err := timed(call("alice")); err == nil || d != 0 {
			t.Fatalf("while the issuer is down: %v after %s, want an error at once", err, d)
		}
		iss.start(t, n)
		time.Sleep(time.Second)
		if h, d, err := timed(call("alice")); err != nil || d != 0 || h != "Bearer exchanged-token-of-alice" {
			t.Fatalf("once the issuer is up: %q %v after %s", h, err, d)
		}

		iss.setHang(tokenPath, true)
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if _, d, err := timed(call("bob")); err == nil || d != DefaultTimeout {
					t.Errorf("with the token endpoint hung: %v after %s, want an error after %s", err, d, DefaultTimeout)
				}
			})
		}
		synctest.Wait()
		if h, d, err := timed(call("alice")); err != nil || d != 0 || h != "Bearer exchanged-token-of-alice" {
			t.Errorf("a cached token while the endpoint hangs: %q %v after %s", h, err, d)
		}
		wg.Wait()
		if h := iss.hitsOf(tokenPath); h != 2 {
			t.Errorf("%d exchanges asked, want 2 (alice once, bob once for 5 calls)", h)
		}
	})
}

func TestNewTokenExchangeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		issuer string
		opts   *TokenExchangeOptions
		want   string
	}{
		{"no options", "https://idp", nil, "required"},
		{"no client", "https://idp", &TokenExchangeOptions{Resource: "https://up/mcp"}, "required"},
		{"no target", "https://idp", &TokenExchangeOptions{ClientID: "gw"}, "Resource or Audience"},
		{"resource with a fragment", "https://idp", &TokenExchangeOptions{ClientID: "gw", Resource: "https://up/mcp#x"}, "fragment"},
		{"token URL not a URL", "https://idp", &TokenExchangeOptions{ClientID: "gw", Audience: "up", TokenURL: "token"}, "not an absolute"},
		{"issuer over plain http", "http://idp.example.com", &TokenExchangeOptions{ClientID: "gw", Audience: "up"}, "needs https"},
		{"negative margin", "https://idp", &TokenExchangeOptions{ClientID: "gw", Audience: "up", ExpiryMargin: -1}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewTokenExchange(tc.issuer, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "oauth: ") {
				t.Errorf("err = %v, want one with %q", err, tc.want)
			}
		})
	}
}
