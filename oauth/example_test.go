package oauth_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/oauth"
	"github.com/mcpkit/mcpkit/proxy"
)

// An MCP server at https://mcp.example.com/mcp that accepts the JWT access
// tokens of https://idp.example.com issued for it, publishes its protected
// resource metadata, and challenges callers of delete_repo without
// repo:admin. (Not run: it needs the issuer.)
func ExampleNewJWTVerifier() {
	const issuer, resource = "https://idp.example.com", "https://mcp.example.com/mcp"
	ctx := context.Background()
	verifier, err := oauth.NewJWTVerifier(ctx, issuer, resource, nil)
	if err != nil {
		log.Fatal(err)
	}
	meta, err := oauth.MetadataURL(resource)
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "repos", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))

	mux := http.NewServeMux()
	mux.Handle(oauth.MetadataPath(resource), auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"repo:read", "repo:admin"},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(verifier.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(
		srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: meta})))
	log.Fatal(http.ListenAndServe(":8080", mux))
}

// Opaque tokens, verified by the issuer's introspection endpoint, with
// this server's credentials there. (Not run: it needs the issuer.)
func ExampleNewIntrospectionVerifier() {
	verifier, err := oauth.NewIntrospectionVerifier(context.Background(), "https://idp.example.com", "https://mcp.example.com/mcp",
		&oauth.IntrospectionOptions{ClientID: "mcp-server", ClientSecret: "from-your-secret-store"})
	if err != nil {
		log.Fatal(err)
	}
	_ = auth.RequireBearerToken(verifier.Verify, nil)
}

// A gateway that serves the tools of https://crm.internal/mcp to its own
// callers, sending each call with a token the issuer gave for the upstream
// in exchange for the caller's (RFC 8693). (Not run: it needs the issuer.)
func ExampleNewTokenExchange() {
	const issuer = "https://idp.example.com"
	exchange, err := oauth.NewTokenExchange(issuer, &oauth.TokenExchangeOptions{
		ClientID:     "gateway",
		ClientSecret: "from-your-secret-store",
		Resource:     "https://crm.internal/mcp",
	})
	if err != nil {
		log.Fatal(err)
	}
	up, err := proxy.New(context.Background(), proxy.HTTP("https://crm.internal/mcp", &proxy.HTTPOptions{
		Header: http.Header{"Authorization": {"Bearer " + "the gateway's own token, for the catalog"}},
	}), &proxy.Options{Prefix: "crm_", Credentials: exchange.Credentials})
	if err != nil {
		log.Fatal(err)
	}
	defer up.Close()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "gateway", Version: "1"}, nil)
	up.AddTo(srv)
	// Callers' tokens for the gateway are verified before a call reaches
	// the exchange: it exchanges only verified tokens.
	verifier, err := oauth.NewJWTVerifier(context.Background(), issuer, "https://gateway.example.com/mcp", nil)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(":8080", auth.RequireBearerToken(verifier.Verify, nil)(srv.HTTPHandler(nil))))
}

func ExampleMetadataURL() {
	u, _ := oauth.MetadataURL("https://mcp.example.com/mcp")
	fmt.Println(u)
	fmt.Println(oauth.MetadataPath("https://mcp.example.com/mcp"))
	// Output:
	// https://mcp.example.com/.well-known/oauth-protected-resource/mcp
	// /.well-known/oauth-protected-resource/mcp
}
