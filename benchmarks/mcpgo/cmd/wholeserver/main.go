// Command wholeserver measures what a whole MCP server process spends on
// one tools/call over HTTP, as a real client sees it: the server runs in a
// process of its own on loopback, a go-sdk client calls a tool many times,
// and the server's CPU time (user and system, all threads) and heap
// allocations over those calls, read from the server before and after,
// are divided by the number of calls.
//
// BenchmarkFloor and BenchmarkFloorMCPGo measure the handler alone, with a
// recorded request replayed in process; this adds what they leave out and
// what every deployed server pays: the HTTP server's connection handling,
// the kernel's loopback sockets, and the garbage collection of a process
// that also does all that. After the calls, the server replays the last
// one into its handler, in process, the way BenchmarkFloor does, so that
// each sample also holds the floor of the same build, mode and tool.
//
// It has two commands. serve runs one server implementation (mcpkit,
// mcp-go, mcp-go+validation) until its standard input closes:
//
//	wholeserver serve -server mcpkit
//
// run starts each server binary it is given, in turn, for several rounds,
// and measures each mode and tool against it:
//
//	wholeserver run -rounds 5 -calls 2000 \
//		-server mcpkit-stock=mcpkit@/tmp/stock \
//		-server mcpkit-patched=mcpkit@/tmp/patched \
//		-server mcp-go+validation=mcp-go+validation@/tmp/stock \
//		-ratio mcpkit-stock/mcpkit-patched
//
// scripts/whole-server-bench.sh builds the binaries (stock go-sdk, and the
// go-sdk with sdkpatches/*.patch) and runs it; docs/performance.md has the
// numbers.
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
		return // -h asked for the usage, which was printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wholeserver:", err)
		os.Exit(1)
	}
}

const usage = "usage: wholeserver serve -server IMPL | wholeserver run -server LABEL=IMPL@BINARY ... (-h for flags)"

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
const listeningPrefix = "wholeserver: listening on "

// serve serves one implementation on a loopback port of its choosing,
// prints the base URL on stdout, and serves until stdin reaches its end (so
// that a server never outlives the runner that started it) or ctx is done.
func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	impl := fs.String("server", "mcpkit", "the implementation to serve: mcpkit, mcp-go or mcp-go+validation")
	addr := fs.String("addr", "127.0.0.1:0", "the address to listen on")
	if err := fs.parse(args); err != nil {
		return err
	}
	h, err := newHandler(*impl)
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
