package oauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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
	upTS.Config.Handler = auth.RequireBearerToken(upVerify, nil)(upSrv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
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

// TestAttackTypHeaderNameCase: JOSE header parameter names are case
// sensitive (RFC 7515, section 4), so a header with "TYP" but no "typ" is
// untyped, and one with "typ":"JWT" is typed JWT whatever else it holds;
// a default verifier must refuse both. checkType reads the header with
// encoding/json, which matches field names without regard to case, and
// accepts them as at+jwt.
func TestAttackTypHeaderNameCase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		v := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: iss.URL + keysPath, HTTPClient: n.client(t)})
		claims, _ := json.Marshal(map[string]any{"iss": iss.URL, "aud": fakeResource, "sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
		// Headers signed as they are written: go-jose would sort the keys.
		for name, head := range map[string]string{
			"TYP only":          `{"alg":"ES256","kid":"k1","TYP":"at+jwt"}`,
			"typ JWT, then Typ": `{"alg":"ES256","kid":"k1","typ":"JWT","Typ":"at+jwt"}`,
		} {
			in := base64.RawURLEncoding.EncodeToString([]byte(head)) + "." + base64.RawURLEncoding.EncodeToString(claims)
			digest := sha256.Sum256([]byte(in))
			r, s, err := ecdsa.Sign(rand.Reader, iss.key, digest[:])
			if err != nil {
				t.Fatal(err)
			}
			sig := make([]byte, 64)
			r.FillBytes(sig[:32])
			s.FillBytes(sig[32:])
			tok := in + "." + base64.RawURLEncoding.EncodeToString(sig)
			if _, err := v.Verify(context.Background(), tok, nil); err == nil {
				t.Errorf("%s: the header %s was accepted as at+jwt", name, head)
			}
		}
	})
}

// gatewayRig is a gateway (a proxy.Upstream with a TokenExchange as its
// Credentials, behind a JWTVerifier of iss) in front of an upstream MCP
// server whose verifier takes the gateway's own token and the tokens the
// exchange endpoint gives, "exchanged-...-<subject token>", with the
// grants of the subject token. The upstream's whoami tool answers with
// the caller's principal; the rig counts the upstream's initialize
// requests and can restart it on the same address.
type gatewayRig struct {
	gateway     string
	inits       atomic.Int64
	restart     func()
	exchange    *TokenExchange
	upstreamSaw func() []string
}

