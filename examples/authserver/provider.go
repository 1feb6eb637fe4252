package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The local identity provider: zitadel/oidc's OpenID provider over its
// in-memory example storage, for a demonstration only. Its clients use the
// client-credentials grant and get JWT access tokens whose audience is the
// MCP server they are registered for, with the scopes they asked for.

// client is a client of the provider.
type client struct {
	secret   string
	resource string // the audience of its tokens
}

// provider is the storage of the local provider: the example storage,
// with clients of the client-credentials grant.
type provider struct {
	*storage.Storage
	clients map[string]client
}

// newProvider returns the handler of a provider whose issuer is issuer.
func newProvider(issuer string, clients map[string]client) (http.Handler, error) {
	p := &provider{Storage: storage.NewStorage(storage.NewUserStore(issuer)), clients: clients}
	return op.NewProvider(&op.Config{
		CryptoKey:      sha256.Sum256([]byte("authserver demo: not a secret")),
		AuthMethodPost: true,
		CodeMethodS256: true,
	}, p, op.StaticIssuer(issuer), op.WithAllowInsecure(), op.WithLogger(slog.New(slog.DiscardHandler)))
}

// ccClient is a client of the client-credentials grant with JWT tokens.
type ccClient struct{ *storage.Client }

func (ccClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (ccClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (ccClient) IsScopeAllowed(string) bool          { return true }
func (ccClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (p *provider) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c, ok := p.clients[id]
	if !ok || c.secret != secret {
		return nil, errors.New("wrong client or secret")
	}
	return ccClient{storage.WebClient(id, secret)}, nil
}

// ClientCredentialsTokenRequest binds the token to the client's MCP
// server: zitadel's provider takes no resource parameter (RFC 8707) in
// this grant, so the client's registration names it.
func (p *provider) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	return &oidc.JWTTokenRequest{Subject: id, Audience: []string{p.clients[id].resource}, Scopes: scopes}, nil
}

// GetPrivateClaimsFromScopes writes the scope claim of RFC 9068.
func (p *provider) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	if len(scopes) == 0 {
		return nil, nil
	}
	return map[string]any{"scope": strings.Join(scopes, " ")}, nil
}
