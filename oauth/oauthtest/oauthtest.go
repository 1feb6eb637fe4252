package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// DefaultLifetime is how long the tokens an [Issuer] mints are valid,
// unless [Options] say otherwise.
const DefaultLifetime = time.Hour

// Options configures [NewIssuer]. A nil *Options means the defaults.
type Options struct {
	// Lifetime is how long a minted token is valid (its exp after its
	// iat); zero means [DefaultLifetime].
	Lifetime time.Duration

	// ClientID is the client_id claim of the minted tokens; empty means
	// "oauthtest".
	ClientID string

	// Now is the issuer's clock, for iat and exp; nil means time.Now.
	Now func() time.Time
}

// An Issuer is an OAuth authorization server running on a loopback port
// for a test or a development session: it publishes its metadata and its
// signing key, and mints access tokens. It is safe for concurrent use.
type Issuer struct {
	// URL is the issuer identifier (its iss claim), of the form
	// http://127.0.0.1:port: the issuer to give oauth.NewJWTVerifier.
	URL string

	srv      *httptest.Server
	signer   jose.Signer
	keys     []byte // the JWKS document
	lifetime time.Duration
	clientID string
	now      func() time.Time
}

// NewIssuer starts an Issuer with a new ES256 signing key. The caller
// closes it when done, with [Issuer.Close]. NewIssuer panics if no key
// can be made, as httptest.NewServer does when it cannot listen.
func NewIssuer(opts *Options) *Issuer {
	var o Options
	if opts != nil {
		o = *opts
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic("oauthtest: NewIssuer: " + err.Error())
	}
	kid := rand.Text()[:16]
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		panic("oauthtest: NewIssuer: " + err.Error())
	}
	keys, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &key.PublicKey, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"},
	}})
	if err != nil {
		panic("oauthtest: NewIssuer: " + err.Error())
	}
	i := &Issuer{
		signer:   signer,
		keys:     keys,
		lifetime: o.Lifetime,
		clientID: o.ClientID,
		now:      o.Now,
	}
	if i.lifetime <= 0 {
		i.lifetime = DefaultLifetime
	}
	if i.clientID == "" {
		i.clientID = "oauthtest"
	}
	if i.now == nil {
		i.now = time.Now
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", i.serveMetadata)
	mux.HandleFunc("GET /.well-known/openid-configuration", i.serveMetadata)
	mux.HandleFunc("GET /jwks", i.serveKeys)
	i.srv = httptest.NewServer(mux)
	i.URL = i.srv.URL
	return i
}

// Close shuts the issuer's server down. The tokens it minted stay valid
// for a verifier that has its key already.
func (i *Issuer) Close() { i.srv.Close() }

// JWKSURL returns the URL of the issuer's signing keys, for a verifier
// told where they are rather than discovering them.
func (i *Issuer) JWKSURL() string { return i.URL + "/jwks" }

// Mint returns a signed access token for subject (its sub), valid for
// audience (its aud: the resource, the MCP server's canonical URI),
// granting scopes (its scope claim, space-separated), issued now and
// valid for the issuer's lifetime. Its header has typ "at+jwt" and the
// key's kid; its claims are those RFC 9068 requires: iss, sub, aud, exp,
// iat, jti and client_id.
func (i *Issuer) Mint(subject, audience string, scopes ...string) string {
	claims := map[string]any{"sub": subject, "aud": audience}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	return i.MintClaims(claims)
}

// MintClaims returns a signed access token with claims, and with the
// claims Mint sets that claims lacks (iss, exp, iat, jti, client_id):
// for claims of your own ("tenant", "admin": true), several audiences, or
// an exp in the past. MintClaims panics if claims cannot be marshalled as
// JSON.
func (i *Issuer) MintClaims(claims map[string]any) string {
	now := i.now()
	all := map[string]any{
		"iss":       i.URL,
		"iat":       now.Unix(),
		"exp":       now.Add(i.lifetime).Unix(),
		"jti":       rand.Text(),
		"client_id": i.clientID,
	}
	for k, v := range claims {
		all[k] = v
	}
	payload, err := json.Marshal(all)
	if err != nil {
		panic(fmt.Sprintf("oauthtest: MintClaims: %v", err))
	}
	jws, err := i.signer.Sign(payload)
	if err != nil {
		panic(fmt.Sprintf("oauthtest: MintClaims: %v", err))
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		panic(fmt.Sprintf("oauthtest: MintClaims: %v", err))
	}
	return token
}

// serveMetadata serves the issuer's metadata, the same at the RFC 8414
// and OpenID Connect addresses: what a verifier needs (issuer, jwks_uri)
// and what MCP clients check (PKCE with S256).
func (i *Issuer) serveMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"issuer":                                i.URL,
		"jwks_uri":                              i.JWKSURL(),
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{string(jose.ES256)},
	})
}

func (i *Issuer) serveKeys(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Write(i.keys)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
