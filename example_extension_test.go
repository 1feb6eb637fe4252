package mcpkit_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

func ExampleServer_DeclareExtension() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ext"}, nil)
	srv.DeclareExtension("example.com/search", map[string]any{"maxResults": 50})

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println(cs.InitializeResult().Capabilities.Extensions["example.com/search"])
	// Output:
	// map[maxResults:50]
}

func ExampleServer_ReadsResource() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	draft := tools.TextResource("docs://draft", "draft", "text/plain", "not yet", nil)
	draft.Tags = []string{"draft"}
	if err := srv.AddResources(tools.TextResource("docs://guide", "guide", "text/plain", "read me", nil), draft); err != nil {
		log.Fatal(err)
	}
	visibility.New(visibility.Disable(func(r *mcpkit.Resource) bool { return r.HasTag("draft") })).Attach(srv)

	// In an SDK receiving middleware, req is the request of any method,
	// a custom one's included; nil is whoever calls.
	var req mcp.Request
	for _, uri := range []string{"docs://guide", "docs://draft", "docs://none"} {
		reads, private := srv.ReadsResource(context.Background(), req, uri)
		fmt.Println(uri, reads, private)
	}
	// Output:
	// docs://guide true false
	// docs://draft false false
	// docs://none false false
}

func ExampleCallerOf() {
	// In an SDK receiving middleware, req is the request of any method; a
	// custom method's has no mcpkit form, and CallerOf reads it as one.
	req := &mcp.ServerRequest[*mcp.CallToolParams]{Extra: &mcp.RequestExtra{Header: http.Header{"X-Team": {"billing"}}}}
	c := mcpkit.CallerOf(req)
	fmt.Println(c.Header().Get("X-Team"), c.TokenInfo() == nil)
	fmt.Println(mcpkit.CallerOf(nil) == nil)
	// Output:
	// billing true
	// true
}
