// Command quickstart is a small MCP server built with mcpkit: three tools and
// a middleware that logs every call.
//
// By default it serves streamable HTTP on 127.0.0.1:8080/mcp:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -addr 127.0.0.1:9000
//
// With -stdio it serves one client over standard input and output, as MCP
// hosts such as Claude Desktop launch local servers:
//
//	go run ./examples/quickstart -stdio
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run parses args and serves until ctx is done (HTTP) or the client
// disconnects (stdio). Logs go to stderr; with -stdio, stdout carries the
// protocol.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to serve streamable HTTP on")
	stdio := fs.Bool("stdio", false, "serve one client over stdin/stdout instead of HTTP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv, err := newServer(logger)
	if err != nil {
		return err
	}

	if *stdio {
		t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
		return srv.Run(ctx, t)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler(nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "quickstart: serving MCP on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shutdown)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newServer returns the quickstart's server: its tools, and a middleware
// that logs each call.
func newServer(logger *slog.Logger) (*mcpkit.Server, error) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mcpkit-quickstart", Version: "0.1.0"},
		&mcpkit.ServerOptions{Logger: logger})
	srv.Use(logCalls(logger))
	err := srv.Add(
		&mcpkit.Tool{
			Tool: mcp.Tool{
				Name:        "add",
				Description: "Add two numbers.",
				InputSchema: &jsonschema.Schema{
					Type: "object",
					Properties: map[string]*jsonschema.Schema{
						"a": {Type: "number", Description: "The first addend."},
						"b": {Type: "number", Description: "The second addend."},
					},
					Required: []string{"a", "b"},
				},
				OutputSchema: &jsonschema.Schema{
					Type:       "object",
					Properties: map[string]*jsonschema.Schema{"sum": {Type: "number"}},
					Required:   []string{"sum"},
				},
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
			},
			Handler: mcpkit.HandlerFunc(add),
			Tags:    []string{"math"},
		},
		&mcpkit.Tool{
			Tool: mcp.Tool{
				Name:        "divide",
				Description: "Divide a by b. Dividing by zero is an error the model can correct.",
				InputSchema: &jsonschema.Schema{
					Type: "object",
					Properties: map[string]*jsonschema.Schema{
						"a": {Type: "number", Description: "The dividend."},
						"b": {Type: "number", Description: "The divisor; must not be zero."},
					},
					Required: []string{"a", "b"},
				},
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
			},
			Handler: mcpkit.HandlerFunc(divide),
			Tags:    []string{"math"},
		},
		&mcpkit.Tool{
			Tool: mcp.Tool{
				Name:        "word_count",
				Description: "Count the words and characters of a text.",
				InputSchema: &jsonschema.Schema{
					Type:       "object",
					Properties: map[string]*jsonschema.Schema{"text": {Type: "string"}},
					Required:   []string{"text"},
				},
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
			},
			Handler: mcpkit.HandlerFunc(wordCount),
			Tags:    []string{"text"},
		},
	)
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// logCalls returns a middleware that logs each call's tool, duration and
// outcome. Put it first in the chain, so that it times everything else.
func logCalls(logger *slog.Logger) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			start := time.Now()
			res, err := next.CallTool(ctx, req)
			outcome := "ok"
			if err != nil || res != nil && res.IsError {
				outcome = "error"
			}
			logger.Info("tool call", "tool", req.Tool.Name, "duration", time.Since(start), "outcome", outcome)
			return res, err
		})
	}
}

// operands are the arguments of add and divide.
type operands struct {
	A *float64 `json:"a"`
	B *float64 `json:"b"`
}

func decodeOperands(req *mcpkit.Request) (a, b float64, err error) {
	var in operands
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return 0, 0, mcpkit.ToolErrorf("arguments must be an object with numbers a and b: %v", err)
	}
	if in.A == nil || in.B == nil {
		return 0, 0, mcpkit.ToolErrorf("both a and b are required")
	}
	return *in.A, *in.B, nil
}

func add(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	a, b, err := decodeOperands(req)
	if err != nil {
		return nil, err
	}
	sum := a + b
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(`{"sum":%v}`, sum)}},
		StructuredContent: map[string]any{"sum": sum},
	}, nil
}

var errDivideByZero = errors.New("cannot divide by zero; choose a non-zero b")

func divide(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	a, b, err := decodeOperands(req)
	if err != nil {
		return nil, err
	}
	if b == 0 {
		return nil, mcpkit.RetryableError(errDivideByZero)
	}
	q := a / b
	if math.IsInf(q, 0) {
		return nil, mcpkit.ToolErrorf("%v / %v overflows", a, b)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(q)}}}, nil
}

func wordCount(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(req.Arguments, &in); err != nil || in.Text == nil {
		return nil, mcpkit.ToolErrorf("text (a string) is required")
	}
	words := len(strings.FieldsFunc(*in.Text, unicode.IsSpace))
	chars := len([]rune(*in.Text))
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d words, %d characters", words, chars)}},
		StructuredContent: map[string]int{"words": words, "characters": chars},
	}, nil
}
