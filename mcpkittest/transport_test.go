package mcpkittest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// whoServer has a tool that reports what its request carries: a header and
// the token's subject and scopes.
func whoServer(t *testing.T) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "who"}, nil)
	err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "who", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			text := fmt.Sprintf("tenant=%q", req.Header().Get("X-Tenant"))
			if req.Header() == nil {
				text = "no headers"
			}
			if info := req.TokenInfo(); info != nil {
				text += fmt.Sprintf(" user=%s scopes=%s", info.UserID, strings.Join(info.Scopes, ","))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

func TestHeadersAndTokens(t *testing.T) {
	opts := &mcpkittest.Options{
		Header: http.Header{"X-Tenant": {"acme"}},
		Tokens: map[string]*auth.TokenInfo{"tok-ada": {UserID: "ada", Scopes: []string{"read", "write"}}},
		Token:  "tok-ada",
	}
	want := map[string]string{
		"inmemory":  "no headers", // no HTTP: no headers, no token
		"stateful":  `tenant="acme" user=ada scopes=read,write`,
		"stateless": `tenant="acme" user=ada scopes=read,write`,
	}
	mcpkittest.ForEachTransport(t, whoServer, func(t *testing.T, ts *mcpkittest.Server) {
		res, err := ts.CallTool(t.Context(), "who", nil)
		if err != nil {
			t.Fatal(err)
		}
		name := t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]
		if got := text(res); got != want[name] {
			t.Errorf("handler saw %s, want %s", got, want[name])
		}
		if ts.URL == "" {
			return
		}
		// Without the token, the SDK's bearer check refuses the request.
		resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("no token: HTTP %d, want 401", resp.StatusCode)
		}
	}, opts)
}

func TestNewRequestOptions(t *testing.T) {
	req := mcpkittest.NewRequest(nil, map[string]int{"a": 1},
		mcpkittest.WithHeader(http.Header{"X-Tenant": {"acme"}}),
		mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"}),
		mcpkittest.WithMeta(mcp.Meta{"progressToken": "p1"}))
	if req.Tool == nil || req.Tool.Name != "test" {
		t.Errorf("Tool = %+v, want the placeholder", req.Tool)
	}
	if string(req.Arguments) != `{"a":1}` || req.Header().Get("X-Tenant") != "acme" || req.TokenInfo().UserID != "ada" || req.Meta()["progressToken"] != "p1" {
		t.Errorf("request = %+v %+v", req, req.Call.Extra)
	}
	if bare := mcpkittest.NewRequest(nil, nil); bare.Header() != nil || bare.TokenInfo() != nil || bare.Meta() != nil {
		t.Error("a bare request carries transport extras")
	}
}

func TestServeTool(t *testing.T) {
	srv := whoServer(t)
	res, err := mcpkittest.ServeTool(t.Context(), srv, "who", nil,
		mcpkittest.WithHeader(http.Header{"X-Tenant": {"acme"}}),
		mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada", Scopes: []string{"read"}}))
	if err != nil || text(res) != `tenant="acme" user=ada scopes=read` {
		t.Errorf("got %v, %v", res, err)
	}
	// The server's validation is part of the chain: its Go error comes back.
	_, err = mcpkittest.ServeTool(t.Context(), srv, "who", json.RawMessage(`[1]`))
	if !errors.Is(err, mcpkit.ErrValidation) {
		t.Errorf("invalid arguments: got %v, want a validation error", err)
	}
	var wire *jsonrpc.Error
	_, err = mcpkittest.ServeTool(t.Context(), srv, "nope", nil)
	if want := mcpkit.NewUnknownToolError("nope"); !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || err.Error() != want.Error() {
		t.Errorf("unknown tool: got %v, want %v", err, want)
	}
}

func TestForEachTransport(t *testing.T) {
	var ran []string
	var built []*mcpkit.Server
	newServer := func(t *testing.T) *mcpkit.Server {
		built = append(built, whoServer(t))
		return built[len(built)-1]
	}
	mcpkittest.ForEachTransport(t, newServer, func(t *testing.T, ts *mcpkittest.Server) {
		ran = append(ran, t.Name()[strings.LastIndexByte(t.Name(), '/')+1:])
		if len(built) != len(ran) || ts.Server() != built[len(built)-1] {
			t.Errorf("subtest %d runs on server %p; built %d servers, the last %p", len(ran), ts.Server(), len(built), built[len(built)-1])
		}
		if _, err := ts.CallTool(t.Context(), "who", nil); err != nil {
			t.Error(err)
		}
	}, nil)
	if !slices.Equal(ran, []string{"inmemory", "stateful", "stateless"}) || len(built) != 3 {
		t.Errorf("ran %v with %d servers", ran, len(built))
	}
}

// fatalTB records a Fatalf and stops the caller with a panic, so that a
// test can check how a harness constructor fails. It is used on the test's
// own goroutine only.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

// fatal runs connect with a fatalTB and returns the message it failed
// with, or "" if it did not fail.
func fatal(t *testing.T, connect func(tb testing.TB)) (msg string) {
	t.Helper()
	tb := &fatalTB{TB: t}
	defer func() {
		if v := recover(); v != nil && v != tb {
			panic(v)
		}
		msg = tb.msg
	}()
	connect(tb)
	return ""
}

func TestTokenRefused(t *testing.T) {
	tokens := map[string]*auth.TokenInfo{
		"good": {UserID: "ada"},
		"old":  {UserID: "bob", Expiration: time.Unix(1, 0)},
	}
	for _, tt := range []struct{ name, token string }{
		{"missing", ""},
		{"unknown", "bad"},
		{"expired", "old"},
	} {
		for _, connect := range []struct {
			name string
			f    func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
		}{{"stateful", mcpkittest.NewServer}, {"stateless", mcpkittest.NewStatelessServer}} {
			t.Run(tt.name+"/"+connect.name, func(t *testing.T) {
				msg := fatal(t, func(tb testing.TB) {
					connect.f(tb, whoServer(t), &mcpkittest.Options{Tokens: tokens, Token: tt.token})
				})
				if !strings.Contains(msg, http.StatusText(http.StatusUnauthorized)) {
					t.Errorf("connect with token %q: failed with %q, want a 401", tt.token, msg)
				}
			})
		}
	}
	// The good token connects, and a client of the test's own without it
	// is refused.
	ts := mcpkittest.NewServer(t, whoServer(t), &mcpkittest.Options{Tokens: tokens, Token: "good"})
	client := mcp.NewClient(&mcp.Implementation{Name: "stranger"}, nil)
	if cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil); err == nil {
		cs.Close()
		t.Error("a client without a token connected")
	}
}

