package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// The tests of this file are attacks on the verifiers and the token
// exchange: each fails while the defect it names is there.

// loopbackIssuer runs a fakeIssuer on a real loopback port (not a memNet),
// for tests that drive real clients and servers without a bubble.
func loopbackIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	iss := newFakeIssuer(t, ts.Listener.Addr().String())
	ts.Config.Handler = iss
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(iss.released) })
	return iss
}

// mintFor signs an at+jwt access token of iss for aud, for sub, with the
// scope and the extra claims given.
func (f *fakeIssuer) mintFor(t testing.TB, aud, sub, scope string, extra map[string]any) string {
	t.Helper()
	f.mu.Lock()
	key, kid := f.key, f.kid
	f.mu.Unlock()
	claims := map[string]any{
		"iss": f.URL, "aud": aud, "sub": sub, "scope": scope,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}
	for k, v := range extra {
		claims[k] = v
	}
	return signToken(t, jose.ES256, key, kid, "at+jwt", claims)
}

// TestAttackExchangeReusesBroaderToken: a user signs in to a gateway with
// two clients, an admin console (repo:read repo:admin) and a third-party
// app they granted repo:read only. Both tokens name the same user, so the
// same principal. The upstream requires repo:admin for delete_repo, and
// the issuer's exchanged tokens carry the subject token's grants (as
// RFC 8693 issuers do). After the console made one call, the read-only
// app's delete_repo runs upstream with the console's grants: TokenExchange
// caches per principal, not per subject token, and reuses the exchanged
// token "whatever token the caller presents meanwhile".
func TestAttackExchangeReusesBroaderToken(t *testing.T) {
	for _, version := range []string{mcpkittest.StatelessVersion, mcpkittest.StatefulVersion} {
		t.Run(version, func(t *testing.T) { attackExchangeReusesBroaderToken(t, version) })
	}
}

func attackExchangeReusesBroaderToken(t *testing.T, version string) {
	iss := loopbackIssuer(t)
	upTS, gwTS := httptest.NewUnstartedServer(nil), httptest.NewUnstartedServer(nil)
	upstream := "http://" + upTS.Listener.Addr().String() + "/mcp"
	gateway := "http://" + gwTS.Listener.Addr().String() + "/mcp"

	// The upstream accepts the gateway's own token (catalog reads) and the
	// tokens the fake issuer exchanges, "exchanged-<subject token>", with
	// the grants of the subject token.
	subjects := newVerifier(t, iss.URL, gateway, &JWTOptions{JWKSURL: iss.URL + keysPath})
	var mu sync.Mutex
	var seen []string
	upVerify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		mu.Lock()
		seen = append(seen, token)
		mu.Unlock()
		if token == "gateway-own" {
			return &auth.TokenInfo{UserID: "gateway", Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"iss": iss.URL}}, nil
		}
		subject, ok := strings.CutPrefix(token, "exchanged-")
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return subjects.Verify(ctx, subject, r)
	}
	upSrv := mcpkit.NewServer(&mcp.Implementation{Name: "repos", Version: "1"}, nil)
	upSrv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	upSrv.Add(echoTool("delete_repo"))
	upTS.Config.Handler = auth.RequireBearerToken(upVerify, nil)(upSrv.HTTPHandler(nil))
	upTS.Start()
	defer upTS.Close()

	x, err := NewTokenExchange(iss.URL, &TokenExchangeOptions{ClientID: "gw", ClientSecret: "s", Resource: upstream, TokenURL: iss.URL + tokenPath})
	if err != nil {
		t.Fatal(err)
	}
	up, err := proxy.New(t.Context(), proxy.HTTP(upstream, &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer gateway-own"}}}),
		&proxy.Options{Credentials: x.Credentials, ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	gwSrv := mcpkit.NewServer(&mcp.Implementation{Name: "gateway", Version: "1"}, nil)
	up.AddTo(gwSrv)
	gwV := newVerifier(t, iss.URL, gateway, &JWTOptions{JWKSURL: iss.URL + keysPath})
	gwTS.Config.Handler = auth.RequireBearerToken(gwV.Verify, nil)(gwSrv.HTTPHandler(nil))
	gwTS.Start()
	defer gwTS.Close()

	console := iss.mintFor(t, gateway, "alice", "repo:read repo:admin", map[string]any{"azp": "admin-console"})
	app := iss.mintFor(t, gateway, "alice", "repo:read", map[string]any{"azp": "third-party-app"})
	call := func(token string) (*mcp.CallToolResult, error) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: gateway, HTTPClient: &http.Client{Transport: &bearer{token: token}}},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_repo"})
	}
	if res, err := call(console); err != nil || res.IsError {
		t.Fatalf("the console's delete_repo: %v %v", res, err)
	}
	res, err := call(app)
	if err == nil && !res.IsError {
		t.Errorf("the read-only app's delete_repo ran upstream: %v", res.Content[0].(*mcp.TextContent).Text)
	}
	mu.Lock()
	last := seen[len(seen)-1]
	mu.Unlock()
	if last != "exchanged-"+app {
		t.Errorf("the upstream got a token exchanged for the console's token, not the app's")
	}
}

