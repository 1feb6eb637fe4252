package oauth

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// fuzzVerifier returns a verifier of the key in testdata/fuzzkey.pem
// (which signed the seed corpus's good token) whose clock stands still in
// 2027, so that the key set is fetched once and never again.
func fuzzVerifier(f testing.TB) *JWTVerifier {
	f.Helper()
	b, err := os.ReadFile("testdata/fuzzkey.pem")
	if err != nil {
		f.Fatal(err)
	}
	block, _ := pem.Decode(b)
	k, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		f.Fatal(err)
	}
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(set) }))
	f.Cleanup(ts.Close)
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	v, err := NewJWTVerifier(f.Context(), "https://idp.example.com", "https://mcp.example.com/mcp", &JWTOptions{
		JWKSURL: ts.URL, Now: func() time.Time { return now }, MinRefreshInterval: 1000 * time.Hour, MaxKeyAge: 1000 * time.Hour,
	})
	if err != nil {
		f.Fatal(err)
	}
	return v
}

// FuzzJWTVerify feeds the verifier arbitrary tokens: it never panics,
// refuses with an error that wraps auth.ErrInvalidToken and stays short,
// and what it accepts is the seed's good token's grant.
func FuzzJWTVerify(f *testing.F) {
	v := fuzzVerifier(f)
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Fuzz(func(t *testing.T, token string) {
		info, err := v.Verify(t.Context(), token, nil)
		if err != nil {
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("err %v does not wrap ErrInvalidToken", err)
			}
			if len(err.Error()) > 600 {
				t.Fatalf("the error has %d bytes", len(err.Error()))
			}
			return
		}
		if info.UserID != "ada" || info.Extra["iss"] != "https://idp.example.com" {
			t.Fatalf("accepted %q as %+v", token, info)
		}
		for _, s := range info.Scopes {
			if s == "" || strings.ContainsAny(s, " \t\n") {
				t.Fatalf("scope %q", s)
			}
		}
	})
}

// TestFuzzSeedAccepted keeps the fuzz corpus honest: its good token is
// accepted, so FuzzJWTVerify explores from a token that gets through.
func TestFuzzSeedAccepted(t *testing.T) {
	b, err := os.ReadFile("testdata/fuzz/FuzzJWTVerify/good")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(strings.Split(string(b), "\n")[1])
	token := strings.TrimSuffix(strings.TrimPrefix(line, `string("`), `")`)
	v := fuzzVerifier(t)
	if _, err := v.Verify(t.Context(), token, nil); err != nil {
		t.Fatalf("the corpus's good token: %v", err)
	}
}

// FuzzParseJWKS feeds the key-set parser arbitrary documents: it never
// panics, and keeps public signing keys only.
func FuzzParseJWKS(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		keys, err := parseJWKS(doc)
		if err != nil {
			return
		}
		for _, k := range keys {
			if !k.IsPublic() || k.Use != "" && k.Use != "sig" {
				t.Fatalf("kept %+v", k)
			}
		}
	})
}
