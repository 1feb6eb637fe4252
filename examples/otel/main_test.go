package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRun runs the program as its doc says, calls its tool with a trace
// context, stops it, and reads the spans and metrics it wrote to stdout.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout lockedBuffer
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-interval", "1h"}, &stdout, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output from run")
	}
	url, ok := strings.CutPrefix(lines.Text(), "otel: serving MCP on ")
	if !ok {
		t.Fatalf("unexpected first line %q", lines.Text())
	}
	go io.Copy(io.Discard, pr)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	params := &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "Oslo"},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}}
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("weather: %+v, %v", res, err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "Atlantis"}}); err != nil || !res.IsError {
		t.Fatalf("weather in Atlantis: %+v, %v", res, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return")
	}
	out := stdout.String()
	for _, want := range []string{`"Name":"tools/call weather"`, traceID, `"mcp.server.operation.duration"`, `"Value":"tool_error"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %s:\n%.2000s", want, out)
		}
	}
}

func TestHelpExitsCleanly(t *testing.T) {
	var stderr strings.Builder
	if err := run(t.Context(), []string{"-h"}, io.Discard, &stderr); err != nil {
		t.Fatalf("run -h = %v, want nil (exit 0)", err)
	}
	if !strings.Contains(stderr.String(), "-addr") {
		t.Errorf("usage not printed: %s", stderr.String())
	}
}
