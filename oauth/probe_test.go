package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
)

// The tests of this file are attacks that the verifiers and the token
// exchange withstand: they pass, and guard what held.

// TestProbeSlowJWKSAndUnknownKidFlood: a JWKS that answers every fetch
// just under the Timeout, while made-up key IDs flood the server for five
// minutes: tokens of the keys in hand never wait, and the JWKS is fetched
// at most once per MinRefreshInterval.
func TestProbeSlowJWKSAndUnknownKidFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		var fetches atomic.Int64
		n.serve(t, "127.0.0.1:2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fetches.Add(1)
			time.Sleep(DefaultTimeout - time.Millisecond)
			iss.ServeHTTP(w, r)
		}))
		v := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: "http://127.0.0.1:2" + keysPath, HTTPClient: n.client(t), MaxKeyAge: time.Minute})
		good := iss.mint(t, "at+jwt")
		if _, err := v.Verify(context.Background(), good, nil); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var flood sync.WaitGroup
		for w := range 20 {
			flood.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					tok := signToken(t, jose.ES256, iss.key, fmt.Sprintf("made-up-%d-%d", w, i), "at+jwt", map[string]any{
						"iss": iss.URL, "aud": fakeResource, "sub": "mallory", "exp": time.Now().Add(time.Hour).Unix(),
					})
					if _, err := v.Verify(context.Background(), tok, nil); err == nil {
						t.Error("a made-up key verified")
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
		}
		start := time.Now()
		for time.Since(start) < 5*time.Minute {
			if d, err := verifyTimed(v.Verify, good); err != nil || d != 0 {
				t.Fatalf("a known key during the flood: %v after %s", err, d)
			}
			time.Sleep(time.Second)
		}
		close(stop)
		flood.Wait()
		if f := fetches.Load(); f > 1+6 {
			t.Errorf("%d JWKS fetches in 5 minutes of flood, want at most 7", f)
		}
	})
}

