package mcpkit

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDispatchToolUnseen checks that the one tool mcpkit registers with the
// SDK, through which every call passes, is nobody's to list or call:
// tools/list does not show it, also when it reads the SDK's own list, and
// a call to it by its name gets the answer of a name never registered.
func TestDispatchToolUnseen(t *testing.T) {
	srv := NewServer(&mcp.Implementation{Name: "dispatch"}, nil)
	srv.MCPServer() // tools/list reads the SDK's list too

	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 0 {
		t.Errorf("tools/list shows %q", res.Tools[0].Name)
	}
	call := func(name string) error {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name})
		return err
	}
	var got, never *jsonrpc.Error
	if !errors.As(call(srv.dispatch), &got) || !errors.As(call("never-registered"), &never) {
		t.Fatalf("calls did not fail with JSON-RPC errors")
	}
	if got.Code != never.Code || got.Message != NewUnknownToolError(srv.dispatch).Error() || never.Message != `unknown tool "never-registered"` {
		t.Errorf("calling the dispatch tool: %d %q; a name never registered: %d %q", got.Code, got.Message, never.Code, never.Message)
	}
}
