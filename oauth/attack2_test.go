package oauth

// Tests of a second outsider attack on the verifiers and the token
// exchange, after the first round's defects were fixed: each
// TestAttack2... test fails while the defect it names is there.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestAttack2IntrospectionJunkEvictsGoodAnswers: an attacker with no valid
// token sends tokens it made up, each once. Every refusal is cached, in
// the same LRU as the answers for good tokens (introspect.go, Verify:
// v.cache.put of a verdict with err), so CacheSize made-up tokens push the
// good tokens' answers out: each good caller's next request asks the
// issuer again, and, with the issuer slow or the 128 questions in flight
// taken (which the same attacker can hold), is refused with a 500,
// though its answer was cached a moment before.
func TestAttack2IntrospectionJunkEvictsGoodAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		const size = 200 // the default is 10,000: the same with 50 times the requests
		v, err := NewIntrospectionVerifier(t.Context(), iss.URL, fakeResource, &IntrospectionOptions{
			Endpoint: iss.URL + introspectPath, ClientID: "rs", ClientSecret: "s", HTTPClient: n.client(t), CacheSize: size,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), "good", nil); err != nil {
			t.Fatal(err)
		}
		for i := range size {
			// "inactive" is the fake issuer's one refused token; a made-up
			// token differs only in what the issuer answers.
			junk := fmt.Sprintf("inactive%d", i)
			v.Verify(context.Background(), junk, nil)
		}
		iss.setHang(introspectPath, true) // the issuer is slow now, or its questions are all taken
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := v.Verify(ctx, "good", nil); err != nil {
			t.Errorf("a good token answered a moment ago, after %d made-up tokens: %v", size, err)
		}
	})
}

// TestProbe2IssuerBlipKeepsClientSessions (holds): the docs say a 500 for
// an issuer that cannot answer leaves the client's token alone, and "the
// client keeps its token and tries again". A go-sdk client, on either
// protocol version, gets the 500 as a call error ("rejected by
// transport") and keeps its session: once the issuer answers again, the
// same session is served.
func TestProbe2IssuerBlipKeepsClientSessions(t *testing.T) {
	for _, version := range []string{mcpkittest.StatelessVersion, mcpkittest.StatefulVersion} {
		t.Run(version, func(t *testing.T) {
			iss := loopbackIssuer(t)
			clock := &testClock{t: time.Now()}
			v, err := NewIntrospectionVerifier(t.Context(), iss.URL, fakeResource, &IntrospectionOptions{
				Endpoint: iss.URL + introspectPath, ClientID: "rs", ClientSecret: "s", Timeout: 300 * time.Millisecond, Now: clock.Now,
			})
			if err != nil {
				t.Fatal(err)
			}
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "gw", Version: "1"}, nil)
			srv.Add(echoTool("whoami"))
			ts := httptest.NewServer(auth.RequireBearerToken(v.Verify, nil)(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true})))
			t.Cleanup(ts.Close)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: &bearer{token: "good"}}, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			call := func() error {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error")
				}
				return err
			}
			if err := call(); err != nil {
				t.Fatal(err)
			}
			iss.setHang(introspectPath, true)
			clock.Advance(2 * DefaultCacheTTL) // the answer is no longer cached
			if err := call(); err == nil {
				t.Fatal("a call while the issuer hangs was served")
			} else {
				t.Logf("while the issuer hangs: %v", err)
			}
			iss.setHang(introspectPath, false)
			if err := call(); err != nil {
				t.Errorf("the same session once the issuer answers again: %v", err)
			}
		})
	}
}

// TestAttack2ExchangeRotationChurnsSessions: an issuer whose exchanged
// tokens live a minute (expires_in 60, or no lifetime said at all:
// DefaultUnknownLifetime) has each reused for a minute less the
// ExpiryMargin: 30 seconds. The proxy
// keys a caller's upstream session by a digest of the credentials' values
// (proxy/sessions.go, sessionKey), so each new exchanged token of the same
// caller opens one more upstream session (an initialize round trip),
// while the one before stays open until SessionIdle (5 minutes) or is
// evicted: one steady caller holds some ten upstream sessions, and a few
// such callers fill MaxSessions (64) and evict everyone else's. The
// upstream binds a session to its user, not to the token: one session per
// caller would do.
func TestAttack2ExchangeRotationChurnsSessions(t *testing.T) {
	iss := loopbackIssuer(t)
	var minted atomic.Int64
	exchangeTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"access_token":      fmt.Sprintf("exchanged-%d-%s", minted.Add(1), r.PostForm.Get("subject_token")),
			"issued_token_type": accessTokenType, "token_type": "Bearer", "expires_in": 60,
		})
	}))
	defer exchangeTS.Close()
	rig := newGatewayRig(t, iss, mcpkittest.StatefulVersion, exchangeTS.URL)
	clock := &testClock{t: time.Now()}
	rig.exchange.now = clock.Now
	cs := rig.connect(t, iss.mintFor(t, rig.gateway, "alice", "repo:read", nil), mcpkittest.StatelessVersion)
	before := rig.inits.Load()
	const minutes = 3
	for i := range 2 * minutes {
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"}); err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
		clock.Advance(31 * time.Second)
	}
	t.Logf("%d initialize requests upstream, %d exchanges", rig.inits.Load()-before, minted.Load())
	if n := rig.inits.Load() - before; n > 1 {
		t.Errorf("one caller calling for %d minutes opened %d upstream sessions (%d exchanges), each left open until it idles out", minutes, n, minted.Load())
	}
}
