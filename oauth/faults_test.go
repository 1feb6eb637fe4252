package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// The tests of this file run in synctest bubbles over a memNet, so that
// the time a request waits for a hung issuer is measured on the bubble's
// clock, exactly: a verification that does not wait for the network takes
// no time at all.

// verifyTimed verifies token with v and returns the error and the time it
// took on the bubble's clock.
func verifyTimed(v auth.TokenVerifier, token string) (time.Duration, error) {
	start := time.Now()
	_, err := v(context.Background(), token, nil)
	return time.Since(start), err
}

// verifyAll verifies token n times at once, and returns the longest time
// one took and the errors.
func verifyAll(v auth.TokenVerifier, token string, n int) (time.Duration, []error) {
	var (
		mu      sync.Mutex
		longest time.Duration
		errs    []error
		wg      sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			d, err := verifyTimed(v, token)
			mu.Lock()
			longest = max(longest, d)
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	return longest, errs
}

// TestJWKSHung: an issuer whose JWKS endpoint accepts and never answers
// stalls nothing. Tokens of known keys keep verifying at once while the
// refresh of aged keys is under way (one fetch, however many tokens);
// tokens of an unknown key wait for that one fetch, which gives up after
// the default timeout, and later ones within MinRefreshInterval fail at
// once; once the issuer answers again, a rotated key is fetched.
func TestJWKSHung(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		v := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: iss.URL + keysPath, HTTPClient: n.client(t)})
		good := iss.mint(t, "at+jwt")
		if d, err := verifyTimed(v.Verify, good); err != nil || d != 0 {
			t.Fatalf("the first token: %v after %s", err, d)
		}

		iss.setHang(keysPath, true)
		time.Sleep(DefaultMaxKeyAge) // the keys have aged: the next token has them fetched again
		if d, errs := verifyAll(v.Verify, good, 20); d != 0 || errors.Join(errs...) != nil {
			t.Fatalf("tokens of a known key while the JWKS hangs: %v, the longest after %s", errors.Join(errs...), d)
		}
		synctest.Wait()
		if h := iss.hitsOf(keysPath); h != 2 {
			t.Fatalf("%d JWKS requests, want 2: the first fetch and one refresh for 20 tokens", h)
		}

		unknown := signToken(t, "ES256", iss.key, "rotated-in", "at+jwt", map[string]any{
			"iss": iss.URL, "aud": fakeResource, "sub": "alice", "exp": time.Now().Add(time.Hour).Unix(),
		})
		start := time.Now()
		time.Sleep(time.Second)
		d, errs := verifyAll(v.Verify, unknown, 5)
		if waited := time.Since(start); waited != DefaultTimeout {
			t.Errorf("tokens of an unknown key during the hung refresh returned %s after it began (the longest waited %s), want %s", waited, d, DefaultTimeout)
		}
		for _, err := range errs {
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Errorf("a token of an unknown key: %v, want an invalid token (401)", err)
			}
		}
		if d, err := verifyTimed(v.Verify, unknown); err == nil || d != 0 {
			t.Errorf("an unknown key right after a fetch gave up: %v after %s, want a refusal at once", err, d)
		}
		if d, err := verifyTimed(v.Verify, good); err != nil || d != 0 {
			t.Errorf("a known key after the fetch gave up: %v after %s", err, d)
		}
		if h := iss.hitsOf(keysPath); h != 2 {
			t.Errorf("%d JWKS requests, want still 2", h)
		}

		iss.setHang(keysPath, false)
		iss.rotate(t, "k2")
		time.Sleep(DefaultMinRefreshInterval)
		if d, err := verifyTimed(v.Verify, iss.mint(t, "at+jwt")); err != nil || d != 0 {
			t.Errorf("a token of the rotated key once the issuer answers: %v after %s", err, d)
		}
	})
}

// TestJWTIssuerDownAtStart: a verifier is made while its issuer is down;
// tokens are refused at once with a 401 while discovery has not
// succeeded, attempts back off (1s, 2s, 4s, ... up to MinRefreshInterval)
// however many tokens arrive, and tokens verify once the issuer is up,
// with no restart.
func TestJWTIssuerDownAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		v, err := NewJWTVerifier(t.Context(), iss.URL, fakeResource, &JWTOptions{HTTPClient: n.client(t)})
		if err != nil {
			t.Fatalf("NewJWTVerifier with the issuer down: %v", err)
		}
		good := iss.mint(t, "at+jwt")
		start := time.Now()
		for range 95 { // a token every second
			if d, err := verifyTimed(v.Verify, good); err == nil || d != 0 || !errors.Is(err, ErrIssuerUnavailable) || errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("a token while the issuer is down: %v after %s, want ErrIssuerUnavailable (not an invalid token) at once", err, d)
			}
			time.Sleep(time.Second)
		}
		var at []time.Duration
		for _, d := range n.dialsTo(iss.addr) {
			at = append(at, d.Sub(start))
		}
		want := []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second, 31 * time.Second, 63 * time.Second}
		if !equalDurations(at, want) {
			t.Errorf("attempts at %v, want %v", at, want)
		}

		// Over HTTP: the SDK's bearer check answers 500, not 401: nothing
		// says the token is bad, and a 401 makes a client throw it away.
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+good)
		auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"})(
			http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the request went through") })).ServeHTTP(rec, req)
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("over HTTP: %d %q, want 500", rec.Code, rec.Header().Get("WWW-Authenticate"))
		}

		iss.start(t, n)
		time.Sleep(DefaultMinRefreshInterval)
		if d, err := verifyTimed(v.Verify, good); err != nil || d != 0 {
			t.Errorf("once the issuer is up: %v after %s", err, d)
		}
	})
}

