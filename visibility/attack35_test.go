package visibility_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/visibility"
)

// claimCaller is a caller whose verified token has the claims given.
type claimCaller map[string]any

func (c claimCaller) TokenInfo() *auth.TokenInfo {
	return &auth.TokenInfo{UserID: "u", Extra: map[string]any(c)}
}
func (claimCaller) Header() http.Header                         { return nil }
func (claimCaller) ProtocolVersion() string                     { return "" }
func (claimCaller) ClientCapabilities() *mcp.ClientCapabilities { return nil }

// decoded returns claims as a verifier puts them in TokenInfo.Extra: the
// JSON of a token's payload decoded into a map.
func decoded(t *testing.T, payload string) claimCaller {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAttack35ClaimNumericStringIDs: a tenant or organization claim is
// often a long numeric string (snowflake IDs, account numbers). Claim
// compares the numbers such strings spell as float64, so two different
// IDs past 2^53 are taken for one: Claim("org", "1234567890123456789")
// shows the tool to the token of org "1234567890123456788", another
// organization. The docs promise only that a value matches a claim "of
// another JSON type that it spells"; here both are strings, and differ.
func TestAttack35ClaimNumericStringIDs(t *testing.T) {
	for _, tt := range []struct {
		want    any
		payload string
	}{
		{"1234567890123456789", `{"org": "1234567890123456788"}`},
		{"1234567890123456789", `{"org": ["1234567890123456790"]}`},
		{"9007199254740993", `{"org": "9007199254740992"}`},
		// A string value against a JSON number claim past 2^53: the issuer
		// wrote another number, the decoder's float64 cannot tell.
		{"9007199254740993", `{"org": 9007199254740992}`},
	} {
		p := visibility.Claim("org", tt.want)
		if p(context.Background(), decoded(t, tt.payload)) {
			t.Errorf("Claim(%q, %q) holds for the token %s, of another organization", "org", tt.want, tt.payload)
		}
	}
}

// TestAttack35ClaimTypes records what held: the spellings the docs table
// promises, and the ones it rules out.
func TestAttack35ClaimTypes(t *testing.T) {
	for _, tt := range []struct {
		want    any
		payload string
		holds   bool
	}{
		{"true", `{"c": true}`, true},
		{true, `{"c": "true"}`, true},
		{"42", `{"c": 42}`, true},
		{42, `{"c": "42"}`, true},
		{42.0, `{"c": 42}`, true},
		{int64(42), `{"c": 42.0}`, true},
		{"042", `{"c": 42}`, false},
		{42, `{"c": "042"}`, false},
		{"yes", `{"c": true}`, false},
		{"1", `{"c": true}`, false},
		{"admin", `{"c": ["user", "admin"]}`, true},
		{true, `{"c": [false, "true"]}`, true},
		{"admin", `{"c": {"roles": ["admin"]}}`, false},
		{"admin", `{"c": [["admin"]]}`, false},
		{false, `{"c": null}`, false},
	} {
		p := visibility.Claim("c", tt.want)
		if got := p(context.Background(), decoded(t, tt.payload)); got != tt.holds {
			t.Errorf("Claim(c, %#v) on %s = %v, want %v", tt.want, tt.payload, got, tt.holds)
		}
	}
}
