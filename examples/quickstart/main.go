// Command quickstart is a small MCP server built with mcpkit: three typed
// tools behind the recommended middleware chain (one log record per call,
// panic recovery, masked internal errors, a time limit), with every call's
// arguments validated against the tool's schema.
//
// By default it serves streamable HTTP on 127.0.0.1:8080/mcp, statelessly,
// so that clients of every protocol version (2025-11-25 and 2026-07-28) can
// connect and any number of replicas could answer:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -addr 127.0.0.1:9000
//
// With -stdio it serves one client over standard input and output, as MCP
// hosts such as Claude Desktop launch local servers:
//
//	go run ./examples/quickstart -stdio
//
// scripts/conformance.sh runs the official MCP conformance suite's
// 2026-07-28 requirements against it as it is here: what does not need the
// suite's own fixture tools, prompts and resources passes.
package main

import (
	"context"
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
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h asked for the usage, which Parse printed
		}
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv, err := newServer(logger)
	if err != nil {
		return err
	}

	if *stdio {
		fmt.Fprintln(stderr, "quickstart: serving MCP on stdin/stdout")
		t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
		return srv.Run(ctx, t)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// Stateless (any replica can answer any request) for clients of every
	// protocol version; a client that closes its stream cancels its call.
	mux.Handle("/mcp", srv.HTTPHandler(nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "quickstart: serving MCP on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		// Let calls in flight finish for a moment, then close what is
		// left (a client's open event stream, say): either way the
		// server has stopped as asked.
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := hs.Shutdown(shutdown); errors.Is(err, context.DeadlineExceeded) {
			return hs.Close()
		} else if err != nil {
			return err
		}
		return nil
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newServer returns the quickstart's server: its tools behind the
// recommended chain. The server validates every call's arguments against
// the tool's schema (strictly, by default) before the tool runs.
func newServer(logger *slog.Logger) (*mcpkit.Server, error) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mcpkit-quickstart", Version: "0.1.0"},
		&mcpkit.ServerOptions{Logger: logger})
	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))

	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	add, err := tools.New("add", add, &tools.Options{
		Description: "Add two numbers.",
		Annotations: readOnly,
		Tags:        []string{"math"},
	})
	if err != nil {
		return nil, err
	}
	divide, err := tools.New("divide", divide, &tools.Options{
		Description: "Divide a by b. Dividing by zero is an error the model can correct.",
		Annotations: readOnly,
		Tags:        []string{"math"},
	})
	if err != nil {
		return nil, err
	}
	count, err := tools.New("word_count", wordCount, &tools.Options{
		Description: "Count the words and characters of a text.",
		Annotations: readOnly,
		Tags:        []string{"text"},
	})
	if err != nil {
		return nil, err
	}
	if err := srv.Add(add, divide, count); err != nil {
		return nil, err
	}
	return srv, nil
}

// Operands are the arguments of add and divide.
type Operands struct {
	A float64 `json:"a" description:"The first operand."`
	B float64 `json:"b" description:"The second operand."`
}

// Sum is the result of add.
type Sum struct {
	Sum float64 `json:"sum"`
}

func add(ctx context.Context, in Operands) (Sum, error) {
	return Sum{Sum: in.A + in.B}, nil
}

var errDivideByZero = errors.New("cannot divide by zero; choose a non-zero b")

func divide(ctx context.Context, in Operands) (float64, error) {
	if in.B == 0 {
		return 0, mcpkit.NewToolError(errDivideByZero, mcpkit.Retryable)
	}
	q := in.A / in.B
	if math.IsInf(q, 0) {
		return 0, mcpkit.ToolErrorf("%v / %v overflows", in.A, in.B)
	}
	return q, nil
}

// Text is the argument of word_count.
type Text struct {
	Text string `json:"text" description:"The text to count."`
}

// Counts is the result of word_count.
type Counts struct {
	Words      int `json:"words"`
	Characters int `json:"characters"`
}

func wordCount(ctx context.Context, in Text) (Counts, error) {
	return Counts{
		Words:      len(strings.FieldsFunc(in.Text, unicode.IsSpace)),
		Characters: utf8.RuneCountInString(in.Text),
	}, nil
}
