package mcpkittest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// seen is what the tool "whoami" reports of the request that called it.
type seen struct {
	User          string         `json:"user"`
	Version       string         `json:"version"`
	Client        string         `json:"client"`
	Extensions    map[string]any `json:"extensions"`
	ProgressToken any            `json:"progressToken"`
	Header        string         `json:"header"`
}

// whoamiServer serves "whoami", which reports what it saw as structured
// content.
func whoamiServer(t *testing.T) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "whoami"}, nil)
	err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			var s seen
			if info := req.TokenInfo(); info != nil {
				s.User = info.UserID
			}
			s.Version = req.ProtocolVersion()
			if ci := req.ClientInfo(); ci != nil {
				s.Client = ci.Name
			}
			if caps := req.ClientCapabilities(); caps != nil {
				s.Extensions = caps.Extensions
			}
			s.ProgressToken = req.Meta()["progressToken"]
			s.Header = req.Header().Get("X-Test")
			return &mcp.CallToolResult{StructuredContent: s, Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// callWhoami calls whoami with c and returns what it saw.
func callWhoami(t *testing.T, c *mcpkittest.RawClient, params map[string]any) seen {
	t.Helper()
	res, err := c.Call(t.Context(), "tools/call", params)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		StructuredContent seen `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("%s: %v", res, err)
	}
	return r.StructuredContent
}

// TestRawClient runs the same calls against the SDK's two kinds of
// answer: a JSON body and an event stream.
func TestRawClient(t *testing.T) {
	for _, tt := range []struct {
		name        string
		json        bool
		contentType string
	}{
		{"json", true, "application/json"},
		{"sse", false, "text/event-stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := whoamiServer(t).HTTPHandler(&mcpkit.HTTPOptions{SDK: &mcp.StreamableHTTPOptions{JSONResponse: tt.json}})
			contentTypes := make(chan string, 16)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				contentTypes <- w.Header().Get("Content-Type")
			}))
			defer hs.Close()
			c := &mcpkittest.RawClient{Endpoint: hs.URL}

			t.Run("tools/list", func(t *testing.T) {
				res, err := c.Call(t.Context(), "tools/list", nil)
				var list mcp.ListToolsResult
				if err != nil || json.Unmarshal(res, &list) != nil || len(list.Tools) != 1 || list.Tools[0].Name != "whoami" {
					t.Fatalf("tools/list = %s, %v", res, err)
				}
				if ct := <-contentTypes; ct != tt.contentType {
					t.Errorf("the server answered with %q, want %q", ct, tt.contentType)
				}
			})

			t.Run("tools/call", func(t *testing.T) {
				c := *c
				c.Capabilities = map[string]any{"extensions": map[string]any{"example.com/ext": map[string]any{}}}
				c.Header = http.Header{"X-Test": {"yes"}}
				got := callWhoami(t, &c, map[string]any{"name": "whoami", "arguments": map[string]any{}})
				want := seen{
					Version:    mcpkittest.StatelessVersion,
					Client:     "mcpkittest",
					Extensions: map[string]any{"example.com/ext": map[string]any{}},
					Header:     "yes",
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("the tool saw %+v, want %+v", got, want)
				}
				if ct := <-contentTypes; ct != tt.contentType {
					t.Errorf("the server answered with %q, want %q", ct, tt.contentType)
				}
			})

			t.Run("error", func(t *testing.T) {
				for _, tc := range []struct {
					name   string
					method string
					params map[string]any
					header http.Header
					code   int64
				}{
					{"unknown tool", "tools/call", map[string]any{"name": "nope"}, nil, jsonrpc.CodeInvalidParams},
					{"unknown method", "tasks/get", map[string]any{"taskId": "x"}, nil, jsonrpc.CodeMethodNotFound},
					// Answered with HTTP 400 before the request is served.
					{"Mcp-Name mismatch", "tools/call", map[string]any{"name": "whoami"}, http.Header{"Mcp-Name": {"other"}}, mcp.CodeHeaderMismatch},
					{"no Mcp-Method", "tools/list", nil, http.Header{"Mcp-Method": nil}, mcp.CodeHeaderMismatch},
				} {
					t.Run(tc.name, func(t *testing.T) {
						c := *c
						c.Header = tc.header
						res, err := c.Call(t.Context(), tc.method, tc.params)
						var jerr *jsonrpc.Error
						if !errors.As(err, &jerr) || jerr.Code != tc.code {
							t.Errorf("Call = %s, %v; want a JSON-RPC error %d", res, err, tc.code)
						}
						<-contentTypes
					})
				}
			})
		})
	}
}

func TestRawClientToken(t *testing.T) {
	ts := mcpkittest.NewStatelessServer(t, whoamiServer(t), &mcpkittest.Options{
		Tokens: map[string]*auth.TokenInfo{"ada-token": {UserID: "ada", Expiration: time.Now().Add(time.Hour)}},
		Token:  "ada-token",
	})
	call := map[string]any{"name": "whoami", "arguments": map[string]any{}}
	if got := callWhoami(t, &mcpkittest.RawClient{Endpoint: ts.URL, Token: "ada-token"}, call); got.User != "ada" {
		t.Errorf("with a token, the tool saw user %q", got.User)
	}
	for _, token := range []string{"", "wrong"} {
		res, err := (&mcpkittest.RawClient{Endpoint: ts.URL, Token: token}).Call(t.Context(), "tools/call", call)
		var jerr *jsonrpc.Error
		if err == nil || errors.As(err, &jerr) || !strings.HasPrefix(err.Error(), "mcpkittest: tools/call: HTTP 401 Unauthorized: ") {
			t.Errorf("with token %q: %s, %v; want HTTP 401", token, res, err)
		}
	}
}

// TestRawClientParams: the caller's params, and a _meta map in them, are
// not changed, and the keys of that _meta are sent as they are.
func TestRawClientParams(t *testing.T) {
	ts := mcpkittest.NewStatelessServer(t, whoamiServer(t), nil)
	c := &mcpkittest.RawClient{Endpoint: ts.URL, Capabilities: map[string]any{}}
	params := map[string]any{
		"name":      "whoami",
		"arguments": map[string]any{},
		"_meta":     map[string]any{"progressToken": "p1", mcp.MetaKeyClientInfo: map[string]any{"name": "mine", "version": "2"}},
	}
	want := map[string]any{
		"name":      "whoami",
		"arguments": map[string]any{},
		"_meta":     map[string]any{"progressToken": "p1", mcp.MetaKeyClientInfo: map[string]any{"name": "mine", "version": "2"}},
	}
	got := callWhoami(t, c, params)
	if got.ProgressToken != "p1" || got.Client != "mine" || got.Version != mcpkittest.StatelessVersion {
		t.Errorf("the tool saw %+v", got)
	}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("params became %v", params)
	}
	if len(c.Capabilities) != 0 {
		t.Errorf("Capabilities became %v", c.Capabilities)
	}
}

// TestRawClientEvents reads responses from event streams that hold more
// than the response, and fails on those that do not hold it.
func TestRawClientEvents(t *testing.T) {
	for _, tt := range []struct {
		name, status, body, want string
	}{
		{"after others", "200 OK",
			"id: 0\ndata:\n\n" + // a priming event
				": a comment\r\n" +
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
				"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"other\":true}}\n\n" +
				"data: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"result\":{\"ok\":true}}\n\n",
			`{"ok":true}`},
		{"no response", "200 OK", "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n",
			`mcpkittest: ping: HTTP 200 OK: no response to the request: "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"`},
		{"unterminated", "200 OK", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
			`mcpkittest: ping: HTTP 200 OK: no response to the request: "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"`},
		{"error status", "500 Internal Server Error", "data: oops\n\n",
			`mcpkittest: ping: HTTP 500 Internal Server Error: "data: oops"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				var code int
				fmt.Sscan(tt.status, &code)
				w.WriteHeader(code)
				io.WriteString(w, tt.body)
			}))
			defer hs.Close()
			res, err := (&mcpkittest.RawClient{Endpoint: hs.URL}).Call(t.Context(), "ping", nil)
			got := string(res)
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Call = %s\nwant %s", got, tt.want)
			}
		})
	}
}

// FuzzRawClientBody feeds Call arbitrary bodies of both content types: it
// returns a result or an error, and does not panic.
func FuzzRawClientBody(f *testing.F) {
	f.Add("application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`)
	f.Add("application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	f.Add("text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	f.Add("text/event-stream", "data:\r\ndata\n\n:\n\n")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			io.WriteString(w, body)
		}))
		defer hs.Close()
		res, err := (&mcpkittest.RawClient{Endpoint: hs.URL}).Call(context.Background(), "ping", nil)
		if (res == nil) == (err == nil) {
			t.Errorf("Call = %s, %v", res, err)
		}
	})
}