// TestAttackExchangeSendsForeignToken: a gateway accepts the tokens of two
// issuers (its own IdP and a partner's), and exchanges at its own IdP for
// the upstream. A partner user's token, issued by the partner for the
// gateway, is posted as subject_token to the gateway's IdP, a party that
// did not issue it and may replay it at the gateway: Credentials never
// checks that the caller's token is of the issuer it exchanges at.
func TestAttackExchangeSendsForeignToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		x, err := NewTokenExchange(iss.URL, &TokenExchangeOptions{ClientID: "gw", ClientSecret: "s", Resource: "https://up.example.com/mcp", HTTPClient: n.client(t)})
		if err != nil {
			t.Fatal(err)
		}
		// What a verifier of the partner's tokens gives (iss is the partner).
		partner := mcpkittest.NewRequest(&mcpkit.Tool{}, nil,
			mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "bob", Extra: map[string]any{"iss": "https://partner.example.com"}}),
			mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer partner-token-of-bob"}}))
		_, err = x.Credentials(context.Background(), partner)
		if h := iss.hitsOf(tokenPath); h != 0 {
			t.Errorf("the partner's token was posted to the gateway's IdP (%d requests); Credentials: %v", h, err)
		}
		if err == nil {
			t.Error("a token of another issuer got credentials")
		}
	})
}

// TestAttackJWKSWithoutKeys: a JWKS endpoint that answers 200 with a JSON
// document that is no JWKS (no "keys" member: a maintenance page, an
// error object, null) empties the key set: every token of the keys in
// hand is refused until the next fetch allowed, a minute later. The docs
// say the keys in hand keep verifying while the issuer does not answer.
func TestAttackJWKSWithoutKeys(t *testing.T) {
	for _, body := range []string{`{"error":"maintenance"}`, `null`} {
		t.Run(body, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newMemNet()
				iss := newFakeIssuer(t, "127.0.0.1:1")
				iss.start(t, n)
				var mu sync.Mutex
				broken := false
				n.serve(t, "127.0.0.1:2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					b := broken
					mu.Unlock()
					if b {
						w.Header().Set("Content-Type", "application/json")
						fmt.Fprint(w, body)
						return
					}
					iss.ServeHTTP(w, r)
				}))
				v := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: "http://127.0.0.1:2" + keysPath, HTTPClient: n.client(t)})
				good := iss.mint(t, "at+jwt")
				if _, err := v.Verify(context.Background(), good, nil); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				broken = true
				mu.Unlock()
				time.Sleep(DefaultMaxKeyAge)
				if _, err := v.Verify(context.Background(), good, nil); err != nil {
					t.Fatalf("a known key once the keys aged: %v", err)
				}
				synctest.Wait() // the refresh got the broken answer
				if _, err := v.Verify(context.Background(), good, nil); err != nil {
					t.Errorf("a known key after the JWKS answered %s: %v", body, err)
				}
			})
		})
	}
}

// TestAttackIntrospectionAbandonedQuestions: with the introspection
// endpoint hung, requests with distinct tokens that give up at once (a
// client that sends and disconnects; here a context already cancelled)
// each leave a question running detached for the whole Timeout, with a
// goroutine and a connection to the issuer: 1000 such requests cost the
// attacker nothing and hold 1000 connections and goroutines for 10 s.
// Nothing bounds how many questions run at once.
func TestAttackIntrospectionAbandonedQuestions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		v, err := NewIntrospectionVerifier(t.Context(), iss.URL, fakeResource, &IntrospectionOptions{
			Endpoint: iss.URL + introspectPath, ClientID: "rs", ClientSecret: "s", HTTPClient: n.client(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		iss.setHang(introspectPath, true)
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		const requests = 1000
		for i := range requests {
			if _, err := v.Verify(gone, fmt.Sprintf("random-%d", i), nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		synctest.Wait()
		if h := iss.hitsOf(introspectPath); h > 64 {
			t.Errorf("%d requests that had given up left %d questions hung at the issuer", requests, h)
		}
		time.Sleep(DefaultTimeout)
	})
}
