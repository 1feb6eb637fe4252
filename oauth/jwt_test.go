package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

const otherResource = "https://other.example.com/mcp"

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// opClients are the clients of the test OP, for the resource server at
// resource.
func opClients(resource string) map[string]testClient {
	return map[string]testClient{
		"agent":        {secret: "agent-secret", resource: resource},
		"other":        {secret: "other-secret", resource: otherResource},
		"opaque-agent": {secret: "opaque-secret", resource: resource, opaque: true},
		"opaque-other": {secret: "opaque-secret", resource: otherResource, opaque: true},
		"mcp-server":   {secret: "rs-secret", resource: resource},
	}
}

// newVerifier returns a verifier or fails the test. The test OP, zitadel's,
// types its access tokens JWT, not at+jwt: the verifiers of its tokens are
// given AcceptPlainJWT.
func newVerifier(t testing.TB, issuer, audience string, opts *JWTOptions) *JWTVerifier {
	t.Helper()
	v, err := NewJWTVerifier(context.Background(), issuer, audience, opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestJWTVerifierAgainstOP verifies tokens the OP issues: the claims reach
// the TokenInfo, the issuer qualifies the principal, and the audience binds
// a token to its resource whether the client named it (RFC 8707) or the
// OP bound the client to it.
func TestJWTVerifierAgainstOP(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	v := newVerifier(t, o.URL, resource, &JWTOptions{AcceptPlainJWT: true}) // keys from the OP's discovery document

	info, err := v.Verify(t.Context(), o.token(t, "agent", "", "repo:read", "repo:admin"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Scopes, []string{"repo:read", "repo:admin"}) || info.UserID != "agent" || info.Expiration.IsZero() {
		t.Errorf("TokenInfo = %+v", info)
	}
	if info.Extra["iss"] != o.URL || info.Extra["client_id"] != "agent" {
		t.Errorf("Extra = %v", info.Extra)
	}
	req := mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(info))
	if got, want := mcpkit.VerifiedPrincipal(req), `iss:"`+o.URL+`" sub:agent`; got != want {
		t.Errorf("VerifiedPrincipal = %s, want %s", got, want)
	}

	// Signed by the right keys, for another issuer.
	wrongIss := newVerifier(t, "https://idp.example.com", resource, &JWTOptions{JWKSURL: o.URL + "/keys", AcceptPlainJWT: true})
	if _, err := wrongIss.Verify(t.Context(), o.token(t, "agent", "", "repo:read"), nil); err == nil || !strings.Contains(err.Error(), "issued by a different provider") {
		t.Errorf("a token of another issuer: %v", err)
	}

	for _, tc := range []struct {
		name, client, resource string
		ok                     bool
	}{
		{"resource indicator for this server", "agent", resource, true},
		{"resource indicator for another server", "agent", otherResource, false},
		{"a client bound to another server", "other", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(t.Context(), o.token(t, tc.client, tc.resource, "repo:read"), nil)
			if (err == nil) != tc.ok {
				t.Fatalf("Verify: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && (!errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), "audience")) {
				t.Errorf("err = %v, want an invalid token for its audience", err)
			}
		})
	}
}

// refusals are tokens a verifier must refuse, made from a good one.
func refusals(t *testing.T, o *testOP, good string) map[string]string {
	t.Helper()
	parts := strings.Split(good, ".")
	header, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]any
	if err := json.Unmarshal(header, &h); err != nil {
		t.Fatal(err)
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	// alg none: the good payload, no signature.
	none := enc(map[string]any{"alg": "none", "typ": "JWT", "kid": h["kid"]}) + "." + parts[1] + "."
	// HMAC with the public key as the secret: the key confusion of
	// verifiers that let the token choose how the key is used.
	pub, err := o.KeySet(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub[0].Key())
	if err != nil {
		t.Fatal(err)
	}
	hsInput := enc(map[string]any{"alg": "HS256", "typ": "JWT", "kid": h["kid"]}) + "." + parts[1]
	mac := hmac.New(sha256.New, der)
	mac.Write([]byte(hsInput))
	hs := hsInput + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	// The good signature over a payload with more scope.
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	json.Unmarshal(payload, &claims)
	claims["scope"] = "repo:read repo:admin"
	tampered := parts[0] + "." + enc(claims) + "." + parts[2]
	// Signed by a key the issuer never had, under a key ID it has.
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k}, (&jose.SignerOptions{}).WithHeader("kid", h["kid"]))
	jws, _ := signer.Sign(payload)
	forged, _ := jws.CompactSerialize()
	return map[string]string{
		"alg none":                 none,
		"HMAC with the public key": hs,
		"tampered payload":         tampered,
		"foreign key":              forged,
		"not a JWT":                "abc",
		"empty signature":          parts[0] + "." + parts[1] + ".",
		"oversized":                strings.Repeat("a", maxTokenBytes+1),
	}
}

