package mcpkit_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestNewResourceNotFoundError checks that the error a handler (a proxy's,
// say) can return for a URI that is not served is the very answer the
// server gives a client for a URI nothing serves: code, text and data,
// the URI clipped.
func TestNewResourceNotFoundError(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	if err := srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "docs://a", Name: "a"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "a"}}}, nil
		})}); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	for _, uri := range []string{"docs://nope", "docs://" + strings.Repeat("x", 10_000)} {
		_, err := ts.Session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		var got, want *jsonrpc.Error
		if !errors.As(err, &got) || !errors.As(mcpkit.NewResourceNotFoundError(uri), &want) {
			t.Fatalf("read %.20s: %v; want a JSON-RPC error", uri, err)
		}
		if got.Code != want.Code || got.Message != want.Message || !bytes.Equal(got.Data, want.Data) || len(want.Data) > 4096 {
			t.Errorf("read %.20s: the server answered %d %q %s; NewResourceNotFoundError is %d %q %.100s", uri, got.Code, got.Message, got.Data, want.Code, want.Message, want.Data)
		}
	}
}
