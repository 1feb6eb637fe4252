package oauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
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
)

// opSigned returns an at+jwt access token for resource signed by the OP's
// signing key, with sub and exp, as the OP would issue it: many distinct
// tokens without a token request each.
func opSigned(t testing.TB, o *testOP, resource, sub string, exp time.Time) string {
	t.Helper()
	o.mu.Lock()
	k := o.keys[len(o.keys)-1]
	o.mu.Unlock()
	return signToken(t, jose.RS256, k.key, k.id, "at+jwt", map[string]any{
		"iss": o.URL, "aud": resource, "sub": sub, "scope": "repo:read", "exp": exp.Unix(), "client_id": "agent",
	})
}

// TestJWTCacheVerifiesOnce: a token presented again, over HTTP by an SDK
// client or to Verify, costs no signature check and no fetch, and gets
// what its first verification gave.
func TestJWTCacheVerifiesOnce(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	resource := "http://" + ts.Listener.Addr().String() + "/mcp"
	o := newTestOP(t, opClients(resource))
	v := newVerifier(t, o.URL, resource, &JWTOptions{AcceptPlainJWT: true})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "rs", Version: "1"}, nil)
	srv.Add(echoTool("whoami"))
	ts.Config.Handler = auth.RequireBearerToken(v.Verify, nil)(srv.HTTPHandler(nil))
	ts.Start()
	defer ts.Close()

	token := o.token(t, "agent", "", "repo:read")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: resource, HTTPClient: &http.Client{Transport: &bearer{token: token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: mcpkittest.StatelessVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 5 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
		if got, want := res.Content[0].(*mcp.TextContent).Text, `iss:"`+o.URL+`" sub:agent`; got != want {
			t.Fatalf("call %d: principal %s, want %s", i, got, want)
		}
	}
	first, err := v.Verify(t.Context(), token, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		info, err := v.Verify(t.Context(), token, nil)
		if err != nil || info != first {
			t.Fatalf("Verify = %p, %v; want the first TokenInfo %p", info, err, first)
		}
	}
	if n, m := v.keys.checks.Load(), o.jwksHits.Load(); n != 1 || m != 1 {
		t.Errorf("%d signature checks and %d JWKS fetches for 106 presentations of one token, want 1 and 1", n, m)
	}
}

// TestJWTCacheExpiry: a cached token is accepted through exp + ClockSkew,
// and refused from the next instant on; one verified before its nbf (the
// clock set back) is refused until nbf - ClockSkew.
func TestJWTCacheExpiry(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	for _, skew := range []time.Duration{0, 30 * time.Second} {
		t.Run(fmt.Sprint("skew ", skew), func(t *testing.T) {
			start := time.Unix(time.Now().Unix(), 0)
			exp := start.Add(5 * time.Minute)
			clock := &testClock{t: start}
			v := newVerifier(t, o.URL, resource, &JWTOptions{Now: clock.Now, ClockSkew: skew})
			token := opSigned(t, o, resource, "alice", exp)
			at := func(when time.Time) error {
				clock.mu.Lock()
				clock.t = when
				clock.mu.Unlock()
				_, err := v.Verify(t.Context(), token, nil)
				return err
			}
			if err := at(start); err != nil {
				t.Fatal(err)
			}
			if err := at(exp.Add(skew)); err != nil {
				t.Errorf("at exp + skew: %v", err)
			}
			if n := v.keys.checks.Load(); n != 1 {
				t.Errorf("%d signature checks through exp + skew, want 1", n)
			}
			if err := at(exp.Add(skew + time.Nanosecond)); err == nil || !strings.Contains(err.Error(), "expired") {
				t.Errorf("just past exp + skew: %v, want expired", err)
			}
			if n, _ := v.cache.len(); n != 0 {
				t.Errorf("%d tokens kept past their exp", n)
			}
			if err := at(start); err != nil {
				t.Fatal(err) // the clock set back: verified afresh
			}
		})
	}

	t.Run("nbf", func(t *testing.T) {
		start := time.Unix(time.Now().Unix(), 0)
		clock := &testClock{t: start}
		v := newVerifier(t, o.URL, resource, &JWTOptions{Now: clock.Now})
		o.mu.Lock()
		k := o.keys[len(o.keys)-1]
		o.mu.Unlock()
		token := signToken(t, jose.RS256, k.key, k.id, "at+jwt", map[string]any{
			"iss": o.URL, "aud": resource, "sub": "alice", "nbf": start.Unix(), "exp": start.Add(time.Hour).Unix(),
		})
		if _, err := v.Verify(t.Context(), token, nil); err != nil {
			t.Fatal(err)
		}
		clock.Advance(-time.Second)
		if _, err := v.Verify(t.Context(), token, nil); err == nil || !strings.Contains(err.Error(), "not valid before") {
			t.Errorf("a cached token before its nbf: %v", err)
		}
		if n := v.keys.checks.Load(); n != 1 {
			t.Errorf("%d signature checks, want 1: the refusal came from the cache", n)
		}
	})
}

