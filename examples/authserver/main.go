// Command authserver is an MCP server that is an OAuth resource server,
// with a local identity provider, in one command:
//
//	go run .            # provider, server, and a client that steps up, then exits
//	go run . -serve     # provider and server, until interrupted
//
// The server verifies the provider's JWT access tokens (oauth.JWTVerifier),
// publishes its protected resource metadata, lets any token with
// repo:read call read_repo, and answers a call of delete_repo without
// repo:admin with the MCP scope challenge (mcpkit.RequireScopes). The
// client is the go-sdk's, with its client-credentials OAuth handler: it
// follows the 401 to the metadata and the provider, and the 403 to a
// token with more scope.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/oauth"
)

func main() {
	serve := flag.Bool("serve", false, "serve until interrupted instead of running the client")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *serve); err != nil {
		log.Fatal(err)
	}
}

// run starts the provider and the MCP server on loopback ports, then runs
// the client (or, with serve, waits for ctx to end), writing what happens
// to out.
func run(ctx context.Context, out io.Writer, serve bool) error {
	idpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mcpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	issuer := "http://" + idpLn.Addr().String()
	resource := "http://" + mcpLn.Addr().String() + "/mcp"

	// The MCP server first: its verifier fetches nothing until a token
	// needs the provider's keys, so it starts whether or not the provider
	// is up yet.
	h, err := newHandler(ctx, issuer, resource)
	if err != nil {
		return err
	}
	mcpSrv := &http.Server{Handler: h}
	go mcpSrv.Serve(mcpLn)
	defer mcpSrv.Close()

	idp, err := newProvider(issuer, map[string]client{"agent": {secret: "agent-secret", resource: resource}})
	if err != nil {
		return err
	}
	idpSrv := &http.Server{Handler: idp}
	go idpSrv.Serve(idpLn)
	defer idpSrv.Close()

	fmt.Fprintf(out, "provider   %s (client \"agent\", secret \"agent-secret\", client-credentials grant)\n", issuer)
	fmt.Fprintf(out, "MCP server %s\n", resource)
	if serve {
		<-ctx.Done()
		return nil
	}
	return runClient(ctx, out, resource)
}

// newHandler returns the MCP server's handler: the endpoint behind the
// bearer-token check, and its protected resource metadata next to it.
func newHandler(ctx context.Context, issuer, resource string) (http.Handler, error) {
	// zitadel's provider types its access tokens "JWT", not "at+jwt" as
	// RFC 9068 asks: without AcceptPlainJWT they would all be refused.
	verifier, err := oauth.NewJWTVerifier(ctx, issuer, resource, &oauth.JWTOptions{AcceptPlainJWT: true})
	if err != nil {
		return nil, err
	}
	meta, err := oauth.MetadataURL(resource)
	if err != nil {
		return nil, err
	}

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "repos", Version: "1.0.0"}, nil)
	// Visible to every caller, callable only with repo:admin.
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	for _, name := range []string{"read_repo", "delete_repo"} {
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				text := fmt.Sprintf("%s done for %s", name, mcpkit.VerifiedPrincipal(req))
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			}),
		})
	}

	mux := http.NewServeMux()
	mux.Handle(oauth.MetadataPath(resource), auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{issuer},
		ScopesSupported:        []string{"repo:read", "repo:admin"},
		BearerMethodsSupported: []string{"header"},
	}))
	// Every call needs repo:read: the 401 names it.
	bearer := auth.RequireBearerToken(verifier.Verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: meta,
		Scopes:              []string{"repo:read"},
	})
	mux.Handle("/mcp", bearer(srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: meta})))
	return mux, nil
}

// runClient calls read_repo and delete_repo with the go-sdk's client and
// its client-credentials handler, printing the challenges it meets.
func runClient(ctx context.Context, out io.Writer, endpoint string) error {
	handler, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{
			ClientID:         "agent",
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "agent-secret"},
		},
	})
	if err != nil {
		return err
	}
	transport := &mcp.StreamableClientTransport{
		Endpoint:     endpoint,
		OAuthHandler: handler,
		HTTPClient:   &http.Client{Transport: showChallenges{out}},
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	for _, name := range []string{"read_repo", "delete_repo"} {
		fmt.Fprintf(out, "call %s\n", name)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(out, "  -> %s\n", res.Content[0].(*mcp.TextContent).Text)
	}
	return nil
}

// showChallenges prints the 401 and 403 answers the client receives.
type showChallenges struct{ out io.Writer }

func (s showChallenges) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		fmt.Fprintf(s.out, "  <- %d WWW-Authenticate: %s\n", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	return resp, err
}
