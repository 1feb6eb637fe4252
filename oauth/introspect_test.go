package oauth

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestIntrospectionAgainstOP verifies the OP's opaque tokens through its
// introspection endpoint (found in its metadata): what the answer grants,
// the issuer in the principal, the audience binding, and a cache that asks
// the OP once per token until its TTL (or the token's exp), for good and
// bad tokens alike, and keeps no more than CacheSize answers.
func TestIntrospectionAgainstOP(t *testing.T) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(t, opClients(resource))
	clock := &testClock{t: time.Now()}
	v, err := NewIntrospectionVerifier(t.Context(), o.URL, resource, &IntrospectionOptions{
		ClientID: "mcp-server", ClientSecret: "rs-secret", CacheSize: 3, CacheTTL: time.Minute, Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	token := o.token(t, "opaque-agent", "", "repo:read", "repo:admin")
	for range 10 {
		info, err := v.Verify(t.Context(), token, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(info.Scopes, []string{"repo:read", "repo:admin"}) || info.UserID != "opaque-agent" || info.Expiration.IsZero() {
			t.Fatalf("TokenInfo = %+v", info)
		}
		req := mcpkittest.NewRequest(&mcpkit.Tool{}, nil, mcpkittest.WithTokenInfo(info))
		if got, want := mcpkit.VerifiedPrincipal(req), `iss:"`+o.URL+`" sub:opaque-agent`; got != want {
			t.Fatalf("VerifiedPrincipal = %s, want %s", got, want)
		}
	}
	if n, m := v.askedCount(), o.introspect.Load(); n != 1 || m != 1 {
		t.Fatalf("asked the OP %d times (it saw %d) for 10 verifications, want 1", n, m)
	}
	clock.Advance(time.Minute)
	if _, err := v.Verify(t.Context(), token, nil); err != nil {
		t.Fatal(err)
	}
	if n := v.askedCount(); n != 2 {
		t.Errorf("asked %d times once the TTL passed, want 2", n)
	}

	refuse := func(name, token, reason string) {
		t.Helper()
		_, err := v.Verify(t.Context(), token, nil)
		if err == nil || !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: %v, want an invalid token: %s", name, err, reason)
		}
	}
	refuse("another resource's token", o.token(t, "opaque-other", "", "repo:read"), "not for audience")
	before := v.askedCount()
	for range 5 {
		refuse("garbage", "not-a-token", "not active")
	}
	if n := v.askedCount() - before; n != 1 {
		t.Errorf("asked %d times for 5 presentations of one bad token, want 1", n)
	}
	// The cache holds 3: two more tokens push the garbage out.
	o.token(t, "opaque-agent", "", "repo:read")
	for _, tok := range []string{"bad-1", "bad-2", "bad-3"} {
		refuse("garbage", tok, "not active")
	}
	before = v.askedCount()
	refuse("garbage again", "not-a-token", "not active")
	if n := v.askedCount() - before; n != 1 {
		t.Errorf("an evicted answer was not asked again (%d)", n)
	}
	clock.Advance(10 * time.Minute)
	refuse("expired", token, "")
}

func TestNewIntrospectionVerifierRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *IntrospectionOptions
	}{
		{"no options", nil},
		{"no secret", &IntrospectionOptions{Endpoint: "https://idp/introspect", ClientID: "rs"}},
		{"negative size", &IntrospectionOptions{Endpoint: "https://idp/introspect", ClientID: "rs", ClientSecret: "s", CacheSize: -1}},
		{"negative timeout", &IntrospectionOptions{Endpoint: "https://idp/introspect", ClientID: "rs", ClientSecret: "s", Timeout: -1}},
		{"endpoint not a URL", &IntrospectionOptions{Endpoint: "idp/introspect", ClientID: "rs", ClientSecret: "s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewIntrospectionVerifier(t.Context(), "https://idp", "https://a/mcp", tc.opts); err == nil || !strings.HasPrefix(err.Error(), "oauth: ") {
				t.Errorf("err = %v", err)
			}
		})
	}
}