// TestJWTRefusedOverHTTP sends bad tokens to an MCP server behind the SDK's
// bearer-token check with a JWTVerifier: each is answered 401 with the
// WWW-Authenticate header that names the protected resource metadata,
// and with a short body.
func TestJWTRefusedOverHTTP(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	resource := "http://" + ts.Listener.Addr().String() + "/mcp"
	o := newTestOP(t, opClients(resource))
	other := newTestOP(t, opClients(resource)) // another issuer, same client names
	clock := &testClock{t: time.Now()}
	v := newVerifier(t, o.URL, resource, &JWTOptions{Now: clock.Now, AcceptPlainJWT: true})
	meta, err := MetadataURL(resource)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "rs", Version: "1"}, nil)
	srv.Add(echoTool("read_repo"))
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(
		srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: meta})))
	ts.Config.Handler = mux
	ts.Start()
	defer ts.Close()

	good := o.token(t, "agent", "", "repo:read")
	post := func(token string) (int, http.Header, string) {
		t.Helper()
		raw := mcpkittest.RawClient{Endpoint: resource, Token: token, HTTPClient: &http.Client{Transport: &keepResponse{}}}
		_, err := raw.Call(t.Context(), "tools/call", map[string]any{"name": "read_repo", "arguments": map[string]any{}})
		resp := raw.HTTPClient.Transport.(*keepResponse)
		if err == nil {
			return http.StatusOK, resp.header, ""
		}
		return resp.status, resp.header, err.Error()
	}
	if status, _, msg := post(good); status != http.StatusOK {
		t.Fatalf("the good token: %d %s", status, msg)
	}
	bad := refusals(t, o, good)
	bad["wrong issuer"] = other.token(t, "agent", "", "repo:read")
	bad["wrong audience"] = o.token(t, "other", "", "repo:read")
	for name, token := range bad {
		t.Run(name, func(t *testing.T) {
			status, h, msg := post(token)
			if status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401 (%s)", status, msg)
			}
			if got, want := h.Get("WWW-Authenticate"), `Bearer resource_metadata="`+meta+`"`; got != want {
				t.Errorf("WWW-Authenticate = %s, want %s", got, want)
			}
			if want := refusedFor[name]; !strings.Contains(msg, want) {
				t.Errorf("refused with %q, want a reason with %q", msg, want)
			}
			if len(msg) > 600 {
				t.Errorf("the answer has %d bytes", len(msg))
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		clock.Advance(6 * time.Minute) // the OP's tokens live 5 minutes
		defer clock.Advance(-6 * time.Minute)
		if status, _, msg := post(good); status != http.StatusUnauthorized || !strings.Contains(msg, "expired") {
			t.Errorf("status %d (%s), want 401 expired", status, msg)
		}
	})
	t.Run("expired within the skew", func(t *testing.T) {
		lenient := newVerifier(t, o.URL, resource, &JWTOptions{Now: func() time.Time { return clock.Now().Add(6 * time.Minute) }, ClockSkew: 2 * time.Minute, AcceptPlainJWT: true})
		if _, err := lenient.Verify(t.Context(), good, nil); err != nil {
			t.Errorf("Verify: %v", err)
		}
	})
	t.Run("not yet valid", func(t *testing.T) {
		early := newVerifier(t, o.URL, resource, &JWTOptions{Now: func() time.Time { return clock.Now().Add(-time.Hour) }, AcceptPlainJWT: true})
		if _, err := early.Verify(t.Context(), good, nil); err == nil || !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("Verify: %v, want a token not valid yet", err)
		}
	})
}

