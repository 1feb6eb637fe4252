package oauthtest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/oauth"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// A test starts an issuer, points the server's verifier at it as at a
// real one, and mints the tokens its cases need.
func ExampleIssuer_Mint() {
	ctx := context.Background()
	iss := oauthtest.NewIssuer(nil)
	defer iss.Close()

	const resource = "https://orders.example.com/mcp"           // the MCP server's canonical URI
	v, err := oauth.NewJWTVerifier(ctx, iss.URL, resource, nil) // discovers the keys
	if err != nil {
		log.Fatal(err)
	}

	info, err := v.Verify(ctx, iss.Mint("ada", resource, "orders:read"), nil)
	fmt.Println(info.UserID, info.Scopes, err)

	_, err = v.Verify(ctx, iss.Mint("ada", "https://elsewhere.example.com/mcp", "orders:read"), nil)
	fmt.Println(err != nil)
	// Output:
	// ada [orders:read] <nil>
	// true
}

// MintClaims adds claims of your own, for visibility predicates
// (visibility.Claim) and requirements that read them.
func ExampleIssuer_MintClaims() {
	ctx := context.Background()
	iss := oauthtest.NewIssuer(nil)
	defer iss.Close()
	const resource = "https://orders.example.com/mcp"
	v, err := oauth.NewJWTVerifier(ctx, iss.URL, resource, &oauth.JWTOptions{JWKSURL: iss.JWKSURL()})
	if err != nil {
		log.Fatal(err)
	}

	token := iss.MintClaims(map[string]any{"sub": "ada", "aud": resource, "tenant": "acme", "admin": true})
	info, err := v.Verify(ctx, token, nil)
	fmt.Println(info.UserID, info.Extra["tenant"], info.Extra["admin"], err)
	// Output:
	// ada acme true <nil>
}