// TestJWTCacheBounds: many distinct tokens keep the cache within
// CacheSize and CacheBytes, the least recently used going first; refused
// tokens, however many, are not kept and evict nothing.
func TestJWTCacheBounds(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	exp := time.Now().Add(time.Hour)
	tokens := make([]string, 60)
	for i := range tokens {
		tokens[i] = opSigned(t, o, resource, fmt.Sprint("user-", i), exp)
	}
	verify := func(v *JWTVerifier, token string) {
		t.Helper()
		if _, err := v.Verify(t.Context(), token, nil); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("count", func(t *testing.T) {
		v := newVerifier(t, o.URL, resource, &JWTOptions{CacheSize: 10})
		for _, tok := range tokens {
			verify(v, tok)
			if n, _ := v.cache.len(); n > 10 {
				t.Fatalf("%d tokens kept, CacheSize 10", n)
			}
		}
		before := v.keys.checks.Load()
		for _, tok := range tokens[len(tokens)-10:] {
			verify(v, tok)
		}
		verify(v, tokens[0])
		if n := v.keys.checks.Load() - before; n != 1 {
			t.Errorf("%d signature checks for the 10 most recent tokens and an evicted one, want 1", n)
		}
	})

	t.Run("bytes", func(t *testing.T) {
		v := newVerifier(t, o.URL, resource, nil)
		verify(v, tokens[0])
		_, one := v.cache.len()
		limit := 5*one + one/2
		v = newVerifier(t, o.URL, resource, &JWTOptions{CacheBytes: limit})
		for _, tok := range tokens {
			verify(v, tok)
			if n, b := v.cache.len(); b > limit || n > 5 {
				t.Fatalf("%d tokens kept, %d bytes, CacheBytes %d (room for 5)", n, b, limit)
			}
		}
		if n, _ := v.cache.len(); n != 5 {
			t.Errorf("%d tokens kept, want 5", n)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		v := newVerifier(t, o.URL, resource, &JWTOptions{CacheSize: 10})
		for _, tok := range tokens[:10] {
			verify(v, tok)
		}
		// Tokens of the issuer's key ID with a signature of no one's: each
		// costs a signature check, and none is kept.
		good := tokens[0]
		dot := strings.LastIndex(good, ".")
		for i := range 300 {
			bad := good[:dot+1] + fmt.Sprintf("%08d", i) + good[dot+9:]
			if _, err := v.Verify(t.Context(), bad, nil); err == nil {
				t.Fatal("a made-up signature verified")
			}
		}
		if n, _ := v.cache.len(); n != 10 {
			t.Errorf("%d tokens kept after 300 refusals, want the 10 good ones", n)
		}
		before := v.keys.checks.Load()
		for _, tok := range tokens[:10] {
			verify(v, tok)
		}
		if n := v.keys.checks.Load() - before; n != 0 {
			t.Errorf("%d signature checks for the good tokens after 300 refusals, want 0", n)
		}
	})
}

// TestJWTCacheKeyWithdrawn: when a fetch finds a key withdrawn, the
// tokens it verified leave the cache and are refused, while those of the
// keys still published stay; a cache that serves every token still has
// the set fetched again once it is older than MaxKeyAge.
func TestJWTCacheKeyWithdrawn(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	clock := &testClock{t: time.Now()}
	v := newVerifier(t, o.URL, resource, &JWTOptions{Now: clock.Now, MaxKeyAge: time.Hour})
	exp := clock.Now().Add(2 * time.Hour)
	old := opSigned(t, o, resource, "alice", exp)
	if _, err := v.Verify(t.Context(), old, nil); err != nil {
		t.Fatal(err)
	}
	o.rotate(true) // k2 signs, k1 stays published
	clock.Advance(2 * time.Minute)
	fresh := opSigned(t, o, resource, "bob", exp)
	for _, tok := range []string{fresh, old, fresh} {
		if _, err := v.Verify(t.Context(), tok, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, m := v.keys.checks.Load(), o.jwksHits.Load(); n != 2 || m != 2 {
		t.Fatalf("%d signature checks, %d fetches; want 2 and 2", n, m)
	}

	o.mu.Lock()
	o.publish = o.publish[1:] // k1 withdrawn
	o.mu.Unlock()
	clock.Advance(time.Hour) // the keys are stale: the next token starts a fetch
	if _, err := v.Verify(t.Context(), fresh, nil); err != nil {
		t.Fatal(err)
	}
	v.keys.fetches.idle()
	if m := o.jwksHits.Load(); m != 3 {
		t.Fatalf("%d fetches, want 3: a stale set is fetched again though every token is cached", m)
	}
	if n, _ := v.cache.len(); n != 1 {
		t.Errorf("%d tokens kept after k1 was withdrawn, want 1 (bob's, of k2)", n)
	}
	if _, err := v.Verify(t.Context(), old, nil); err == nil {
		t.Error("a cached token of a withdrawn key verified")
	}
	before := v.keys.checks.Load()
	if _, err := v.Verify(t.Context(), fresh, nil); err != nil || v.keys.checks.Load() != before {
		t.Errorf("a token of the key still published: %v, %d checks, want it from the cache", err, v.keys.checks.Load()-before)
	}
}

// TestJWTCacheKeyWithdrawnMidVerification: a token verified with a key
// that a fetch withdraws while the verification runs is kept after the
// fetch forgot the key's tokens; its key is looked for in the set on each
// use: it is refused.
func TestJWTCacheKeyWithdrawnMidVerification(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	clock := &testClock{t: time.Now()}
	v := newVerifier(t, o.URL, resource, &JWTOptions{Now: clock.Now})
	token := opSigned(t, o, resource, "alice", clock.Now().Add(2*time.Hour))
	if _, err := v.Verify(t.Context(), token, nil); err != nil {
		t.Fatal(err)
	}
	o.rotate(false)
	clock.Advance(2 * time.Minute)
	v.keys.dropped = nil // the put comes after the fetch's purge
	<-v.keys.fetches.start(v.keys.fetch)
	if n, _ := v.cache.len(); n != 1 {
		t.Fatalf("%d tokens kept, want the one whose key went", n)
	}
	if _, err := v.Verify(t.Context(), token, nil); err == nil {
		t.Error("a token whose key left the set verified from the cache")
	}
	if n, _ := v.cache.len(); n != 0 {
		t.Errorf("%d tokens kept, want none", n)
	}
}

// TestCacheFullDigest: digests that share all but one byte, first or
// last, are different keys.
func TestCacheFullDigest(t *testing.T) {
	c := newLRU[digest, string](10, 0)
	now := time.Now()
	d := sha256.Sum256([]byte("token"))
	c.put(d, "token", now.Add(time.Hour), 1)
	for _, i := range []int{0, sha256.Size / 2, sha256.Size - 1} {
		other := d
		other[i] ^= 1
		if v, ok := c.get(other, now); ok {
			t.Errorf("a digest that differs in byte %d found %q", i, v)
		}
	}
	if v, ok := c.get(d, now); !ok || v != "token" {
		t.Errorf("get = %q, %v", v, ok)
	}
}

// TestJWTCacheTokenBytes: a token that differs from a cached one by one
// character is verified, and refused, not taken for it.
func TestJWTCacheTokenBytes(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	v := newVerifier(t, o.URL, resource, nil)
	token := opSigned(t, o, resource, "alice", time.Now().Add(time.Hour))
	if _, err := v.Verify(t.Context(), token, nil); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{len(token) - 2, strings.Index(token, ".") + 2} {
		b := []byte(token)
		b[i] = base64url[(strings.IndexByte(base64url, b[i])+1)%64] // another character, all of whose bits count
		if _, err := v.Verify(t.Context(), string(b), nil); err == nil {
			t.Errorf("the token changed at %d verified", i)
		}
	}
	if n := v.keys.checks.Load(); n != 3 {
		t.Errorf("%d signature checks, want 3: one per distinct token", n)
	}
}

// TestJWTCacheOneSpelling: the spellings of a valid token that differ in
// the bits past a part's last byte, which decoders ignore, are refused
// and not kept: one valid token takes one entry.
func TestJWTCacheOneSpelling(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	v := newVerifier(t, o.URL, resource, nil)
	token := opSigned(t, o, resource, "alice", time.Now().Add(time.Hour))
	if _, err := v.Verify(t.Context(), token, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(token) - strings.LastIndex(token, ".") - 1; n%4 != 2 {
		t.Fatalf("an RS256 signature of %d characters, want 342", n)
	}
	last := strings.IndexByte(base64url, token[len(token)-1])
	for low := range 16 { // the 4 bits past the signature's last byte
		spelling := token[:len(token)-1] + string(base64url[last&^0xf|low])
		if spelling == token {
			continue
		}
		if _, err := v.Verify(t.Context(), spelling, nil); err == nil || !strings.Contains(err.Error(), "canonical") {
			t.Errorf("another spelling of the token: %v, want it refused", err)
		}
	}
	if n, _ := v.cache.len(); n != 1 {
		t.Errorf("%d entries for one token and its spellings, want 1", n)
	}
}

// TestJWTCacheConcurrent: many requests with one token at once all get
// its TokenInfo; once one has been verified, none is checked again.
func TestJWTCacheConcurrent(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	v := newVerifier(t, o.URL, resource, nil)
	token := opSigned(t, o, resource, "alice", time.Now().Add(time.Hour))
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n*20)
	for range n {
		wg.Go(func() {
			for range 20 {
				info, err := v.Verify(context.Background(), token, nil)
				if err == nil && info.UserID != "alice" {
					err = fmt.Errorf("UserID %q", info.UserID)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checks := v.keys.checks.Load()
	if checks < 1 || checks > n {
		t.Errorf("%d signature checks for %d concurrent requests, want 1 to %d", checks, n, n)
	}
	for range 10 {
		v.Verify(t.Context(), token, nil)
	}
	if c := v.keys.checks.Load(); c != checks {
		t.Errorf("%d more signature checks once cached", c-checks)
	}
	if k, _ := v.cache.len(); k != 1 {
		t.Errorf("%d entries for one token", k)
	}
}

// TestCacheBytesEstimate: what the caches count per token is within a
// factor of two of the heap a cached token holds.
func TestCacheBytesEstimate(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	v := newVerifier(t, o.URL, resource, nil)
	exp := time.Now().Add(time.Hour)
	const n = 200
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = opSigned(t, o, resource, fmt.Sprint("user-", i), exp)
	}
	if _, err := v.Verify(t.Context(), tokens[0], nil); err != nil { // keys fetched
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, tok := range tokens[1:] {
		if _, err := v.Verify(t.Context(), tok, nil); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (n - 1)
	k, counted := v.cache.len()
	est := float64(counted) / float64(k)
	t.Logf("a cached token of %d bytes: %.0f bytes of heap, %.0f counted", len(tokens[1]), heap, est)
	if est < heap/2 || est > heap*2 {
		t.Errorf("%.0f bytes counted per token, %.0f on the heap", est, heap)
	}
	runtime.KeepAlive(tokens)
}

// TestIntrospectionCacheBounds: answers are kept within CacheBytes, and
// never past the token's exp, however long CacheTTL; refusals are kept
// apart, within bounds of their own.
func TestIntrospectionCacheBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		newV := func(opts IntrospectionOptions) *IntrospectionVerifier {
			opts.Endpoint, opts.ClientID, opts.ClientSecret, opts.HTTPClient = iss.URL+introspectPath, "rs", "s", n.client(t)
			v, err := NewIntrospectionVerifier(t.Context(), iss.URL, fakeResource, &opts)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		v := newV(IntrospectionOptions{})
		if _, err := v.Verify(t.Context(), "token-0", nil); err != nil {
			t.Fatal(err)
		}
		_, one := v.cache.len()
		limit := 5*one + one/2
		v = newV(IntrospectionOptions{CacheBytes: limit, CacheTTL: 2 * time.Hour})
		for i := range 50 {
			if _, err := v.Verify(t.Context(), fmt.Sprint("token-", i), nil); err != nil {
				t.Fatal(err)
			}
			if k, b := v.cache.len(); b > limit || k > 5 {
				t.Fatalf("%d answers kept, %d bytes, CacheBytes %d (room for 5)", k, b, limit)
			}
			v.Verify(t.Context(), fmt.Sprint("inactive-", i), nil)
		}
		if k, _ := v.cache.len(); k != 5 {
			t.Errorf("%d answers kept, want 5", k)
		}
		if k, b := v.refused.len(); k == 0 || b > limit {
			t.Errorf("%d refusals kept, %d bytes, CacheBytes %d", k, b, limit)
		}

		// The fake issuer's answers expire in an hour; CacheTTL is two.
		asked := v.askedCount()
		time.Sleep(time.Hour) // the bubble's clock
		if _, err := v.Verify(t.Context(), "token-49", nil); err != nil {
			t.Errorf("at exp: %v", err)
		}
		if v.askedCount() != asked {
			t.Error("asked the issuer about a token cached through its exp")
		}
		time.Sleep(time.Second)
		if _, err := v.Verify(t.Context(), "token-49", nil); err != nil {
			t.Errorf("past exp, asked again: %v", err) // the issuer answers with a new exp
		}
		if v.askedCount() != asked+1 {
			t.Error("a token cached past its exp was not asked about again")
		}
	})
}
