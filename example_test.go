package mcpkit_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// connect returns a client session to srv over in-memory transports.
func connect(srv *mcpkit.Server) *mcp.ClientSession {
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	if err != nil {
		log.Fatal(err)
	}
	return cs
}

func Example() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "greeter"}, nil)
	err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{
			Name:        "greet",
			Description: "Say hello.",
			InputSchema: &jsonschema.Schema{Type: "object"},
		},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}

	// Serve it on any SDK transport; here, in memory.
	cs := connect(srv)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: hello
}

func ExampleChain() {
	tag := func(name string) mcpkit.Middleware {
		return func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				fmt.Println("enter", name)
				defer fmt.Println("leave", name)
				return next.ServeTool(ctx, req)
			})
		}
	}
	h := mcpkit.Chain(tag("a"), tag("b"))(mcpkit.HandlerFunc(
		func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			fmt.Println("handler")
			return &mcp.CallToolResult{}, nil
		}))
	h.ServeTool(context.Background(), mcpkittest.NewRequest(nil, nil))
	// Output:
	// enter a
	// enter b
	// handler
	// leave b
	// leave a
}

func ExampleServer_Use() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "audited"}, nil)
	// Server-wide middleware runs around every tool, also those added later.
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			fmt.Printf("calling %s with %s\n", req.Tool.Name, req.Arguments)
			return next.ServeTool(ctx, req)
		})
	})
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "noop", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, nil // an empty result
		}),
	})
	cs := connect(srv)
	defer cs.Close()
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop", Arguments: map[string]int{"n": 1}})
	// Output: calling noop with {"n":1}
}

func ExampleToolErrorf() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "write_file", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			// The model sees this text and may retry with overwrite set.
			return nil, mcpkit.ToolErrorf("file %s exists; set overwrite to replace it", "notes.txt")
		}),
	})
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file"})
	fmt.Println(res.IsError, mcpkit.ErrorClassOf(res))
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// true retryable
	// file notes.txt exists; set overwrite to replace it
}

func ExampleNewToolError() {
	err := mcpkit.NewToolError(errors.New("workspace is read-only"), mcpkit.Fatal)
	var te *mcpkit.ToolError
	fmt.Println(errors.As(err, &te), te.ErrorClass())
	// Output: true fatal
}

func ExampleErrorClassOf() {
	// In an agent loop: stop on fatal errors, let the model retry the others.
	res := &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{mcpkit.MetaKeyErrorClass: "fatal"}}
	switch mcpkit.ErrorClassOf(res) {
	case mcpkit.Fatal:
		fmt.Println("abort the run")
	default:
		fmt.Println("show the error to the model")
	}
	// Output: abort the run
}

func ExampleNewProtocolError() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "strict"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "admin", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("checking access: %w", mcpkit.NewProtocolError(-32042, "forbidden"))
		}),
	})
	cs := connect(srv)
	defer cs.Close()
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "admin"})
	fmt.Println(err)
	// Output: calling "tools/call": forbidden
}

func ExampleSDKHandler() {
	// A handler written for the SDK's Server.AddTool ...
	sdkHandler := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "from the SDK"}}}, nil
	}
	// ... becomes an mcpkit Handler in one line.
	h := mcpkit.SDKHandler(sdkHandler)
	res, _ := h.ServeTool(context.Background(), mcpkittest.NewRequest(nil, nil))
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: from the SDK
}

func ExampleServer_UseList() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "listing"}, nil)
	noop := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil })
	srv.Add(
		&mcpkit.Tool{Tool: mcp.Tool{Name: "search", InputSchema: &jsonschema.Schema{Type: "object"}}, Handler: noop},
		&mcpkit.Tool{Tool: mcp.Tool{Name: "debug_dump", InputSchema: &jsonschema.Schema{Type: "object"}}, Handler: noop, Tags: []string{"debug"}},
	)
	// A list middleware that hides tools tagged "debug" from tools/list.
	srv.UseList(func(next mcpkit.Lister) mcpkit.Lister {
		return mcpkit.ListerFunc(func(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
			all, err := next.ServeList(ctx, req)
			var shown []*mcpkit.Tool
			for _, t := range all {
				if !t.HasTag("debug") {
					shown = append(shown, t)
				}
			}
			return shown, err
		})
	})
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.ListTools(context.Background(), nil)
	for _, t := range res.Tools {
		fmt.Println(t.Name)
	}
	// Output: search
}

func ExampleWrap() {
	// A server the application already has, with an SDK tool on it.
	sdkServer := mcp.NewServer(&mcp.Implementation{Name: "existing"}, nil)
	sdkServer.AddTool(&mcp.Tool{Name: "legacy", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})

	srv := mcpkit.Wrap(sdkServer, nil)
	srv.Add(&mcpkit.Tool{
		Tool:    mcp.Tool{Name: "modern", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }),
	})
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.ListTools(context.Background(), nil)
	for _, t := range res.Tools {
		fmt.Println(t.Name)
	}
	// Output:
	// legacy
	// modern
}

func ExampleServer_Add_versions() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "versioned"}, nil)
	answer := func(s string) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		})
	}
	schema := &jsonschema.Schema{Type: "object"}
	srv.Add(
		&mcpkit.Tool{Tool: mcp.Tool{Name: "report", InputSchema: schema}, Handler: answer("v1.9"), Version: "1.9"},
		&mcpkit.Tool{Tool: mcp.Tool{Name: "report", InputSchema: schema}, Handler: answer("v1.10"), Version: "1.10"},
	)
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "report"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: v1.10
}

func ExampleClassify() {
	for _, err := range []error{
		nil,
		mcpkit.ToolErrorf("no city named %q", "Atlantis"),
		mcpkit.NewProtocolError(-32041, "resource busy"),
		errors.New("dial tcp 10.0.0.7:5432: connection refused"),
		&mcpkit.PanicError{Value: "boom"},
	} {
		outcome, class := mcpkit.Classify(nil, err)
		fmt.Printf("%s %q\n", outcome, class)
	}
	// Output:
	// ok ""
	// tool_error "retryable"
	// protocol_error ""
	// error "fatal"
	// panic "fatal"
}

// ExampleForTools gives every tool but one a middleware, and that one
// another: a selection, decided once per tool when its chain is built.
func ExampleForTools() {
	tag := func(name string) mcpkit.Middleware {
		return func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				fmt.Println(name, "runs for", req.Tool.Name)
				return next.ServeTool(ctx, req)
			})
		}
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "selected"}, nil)
	srv.Use(
		mcpkit.ForTools(mcpkit.Not(mcpkit.Named("report")), tag("quick limit")),
		mcpkit.ForTools(mcpkit.Named("report"), tag("long limit")),
	)
	for _, name := range []string{"report", "search"} {
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			}),
		})
	}
	cs := connect(srv)
	defer cs.Close()
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "report"})
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search"})
	// Output:
	// long limit runs for report
	// quick limit runs for search
}
