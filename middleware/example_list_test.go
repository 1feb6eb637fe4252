package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

func ExampleDeref() {
	schema := json.RawMessage(`{"type":"object","$defs":{"address":{"type":"object","properties":{"street":{"type":"string"}}}},
		"properties":{"home":{"$ref":"#/$defs/address"},"work":{"$ref":"#/$defs/address"}}}`)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "deref"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool:    mcp.Tool{Name: "move", InputSchema: schema},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }),
	})
	srv.UseList(middleware.Deref(nil))
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.ListTools(context.Background(), nil)
	advertised, _ := json.Marshal(res.Tools[0].InputSchema)
	fmt.Println(string(advertised))
	// Output: {"properties":{"home":{"properties":{"street":{"type":"string"}},"type":"object"},"work":{"properties":{"street":{"type":"string"}},"type":"object"}},"type":"object"}
}

func ExampleRecommended() {
	failing := tools.Must(tools.New("lookup", func(ctx context.Context, in struct {
		ID int `json:"id"`
	}) (string, error) {
		return "", fmt.Errorf("query failed: connection to db-7.internal refused")
	}, nil))
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "prod"}, nil)
	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: nil}))
	srv.Add(failing)
	cs := connect(srv)
	defer cs.Close()
	show(cs, "lookup", map[string]any{"id": 7}) // the internal error is masked
	show(cs, "lookup", map[string]any{})
	// Output:
	// isError (fatal): error calling tool "lookup"
	// isError (retryable): invalid arguments: id: required property is missing
}
