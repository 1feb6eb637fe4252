package mcpkit

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHolding measures what holding adds to every POST, in one run: a
// 2026-07-28 tools/call served by the stateless handler as
// Server.HTTPHandler composes it, without (base) and with (with) the
// layer; and a call it answers with a challenge (refused: no token here,
// so a 401).
func BenchmarkHolding(b *testing.B) {
	srv := NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	srv.Use(ForTools(Named("admin"), RequireScopes("admin")))
	for _, name := range []string{"open", "admin"} {
		srv.Add(&Tool{Tool: mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			Handler: HandlerFunc(func(context.Context, *Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})})
	}
	opts := &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}
	base := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.sdk }, opts)
	with := srv.holding(base, "https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
	call := func(name string) (http.Header, []byte) {
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name +
			`","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
		h.Set("Mcp-Protocol-Version", "2026-07-28")
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", name)
		return h, body
	}
	serve := func(h http.Handler, header http.Header, body []byte) int {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header = header
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	oh, ob := call("open")
	ah, ab := call("admin")
	for _, tc := range []struct {
		name   string
		h      http.Handler
		header http.Header
		body   []byte
		want   int
	}{
		{"base", base, oh, ob, http.StatusOK},
		{"with", with, oh, ob, http.StatusOK},
		{"refused", with, ah, ab, http.StatusUnauthorized}, // no token: the 401 form of the challenge
	} {
		b.Run(tc.name, func(b *testing.B) {
			if code := serve(tc.h, tc.header, tc.body); code != tc.want {
				b.Fatalf("HTTP %d, want %d", code, tc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				serve(tc.h, tc.header, tc.body)
			}
		})
	}
}
