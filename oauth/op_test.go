package oauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2/clientcredentials"
)

// testOP is a real OpenID provider (zitadel/oidc's OP over its example
// in-memory storage) running in the test process, with client-credentials
// clients that get JWT access tokens, keys the test can rotate, and a
// count of the fetches of its JWKS.
//
// zitadel's OP takes no RFC 8707 resource parameter in the client
// credentials grant (its storage interface is not given one): the
// storage below reads the parameter from the token request itself and
// makes it the token's audience, and without one the audience is the
// resource the client is registered for, as an authorization server that
// binds clients to resources does.
type testOP struct {
	*storage.Storage
	URL string // the issuer

	mu      sync.Mutex
	keys    []*testKey // the last one signs
	publish []*testKey // what the JWKS shows

	clients    map[string]testClient
	issued     map[string]issuedToken // by token ID
	jwksHits   atomic.Int64
	introspect atomic.Int64
	exchanges  atomic.Int64 // token exchange requests (RFC 8693)
}

type testClient struct {
	secret   string
	resource string // the audience of its tokens without a resource parameter
	opaque   bool   // its access tokens are opaque (introspected), not JWTs
}

type testKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *testKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *testKey) Algorithm() jose.SignatureAlgorithm          { return jose.RS256 }
func (k *testKey) Use() string                                 { return "sig" }
func (k *testKey) ID() string                                  { return k.id }

// testSigningKey is a testKey as a signing key: its private half.
type testSigningKey struct{ *testKey }

func (k testSigningKey) Key() any { return k.key }

// testPublicKey is a testKey as published: its public half.
type testPublicKey struct{ *testKey }

func (k testPublicKey) Key() any { return &k.key.PublicKey }

// newTestOP starts an OP on a loopback port; clients are its
// client-credentials clients by ID.
func newTestOP(t testing.TB, clients map[string]testClient) *testOP {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	issuer := "http://" + ts.Listener.Addr().String()
	o := &testOP{Storage: storage.NewStorage(storage.NewUserStore(issuer)), URL: issuer, clients: clients, issued: map[string]issuedToken{}}
	o.rotate(true)
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:      sha256.Sum256([]byte("mcpkit oauth tests")),
		AuthMethodPost: true,
		CodeMethodS256: true, // the SDK's discovery wants PKCE, as MCP clients do
	}, o, op.StaticIssuer(issuer), op.WithAllowInsecure(), op.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/keys":
			o.jwksHits.Add(1)
		case "/oauth/introspect":
			o.introspect.Add(1)
		case "/oauth/token":
			// The resource indicator, for ClientCredentialsTokenRequest.
			if err := r.ParseForm(); err == nil {
				r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, r.PostForm["resource"]))
				// zitadel's token exchange makes the audience parameter
				// the token's aud, and keeps resource apart: an exchange
				// for a resource gets a token for it.
				if r.PostForm.Get("grant_type") == string(oidc.GrantTypeTokenExchange) {
					o.exchanges.Add(1)
					if res := r.PostForm["resource"]; len(res) > 0 && r.Form.Get("audience") == "" {
						r.Form["audience"] = res
					}
				}
			}
		}
		provider.ServeHTTP(w, r)
	})
	ts.Start()
	t.Cleanup(ts.Close)
	return o
}

type resourceKey struct{}

// rotate makes a new key the signing key; keepOld keeps the previous ones
// published (a rotation with overlap), or withdraws them.
func (o *testOP) rotate(keepOld bool) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	nk := &testKey{id: "k" + strconv.Itoa(len(o.keys)+1), key: k}
	o.keys = append(o.keys, nk)
	if keepOld {
		o.publish = append(o.publish, nk)
	} else {
		o.publish = []*testKey{nk}
	}
}

func (o *testOP) SigningKey(context.Context) (op.SigningKey, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return testSigningKey{o.keys[len(o.keys)-1]}, nil
}

func (o *testOP) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (o *testOP) KeySet(context.Context) ([]op.Key, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]op.Key, len(o.publish))
	for i, k := range o.publish {
		out[i] = testPublicKey{k}
	}
	return out, nil
}

// ccClient is a client of the client-credentials grant.
type ccClient struct {
	*storage.Client
	opaque bool
}

func (c ccClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}

func (c ccClient) AccessTokenType() op.AccessTokenType {
	if c.opaque {
		return op.AccessTokenTypeBearer
	}
	return op.AccessTokenTypeJWT
}

