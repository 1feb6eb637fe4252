// Command conformance is an MCP server for the official MCP conformance
// suite (@modelcontextprotocol/conformance): every tool the suite's server
// scenarios call is an mcpkit tool behind a production chain from the
// middleware catalog (logging, panic recovery, error masking, a time limit,
// argument validation), tools/list advertises schemas with their $refs
// inlined, the resources, prompts and completions the scenarios read are
// mcpkit's too, and a directory of skills is served through the Skills
// extension by package skills.
//
// It serves streamable HTTP on one endpoint: clients of 2025-11-25 and
// before get sessions, with an event store so that they can resume a
// broken SSE stream, and 2026-07-28 clients are served statelessly, asked
// for input with input_required results whose request states are sealed
// with a key made at start. It prints one line once it listens:
//
//	$ go run ./examples/conformance -addr 127.0.0.1:0
//	listening on http://127.0.0.1:41723/mcp
//
// Flags: -addr sets the address (default 127.0.0.1:3001; port 0 picks a free
// one), -v logs every tool call, masked errors, panics and the SDK's session
// events to stderr, -pause sets the delay between the notifications of the
// logging and progress tools (default 50ms, as the scenarios describe), and
// -timeout limits one tool call (default 30s).
//
// scripts/conformance.sh builds it, runs the suite against it and
// summarizes the results. It stops gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

// run parses args, serves until ctx is done, then shuts down gracefully. The
// listening line goes to stdout; logs (with -v) and usage go to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:3001", "address to serve streamable HTTP on (port 0 picks a free port)")
	verbose := fs.Bool("v", false, "log every tool call, and the SDK's session events, to stderr")
	pause := fs.Duration("pause", 50*time.Millisecond, "delay between the notifications of the logging and progress tools")
	timeout := fs.Duration("timeout", 30*time.Second, "limit on one tool call (0 for none)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h asked for the usage, which Parse printed
		}
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	opts := options{pause: *pause, callTimeout: *timeout}
	if *verbose {
		opts.logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv, err := newServer(opts)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// Older clients get sessions: sampling and elicitation during a call
	// need them before 2026-07-28. The event store lets a client resume an
	// SSE stream the server closed (test_reconnection). 2026-07-28 clients
	// are served statelessly on the same endpoint.
	mux.Handle("/mcp", srv.HTTPHandler(&mcpkit.HTTPOptions{
		Sessions: true,
		SDK:      &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)},
	}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// Shutdown waits for requests to finish, and a session's standalone SSE
	// stream never does: closing the sessions ends those requests.
	hs.RegisterOnShutdown(func() {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	})

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://%s/mcp\n", ln.Addr())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		// The grace period is over and a request is still running (a
		// stream a client keeps open): close what is left.
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
