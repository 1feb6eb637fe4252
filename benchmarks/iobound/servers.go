package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

// impls are the server implementations serve can run, in the order run
// measures them.
var impls = []string{"mcpkit", "go-sdk", "mcp-go"}

// newHandler returns implementation impl serving the three tools on b, on
// two endpoints: /stateless (no sessions) and /stateful (a session for
// every initialize, closed by DELETE). Every server answers with JSON
// rather than an event stream, as the published benchmark's go-sdk server
// does.
//
//   - mcpkit: typed tools (tools.New) behind the recommended chain
//     (middleware.Recommended: logging, panic recovery, error masking, a
//     timeout), arguments validated; the log is JSON, formatted for every
//     call and written nowhere.
//   - go-sdk: the go-sdk alone, typed tools (mcp.AddTool), as the
//     published benchmark's Go server is written.
//   - mcp-go: mark3labs/mcp-go with typed tools and its defaults.
func newHandler(impl string, b *backend) (http.Handler, error) {
	var stateless, stateful http.Handler
	switch impl {
	case "mcpkit":
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "iobound", Version: "0.1.0"}, nil)
		logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
		srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))
		search, err := tools.New(searchName, b.searchProducts, &tools.Options{Description: searchDesc})
		if err != nil {
			return nil, err
		}
		cart, err := tools.New(cartName, b.getUserCart, &tools.Options{Description: cartDesc})
		if err != nil {
			return nil, err
		}
		checkout, err := tools.New(checkoutName, b.checkout, &tools.Options{Description: checkoutDesc})
		if err != nil {
			return nil, err
		}
		if err := srv.Add(search, cart, checkout); err != nil {
			return nil, err
		}
		sdk := &mcp.StreamableHTTPOptions{JSONResponse: true}
		stateless = srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: sdk})
		stateful = srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true, SDK: sdk})
	case "go-sdk":
		srv := mcp.NewServer(&mcp.Implementation{Name: "iobound", Version: "0.1.0"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: searchName, Description: searchDesc}, sdkTool(b.searchProducts))
		mcp.AddTool(srv, &mcp.Tool{Name: cartName, Description: cartDesc}, sdkTool(b.getUserCart))
		mcp.AddTool(srv, &mcp.Tool{Name: checkoutName, Description: checkoutDesc}, sdkTool(b.checkout))
		get := func(*http.Request) *mcp.Server { return srv }
		stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		stateful = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true})
	case "mcp-go":
		s := mgserver.NewMCPServer("iobound", "0.1.0", mgserver.WithToolCapabilities(false))
		s.AddTool(mgmcp.NewTool(searchName, mgmcp.WithDescription(searchDesc),
			mgmcp.WithInputSchema[searchIn](), mgmcp.WithOutputSchema[searchOut]()), mcpGoTool(b.searchProducts))
		s.AddTool(mgmcp.NewTool(cartName, mgmcp.WithDescription(cartDesc),
			mgmcp.WithInputSchema[userIn](), mgmcp.WithOutputSchema[cartOut]()), mcpGoTool(b.getUserCart))
		s.AddTool(mgmcp.NewTool(checkoutName, mgmcp.WithDescription(checkoutDesc),
			mgmcp.WithInputSchema[checkoutIn](), mgmcp.WithOutputSchema[checkoutOut]()), mcpGoTool(b.checkout))
		stateless = mgserver.NewStreamableHTTPServer(s, mgserver.WithStateLess(true))
		stateful = mgserver.NewStreamableHTTPServer(s, mgserver.WithStateful(true))
	default:
		return nil, fmt.Errorf("unknown server %q (want one of %s)", clip(impl), strings.Join(impls, ", "))
	}
	mux := http.NewServeMux()
	mux.Handle("/stateless", stateless)
	mux.Handle("/stateful", stateful)
	return mux, nil
}

// sdkTool adapts a tool function to the go-sdk's typed handler.
func sdkTool[In, Out any](fn func(context.Context, In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := fn(ctx, in)
		return nil, out, err
	}
}

// mcpGoTool adapts a tool function to mcp-go's structured handler, which
// sends the result as structured content and as JSON text, as the others do.
func mcpGoTool[In, Out any](fn func(context.Context, In) (Out, error)) mgserver.ToolHandlerFunc {
	return mgmcp.NewStructuredToolHandler(func(ctx context.Context, _ mgmcp.CallToolRequest, in In) (Out, error) {
		return fn(ctx, in)
	})
}

// clip returns s, cut to a length fit for a name in an error message.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "..."
}
