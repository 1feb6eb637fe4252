package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content blocks: %+v", len(res.Content), res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestTools(t *testing.T) {
	var logs strings.Builder
	srv, err := newServer(slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewServer(t, srv, nil)
	ctx := t.Context()

	res, err := ts.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3.5})
	if err != nil || res.IsError || text(t, res) != `{"sum":5.5}` {
		t.Fatalf("add: %+v, %v", res, err)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["sum"] != 5.5 {
		t.Errorf("add structured content = %v", res.StructuredContent)
	}

	res, err = ts.CallTool(ctx, "divide", map[string]any{"a": 1, "b": 4})
	// A 2025-11-25 client gets the number as {"result": 0.25}.
	if sc, _ := res.StructuredContent.(map[string]any); err != nil || res.IsError || text(t, res) != "0.25" || sc["result"] != 0.25 {
		t.Fatalf("divide: %+v, %v", res, err)
	}

	res, err = ts.CallTool(ctx, "divide", map[string]any{"a": 1, "b": 0})
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(text(t, res), "divide by zero") {
		t.Fatalf("divide by zero: %+v, %v", res, err)
	}

	res, err = ts.CallTool(ctx, "add", map[string]any{"a": "one", "b": 2})
	if err != nil || !res.IsError || text(t, res) != `invalid arguments: a: want number, got string` {
		t.Fatalf("add with a string: %+v, %v", res, err)
	}

	res, err = ts.CallTool(ctx, "word_count", map[string]any{"text": "héllo  wide world"})
	if err != nil || text(t, res) != `{"words":3,"characters":17}` {
		t.Fatalf("word_count: %+v, %v", res, err)
	}

	if got := strings.Count(logs.String(), "tool call"); got != 5 {
		t.Errorf("logged %d calls, want 5:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "tool=divide") || !strings.Contains(logs.String(), "outcome=tool_error") {
		t.Errorf("log lacks the failed divide:\n%s", logs.String())
	}
}

// TestRunHTTP runs the program as the README does, on a free port.
func TestRunHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output from run")
	}
	url, ok := strings.CutPrefix(lines.Text(), "quickstart: serving MCP on ")
	if !ok {
		t.Fatalf("unexpected first line %q", lines.Text())
	}
	go io.Copy(io.Discard, pr)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Stateless: no session for an abandoned client to leave behind, and
	// any replica could answer.
	if id := cs.ID(); id != "" {
		t.Errorf("the server gave the client session %q; want a stateless server", id)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil || text(t, res) != `{"sum":3}` {
		t.Fatalf("add over HTTP: %+v, %v", res, err)
	}
	// Stop the server while the client is still connected, as Ctrl-C
	// would: it must stop, and cleanly.
	defer cs.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

// TestRunStdio speaks MCP to the program over pipes standing in for stdin
// and stdout.
func TestRunStdio(t *testing.T) {
	ctx := t.Context()
	clientToServer, serverIn := io.Pipe()
	serverOut, serverToClient := io.Pipe()
	done := make(chan error, 1)
	var stderr syncBuilder
	go func() {
		done <- run(ctx, []string{"-stdio"}, clientToServer, serverToClient, &stderr)
		serverToClient.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: serverOut, Writer: serverIn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "word_count", Arguments: map[string]any{"text": "a b"}})
	if err != nil || text(t, res) != `{"words":2,"characters":3}` {
		t.Fatalf("word_count over stdio: %+v, %v", res, err)
	}
	cs.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the client closed")
	}
	// stdout carries the protocol; stderr tells the person who started it.
	if got := stderr.String(); !strings.HasPrefix(got, "quickstart: serving MCP on stdin/stdout\n") {
		t.Errorf("stderr = %q", got)
	}
}

// syncBuilder is a strings.Builder safe for concurrent writes and reads.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestBadFlag(t *testing.T) {
	var stderr strings.Builder
	if err := run(t.Context(), []string{"-nope"}, nil, io.Discard, &stderr); err == nil {
		t.Fatal("run accepted an unknown flag")
	}
	if !strings.Contains(stderr.String(), "-addr") {
		t.Errorf("usage not printed: %s", stderr.String())
	}
}

// TestRejectsBadArguments checks that what a newcomer copies is safe: the
// server validates arguments before any tool runs.
func TestRejectsBadArguments(t *testing.T) {
	srv, err := newServer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	for _, tt := range []struct {
		name string
		args any
		want string
	}{
		{"missing", map[string]any{"a": 1}, "invalid arguments: b: required property is missing"},
		{"null", nil, "invalid arguments: "},
		{"extra", map[string]any{"a": 1, "b": 2, "c": 3}, "invalid arguments: c: "},
		{"word for a number", map[string]any{"a": "two", "b": 2}, "invalid arguments: a: want number, got string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ts.CallTool(t.Context(), "add", tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); !res.IsError || !strings.HasPrefix(got, tt.want) || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
				t.Errorf("got isError=%v %q (class %q), want a retryable error starting %q", res.IsError, got, mcpkit.ErrorClassOf(res), tt.want)
			}
		})
	}
}

func TestHelpExitsCleanly(t *testing.T) {
	var stderr strings.Builder
	if err := run(t.Context(), []string{"-h"}, nil, io.Discard, &stderr); err != nil {
		t.Fatalf("run -h = %v, want nil", err)
	}
	if !strings.Contains(stderr.String(), "-stdio") {
		t.Errorf("usage not printed: %s", stderr.String())
	}
}
