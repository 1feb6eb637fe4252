package mcpkittest_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

func echoServer(t *testing.T) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "echo"}, nil)
	err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "echo", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Arguments)}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestVariants(t *testing.T) {
	tests := []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
		version string
		http    bool
	}{
		{"stateful", mcpkittest.NewServer, mcpkittest.StatefulVersion, true},
		{"stateless", mcpkittest.NewStatelessServer, mcpkittest.StatelessVersion, true},
		{"inmemory", mcpkittest.NewInMemoryServer, mcpkittest.StatelessVersion, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := echoServer(t)
			ts := tt.connect(t, srv, nil)
			if ts.Server() != srv {
				t.Error("Server() is not the server under test")
			}
			if got := ts.Session.InitializeResult().ProtocolVersion; got != tt.version {
				t.Errorf("negotiated %s, want %s", got, tt.version)
			}
			if (ts.URL != "") != tt.http {
				t.Errorf("URL = %q", ts.URL)
			}
			res, err := ts.CallTool(t.Context(), "echo", map[string]int{"x": 1})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != `{"x":1}` {
				t.Fatalf("CallTool: %+v, %v", res, err)
			}
			cs, err := ts.Connect(t.Context())
			if tt.http {
				if err != nil {
					t.Fatalf("second Connect: %v", err)
				}
				if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo"}); err != nil {
					t.Errorf("call on second session: %v", err)
				}
				cs.Close()
			} else if err == nil {
				t.Error("Connect on an in-memory server succeeded")
			}
			ts.Close()
			ts.Close() // idempotent
			if _, err := ts.CallTool(t.Context(), "echo", nil); err == nil {
				t.Error("call after Close succeeded")
			}
		})
	}
}

func TestProtocolVersionOption(t *testing.T) {
	ts := mcpkittest.NewInMemoryServer(t, echoServer(t), &mcpkittest.Options{ProtocolVersion: "2025-06-18"})
	if got := ts.Session.InitializeResult().ProtocolVersion; got != "2025-06-18" {
		t.Errorf("negotiated %s, want 2025-06-18", got)
	}
}

func TestNewRequest(t *testing.T) {
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "t"}}
	tests := []struct {
		args any
		want string
	}{
		{nil, ""},
		{map[string]int{"a": 1}, `{"a":1}`},
		{json.RawMessage(`{"b":2}`), `{"b":2}`},
		{[]byte(`{"c":3}`), `{"c":3}`},
	}
	for _, tt := range tests {
		req := mcpkittest.NewRequest(tool, tt.args)
		if string(req.Arguments) != tt.want || string(req.Call.Params.Arguments) != tt.want {
			t.Errorf("NewRequest(%v): arguments %s / %s, want %s", tt.args, req.Arguments, req.Call.Params.Arguments, tt.want)
		}
		if req.Tool != tool || req.Call.Params.Name != "t" || req.Session() != nil || req.Header() != nil {
			t.Errorf("NewRequest(%v) = %+v", tt.args, req)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("NewRequest with an unmarshalable value did not panic")
		}
	}()
	mcpkittest.NewRequest(tool, map[string]any{"f": func() {}})
}

func TestConnectInMemory(t *testing.T) {
	srv := echoServer(t)
	cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != mcpkittest.StatefulVersion {
		t.Errorf("negotiated %s", v)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Fatal(err)
	}
	sessions := slices.Collect(srv.Sessions())
	if len(sessions) != 1 {
		t.Fatalf("%d server sessions, want 1", len(sessions))
	}
	cs.Close()
	// Closing the client ends the server's session (a hang here is the
	// failure: the test's deadline reports it).
	sessions[0].Wait()
}

// TestCloseEndsSessions checks that Close leaves no server session of the
// harness running, also one that [Server.Connect] opened and the test
// forgot, and that it ends no session of another harness on the same
// server.
func TestCloseEndsSessions(t *testing.T) {
	tests := []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"stateful", mcpkittest.NewServer},
		{"stateless", mcpkittest.NewStatelessServer},
		{"inmemory", mcpkittest.NewInMemoryServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := echoServer(t)
			other := mcpkittest.NewServer(t, srv, nil)
			before := len(slices.Collect(srv.Sessions()))

			ts := tt.connect(t, srv, nil)
			if _, err := ts.CallTool(t.Context(), "echo", nil); err != nil {
				t.Fatal(err)
			}
			if ts.URL != "" {
				if _, err := ts.Connect(t.Context()); err != nil { // left open on purpose
					t.Fatal(err)
				}
			}
			ts.Close()
			if n := len(slices.Collect(srv.Sessions())); n != before {
				t.Errorf("%d server sessions after Close, want %d", n, before)
			}
			if _, err := other.CallTool(t.Context(), "echo", nil); err != nil {
				t.Errorf("Close ended another harness's session: %v", err)
			}
		})
	}
}

// TestEras: each era's client negotiates its version, whatever the options
// say, and the options given are not changed.
func TestEras(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "eras"}, nil)
	opts := &mcpkittest.Options{ProtocolVersion: "2024-11-05"}
	var names []string
	for _, era := range mcpkittest.Eras() {
		names = append(names, era.Name)
		ts := era.Connect(t, srv, opts)
		if got := ts.Session.InitializeResult().ProtocolVersion; got != era.Name {
			t.Errorf("era %s negotiated %s", era.Name, got)
		}
		if nilOpts := era.Connect(t, srv, nil); nilOpts.Session.InitializeResult().ProtocolVersion != era.Name {
			t.Errorf("era %s with nil options", era.Name)
		}
	}
	if opts.ProtocolVersion != "2024-11-05" {
		t.Errorf("the options were changed: %+v", opts)
	}
	if strings.Join(names, ",") != mcpkittest.StatefulVersion+","+mcpkittest.StatelessVersion {
		t.Errorf("eras %v", names)
	}
}