// TestJWTIssuerHungAtStart: an issuer that accepts and never answers
// discovery holds the first tokens for one timeout at most, all of them
// waiting for the one attempt.
func TestJWTIssuerHungAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.setHang(metaPath, true)
		iss.start(t, n)
		v, err := NewJWTVerifier(t.Context(), iss.URL, fakeResource, &JWTOptions{HTTPClient: n.client(t)})
		if err != nil {
			t.Fatalf("NewJWTVerifier with the issuer hung: %v", err)
		}
		good := iss.mint(t, "at+jwt")
		d, errs := verifyAll(v.Verify, good, 10)
		if d != DefaultTimeout {
			t.Errorf("tokens during a hung discovery waited up to %s, want %s", d, DefaultTimeout)
		}
		for _, err := range errs {
			if !errors.Is(err, ErrIssuerUnavailable) {
				t.Errorf("a token during a hung discovery: %v, want ErrIssuerUnavailable", err)
			}
		}
		if h := iss.hitsOf(metaPath); h != 1 {
			t.Errorf("%d discovery requests for 10 tokens, want 1", h)
		}
		iss.setHang(metaPath, false)
		time.Sleep(time.Second)
		if d, err := verifyTimed(v.Verify, good); err != nil || d != 0 {
			t.Errorf("once the issuer answers: %v after %s", err, d)
		}
	})
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIntrospectionHung: a hung introspection endpoint fails a request for
// a token it has no answer for after the default timeout, concurrent
// requests for one token share one question, and the cached answers of
// other tokens are served at once meanwhile.
func TestIntrospectionHung(t *testing.T) {
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
		if d, err := verifyTimed(v.Verify, "cached"); err != nil || d != 0 {
			t.Fatalf("the first token: %v after %s", err, d)
		}
		iss.setHang(introspectPath, true)
		done := make(chan struct{})
		go func() {
			defer close(done)
			d, errs := verifyAll(v.Verify, "new", 5)
			if d != DefaultTimeout {
				t.Errorf("a token the endpoint does not answer for waited %s, want %s", d, DefaultTimeout)
			}
			for _, err := range errs {
				if err == nil || errors.Is(err, auth.ErrInvalidToken) {
					t.Errorf("a token the endpoint does not answer for: %v, want an error that is not an invalid token (500)", err)
				}
			}
		}()
		synctest.Wait()
		if d, err := verifyTimed(v.Verify, "cached"); err != nil || d != 0 {
			t.Errorf("a cached token while the endpoint hangs: %v after %s", err, d)
		}
		<-done
		if h := iss.hitsOf(introspectPath); h != 2 {
			t.Errorf("%d introspection requests, want 2 (one per token)", h)
		}
		iss.setHang(introspectPath, false)
		if d, err := verifyTimed(v.Verify, "new"); err != nil || d != 0 {
			t.Errorf("once the endpoint answers: %v after %s", err, d)
		}
	})
}

// TestIntrospectionIssuerDownAtStart: an introspection verifier is made
// while its issuer is down, refuses tokens at once (500) until it is up,
// and then introspects them, with no restart.
func TestIntrospectionIssuerDownAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		v, err := NewIntrospectionVerifier(t.Context(), iss.URL, fakeResource, &IntrospectionOptions{
			ClientID: "rs", ClientSecret: "s", HTTPClient: n.client(t),
		})
		if err != nil {
			t.Fatalf("NewIntrospectionVerifier with the issuer down: %v", err)
		}
		for range 3 {
			if d, err := verifyTimed(v.Verify, "tok"); err == nil || d != 0 || errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("a token while the issuer is down: %v after %s, want an error at once that is not an invalid token", err, d)
			}
		}
		if got := len(n.dialsTo(iss.addr)); got != 1 {
			t.Errorf("%d attempts for 3 tokens within a second, want 1", got)
		}
		iss.start(t, n)
		time.Sleep(time.Second)
		if d, err := verifyTimed(v.Verify, "tok"); err != nil || d != 0 {
			t.Errorf("once the issuer is up: %v after %s", err, d)
		}
	})
}
