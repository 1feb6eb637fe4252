// Command iobound runs the shape of the published I/O-bound MCP server
// benchmark on one machine: three tools that read and write Redis and call
// an HTTP API, 50 virtual users that each open a session per call, and the
// servers limited to 2 CPUs and 2 GiB, for mcpkit (its recommended chain),
// the go-sdk alone and mark3labs/mcp-go, serving the same tools on the
// same Redis and API.
//
// It has two commands. serve runs one server (mcpkit, go-sdk or mcp-go) on
// a loopback port until its standard input closes:
//
//	iobound serve -server mcpkit -redis 127.0.0.1:6379 -api http://127.0.0.1:8100
//
// run starts a redis-server and the HTTP API, then, round after round, each
// server in turn as a child process of this binary, seeds Redis afresh, puts
// the load on it for a warm-up and then a measured time, and reports
// requests per second, the p50 and p99 latency of tools/call, the server's
// CPU time per call (from /proc) and its peak resident memory:
//
//	iobound run -rounds 3 -duration 20s
//
// scripts/iobound-bench.sh builds and runs it; docs/performance.md has the
// method and the numbers. It needs Linux (/proc) and redis-server.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "iobound:", err)
		os.Exit(1)
	}
}

const usage = "usage: iobound serve -server IMPL -redis ADDR -api URL | iobound run [flags] (-h for flags)"

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdin, stdout, stderr)
	case "run":
		return run(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown command %q; %s", clip(args[0]), usage)
}

// listeningPrefix starts the line serve prints once it accepts
// connections; the URL follows.
const listeningPrefix = "iobound: listening on "

// serve serves one implementation on a loopback port of its choosing,
// prints the base URL, and serves until stdin reaches its end (so that a
// server never outlives the runner that started it) or ctx is done.
func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	impl := fs.String("server", "mcpkit", "the implementation: "+strings.Join(impls, ", "))
	redisAddr := fs.String("redis", "127.0.0.1:6379", "the Redis server's address")
	apiURL := fs.String("api", "", "the HTTP API's base URL")
	addr := fs.String("addr", "127.0.0.1:0", "the address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *apiURL == "" {
		return errors.New("serve: -api is required")
	}
	b := newBackend(*redisAddr, strings.TrimSuffix(*apiURL, "/"))
	defer b.close()
	h, err := newHandler(*impl, b)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "%shttp://%s\n", listeningPrefix, ln.Addr())

	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(done)
	}()
	select {
	case err := <-errc:
		return err
	case <-done:
	case <-ctx.Done():
	}
	return hs.Close()
}

// readListening reads serve's output up to the line naming its URL.
func readListening(r *bufio.Reader) (string, error) {
	for {
		line, err := r.ReadString('\n')
		if url, ok := strings.CutPrefix(strings.TrimSpace(line), listeningPrefix); ok {
			return url, nil
		}
		if err != nil {
			return "", fmt.Errorf("the server exited before listening: %w", err)
		}
	}
}
