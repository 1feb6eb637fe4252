package mcpkittest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// ExampleRawClient calls a tool over streamable HTTP as a 2026-07-28
// client, reading the result as raw JSON, and then a method the server
// does not have, whose JSON-RPC error errors.As finds.
func ExampleRawClient() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "example"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		}),
	})
	hs := httptest.NewServer(srv.HTTPHandler(nil))
	defer hs.Close()

	c := &mcpkittest.RawClient{Endpoint: hs.URL}
	raw, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}})
	if err != nil {
		panic(err)
	}
	var res struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		panic(err)
	}
	fmt.Println(res.ResultType, res.Content[0].Text)

	_, err = c.Call(context.Background(), "tasks/get", map[string]any{"taskId": "t1"})
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		fmt.Println(jerr.Code, jerr.Message)
	}
	// Output:
	// complete pong
	// -32601 JSON RPC not handled: "tasks/get" unsupported
}
