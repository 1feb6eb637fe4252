// Package oauthtest provides an OAuth authorization server for tests and
// local development, shaped like net/http/httptest: [NewIssuer] starts one
// on a loopback port, serving its metadata (RFC 8414 and OpenID Connect
// discovery) and its signing key (JWKS), and [Issuer.Mint] signs JWT
// access tokens (RFC 9068, typ "at+jwt") for a subject, an audience and
// scopes, which oauth.NewJWTVerifier accepts as it accepts a real
// issuer's.
//
//	iss := oauthtest.NewIssuer(nil)
//	defer iss.Close()
//	v, err := oauth.NewJWTVerifier(ctx, iss.URL, resource, nil) // discovers the keys
//	...
//	token := iss.Mint("ada", resource, "orders:read")
//
// An Issuer has no authorization or token endpoint: no client logs in,
// the test mints the tokens it needs, with [Issuer.MintClaims] for claims
// of its own (a tenant, a role, an expiry in the past). Its key is made
// when it starts and never leaves the process; its tokens are worth
// nothing anywhere else.
package oauthtest
