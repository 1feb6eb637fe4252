package mcpkittest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// whoServer has a tool that reports what its request carries: a header and
// the token's subject and scopes.
func whoServer(t *testing.T) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "who"}, nil)
	err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "who", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			text := fmt.Sprintf("tenant=%q", req.Header().Get("X-Tenant"))
			if info := req.TokenInfo(); info != nil {
				text += fmt.Sprintf(" user=%s scopes=%s", info.UserID, strings.Join(info.Scopes, ","))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

func TestHeadersAndTokens(t *testing.T) {
	opts := &mcpkittest.Options{
		Header: http.Header{"X-Tenant": {"acme"}},
		Tokens: map[string]*auth.TokenInfo{"tok-ada": {UserID: "ada", Scopes: []string{"read", "write"}}},
		Token:  "tok-ada",
	}
	want := map[string]string{
		"inmemory":  `tenant=""`, // no HTTP: no headers, no token
		"stateful":  `tenant="acme" user=ada scopes=read,write`,
		"stateless": `tenant="acme" user=ada scopes=read,write`,
	}
	mcpkittest.ForEachTransport(t, whoServer, func(t *testing.T, ts *mcpkittest.Server) {
		res, err := ts.CallTool(t.Context(), "who", nil)
		if err != nil {
			t.Fatal(err)
		}
		name := t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]
		if got := text(res); got != want[name] {
			t.Errorf("handler saw %s, want %s", got, want[name])
		}
		if ts.URL == "" {
			return
		}
		// Without the token, the SDK's bearer check refuses the request.
		resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("no token: HTTP %d, want 401", resp.StatusCode)
		}
	}, opts)
}

func TestNewRequestOptions(t *testing.T) {
	req := mcpkittest.NewRequest(nil, map[string]int{"a": 1},
		mcpkittest.WithHeader(http.Header{"X-Tenant": {"acme"}}),
		mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"}),
		mcpkittest.WithMeta(mcp.Meta{"progressToken": "p1"}))
	if req.Tool == nil || req.Tool.Name != "test" {
		t.Errorf("Tool = %+v, want the placeholder", req.Tool)
	}
	if string(req.Arguments) != `{"a":1}` || req.Header().Get("X-Tenant") != "acme" || req.TokenInfo().UserID != "ada" || req.Meta()["progressToken"] != "p1" {
		t.Errorf("request = %+v %+v", req, req.Call.Extra)
	}
	if bare := mcpkittest.NewRequest(nil, nil); bare.Header() != nil || bare.TokenInfo() != nil || bare.Meta() != nil {
		t.Error("a bare request carries transport extras")
	}
}

func TestServeTool(t *testing.T) {
	srv := whoServer(t)
	res, err := mcpkittest.ServeTool(t.Context(), srv, "who", nil,
		mcpkittest.WithHeader(http.Header{"X-Tenant": {"acme"}}),
		mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada", Scopes: []string{"read"}}))
	if err != nil || text(res) != `tenant="acme" user=ada scopes=read` {
		t.Errorf("got %v, %v", res, err)
	}
	// The server's validation is part of the chain: its Go error comes back.
	_, err = mcpkittest.ServeTool(t.Context(), srv, "who", json.RawMessage(`[1]`))
	if !errors.Is(err, mcpkit.ErrValidation) {
		t.Errorf("invalid arguments: got %v, want a validation error", err)
	}
	var wire *jsonrpc.Error
	if _, err := mcpkittest.ServeTool(t.Context(), srv, "nope", nil); !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: got %v", err)
	}
}

func TestForEachTransport(t *testing.T) {
	var ran []string
	built := 0
	mcpkittest.ForEachTransport(t, func(t *testing.T) *mcpkit.Server { built++; return whoServer(t) }, func(t *testing.T, ts *mcpkittest.Server) {
		ran = append(ran, t.Name()[strings.LastIndexByte(t.Name(), '/')+1:])
		if _, err := ts.CallTool(t.Context(), "who", nil); err != nil {
			t.Error(err)
		}
	}, nil)
	if !slices.Equal(ran, []string{"inmemory", "stateful", "stateless"}) || built != 3 {
		t.Errorf("ran %v with %d servers", ran, built)
	}
}