// countingTransport counts the requests it carries and checks each for a
// header.
type countingTransport struct {
	n, withHeader atomic.Int64
	next          http.RoundTripper
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if req.Header.Get("X-Tenant") == "acme" {
		c.withHeader.Add(1)
	}
	// Authenticate as a client's own transport would.
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer tok-ada")
	return c.next.RoundTrip(req)
}

func TestHTTPClient(t *testing.T) {
	for _, connect := range []struct {
		name string
		f    func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{{"stateful", mcpkittest.NewServer}, {"stateless", mcpkittest.NewStatelessServer}} {
		t.Run(connect.name, func(t *testing.T) {
			ct := &countingTransport{next: http.DefaultTransport}
			client := &http.Client{Transport: ct}
			ts := connect.f(t, whoServer(t), &mcpkittest.Options{
				HTTPClient: client,
				Header:     http.Header{"X-Tenant": {"acme"}},
				Tokens:     map[string]*auth.TokenInfo{"tok-ada": {UserID: "ada", Scopes: []string{"read"}}},
			})
			res, err := ts.CallTool(t.Context(), "who", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := text(res), `tenant="acme" user=ada scopes=read`; got != want {
				t.Errorf("handler saw %s, want %s", got, want)
			}
			ts.Close()
			if n := ct.n.Load(); n == 0 || ct.withHeader.Load() != n {
				t.Errorf("the custom client carried %d requests, %d with the header", n, ct.withHeader.Load())
			}
			if client.Transport != ct {
				t.Error("the harness changed the caller's client")
			}
		})
	}
}

func TestRequestOptionsCopy(t *testing.T) {
	h := http.Header{"X-Tenant": {"acme"}}
	meta := mcp.Meta{"k": "v"}
	withH, withM := mcpkittest.WithHeader(h), mcpkittest.WithMeta(meta)
	h.Set("X-Tenant", "changed")
	meta["k"] = "changed"
	a := mcpkittest.NewRequest(nil, nil, withH, withM)
	a.Header().Set("X-Tenant", "mine")
	a.Meta()["k"] = "mine"
	b := mcpkittest.NewRequest(nil, nil, withH, withM)
	if b.Header().Get("X-Tenant") != "acme" || b.Meta()["k"] != "v" {
		t.Errorf("second request: header %v, meta %v; want the values given to the options", b.Header(), b.Meta())
	}
	// A later option of the same kind replaces an earlier one.
	c := mcpkittest.NewRequest(nil, nil, withH, mcpkittest.WithHeader(http.Header{"X-Other": {"1"}}))
	if c.Header().Get("X-Tenant") != "" || c.Header().Get("X-Other") != "1" {
		t.Errorf("header = %v, want only the last option's", c.Header())
	}
}
