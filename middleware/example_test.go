package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// connect serves srv over in-memory transports and returns a client
// session to it.
func connect(srv *mcpkit.Server) *mcp.ClientSession {
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	if err != nil {
		log.Fatal(err)
	}
	return cs
}

// show calls a tool and prints what the client gets.
func show(cs *mcp.ClientSession, name string, args any) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if res.IsError {
		fmt.Printf("isError (%s): %s\n", mcpkit.ErrorClassOf(res), strings.Join(texts, " "))
		return
	}
	fmt.Println(strings.Join(texts, " "))
}

// exampleTool returns a tool named name served by h.
func exampleTool(name string, h mcpkit.HandlerFunc) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}}, Handler: h}
}

func text1(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newExampleServer returns a server with mw around every tool.
func newExampleServer(mw []mcpkit.Middleware, tools ...*mcpkit.Tool) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "example"}, nil)
	srv.Use(mw...)
	if err := srv.Add(tools...); err != nil {
		log.Fatal(err)
	}
	return srv
}

// The recommended chain, outermost first.
func Example() {
	logger := slog.New(slog.DiscardHandler) // a real logger in a real server
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.Logging(&middleware.LoggingOptions{Logger: logger}),
		middleware.Recover(&middleware.RecoverOptions{Logger: logger}),
		middleware.MaskErrors(&middleware.MaskErrorsOptions{Logger: logger}),
		middleware.RateLimit(middleware.NewTokenBucket(10, 20, nil), nil),
		middleware.ConcurrencyLimit(64, nil),
		middleware.Timeout(30*time.Second, nil),
		middleware.ArgumentSizeLimit(1 << 20),
		middleware.ResultSizeLimit(1<<20, &middleware.ResultSizeLimitOptions{Truncate: true}),
	},
		exampleTool("greet", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return text1("hello"), nil
		}),
		exampleTool("query", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, errors.New("pq: password authentication failed for user app")
		}),
	)
	cs := connect(srv)
	defer cs.Close()
	show(cs, "greet", nil)
	show(cs, "query", nil)
	// Output:
	// hello
	// isError (fatal): error calling tool "query"
}

func ExampleRecover() {
	// Outer middleware read the panic with errors.As.
	report := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			var p *mcpkit.PanicError
			if errors.As(err, &p) {
				fmt.Println("recovered:", p.Value)
			}
			return res, err
		})
	}
	srv := newExampleServer([]mcpkit.Middleware{report, middleware.Recover(nil)},
		exampleTool("divide", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			var zero int
			return text1(fmt.Sprint(1 / zero)), nil
		}))
	cs := connect(srv)
	defer cs.Close()
	show(cs, "divide", nil)
	// Output:
	// recovered: runtime error: integer divide by zero
	// isError (fatal): internal error in tool "divide"
}

func ExampleTimeout() {
	release := make(chan struct{})
	defer close(release)
	srv := newExampleServer([]mcpkit.Middleware{
		// A minute for every tool, 10ms for "slow".
		mcpkit.ForTools(mcpkit.Not(mcpkit.Named("slow")), middleware.Timeout(time.Minute, nil)),
		mcpkit.ForTools(mcpkit.Named("slow"), middleware.Timeout(10*time.Millisecond, nil)),
	}, exampleTool("slow", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		<-release // ignores ctx: the caller is answered at the deadline anyway
		return text1("too late"), nil
	}))
	cs := connect(srv)
	defer cs.Close()
	show(cs, "slow", nil)
	// Output:
	// isError (retryable): tool "slow" timed out after 10ms
}

func ExampleMaskErrors() {
	srv := newExampleServer([]mcpkit.Middleware{middleware.MaskErrors(nil)},
		exampleTool("lookup", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, errors.New("dial tcp 10.0.0.7:5432: connection refused")
		}),
		exampleTool("create", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.ToolErrorf("file %q already exists", "notes.txt") // meant for the model
		}),
	)
	cs := connect(srv)
	defer cs.Close()
	show(cs, "lookup", nil)
	show(cs, "create", nil)
	// Output:
	// isError (fatal): error calling tool "lookup"
	// isError (retryable): file "notes.txt" already exists
}

