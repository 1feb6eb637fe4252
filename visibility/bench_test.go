package visibility_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/visibility"
)

// BenchmarkPerRequest compares per-request visibility with the common Go
// practice it replaces: a new *mcp.Server, holding only the tools the
// caller's principal may use, built for every request by the getServer
// callback of mcp.NewStreamableHTTPHandler.
//
// How the comparison is kept fair:
//   - Both sides serve the same 1,000 tool definitions (an object input
//     schema as a *jsonschema.Schema, which the SDK's AddTool checks without
//     re-marshalling), half of them for the admin scope only, to the same
//     principal: a bearer token without that scope, who sees 500.
//   - Both sides are stateless streamable HTTP handlers (JSON responses)
//     behind the same auth.RequireBearerToken with the same verifier, and
//     are benchmarked by direct calls of their ServeHTTP, with no network
//     and no client: a real SDK client's tools/list and tools/call
//     (protocol 2026-07-28) are recorded once and replayed, byte for byte,
//     to both. What is measured is the server's whole cost per HTTP
//     request, the SDK's included.
//   - mcpkit validates no arguments here (NoValidation), since the SDK's
//     raw AddTool handlers do not either: what differs is how the
//     principal's tools are chosen.
//   - sdk-server-built-once is the floor: the principal's server built
//     once and reused, as if there were one principal.
//
// Run with go test -run '^$' -bench PerRequest -count 5 ./visibility/ and
// compare medians.
func BenchmarkPerRequest(b *testing.B) {
	defs := benchDefs()
	built := sdkServerFor(defs, benchToken)
	handlers := []struct {
		name string
		h    http.Handler
	}{
		{"new-sdk-server", benchHandler(func(r *http.Request) *mcp.Server {
			return sdkServerFor(defs, auth.TokenInfoFromContext(r.Context()))
		})},
		{"mcpkit-visibility", benchHandler(nil)},
		{"sdk-server-built-once", benchHandler(func(*http.Request) *mcp.Server { return built })},
	}
	list, call := recordRequests(b, handlers[1].h)
	for _, o := range []struct {
		name string
		req  recorded
	}{{"list", list}, {"call", call}} {
		for _, h := range handlers {
			b.Run(o.name+"/"+h.name, func(b *testing.B) {
				if o.name == "list" {
					var res struct{ Result mcp.ListToolsResult }
					if err := json.Unmarshal(replay(b, h.h, o.req), &res); err != nil || len(res.Result.Tools) != benchTools/2 {
						b.Fatalf("listed %d tools (%v), want %d", len(res.Result.Tools), err, benchTools/2)
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					replay(b, h.h, o.req)
				}
			})
		}
	}
}

const benchTools = 1000

var benchTokens = map[string]*auth.TokenInfo{"user-token": {UserID: "bob", Scopes: []string{"read"}}}

// benchToken is the principal of the benchmarks: no admin scope.
var benchToken = benchTokens["user-token"]

var benchSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}

func benchResult(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

// benchDefs are the tool definitions of both sides; see adminOnly.
func benchDefs() []*mcp.Tool {
	defs := make([]*mcp.Tool, benchTools)
	for i := range defs {
		defs[i] = &mcp.Tool{Name: fmt.Sprintf("tool%04d", i), Description: "A benchmark tool.", InputSchema: benchSchema}
	}
	return defs
}

func adminOnly(i int) bool { return i%2 == 1 }

// sdkServerFor returns a new SDK server with the tools p may use.
func sdkServerFor(defs []*mcp.Tool, p *auth.TokenInfo) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	admin := p != nil && slices.Contains(p.Scopes, "admin")
	for i, def := range defs {
		if adminOnly(i) && !admin {
			continue
		}
		s.AddTool(def, benchResult)
	}
	return s
}

// benchHandler returns a stateless HTTP handler behind the bearer-token
// check: the SDK's with getServer, or mcpkit's with every tool and a
// Require rule when getServer is nil.
func benchHandler(getServer func(*http.Request) *mcp.Server) http.Handler {
	opts := &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}
	var h http.Handler
	if getServer != nil {
		h = mcp.NewStreamableHTTPHandler(getServer, opts)
	} else {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, &mcpkit.ServerOptions{Validation: mcpkit.NoValidation})
		var tools []*mcpkit.Tool
		for i, def := range benchDefs() {
			t := &mcpkit.Tool{Tool: *def, Handler: mcpkit.SDKHandler(benchResult)}
			if adminOnly(i) {
				t.Tags = []string{"admin"}
			}
			tools = append(tools, t)
		}
		if err := srv.Add(tools...); err != nil {
			panic(err)
		}
		visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))).Attach(srv)
		h = srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: opts})
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := benchTokens[token]; ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// recorded is a request a client sent, to replay.
type recorded struct {
	header http.Header
	body   []byte
}

// recorder keeps the tools/list and tools/call requests that pass through
// it.
type recorder struct {
	mu         sync.Mutex
	list, call []recorded
	next       http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	switch {
	case bytes.Contains(body, []byte(`"tools/list"`)):
		r.list = append(r.list, recorded{req.Header.Clone(), body})
	case bytes.Contains(body, []byte(`"tools/call"`)):
		r.call = append(r.call, recorded{req.Header.Clone(), body})
	}
	r.mu.Unlock()
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.next.ServeHTTP(w, req)
}

// recordRequests lets a real SDK client, with the benchmark's token, list
// and call once through h, and returns its requests.
func recordRequests(b *testing.B, h http.Handler) (list, call recorded) {
	rec := &recorder{next: h}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	client := hs.Client()
	client.Transport = withToken{token: "user-token", next: client.Transport}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tool0998", Arguments: map[string]int{"n": 1}}); err != nil || res.IsError {
		b.Fatalf("call: %v %v", res, err)
	}
	if len(rec.list) != 1 || len(rec.call) != 1 {
		b.Fatalf("recorded %d lists and %d calls", len(rec.list), len(rec.call))
	}
	return rec.list[0], rec.call[0]
}

// replay serves req with h, checks that it succeeded, and returns the
// response's body.
func replay(b *testing.B, h http.Handler, req recorded) []byte {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(req.body))
	r.Header = req.header.Clone()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"result"`)) || bytes.Contains(w.Body.Bytes(), []byte(`"isError":true`)) {
		b.Fatalf("HTTP %d: %.300s", w.Code, w.Body.String())
	}
	return w.Body.Bytes()
}

// BenchmarkAllowed is the per-tool cost of Require rules, called directly
// as the server calls them: a map lookup and the predicates that apply.
func BenchmarkAllowed(b *testing.B) {
	r := visibility.New(
		visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin")),
		visibility.Require(mcpkit.Tagged("ops"), visibility.Claim("groups", "ops")),
	)
	tools := make([]*mcpkit.Tool, benchTools)
	for i := range tools {
		tools[i] = tool(fmt.Sprintf("tool%04d", i))
		if adminOnly(i) {
			tools[i].Tags = []string{"admin", "ops"}
		}
	}
	c := &caller{info: &auth.TokenInfo{UserID: "ada", Scopes: []string{"admin"}, Extra: map[string]any{"groups": []any{"dev", "ops"}}}}
	ctx := context.Background()
	for _, t := range tools {
		r.Allowed(ctx, t, c)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if !r.Allowed(ctx, tools[i%benchTools], c) {
			b.Fatal("not allowed")
		}
		i++
	}
}
