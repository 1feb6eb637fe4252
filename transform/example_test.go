package transform_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// searchTool is a tool written for another audience: terse argument names,
// and a user argument that the server, not the model, should fill in.
func searchTool() *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{
			Name:        "search",
			Description: "Search.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{
				"q":{"type":"string"},
				"user":{"type":"string"}},
				"required":["q","user"],"additionalProperties":false}`),
		},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			var in struct{ Q, User string }
			if err := json.Unmarshal(req.Arguments, &in); err != nil {
				return nil, err
			}
			msg := fmt.Sprintf("%s searched %q for %s", req.Tool.Name, in.Q, in.User)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
		}),
	}
}

func ExampleTool() {
	find, err := transform.Tool(searchTool(), transform.Spec{
		Name:        "find_documents",
		Description: "Find documents by full-text search.",
		Arguments: map[string]transform.Arg{
			"q":    {Name: "query", Description: "Words to look for."},
			"user": {Hide: true, Value: "demo"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	if err := srv.Add(find); err != nil {
		log.Fatal(err)
	}

	schema, _ := json.Marshal(find.InputSchema)
	fmt.Println(string(schema))

	// Clients call it by its new names; the parent gets its own.
	ctx := context.Background()
	res, _ := mcpkittest.ServeTool(ctx, srv, "find_documents", map[string]any{"query": "mcp"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	_, err = mcpkittest.ServeTool(ctx, srv, "find_documents", map[string]any{"q": "mcp"})
	fmt.Println(err)
	// Output:
	// {"additionalProperties":false,"properties":{"query":{"description":"Words to look for.","type":"string"}},"required":["query"],"type":"object"}
	// search searched "mcp" for demo
	// invalid arguments: q: unexpected property; query: required property is missing
}

func ExampleTool_hidden() {
	// The user is whoever the bearer token says, never what a client sends.
	mine, err := transform.Tool(searchTool(), transform.Spec{
		Name: "search_mine",
		Arguments: map[string]transform.Arg{
			"user": {Hide: true, ValueFunc: func(_ context.Context, req *mcpkit.Request) (any, error) {
				if info := req.TokenInfo(); info != nil && info.UserID != "" {
					return info.UserID, nil
				}
				return nil, mcpkit.NewToolError(errors.New("sign in first"), mcpkit.Fatal)
			}},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	if err := srv.Add(mine); err != nil {
		log.Fatal(err)
	}

	// As the SDK's auth.RequireBearerToken middleware would pass it on.
	alice := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "alice"})
	ctx := context.Background()
	res, _ := mcpkittest.ServeTool(ctx, srv, "search_mine", map[string]any{"q": "notes"}, alice)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	_, err = mcpkittest.ServeTool(ctx, srv, "search_mine", map[string]any{"q": "notes", "user": "mallory"}, alice)
	fmt.Println(err)
	_, err = mcpkittest.ServeTool(ctx, srv, "search_mine", map[string]any{"q": "notes"})
	fmt.Println(err)
	// Output:
	// search searched "notes" for alice
	// invalid arguments: user: unexpected property
	// tool "search_mine": no value for argument "user": sign in first
}

func ExampleTool_middleware() {
	// Post-process what the parent returns: here, shorten long answers.
	clip := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			if err != nil || res.IsError {
				return res, err
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if before, _, cut := strings.Cut(text, " for "); cut {
				clipped := *res // the parent's result is its own: change a copy
				clipped.Content = []mcp.Content{&mcp.TextContent{Text: before + " (clipped)"}}
				return &clipped, nil
			}
			return res, nil
		})
	}
	short, err := transform.Tool(searchTool(), transform.Spec{
		Name:       "search_short",
		Arguments:  map[string]transform.Arg{"user": {Hide: true, Value: "demo"}},
		Middleware: []mcpkit.Middleware{clip},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	if err := srv.Add(short); err != nil {
		log.Fatal(err)
	}
	res, _ := mcpkittest.ServeTool(context.Background(), srv, "search_short", map[string]any{"q": "mcp"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// search searched "mcp" (clipped)
}
