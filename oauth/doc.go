// Package oauth provides what an MCP server needs to be an OAuth 2.1
// resource server, as the MCP authorization spec describes it: verifiers
// of access tokens for the SDK's auth.RequireBearerToken, and the URL of
// the server's protected resource metadata (RFC 9728).
//
//   - [JWTVerifier] verifies JWT access tokens (RFC 9068) of one issuer
//     with its published keys (JWKS, discovered from the issuer's
//     metadata, cached, fetched again on rotation at a bounded rate), for
//     one audience: this server's canonical URI. A token it verified is
//     kept until its exp, while its key is published, in a bounded cache:
//     presented again, it costs no signature check.
//   - [IntrospectionVerifier] verifies opaque tokens by asking the
//     issuer's introspection endpoint (RFC 7662), with a bounded cache.
//   - [TokenExchange] is the other side, for a gateway: it exchanges a
//     caller's verified token for one for an upstream server (RFC 8693),
//     as the Credentials of a proxy.Upstream.
//
// Nothing is fetched at construction: an issuer down at start delays
// nothing but the tokens that need it, which are refused within
// [DefaultTimeout], and tokens verify once it answers. Every request to
// the issuer runs apart from the client requests that wait for it, with
// a deadline; a token of a known key never waits for one.
//
// Both put every claim of a token in auth.TokenInfo.Extra, the issuer
// under mcpkit.TokenIssuerKey, so that mcpkit.Principal tells the same
// subject at two issuers apart and visibility predicates
// (visibility.Claim) can read custom claims. Per-tool scopes and the
// step-up challenge are mcpkit's (mcpkit.RequireScopes); this module
// holds what needs a JOSE library, so that the core stays light.
//
// A server behind a JWT issuer:
//
//	const resource = "https://mcp.example.com/mcp"
//	v, err := oauth.NewJWTVerifier(ctx, "https://idp.example.com", resource, nil) // the IdP may be down yet
//	...
//	meta, _ := oauth.MetadataURL(resource)
//	mux.Handle(oauth.MetadataPath(resource), auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
//		Resource:             resource,
//		AuthorizationServers: []string{"https://idp.example.com"},
//		ScopesSupported:      []string{"repo:read", "repo:admin"},
//	}))
//	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
//	mux.Handle("/mcp", auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(
//		srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: meta})))
//
// JWT verification is github.com/coreos/go-oidc/v3's (issuer, audience,
// algorithm allowlist, over github.com/go-jose/go-jose/v4), with this
// package's key cache and its own exp/nbf checks with a configurable
// skew. Options are structs, nil meaning the defaults, as in the SDK.
//
// # Adding the module
//
// Until mcpkit is published, go get github.com/mcpkit/mcpkit/oauth fails
// (403 Forbidden from the module proxy). With a checkout of the repository
// at ../mcpkit, require this module and the root module with replace
// directives of their own:
//
//	go mod edit -require=github.com/mcpkit/mcpkit@v0.0.0 -replace=github.com/mcpkit/mcpkit=../mcpkit
//	go mod edit -require=github.com/mcpkit/mcpkit/oauth@v0.0.0 -replace=github.com/mcpkit/mcpkit/oauth=../mcpkit/oauth
//	go mod tidy # once your code imports it
//
// The repository's README.md ("Use it in your module") has the go.work
// alternative and its limits.
package oauth
