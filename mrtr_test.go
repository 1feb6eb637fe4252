package mcpkit_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// TestInputRequiredPassesThrough calls a tool that asks the client for
// input the 2026-07-28 way (SEP-2322: an input_required result, then a
// retried call with the answer), through the recommended chain, a size
// limit smaller than the request for input, output validation and
// tracing: none of them may touch the input_required result.
func TestInputRequiredPassesThrough(t *testing.T) {
	var asked, answered atomic.Int32
	greet := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "greet", InputSchema: &jsonschema.Schema{Type: "object"},
			OutputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"greeting": {Type: "string"}}, Required: []string{"greeting"}}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			resp, ok := req.Call.Params.InputResponses["name"].(*mcp.ElicitResult)
			if !ok {
				asked.Add(1)
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
						Message:         "What is your name? " + strings.Repeat("(any name will do) ", 10),
						RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
					}},
					RequestState: "step-1",
				}, nil
			}
			answered.Add(1)
			if req.Call.Params.RequestState != "step-1" {
				return nil, mcpkit.ToolErrorf("lost state %q", req.Call.Params.RequestState)
			}
			return &mcp.CallToolResult{StructuredContent: map[string]any{"greeting": fmt.Sprintf("hello %v", resp.Content["name"])}}, nil
		}),
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mrtr"}, nil)
	srv.Use(otelmcp.NewMiddleware(), middleware.Recommended(&middleware.RecommendedOptions{
		Limits: []mcpkit.Middleware{middleware.ResultSizeLimit(150, nil)},
	}))
	if err := srv.Add(greet); err != nil {
		t.Fatal(err)
	}
	opts := &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}}
	// 2026-07-28 clients retry the call with the answer; for 2025-11-25
	// clients the SDK asks over the session and calls the handler again.
	for _, connect := range []func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{
		mcpkittest.NewStatelessServer, mcpkittest.NewServer,
	} {
		asked.Store(0)
		answered.Store(0)
		ts := connect(t, srv, opts)
		res, err := ts.CallTool(t.Context(), "greet", nil)
		if err != nil {
			t.Fatal(err)
		}
		version := ts.Session.InitializeResult().ProtocolVersion
		if res.IsError || resultText(t, res) != `{"greeting":"hello Ada"}` {
			t.Fatalf("%s: got %+v (%s)", version, res, resultText(t, res))
		}
		if asked.Load() != 1 || answered.Load() != 1 {
			t.Errorf("%s: asked %d times, answered %d times; want once each", version, asked.Load(), answered.Load())
		}
	}
}

// TestRequestKnowsItsClient checks that a handler learns the protocol
// version, the client's name and its declared capabilities on both eras.
func TestRequestKnowsItsClient(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "who"}, nil)
	srv.Add(tool("client", func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		caps := req.ClientCapabilities()
		elicits := caps != nil && caps.Elicitation != nil
		return textResult(fmt.Sprintf("%s %s elicitation=%v", req.ProtocolVersion(), req.ClientInfo().Name, elicits)), nil
	}))
	opts := &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
	}}
	for connect, want := range map[string]string{
		"stateless": "2026-07-28 mcpkittest elicitation=true",
		"stateful":  "2025-11-25 mcpkittest elicitation=true",
	} {
		c := mcpkittest.NewServer
		if connect == "stateless" {
			c = mcpkittest.NewStatelessServer
		}
		res, err := c(t, srv, opts).CallTool(t.Context(), "client", nil)
		if err != nil || resultText(t, res) != want {
			t.Errorf("%s: got %v, %v; want %q", connect, res, err, want)
		}
	}
	if got := mcpkittest.NewRequest(nil, nil); got.ClientCapabilities() != nil || got.ClientInfo() != nil || got.ProtocolVersion() != "" {
		t.Error("a request built by hand claims to know its client")
	}
}

// TestInputResponseOnBothEras asks for a confirmation with one handler,
// written once, through the recommended chain: a 2026-07-28 client answers
// by calling again, and the SDK asks a 2025-11-25 client over its session.
func TestInputResponseOnBothEras(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ask"}, nil)
	srv.Use(middleware.Recommended(nil))
	srv.Add(tool("delete", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		answer, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm")
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"confirm": &mcp.ElicitParams{Message: "Delete 3 files?", RequestedSchema: &jsonschema.Schema{Type: "object"}},
			}}, nil
		}
		//lint:ignore SA1019 roots are deprecated on 2026-07-28, but answers of other types must still not match
		if _, wrongType := mcpkit.InputResponse[*mcp.ListRootsResult](req, "confirm"); wrongType {
			t.Error("InputResponse answered for the wrong type")
		}
		return textResult("deleted: " + answer.Action), nil
	}))
	opts := &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}}
	for _, connect := range []func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{mcpkittest.NewStatelessServer, mcpkittest.NewServer} {
		ts := connect(t, srv, opts)
		res, err := ts.CallTool(t.Context(), "delete", nil)
		if err != nil || onlyText(res) != "deleted: accept" {
			t.Errorf("%s: %v, %v", ts.Session.InitializeResult().ProtocolVersion, res, err)
		}
	}
	if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](mcpkittest.NewRequest(nil, nil), "confirm"); ok {
		t.Error("InputResponse found an answer in a request without one")
	}
}
