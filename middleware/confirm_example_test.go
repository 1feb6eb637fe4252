package middleware_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/requeststate"
)

// Destructive tools run only once the user confirms; read-only tools are
// not asked about.
func ExampleConfirm() {
	ctx := context.Background()
	key := make([]byte, 32) // shared by every replica, in a real server
	rand.Read(key)
	sealer, err := requeststate.New([][]byte{key}, nil)
	if err != nil {
		panic(err)
	}

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(middleware.Destructive, middleware.Confirm(sealer, nil)))
	reply := func(text string) mcpkit.HandlerFunc {
		return func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
	}
	srv.Add(
		&mcpkit.Tool{Tool: mcp.Tool{Name: "delete_file", InputSchema: map[string]any{"type": "object"}}, Handler: reply("deleted")},
		&mcpkit.Tool{Tool: mcp.Tool{Name: "list_files", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: reply("a.txt b.txt")},
	)

	// The client shows the question to its user; this one says yes to
	// a.txt only.
	cs, err := mcpkittest.ConnectInMemory(ctx, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", req.Params.Message)
			yes := req.Params.Message == `Run "delete_file" with {"path":"a.txt"}?`
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{middleware.ConfirmField: yes}}, nil
		},
	}})
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	for _, call := range []*mcp.CallToolParams{
		{Name: "list_files", Arguments: map[string]any{}},
		{Name: "delete_file", Arguments: map[string]any{"path": "a.txt"}},
		{Name: "delete_file", Arguments: map[string]any{"path": "b.txt", "confirm": true}},
	} {
		res, err := cs.CallTool(ctx, call)
		if err != nil {
			panic(err)
		}
		fmt.Println(call.Name+":", res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// list_files: a.txt b.txt
	// asked: Run "delete_file" with {"path":"a.txt"}?
	// delete_file: deleted
	// asked: Run "delete_file" with {"confirm":true,"path":"b.txt"}?
	// delete_file: the user did not confirm: "delete_file" did not run
}