func (c ccClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c ccClient) IsScopeAllowed(string) bool { return true }

func (o *testOP) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c, ok := o.clients[id]
	if !ok || c.secret != secret {
		return nil, errors.New("wrong client or secret")
	}
	return ccClient{storage.WebClient(id, secret), c.opaque}, nil
}

func (o *testOP) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	aud, _ := ctx.Value(resourceKey{}).([]string)
	if len(aud) == 0 {
		aud = []string{o.clients[id].resource}
	}
	return &oidc.JWTTokenRequest{Subject: id, Audience: aud, Scopes: scopes}, nil
}

type issuedToken struct {
	Subject    string
	Audience   []string
	Scopes     []string
	Expiration time.Time
}

// CreateAccessToken records what it issues, for introspection.
func (o *testOP) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := o.Storage.CreateAccessToken(ctx, req)
	if err == nil {
		o.mu.Lock()
		o.issued[id] = issuedToken{req.GetSubject(), req.GetAudience(), req.GetScopes(), exp}
		o.mu.Unlock()
	}
	return id, exp, err
}

// GetPrivateClaimsFromScopes puts the granted scopes in the scope claim
// (RFC 9068), which zitadel's OP leaves out of its JWT access tokens
// unless its storage adds it, as a deployment configures its IdP to.
func (o *testOP) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	if len(scopes) == 0 {
		return nil, nil
	}
	return map[string]any{"scope": strings.Join(scopes, " ")}, nil
}

// AuthorizeClientIDSecret authenticates the resource servers that
// introspect tokens: the registered clients.
func (o *testOP) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if c, ok := o.clients[id]; ok && c.secret == secret {
		return nil
	}
	return errors.New("wrong client or secret")
}

// SetIntrospectionFromToken answers introspection: the example storage's
// answer needs a user, and the tokens here are clients'.
func (o *testOP) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	o.mu.Lock()
	tok, ok := o.issued[tokenID]
	o.mu.Unlock()
	if !ok {
		return errors.New("unknown token")
	}
	resp.Active = true
	resp.Subject = tok.Subject
	resp.Audience = tok.Audience
	resp.Scope = tok.Scopes
	resp.Expiration = oidc.FromTime(tok.Expiration)
	resp.Issuer = o.URL
	resp.ClientID = tok.Subject
	return nil
}

// GetClientByClientID returns the test's clients, for the token exchange
// grant, which looks up the client that asks.
func (o *testOP) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if c, ok := o.clients[id]; ok {
		return ccClient{storage.WebClient(id, c.secret), c.opaque}, nil
	}
	return o.Storage.GetClientByClientID(ctx, id)
}

// ValidateTokenExchangeRequest lets a client exchange any valid access
// token of the OP for an access token (RFC 8693): the subject stays the
// subject token's, and the client becomes the actor.
func (o *testOP) ValidateTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) error {
	if req.GetRequestedTokenType() == "" {
		req.SetRequestedTokenType(oidc.AccessTokenType)
	}
	if req.GetRequestedTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	return nil
}

// GetPrivateClaimsFromTokenExchangeRequest writes the scope claim, and
// the client that exchanged the token as its actor (RFC 8693, act).
func (o *testOP) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) (map[string]any, error) {
	claims := map[string]any{"act": map[string]any{"sub": req.GetClientID()}}
	if s := req.GetScopes(); len(s) > 0 {
		claims["scope"] = strings.Join(s, " ")
	}
	return claims, nil
}

// token gets an access token for client with scopes, asking for resource
// (RFC 8707) unless it is empty.
func (o *testOP) token(t testing.TB, client, resource string, scopes ...string) string {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: client, ClientSecret: o.clients[client].secret,
		TokenURL: o.URL + "/oauth/token", Scopes: scopes, AuthStyle: 1}
	if resource != "" {
		cfg.EndpointParams = url.Values{"resource": {resource}}
	}
	tok, err := cfg.Token(context.Background())
	if err != nil {
		t.Fatalf("token for %s: %v", client, err)
	}
	if isJWT := strings.Count(tok.AccessToken, ".") == 2; isJWT == o.clients[client].opaque {
		t.Fatalf("token for %s: %q is not of the expected kind", client, tok.AccessToken)
	}
	return tok.AccessToken
}