func ExampleLogging() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{} // for a stable output
			}
			return a
		},
	}))
	srv := newExampleServer([]mcpkit.Middleware{middleware.Logging(&middleware.LoggingOptions{Logger: logger, LogArguments: true})},
		exampleTool("greet", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return text1("hello"), nil
		}),
		exampleTool("fail", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.ToolErrorf("no such city")
		}),
	)
	cs := connect(srv)
	defer cs.Close()
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]string{"name": "Ann"}})
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fail", Arguments: map[string]string{}})
	// Output:
	// level=INFO msg="tool call" tool=greet outcome=ok arguments="{\"name\":\"Ann\"}"
	// level=WARN msg="tool call" tool=fail outcome=tool_error class=retryable error="no such city" arguments="{}"
}

func ExampleConcurrencyLimit() {
	started, release := make(chan struct{}), make(chan struct{})
	srv := newExampleServer([]mcpkit.Middleware{middleware.ConcurrencyLimit(1, nil)},
		exampleTool("render", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			close(started)
			<-release
			return text1("rendered"), nil
		}),
		exampleTool("status", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return text1("idle"), nil
		}),
	)
	cs := connect(srv)
	defer cs.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		show(cs, "render", nil)
	}()
	<-started
	show(cs, "status", nil) // the one slot is taken
	close(release)
	<-done
	// Output:
	// isError (retryable): tool "status" is busy: the limit of 1 concurrent calls is reached; try again later
	// rendered
}

func ExampleRateLimit() {
	// A Limiter backed by a shared store would go here; this one lets only
	// the "admin" key through.
	adminsOnly := middleware.LimiterFunc(func(ctx context.Context, key string) (bool, time.Duration, error) {
		return key == "admin", 30 * time.Second, nil
	})
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.RateLimit(adminsOnly, &middleware.RateLimitOptions{
			Key: func(req *mcpkit.Request) string {
				if ti := req.TokenInfo(); ti != nil {
					return ti.UserID
				}
				return "anonymous" // no authentication on this transport
			},
		}),
	}, exampleTool("search", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return text1("results"), nil
	}))
	cs := connect(srv)
	defer cs.Close()
	show(cs, "search", nil)
	// Output:
	// isError (retryable): tool "search" is rate limited: try again in 30s
}

func ExampleNewTokenBucket() {
	// One call per minute per key, in bursts of up to two.
	b := middleware.NewTokenBucket(rate.Every(time.Minute), 2, nil)
	for range 3 {
		ok, retryAfter, _ := b.Allow(context.Background(), "ann")
		fmt.Println(ok, retryAfter > 59*time.Second)
	}
	ok, _, _ := b.Allow(context.Background(), "bob")
	fmt.Println(ok)
	// Output:
	// true false
	// true false
	// false true
	// true
}

func ExampleArgumentSizeLimit() {
	srv := newExampleServer([]mcpkit.Middleware{middleware.ArgumentSizeLimit(32)},
		exampleTool("echo", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return text1(string(req.Arguments)), nil
		}))
	cs := connect(srv)
	defer cs.Close()
	show(cs, "echo", map[string]string{"s": "short"})
	show(cs, "echo", map[string]string{"s": strings.Repeat("long ", 10)})
	// Output:
	// {"s":"short"}
	// isError (retryable): tool "echo" arguments are 58 bytes, the limit is 32
}

func ExampleResultSizeLimit() {
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.ResultSizeLimit(118, &middleware.ResultSizeLimitOptions{Truncate: true}),
	}, exampleTool("logs", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return text1(strings.Repeat("line\n", 40)), nil
	}))
	cs := connect(srv)
	defer cs.Close()
	show(cs, "logs", nil)
	// Output:
	// line
	// line
	// line
	// line
	// [truncated: the result was 279 bytes, the limit is 118]
}