func newGatewayRig(t *testing.T, iss *fakeIssuer, version, tokenURL string) *gatewayRig {
	t.Helper()
	rig := &gatewayRig{}
	upTS, gwTS := httptest.NewUnstartedServer(nil), httptest.NewUnstartedServer(nil)
	upAddr := upTS.Listener.Addr().String()
	upstream := "http://" + upAddr + "/mcp"
	rig.gateway = "http://" + gwTS.Listener.Addr().String() + "/mcp"

	subjects := newVerifier(t, iss.URL, rig.gateway, &JWTOptions{JWKSURL: iss.URL + keysPath})
	var mu sync.Mutex
	var seen []string
	rig.upstreamSaw = func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
	upVerify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		mu.Lock()
		seen = append(seen, token)
		mu.Unlock()
		if token == "gateway-own" {
			return &auth.TokenInfo{UserID: "gateway", Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"iss": iss.URL}}, nil
		}
		if !strings.HasPrefix(token, "exchanged-") {
			return nil, auth.ErrInvalidToken
		}
		return subjects.Verify(ctx, token[strings.Index(token, "eyJ"):], r) // the subject token, a JWT, ends it
	}
	handler := func() http.Handler {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
		srv.Add(echoTool("whoami"))
		h := auth.RequireBearerToken(upVerify, nil)(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"method":"initialize"`)) {
					rig.inits.Add(1)
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	upTS.Config.Handler = handler()
	upTS.Start()
	current := upTS
	t.Cleanup(func() { current.CloseClientConnections(); current.Close() })
	rig.restart = func() {
		current.CloseClientConnections() // the proxy's stream would hold Close
		current.Close()
		ts := httptest.NewUnstartedServer(handler())
		l, err := net.Listen("tcp", upAddr)
		if err != nil {
			t.Fatalf("the upstream cannot listen again: %v", err)
		}
		ts.Listener.Close()
		ts.Listener = l
		ts.Start()
		current = ts
	}

	x, err := NewTokenExchange(iss.URL, &TokenExchangeOptions{ClientID: "gw", ClientSecret: "s", Resource: upstream, TokenURL: tokenURL})
	if err != nil {
		t.Fatal(err)
	}
	rig.exchange = x
	up, err := proxy.New(t.Context(), proxy.HTTP(upstream, &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer gateway-own"}}}),
		&proxy.Options{Credentials: x.Credentials, ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	gwSrv := mcpkit.NewServer(&mcp.Implementation{Name: "gateway", Version: "1"}, nil)
	up.AddTo(gwSrv)
	gwV := newVerifier(t, iss.URL, rig.gateway, &JWTOptions{JWKSURL: iss.URL + keysPath})
	gwTS.Config.Handler = auth.RequireBearerToken(gwV.Verify, nil)(gwSrv.HTTPHandler(nil))
	gwTS.Start()
	t.Cleanup(gwTS.Close)
	return rig
}

// connect returns a client session of the gateway for token.
func (rig *gatewayRig) connect(t *testing.T, token, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: rig.gateway, HTTPClient: &http.Client{Transport: &bearer{token: token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestAttackExchangeWithoutExpiryOpensSessions: an issuer that leaves
// expires_in out (RFC 8693 only recommends it) mints a new token per
// exchange; the TokenExchange then exchanges per call (documented), and
// the proxy, which keys its upstream sessions by the credentials' digest,
// opens a new upstream session per call against an upstream with
// sessions: ten calls of one caller, ten initialize handshakes, ten
// sessions left open upstream until they idle out or are evicted.
func TestAttackExchangeWithoutExpiryOpensSessions(t *testing.T) {
	iss := loopbackIssuer(t)
	var minted atomic.Int64
	exchangeTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"access_token":      fmt.Sprintf("exchanged-%d-%s", minted.Add(1), r.PostForm.Get("subject_token")),
			"issued_token_type": accessTokenType, "token_type": "Bearer",
		})
	}))
	defer exchangeTS.Close()
	rig := newGatewayRig(t, iss, mcpkittest.StatefulVersion, exchangeTS.URL)
	cs := rig.connect(t, iss.mintFor(t, rig.gateway, "alice", "repo:read", nil), mcpkittest.StatelessVersion)
	before := rig.inits.Load()
	for i := range 10 {
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"}); err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
	}
	t.Logf("%d initialize requests upstream, %d exchanges", rig.inits.Load()-before, minted.Load())
	if n := rig.inits.Load() - before; n > 2 {
		t.Errorf("10 calls of one caller opened %d upstream sessions (%d exchanges)", n, minted.Load())
	}
}

// TestProbeExchangeUpstreamRestart: two principals through the gateway,
// on an upstream with sessions (per-caller sessions) and one without;
// the upstream restarts; each principal's calls keep reaching the
// upstream as that principal, and the upstream never sees a caller's
// token.
func TestProbeExchangeUpstreamRestart(t *testing.T) {
	for _, version := range []string{mcpkittest.StatelessVersion, mcpkittest.StatefulVersion} {
		t.Run(version, func(t *testing.T) {
			iss := loopbackIssuer(t)
			rig := newGatewayRig(t, iss, version, iss.URL+tokenPath)
			alice := iss.mintFor(t, rig.gateway, "alice", "repo:read", nil)
			bob := iss.mintFor(t, rig.gateway, "bob", "repo:read", nil)
			sessions := map[string]*mcp.ClientSession{"alice": rig.connect(t, alice, version), "bob": rig.connect(t, bob, version)}
			round := func(when string) {
				for who, cs := range sessions {
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"})
					if err != nil || res.IsError {
						t.Fatalf("%s, %s: %v %v", when, who, res, err)
					}
					if got, want := res.Content[0].(*mcp.TextContent).Text, `iss:"`+iss.URL+`" sub:`+who; got != want {
						t.Errorf("%s, %s: the upstream served %s", when, who, got)
					}
				}
			}
			round("before the restart")
			rig.restart()
			round("after the restart")
			for _, tok := range rig.upstreamSaw() {
				if strings.Contains(tok, alice) && !strings.HasPrefix(tok, "exchanged-") || tok == alice || tok == bob {
					t.Errorf("the upstream saw a caller's token")
				}
			}
		})
	}
}

// TestAttackJWTIssuerDownIs401: while the verifier has never had the
// issuer's keys (the issuer down at start), a good token is answered 401
// invalid_token: the client is told its token is bad and re-authorizes
// (an interactive client sends its user through the IdP, which is down),
// though nothing is known of the token. The IntrospectionVerifier answers
// the same fault with a 500, which leaves the client's token alone.
func TestAttackJWTIssuerDownIs401(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		v, err := NewJWTVerifier(t.Context(), iss.URL, fakeResource, &JWTOptions{HTTPClient: n.client(t)})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+iss.mint(t, "at+jwt"))
		auth.RequireBearerToken(v.Verify, nil)(http.NotFoundHandler()).ServeHTTP(rec, req)
		if rec.Code == http.StatusUnauthorized {
			t.Errorf("a good token while the issuer is down: %d %s, want a server error", rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	})
}