// TestProbeHugeAndDrippingJWKS: a JWKS body past 1 MiB, or one that
// trickles a byte a second, fails the fetch (within the Timeout) and the
// keys in hand keep verifying.
func TestProbeHugeAndDrippingJWKS(t *testing.T) {
	for _, mode := range []string{"huge", "drip"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newMemNet()
				iss := newFakeIssuer(t, "127.0.0.1:1")
				iss.start(t, n)
				var bad atomic.Bool
				var written atomic.Int64
				n.serve(t, "127.0.0.1:2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !bad.Load() {
						iss.ServeHTTP(w, r)
						return
					}
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"keys":[`))
					chunk := []byte(strings.Repeat(" ", 64<<10))
					if mode == "drip" {
						chunk = chunk[:1]
					}
					for range 1 << 12 { // 256 MiB huge, or an hour of drip
						if _, err := w.Write(chunk); err != nil {
							return
						}
						written.Add(int64(len(chunk)))
						w.(http.Flusher).Flush()
						if mode == "drip" {
							time.Sleep(time.Second)
						}
					}
				}))
				v := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: "http://127.0.0.1:2" + keysPath, HTTPClient: n.client(t)})
				good := iss.mint(t, "at+jwt")
				if _, err := v.Verify(context.Background(), good, nil); err != nil {
					t.Fatal(err)
				}
				bad.Store(true)
				time.Sleep(DefaultMaxKeyAge)
				start := time.Now()
				unknown := signToken(t, jose.ES256, iss.key, "other", "at+jwt", map[string]any{
					"iss": iss.URL, "aud": fakeResource, "sub": "alice", "exp": time.Now().Add(time.Hour).Unix(),
				})
				if _, err := v.Verify(context.Background(), unknown, nil); err == nil {
					t.Error("an unknown key verified")
				} else {
					t.Logf("%s: %v after %s, %d bytes written", mode, err, time.Since(start), written.Load())
				}
				if d := time.Since(start); d > DefaultTimeout {
					t.Errorf("the fetch took %s", d)
				}
				if mode == "huge" && written.Load() > 8<<20 {
					t.Errorf("%d bytes were taken of a huge JWKS", written.Load())
				}
				if d, err := verifyTimed(v.Verify, good); err != nil || d != 0 {
					t.Errorf("a known key after the bad fetch: %v after %s", err, d)
				}
			})
		})
	}
}

// TestProbeDiscoveryStorm: with the issuer down at start, 500 concurrent
// tokens dial it once; once up, 500 concurrent tokens after the backoff
// make one discovery and one JWKS fetch, and all verify.
func TestProbeDiscoveryStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		v, err := NewJWTVerifier(t.Context(), iss.URL, fakeResource, &JWTOptions{HTTPClient: n.client(t)})
		if err != nil {
			t.Fatal(err)
		}
		good := iss.mint(t, "at+jwt")
		_, errs := verifyAll(v.Verify, good, 500)
		for _, err := range errs {
			if !errors.Is(err, ErrIssuerUnavailable) {
				t.Fatalf("while down: %v", err)
			}
		}
		if d := len(n.dialsTo(iss.addr)); d != 1 {
			t.Errorf("%d dials for 500 tokens while down, want 1", d)
		}
		iss.start(t, n)
		time.Sleep(time.Second)
		d, errs := verifyAll(v.Verify, good, 500)
		if err := errors.Join(errs...); err != nil || d != 0 {
			t.Errorf("once up: %v after %s", err, d)
		}
		if m, k := iss.hitsOf(metaPath), iss.hitsOf(keysPath); m != 1 || k != 1 {
			t.Errorf("%d discoveries and %d JWKS fetches for 500 tokens, want 1 and 1", m, k)
		}
	})
}

// TestProbeAlgAndTyp: alg none, HS256 with the issuer's public key as the
// secret (DER and JWK forms), an RS256 header over an EC key, and typ
// spellings, against a default verifier.
func TestProbeAlgAndTyp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		v := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: iss.URL + keysPath, HTTPClient: n.client(t), Algorithms: []string{"ES256", "RS256", "EdDSA"}})
		claims, _ := json.Marshal(map[string]any{"iss": iss.URL, "aud": fakeResource, "sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
		body := base64.RawURLEncoding.EncodeToString(claims)
		forge := func(header string, sign func(in []byte) []byte) string {
			in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + body
			return in + "." + base64.RawURLEncoding.EncodeToString(sign([]byte(in)))
		}
		der, _ := x509.MarshalPKIXPublicKey(&iss.key.PublicKey)
		jwk, _ := json.Marshal(jose.JSONWebKey{Key: &iss.key.PublicKey, KeyID: "k1"})
		hs := func(secret []byte) func([]byte) []byte {
			return func(in []byte) []byte { m := hmac.New(sha256.New, secret); m.Write(in); return m.Sum(nil) }
		}
		none := func([]byte) []byte { return nil }
		for name, tok := range map[string]string{
			"alg none":             forge(`{"alg":"none","typ":"at+jwt","kid":"k1"}`, none),
			"alg None":             forge(`{"alg":"None","typ":"at+jwt"}`, none),
			"HS256 DER":            forge(`{"alg":"HS256","typ":"at+jwt","kid":"k1"}`, hs(der)),
			"HS256 JWK":            forge(`{"alg":"HS256","typ":"at+jwt","kid":"k1"}`, hs(jwk)),
			"RS256 over an EC key": forge(`{"alg":"RS256","typ":"at+jwt","kid":"k1"}`, hs(der)),
			"typ with a parameter": iss.mint(t, "application/at+jwt; charset=utf-8"),
			"typ padded":           iss.mint(t, " at+jwt"),
			"typ missing":          iss.mint(t, ""),
			"typ JWT":              iss.mint(t, "JWT"),
			"typ +jwt":             iss.mint(t, "+jwt"),
		} {
			if _, err := v.Verify(context.Background(), tok, nil); !errors.Is(err, auth.ErrInvalidToken) {
				t.Errorf("%s: %v, want an invalid token", name, err)
			}
		}
		for _, typ := range []string{"AT+JWT", "application/AT+JWT"} {
			if _, err := v.Verify(context.Background(), iss.mint(t, typ), nil); err != nil {
				t.Errorf("typ %s: %v", typ, err)
			}
		}
	})
}

// TestProbeExchangePrincipalsApart: 50 principals, 20 concurrent calls
// each, against an exchange endpoint that answers slowly: each principal
// gets the token exchanged for its own token, one exchange each; an
// exchanged token within the margin of its expiry is not reused.
func TestProbeExchangePrincipalsApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		n.serve(t, "127.0.0.1:2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second)
			iss.ServeHTTP(w, r)
		}))
		x, err := NewTokenExchange(iss.URL, &TokenExchangeOptions{ClientID: "gw", ClientSecret: "s", Resource: "https://up.example.com/mcp",
			TokenURL: "http://127.0.0.1:2" + tokenPath, HTTPClient: n.client(t)})
		if err != nil {
			t.Fatal(err)
		}
		call := func(sub string) *mcpkit.Request {
			return mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: sub, Extra: map[string]any{"iss": iss.URL}}),
				mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer token-of-" + sub}}))
		}
		var wg sync.WaitGroup
		for p := range 50 {
			sub := fmt.Sprintf("user%d", p)
			for range 20 {
				wg.Go(func() {
					h, err := x.Credentials(context.Background(), call(sub))
					if err != nil || h.Get("Authorization") != "Bearer exchanged-token-of-"+sub {
						t.Errorf("%s got %q %v", sub, h.Get("Authorization"), err)
					}
				})
			}
		}
		wg.Wait()
		if h := iss.hitsOf(tokenPath); h != 50 {
			t.Errorf("%d exchanges for 50 principals, want 50", h)
		}
		time.Sleep(300*time.Second - DefaultExpiryMargin) // expires_in 300, counted from the request
		if _, err := x.Credentials(context.Background(), call("user0")); err != nil {
			t.Fatal(err)
		}
		if h := iss.hitsOf(tokenPath); h != 51 {
			t.Errorf("a token at the margin of its expiry was reused (%d exchanges)", h)
		}
	})
}

// memBearer sends requests over a memNet with a bearer token, and
// records the challenges of the answers ("status WWW-Authenticate").
type memBearer struct {
	next http.RoundTripper

	mu    sync.Mutex
	token string
	seen  []string
}

func (b *memBearer) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	tok := b.token
	b.mu.Unlock()
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := b.next.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		b.mu.Lock()
		b.seen = append(b.seen, http.StatusText(resp.StatusCode)+" "+resp.Header.Get("WWW-Authenticate"))
		b.mu.Unlock()
	}
	return resp, err
}

func (b *memBearer) get() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.seen...)
}

// TestProbeStepUpWithLazyDiscovery: a resource server whose issuer is
// down at start answers 401 while it cannot have the keys; once the
// issuer is up, read_repo succeeds and delete_repo is answered 403
// insufficient_scope naming repo:admin, then succeeds with a token that
// has it; on both protocol eras, with the SDK's client.
func TestProbeStepUpWithLazyDiscovery(t *testing.T) {
	for _, version := range []string{mcpkittest.StatelessVersion, mcpkittest.StatefulVersion} {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newMemNet()
				iss := newFakeIssuer(t, "127.0.0.1:1")
				const rs = "http://127.0.0.1:3/mcp"
				v, err := NewJWTVerifier(t.Context(), iss.URL, rs, &JWTOptions{HTTPClient: n.client(t)})
				if err != nil {
					t.Fatal(err)
				}
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "repos", Version: "1"}, nil)
				srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
				srv.Add(echoTool("read_repo"), echoTool("delete_repo"))
				n.serve(t, "127.0.0.1:3", auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{Scopes: []string{"repo:read"}})(
					srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true})))
				rec := &memBearer{next: n.client(t).Transport}
				connect := func(scope string) (*mcp.ClientSession, error) {
					tok := iss.mintFor(t, rs, "alice", scope, nil)
					rec.mu.Lock()
					rec.token = tok
					rec.mu.Unlock()
					return mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
						&mcp.StreamableClientTransport{Endpoint: rs, HTTPClient: &http.Client{Transport: rec}},
						&mcp.ClientSessionOptions{ProtocolVersion: version})
				}
				if cs, err := connect("repo:read"); err == nil {
					cs.Close()
					t.Fatal("connected while the issuer is down")
				}
				iss.start(t, n)
				time.Sleep(time.Second)
				cs, err := connect("repo:read")
				if err != nil {
					t.Fatalf("once the issuer is up: %v", err)
				}
				if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_repo"}); err != nil || res.IsError {
					t.Errorf("read_repo: %v %v", res, err)
				}
				if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_repo"}); err == nil && !res.IsError {
					t.Error("delete_repo without repo:admin succeeded")
				}
				cs.Close()
				cs, err = connect("repo:read repo:admin")
				if err != nil {
					t.Fatal(err)
				}
				if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_repo"}); err != nil || res.IsError {
					t.Errorf("delete_repo after the step-up: %v %v", res, err)
				}
				cs.Close()
				got := rec.get()
				t.Logf("challenges: %q", got)
				if len(got) < 1 || !strings.Contains(got[len(got)-1], `Forbidden Bearer error="insufficient_scope", scope="repo:admin"`) {
					t.Errorf("challenges %q, want 403 insufficient_scope after the step-up", got)
				}
				for _, c := range got {
					if strings.HasPrefix(c, "Unauthorized") {
						t.Errorf("challenges %q: a 401 while the issuer was down tells the client to throw its token away", got)
					}
				}
			})
		})
	}
}
