package mcpkit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// askingServer has a tool "ask" that elicits an answer from the client
// through its session, as handlers written for 2025-11-25 do, and a tool
// "who" that says whether the call had a session ID.
func askingServer(t *testing.T) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "eras"}, nil)
	err := srv.Add(tool("ask", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		res, err := req.Session().Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})
		if err != nil {
			return nil, mcpkit.ToolErrorf("elicit: %v", err)
		}
		return textResult(res.Action), nil
	}), tool("who", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("session=" + req.Session().ID()), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func elicitingClient() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
	}}
}

// TestHTTPBothEras serves one endpoint with sessions for older clients:
// a 2025-11-25 client gets a session (and elicitation within a call), a
// 2026-07-28 client is served statelessly on the same endpoint.
func TestHTTPBothEras(t *testing.T) {
	srv := askingServer(t)
	hs := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
	defer hs.Close()

	for _, era := range []struct {
		version      string
		wantSession  bool
		wantElicited string
	}{
		{"2025-11-25", true, "accept"},
		{"2026-07-28", false, ""},
	} {
		t.Run(era.version, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "c"}, elicitingClient())
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "who"})
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyText(res); (got != "session=") != era.wantSession {
				t.Errorf("%s client: %s, want a session: %v", era.version, got, era.wantSession)
			}
			if !era.wantSession {
				return
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask"})
			if err != nil || onlyText(res) != era.wantElicited {
				t.Errorf("elicitation within a session = %v, %v", res, err)
			}
		})
	}
}

// TestHTTPStatelessByDefault checks that the default handler gives no
// client a session, whatever its version.
func TestHTTPStatelessByDefault(t *testing.T) {
	srv := askingServer(t)
	hs := httptest.NewServer(srv.HTTPHandler(nil))
	defer hs.Close()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		client := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "who"})
		if err != nil || onlyText(res) != "session=" {
			t.Errorf("%s client: %v, %v; want no session", version, res, err)
		}
		cs.Close()
	}
}

func TestHTTPDispatchLimits(t *testing.T) {
	srv := askingServer(t)
	h := srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true, SDK: &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: 1 << 10}})
	post := func(body string, header http.Header) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			r.Header[k] = v
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`
	if w := post(big, nil); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: HTTP %d, want 413", w.Code)
	}
	// A batch holding initialize opens a session, as a single one does.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, body := range []string{init, "[" + init + "]"} {
		w := post(body, nil)
		if w.Header().Get("Mcp-Session-Id") == "" && w.Code == http.StatusOK {
			t.Errorf("initialize %.20s...: HTTP %d without a session ID", body, w.Code)
		}
	}
	// GET and DELETE name a session; without one the SDK refuses them.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		r := httptest.NewRequest(method, "/", nil)
		r.Header.Set("Accept", "text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code < 400 {
			t.Errorf("%s without a session: HTTP %d, want an error", method, w.Code)
		}
	}
}

// TestClosedStreamCancelsTheCall checks, on each era, that a client giving
// up on a call reaches the handler's context: on 2026-07-28 by closing the
// response stream, on 2025-11-25 by notifications/cancelled within the
// session.
func TestClosedStreamCancelsTheCall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"2026-07-28 stateless", mcpkittest.NewStatelessServer},
		{"2025-11-25 session", mcpkittest.NewServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started, cancelled, release := make(chan struct{}), make(chan error, 1), make(chan struct{})
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "cancel"}, nil)
			srv.Add(tool("slow", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				close(started)
				select {
				case <-ctx.Done():
				case <-release: // the test failed: let the server close
				}
				cancelled <- ctx.Err()
				return nil, ctx.Err()
			}))
			ts := tc.connect(t, srv, nil)
			t.Cleanup(func() { close(release) })
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := ts.CallTool(ctx, "slow", nil)
				done <- err
			}()
			<-started
			cancel()
			select {
			case err := <-cancelled:
				if err != context.Canceled {
					t.Errorf("handler's context ended with %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the handler's context was not cancelled")
			}
			<-done
		})
	}
}