// refusedFor is the reason each bad token must be refused for.
var refusedFor = map[string]string{
	"alg none":                 "unexpected signature algorithm",
	"HMAC with the public key": "unexpected signature algorithm",
	"tampered payload":         "bad signature",
	"foreign key":              "bad signature",
	"not a JWT":                "malformed",
	"empty signature":          "bad signature",
	"oversized":                "exceeds 16384 bytes",
	"wrong issuer":             "bad signature", // signed by the other issuer's key; TestJWTVerifierAgainstOP checks iss itself
	"wrong audience":           "expected audience",
}

// keepResponse keeps the status and headers of the last response.
type keepResponse struct {
	status int
	header http.Header
}

func (k *keepResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		k.status, k.header = resp.StatusCode, resp.Header.Clone()
	}
	return resp, err
}

func echoTool(name string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: mcpkit.VerifiedPrincipal(req)}}}, nil
		}),
	}
}

// TestJWKSRotation: the verifier fetches the issuer's keys once, keeps
// them, fetches them once more when a token names a key it does not have
// (the issuer rotated), and no more than once per MinRefreshInterval
// however many tokens name unknown keys, concurrently or not; a key the
// issuer withdrew stops verifying after that fetch.
func TestJWKSRotation(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	clock := &testClock{t: time.Now()}
	v := newVerifier(t, o.URL, resource, &JWTOptions{Now: clock.Now, MinRefreshInterval: time.Minute, AcceptPlainJWT: true})
	fetches := func() int64 { return o.jwksHits.Load() }

	old := o.token(t, "agent", "", "repo:read")
	for range 50 {
		if _, err := v.Verify(t.Context(), old, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := fetches(); n != 1 {
		t.Fatalf("%d JWKS fetches for 50 verifications, want 1", n)
	}

	clock.Advance(2 * time.Minute)
	o.rotate(false) // the old key withdrawn at once
	fresh := o.token(t, "agent", "", "repo:read")
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			_, err := v.Verify(context.Background(), fresh, nil)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a token of the new key: %v", err)
		}
	}
	if n := fetches(); n != 2 {
		t.Fatalf("%d JWKS fetches after a rotation and 20 concurrent tokens of the new key, want 2", n)
	}
	if _, err := v.Verify(t.Context(), old, nil); err == nil {
		t.Error("a token of the withdrawn key verified")
	}

	forged := refusals(t, o, fresh)["foreign key"]
	unknownKid := strings.Replace(forged, forged[:strings.Index(forged, ".")], headerWithKid(t, forged, "made-up"), 1)
	for range 50 {
		if _, err := v.Verify(t.Context(), unknownKid, nil); err == nil {
			t.Fatal("a token of an unknown key verified")
		}
	}
	if n := fetches(); n != 2 {
		t.Errorf("%d JWKS fetches after 50 tokens of an unknown key within MinRefreshInterval, want 2", n)
	}
	clock.Advance(time.Minute)
	for range 50 {
		v.Verify(t.Context(), unknownKid, nil)
	}
	if n := fetches(); n != 3 {
		t.Errorf("%d JWKS fetches once MinRefreshInterval passed, want 3", n)
	}
}

