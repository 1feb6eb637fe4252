package visibility_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// tool returns a tool called name that answers "name" (or "name@version"
// when it has a version), with the given tags.
func tool(name string, tags ...string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool:    mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		Handler: answer(name),
		Tags:    tags,
	}
}

// versioned returns tool(name) at version v, answering "name@v".
func versioned(name, v string, tags ...string) *mcpkit.Tool {
	t := tool(name, tags...)
	t.Version = v
	t.Handler = answer(name + "@" + v)
	return t
}

// readOnly returns tool(name) annotated readOnlyHint.
func readOnly(name string, tags ...string) *mcpkit.Tool {
	t := tool(name, tags...)
	t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	return t
}

func answer(s string) mcpkit.HandlerFunc {
	return func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
	}
}

// newServer returns a server with tools, failing the test if Add fails.
func newServer(t testing.TB, opts *mcpkit.ServerOptions, tools ...*mcpkit.Tool) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "visibility-test"}, opts)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return srv
}

// tokens are the bearer tokens of the tests' users.
var tokens = map[string]*auth.TokenInfo{
	"admin-token": {UserID: "ada", Scopes: []string{"read", "admin"}, Extra: map[string]any{"tenant": "acme", "groups": []any{"ops", "dev"}, "level": 3.0}},
	"user-token":  {UserID: "bob", Scopes: []string{"read"}, Extra: map[string]any{"tenant": "initech", "groups": []any{"dev"}, "level": 1.0}},
}

// as returns harness options for the user of token ("" for none), with
// the other options of base.
func as(token string, base *mcpkittest.Options) *mcpkittest.Options {
	o := mcpkittest.Options{}
	if base != nil {
		o = *base
	}
	o.Tokens, o.Token = tokens, token
	return &o
}

// names returns the names of every tool cs lists, reading every page.
func names(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl.Name)
	}
	return out
}

// list returns the first page cs lists.
func list(t testing.TB, cs *mcp.ClientSession) *mcp.ListToolsResult {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// call calls name with a copy of the _meta meta (nil for none) and
// returns the text it answered, or the error. (A copy, because a
// 2026-07-28 SDK client adds its protocol version and capabilities to the
// _meta map it is given.)
func call(ctx context.Context, cs *mcp.ClientSession, name string, meta mcp.Meta) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Meta: maps.Clone(meta)})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("call %s: unexpected result %+v", name, res)
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// pin is the _meta of a call pinned to version v.
func pin(v string) mcp.Meta { return mcp.Meta{mcpkit.MetaKeyVersion: v} }

// wantServed checks that a call of name answers want.
func wantServed(t testing.TB, cs *mcp.ClientSession, name string, meta mcp.Meta, want string) {
	t.Helper()
	got, err := call(t.Context(), cs, name, meta)
	if err != nil || got != want {
		t.Errorf("call %s %v = %q, %v; want %q", name, meta, got, err, want)
	}
}

// wantUnknown checks that a call of name is answered exactly as a call of a
// name never registered: JSON-RPC error -32602 `unknown tool "name"`.
func wantUnknown(t testing.TB, cs *mcp.ClientSession, name string, meta mcp.Meta) {
	t.Helper()
	_, err := call(t.Context(), cs, name, meta)
	if msg := unknownMismatch(err, name); msg != "" {
		t.Errorf("call %s %v: %s", name, meta, msg)
	}
}

// unknownMismatch says how err differs from the error of a call to a name
// never registered, or "" when it does not.
func unknownMismatch(err error, name string) string {
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		return fmt.Sprintf("got %v, want a JSON-RPC error", err)
	}
	want := mcpkit.NewUnknownToolError(name).(*jsonrpc.Error)
	if werr.Code != want.Code || werr.Message != want.Message || len(werr.Data) != 0 {
		return fmt.Sprintf("got error %d %q %s, want %d %q", werr.Code, werr.Message, werr.Data, want.Code, want.Message)
	}
	return ""
}

func joined(names []string) string { return strings.Join(names, ",") }
