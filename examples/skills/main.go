// Command skills is an MCP server built with mcpkit that serves a directory
// of Agent Skills through the Skills extension (SEP-2640): each skill's
// SKILL.md and files as resources, skills/list and skills/get, the
// extension declared. The skills are embedded in the binary from the
// skills directory next to this file.
//
// By default it serves streamable HTTP on 127.0.0.1:8080/mcp, statelessly,
// for clients of every protocol version:
//
//	go run ./examples/skills
//	go run ./examples/skills -addr 127.0.0.1:9000
//
// With -stdio it serves one client over standard input and output:
//
//	go run ./examples/skills -stdio
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/skills"
)

//go:embed skills
var embedded embed.FS

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "skills:", err)
		os.Exit(1)
	}
}

// run parses args and serves until ctx is done (HTTP) or the client
// disconnects (stdio). Logs go to stderr; with -stdio, stdout carries the
// protocol.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("skills", flag.ContinueOnError)
	flags.SetOutput(stderr)
	addr := flags.String("addr", "127.0.0.1:8080", "address to serve streamable HTTP on")
	stdio := flags.Bool("stdio", false, "serve one client over stdin/stdout instead of HTTP")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv, err := newServer(logger)
	if err != nil {
		return err
	}

	if *stdio {
		fmt.Fprintln(stderr, "skills: serving MCP on stdin/stdout")
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
	fmt.Fprintf(stderr, "skills: serving MCP on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
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

// newServer returns the server: the embedded skills, checked at load,
// served behind the recommended chain, which wraps their reads as it wraps
// tool calls.
func newServer(logger *slog.Logger) (*mcpkit.Server, error) {
	dir, err := fs.Sub(embedded, "skills")
	if err != nil {
		return nil, err
	}
	set, err := skills.FromFS(dir, nil)
	if err != nil {
		return nil, err
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mcpkit-skills", Version: "0.1.0"},
		&mcpkit.ServerOptions{Logger: logger})
	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))
	if err := skills.Serve(srv, set, &skills.ServeOptions{TTL: 5 * time.Minute}); err != nil {
		return nil, err
	}
	return srv, nil
}