// headerWithKid returns the header of token with its kid replaced.
func headerWithKid(t *testing.T, token, kid string) string {
	t.Helper()
	b, _ := base64.RawURLEncoding.DecodeString(token[:strings.Index(token, ".")])
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	h["kid"] = kid
	out, _ := json.Marshal(h)
	return base64.RawURLEncoding.EncodeToString(out)
}

func TestNewJWTVerifierRefuses(t *testing.T) {
	for _, tc := range []struct {
		name             string
		issuer, audience string
		opts             *JWTOptions
		want             string
	}{
		{"no issuer", "", "https://a/mcp", nil, "required"},
		{"no audience", "https://idp", "", nil, "required"},
		{"HMAC", "https://idp", "https://a/mcp", &JWTOptions{JWKSURL: "https://idp/keys", Algorithms: []string{"HS256"}}, "not allowed"},
		{"none", "https://idp", "https://a/mcp", &JWTOptions{JWKSURL: "https://idp/keys", Algorithms: []string{"none"}}, "not allowed"},
		{"negative skew", "https://idp", "https://a/mcp", &JWTOptions{JWKSURL: "https://idp/keys", ClockSkew: -1}, "negative"},
		{"negative timeout", "https://idp", "https://a/mcp", &JWTOptions{JWKSURL: "https://idp/keys", Timeout: -1}, "negative"},
		{"issuer not a URL", "idp.example.com", "https://a/mcp", nil, "not an absolute http(s) URL"},
		{"issuer unparsable", "https://idp.example.com/%zz", "https://a/mcp", nil, "invalid URL escape"},
		{"issuer over plain http", "http://idp.example.com", "https://a/mcp", nil, "needs https"},
		{"issuer with a query", "https://idp.example.com?tenant=a", "https://a/mcp", nil, "query"},
		{"JWKS URL not a URL", "https://idp", "https://a/mcp", &JWTOptions{JWKSURL: "/keys"}, "not an absolute http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewJWTVerifier(t.Context(), tc.issuer, tc.audience, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "oauth: ") {
				t.Errorf("err = %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestScopesOf(t *testing.T) {
	for _, tc := range []struct {
		claims string
		want   []string
	}{
		{`{"scope":"a b  c"}`, []string{"a", "b", "c"}},
		{`{"scp":["a","b"]}`, []string{"a", "b"}},
		{`{"scp":"a b"}`, []string{"a", "b"}},
		{`{"scp":["a", 1, "", "b c"]}`, []string{"a"}},
		{`{"scope":"a","scp":["b"]}`, []string{"a"}},
		{`{}`, nil},
	} {
		var c map[string]any
		json.Unmarshal([]byte(tc.claims), &c)
		if got := scopesOf(c); !slices.Equal(got, tc.want) {
			t.Errorf("scopesOf(%s) = %q, want %q", tc.claims, got, tc.want)
		}
	}
}

func TestMetadataURL(t *testing.T) {
	for _, tc := range []struct{ resource, url, path string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example.com", "https://mcp.example.com/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource"},
		{"http://127.0.0.1:8080/a/b/", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b", "/.well-known/oauth-protected-resource/a/b"},
		{"https://x/mcp?q=1", "", "/.well-known/oauth-protected-resource/mcp"},
		{"mcp", "", "/.well-known/oauth-protected-resource/mcp"},
	} {
		got, err := MetadataURL(tc.resource)
		if got != tc.url || (err != nil) != (tc.url == "") {
			t.Errorf("MetadataURL(%q) = %q, %v, want %q", tc.resource, got, err, tc.url)
		}
		if p := MetadataPath(tc.resource); p != tc.path {
			t.Errorf("MetadataPath(%q) = %q, want %q", tc.resource, p, tc.path)
		}
	}
}

// TestJWKSIssuerDown: while the issuer's key set cannot be fetched, the
// verifier asks again at most once per MinRefreshInterval, however many
// tokens arrive, and keeps verifying with the keys it had once they age.
func TestJWKSIssuerDown(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	var down atomic.Bool
	var hits atomic.Int64
	proxy := keysProxy(t, o, func(w http.ResponseWriter, r *http.Request) bool {
		hits.Add(1)
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return false
		}
		return true
	})
	clock := &testClock{t: time.Now()}
	v := newVerifier(t, o.URL, resource, &JWTOptions{JWKSURL: proxy.URL, Now: clock.Now, MinRefreshInterval: time.Minute, MaxKeyAge: 2 * time.Minute, AcceptPlainJWT: true})
	good := o.token(t, "agent", "", "repo:read")

	down.Store(true)
	for range 20 {
		if _, err := v.Verify(t.Context(), good, nil); err == nil {
			t.Fatal("verified without keys")
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d fetches for 20 tokens while the issuer is down, want 1", n)
	}
	down.Store(false)
	clock.Advance(time.Minute)
	if _, err := v.Verify(t.Context(), good, nil); err != nil {
		t.Fatalf("once the issuer is back: %v", err)
	}
	down.Store(true)
	clock.Advance(3 * time.Minute) // the keys have aged past MaxKeyAge
	for range 20 {
		if _, err := v.Verify(t.Context(), good, nil); err != nil {
			t.Fatalf("with the old keys while the issuer is down: %v", err)
		}
	}
	v.keys.fetches.idle() // the refresh of the aged keys runs apart from the tokens
	if n := hits.Load(); n != 3 {
		t.Errorf("%d fetches, want 3 (one while down, one when back, one for the aged keys)", n)
	}
}

// TestKnownKeyDoesNotWaitForAFetch: while a token with an unknown key ID
// has the verifier fetch the issuer's keys (and the issuer is slow to
// answer), tokens signed with a key it holds are verified without waiting.
func TestKnownKeyDoesNotWaitForAFetch(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	var hold atomic.Bool
	arrived, release := make(chan struct{}), make(chan struct{})
	proxy := keysProxy(t, o, func(w http.ResponseWriter, r *http.Request) bool {
		if hold.Load() {
			close(arrived)
			select {
			case <-release:
			case <-r.Context().Done():
				return false
			}
		}
		return true
	})
	defer close(release)
	clock := &testClock{t: time.Now()}
	v := newVerifier(t, o.URL, resource, &JWTOptions{JWKSURL: proxy.URL, Now: clock.Now, MinRefreshInterval: time.Minute, MaxKeyAge: time.Hour, AcceptPlainJWT: true})
	good := o.token(t, "agent", "", "repo:read")
	if _, err := v.Verify(t.Context(), good, nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute) // an unknown key may be looked for again

	// A token naming a key the set does not hold: its signature is not
	// checked before the key is looked for, so a made-up header will do.
	parts := strings.Split(good, ".")
	unknown := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"rotated-in"}`)) + "." + parts[1] + "." + parts[2]
	hold.Store(true)
	fetching := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), unknown, nil)
		fetching <- err
	}()
	select {
	case <-arrived: // the fetch is under way, and the issuer holds it
	case err := <-fetching:
		t.Fatalf("the token with an unknown key did not have the keys fetched: %v", err)
	}

	verified := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), good, nil)
		verified <- err
	}()
	select {
	case err := <-verified:
		if err != nil {
			t.Errorf("a token with a known key, during a fetch: %v", err)
		}
	case <-time.After(30 * time.Second): // a failure detector, not a measurement
		t.Fatal("a token with a known key waited for the fetch")
	}
	release <- struct{}{}
	if err := <-fetching; err == nil {
		t.Error("the token with the made-up key verified")
	}
}

// keysProxy serves the key set of o, through before: a request that
// before answers itself (it returns false) does not reach o.
func keysProxy(t *testing.T, o *testOP, before func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	t.Helper()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !before(w, r) {
			return
		}
		resp, err := http.Get(o.URL + "/keys")
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	return proxy
}
