package middleware_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// An audit trail of every decision, written as chained JSON lines, with a
// secret argument redacted.
func ExampleNewAudit() {
	ctx := context.Background()
	var trail bytes.Buffer // a file, in a real server
	sink := middleware.NewJSONLinesSink(&trail, &middleware.JSONLinesOptions{Chain: true})
	audit := middleware.NewAudit(sink, &middleware.AuditOptions{RedactNames: []string{"token"}})

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "deployer", Version: "1"}, nil)
	srv.Observe(audit)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "deploy", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed"}}}, nil
		}),
	})
	cs, err := mcpkittest.ConnectInMemory(ctx, srv, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod", "token": "s3cret"}})
	// A name that reaches no tool: no schema says what in its arguments
	// is secret, so they are not recorded.
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "rollback", Arguments: map[string]any{"token": "s3cret"}})

	audit.Close(ctx) // on shutdown: write what is queued
	for line := range strings.Lines(trail.String()) {
		var rec middleware.AuditRecord
		json.Unmarshal([]byte(line), &rec)
		fmt.Println(rec.Seq, rec.Decision, rec.Name, rec.Outcome, cmp.Or(string(rec.Arguments), "-"))
	}
	n, _, err := middleware.VerifyAuditChain(&trail)
	fmt.Println(n, "records, chain intact:", err == nil)
	// Output:
	// 1 served deploy ok {"env":"prod","token":"[redacted]"}
	// 2 unknown rollback protocol_error -
	// 2 records, chain intact: true
}
