package visibility_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/visibility"
)

// An authenticated HTTP server where two users see different tools: Ada's
// token has the admin scope, Bob's does not. Bob is not told that
// delete_repo exists: it is not listed to him, and calling it gets the
// answer to a name never registered.
func Example_authenticatedHTTP() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "repos"}, nil)
	reply := func(text string) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	}
	schema := map[string]any{"type": "object"}
	err := srv.Add(
		&mcpkit.Tool{Tool: mcp.Tool{Name: "list_repos", InputSchema: schema}, Handler: reply("mcpkit, go-sdk")},
		&mcpkit.Tool{Tool: mcp.Tool{Name: "delete_repo", InputSchema: schema}, Handler: reply("deleted"), Tags: []string{"admin"}},
	)
	if err != nil {
		log.Fatal(err)
	}
	visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))).Attach(srv)

	// The SDK's bearer-token check, with a verifier that knows two tokens
	// (a real one would check a JWT or ask the authorization server).
	tokens := map[string]*auth.TokenInfo{
		"ada-token": {UserID: "ada", Scopes: []string{"repo", "admin"}},
		"bob-token": {UserID: "bob", Scopes: []string{"repo"}},
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := tokens[token]; ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}
	handler := srv.HTTPHandler(nil)
	ts := httptest.NewServer(auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(handler))
	defer ts.Close()

	for _, token := range []string{"ada-token", "bob-token"} {
		client := &http.Client{Transport: withToken{token: token, next: http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: client}, nil)
		if err != nil {
			log.Fatal(err)
		}
		user := tokens[token].UserID
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			log.Fatal(err)
		}
		var names []string
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		fmt.Println(user, "sees", names)
		call, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_repo"})
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			fmt.Println(user, "calls delete_repo: error", werr.Code, werr.Message)
		} else if err != nil {
			log.Fatal(err)
		} else {
			fmt.Println(user, "calls delete_repo:", call.Content[0].(*mcp.TextContent).Text)
		}
		cs.Close()
	}
	// Output:
	// ada sees [delete_repo list_repos]
	// ada calls delete_repo: deleted
	// bob sees [list_repos]
	// bob calls delete_repo: error -32602 unknown tool "delete_repo"
}

// withToken sends a bearer token with every request.
type withToken struct {
	token string
	next  http.RoundTripper
}

func (t withToken) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(req)
}
