package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

func TestMemoryCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		c := middleware.NewMemoryCache(1 << 10)
		get := func(key string) string {
			t.Helper()
			v, ok, err := c.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return "<none>"
			}
			return string(v)
		}
		if got := get("a"); got != "<none>" {
			t.Errorf("empty cache: Get = %q", got)
		}
		value := []byte("one")
		c.Set(ctx, "a", value, time.Minute)
		value[0] = 'X' // the cache keeps a copy
		if got := get("a"); got != "one" {
			t.Errorf("Get = %q, want one", got)
		}
		v, _, _ := c.Get(ctx, "a")
		v[0] = 'X' // and hands out copies
		if got := get("a"); got != "one" {
			t.Errorf("after changing what Get returned: Get = %q", got)
		}
		c.Set(ctx, "a", []byte("two"), time.Minute)
		if got := get("a"); got != "two" {
			t.Errorf("after a second Set: Get = %q", got)
		}

		time.Sleep(59 * time.Second)
		if got := get("a"); got != "two" {
			t.Errorf("before the TTL: Get = %q", got)
		}
		time.Sleep(time.Second)
		if got := get("a"); got != "<none>" {
			t.Errorf("at the TTL: Get = %q, want nothing", got)
		}

		c.Set(ctx, "b", []byte("x"), time.Minute)
		c.Set(ctx, "b", []byte("y"), 0)
		if got := get("b"); got != "<none>" {
			t.Errorf("Set with a zero TTL kept %q", got)
		}
		c.Set(ctx, "big", make([]byte, 1<<10), time.Minute)
		if got := get("big"); got != "<none>" {
			t.Error("a value larger than the cache was kept")
		}
	})
}

// TestMemoryCacheEvicts fills a cache of 100 bytes with entries of 20
// (key and value): it holds five, and drops the least recently used.
func TestMemoryCacheEvicts(t *testing.T) {
	ctx := t.Context()
	c := middleware.NewMemoryCache(100)
	val := []byte("0123456789abcdefghi") // 19 bytes, and a key of 1
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		c.Set(ctx, k, val, time.Hour)
	}
	c.Get(ctx, "a") // a is now the most recently used; b the least
	c.Set(ctx, "f", val, time.Hour)
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true, "e": true, "f": true} {
		if _, ok, _ := c.Get(ctx, k); ok != want {
			t.Errorf("%s held: %v, want %v", k, ok, want)
		}
	}
	c.Set(ctx, "g", make([]byte, 59), time.Hour) // 60 bytes: three entries go
	held := 0
	for _, k := range []string{"a", "c", "d", "e", "f", "g"} {
		if _, ok, _ := c.Get(ctx, k); ok {
			held++
		}
	}
	if held != 3 {
		t.Errorf("%d entries held after a large one, want 3 (g and two of 20 bytes)", held)
	}
}

func TestMemoryCacheConcurrent(t *testing.T) {
	c := middleware.NewMemoryCache(1 << 12)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				key := fmt.Sprint((g + i) % 50)
				c.Set(t.Context(), key, []byte(strings.Repeat("v", i%100)), time.Hour)
				if v, ok, _ := c.Get(t.Context(), key); ok && strings.Trim(string(v), "v") != "" {
					t.Errorf("Get(%s) = %q", key, v)
				}
			}
		})
	}
	wg.Wait()
}

func TestNewMemoryCachePanics(t *testing.T) {
	defer func() {
		if v := recover(); v != "middleware: NewMemoryCache: maxBytes 0 holds nothing" {
			t.Errorf("recover() = %v", v)
		}
	}()
	middleware.NewMemoryCache(0)
}

// counter is a handler that counts its calls and answers with their
// number, or with what respond returns.
type counter struct {
	n       atomic.Int32
	respond func(n int32, req *mcpkit.Request) (*mcp.CallToolResult, error)
}

func (c *counter) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	n := c.n.Add(1)
	if c.respond != nil {
		return c.respond(n, req)
	}
	return textResult(fmt.Sprintf("call %d", n)), nil
}

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

// asAda is the request option of a call by ada, a verified user: the
// middleware that keep records per caller keep none for anonymous calls.
var asAda = mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"})

func withHandler(t *mcpkit.Tool, h mcpkit.HandlerFunc) *mcpkit.Tool {
	t.Handler = h
	return t
}

// annotated returns a tool named name with annotations a.
func annotated(name string, a *mcp.ToolAnnotations) *mcpkit.Tool {
	t := newTool(name, nil)
	t.Annotations = a
	return t
}

func TestCacheResults(t *testing.T) {
	ada := asAda
	bob := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "bob"})
	bobToken := mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer bob"}})
	anonymous := mcpkittest.WithHeader(http.Header{"X-Tenant": {"acme"}})
	type call struct {
		tool *mcpkit.Tool
		args string
		opts []mcpkittest.RequestOption // nil: ada's
		want string                     // "call N", or "hit N" for a hit answering what call N answered
	}
	search := annotated("search", readOnly)
	searchV2 := annotated("search", readOnly)
	searchV2.Version = "2"
	upsert := annotated("upsert", &mcp.ToolAnnotations{IdempotentHint: true})
	plain := newTool("plain", nil)
	tests := []struct {
		name  string
		opts  *middleware.CacheOptions
		calls []call
	}{
		{"repeat", nil, []call{
			{search, `{"q":"go"}`, nil, "call 1"},
			{search, `{"q":"go"}`, nil, "hit 1"},
			{search, `{"q":"rust"}`, nil, "call 2"},
			{search, `{"q":"go"}`, nil, "hit 1"},
		}},
		{"canonical arguments", nil, []call{
			{search, `{"a":1,"b":{"c":[1,2],"d":"x"}}`, nil, "call 1"},
			{search, ` { "b" : { "d":"x", "c":[1, 2] } , "a":1 }`, nil, "hit 1"},
			{search, `{"a":1.0,"b":{"c":[1,2],"d":"x"}}`, nil, "call 2"}, // numbers as written
			{search, `{"a":1,"b":{"c":[2,1],"d":"x"}}`, nil, "call 3"},   // arrays keep their order
		}},
		{"no arguments", nil, []call{
			{search, ``, nil, "call 1"},
			{search, ``, nil, "hit 1"},
			{search, `{}`, nil, "call 2"},
		}},
		{"duplicate keys are not cached", nil, []call{
			{search, `{"a":1,"a":2}`, nil, "call 1"},
			{search, `{"a":1,"a":2}`, nil, "call 2"},
		}},
		{"versions", nil, []call{
			{search, `{}`, nil, "call 1"},
			{searchV2, `{}`, nil, "call 2"},
			{search, `{}`, nil, "hit 1"},
		}},
		{"idempotent hint", nil, []call{
			{upsert, `{}`, nil, "call 1"},
			{upsert, `{}`, nil, "hit 1"},
		}},
		{"tools without hints are not cached", nil, []call{
			{plain, `{}`, nil, "call 1"},
			{plain, `{}`, nil, "call 2"},
		}},
		{"tools selected by the option", &middleware.CacheOptions{Tools: mcpkit.Named("plain")}, []call{
			{plain, `{}`, nil, "call 1"},
			{plain, `{}`, nil, "hit 1"},
			{search, `{}`, nil, "call 2"},
			{search, `{}`, nil, "hit 2"},
		}},
		{"principals are isolated", nil, []call{
			{search, `{}`, []mcpkittest.RequestOption{ada}, "call 1"},
			{search, `{}`, []mcpkittest.RequestOption{bob}, "call 2"},
			{search, `{}`, []mcpkittest.RequestOption{bobToken}, "call 3"},
			{search, `{}`, []mcpkittest.RequestOption{anonymous}, "call 4"},
			{search, `{}`, []mcpkittest.RequestOption{ada}, "hit 1"},
			{search, `{}`, []mcpkittest.RequestOption{bob}, "hit 2"},
			{search, `{}`, []mcpkittest.RequestOption{bobToken}, "hit 3"},
			{search, `{}`, []mcpkittest.RequestOption{anonymous}, "call 5"}, // anonymous calls are not kept
		}},
		{"key option", &middleware.CacheOptions{Key: func(*mcpkit.Request) string { return "everyone" }}, []call{
			{search, `{}`, []mcpkittest.RequestOption{ada}, "call 1"},
			{search, `{}`, []mcpkittest.RequestOption{bob}, "hit 1"},
		}},
		{"a key option of anonymous calls", &middleware.CacheOptions{Key: func(*mcpkit.Request) string { return "" }}, []call{
			{search, `{}`, []mcpkittest.RequestOption{anonymous}, "call 1"},
			{search, `{}`, []mcpkittest.RequestOption{anonymous}, "hit 1"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &counter{}
			mw := middleware.CacheResults(middleware.NewMemoryCache(1<<20), tt.opts)(h)
			for i, c := range tt.calls {
				var args any
				if c.args != "" {
					args = json.RawMessage(c.args)
				}
				opts := c.opts
				if opts == nil {
					opts = []mcpkittest.RequestOption{ada}
				}
				res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(c.tool, args, opts...))
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				got := resultText(t, res)
				if res.Meta[middleware.MetaKeyCache] == "hit" {
					got = strings.Replace(got, "call", "hit", 1)
				}
				if got != c.want {
					t.Errorf("call %d (%s %s): got %q, want %q", i, c.tool.Name, c.args, got, c.want)
				}
			}
		})
	}
}

// TestCacheResultsNeverCaches checks the outcomes that are never kept.
func TestCacheResultsNeverCaches(t *testing.T) {
	tool := annotated("search", readOnly)
	tests := []struct {
		name    string
		respond func(n int32, req *mcpkit.Request) (*mcp.CallToolResult, error)
		state   string // the call's requestState
	}{
		{"Go error", func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, errDB }, ""},
		{"tool error", func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, mcpkit.ToolErrorf("no") }, ""},
		{"isError result", func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, nil
		}, ""},
		{"input_required", func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"x": &mcp.ElicitParams{Message: "?"}}, RequestState: "s"}, nil
		}, ""},
		{"answer to input_required", nil, "s"},
		{"too large", func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return textResult(strings.Repeat("x", 200)), nil
		}, ""},
		{"nil result", func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }, ""},
		{"replayed by Idempotent", func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, Meta: mcp.Meta{middleware.MetaKeyIdempotent: "replayed"}}, nil
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &counter{respond: tt.respond}
			mw := middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{MaxResultBytes: 100})(h)
			for range 2 {
				req := mcpkittest.NewRequest(tool, map[string]int{"a": 1}, asAda)
				req.Call.Params.RequestState = tt.state
				res, _ := mw.ServeTool(t.Context(), req)
				if res != nil && res.Meta[middleware.MetaKeyCache] != nil {
					t.Fatal("answered from the cache")
				}
			}
			if h.n.Load() != 2 {
				t.Errorf("handler ran %d times, want 2", h.n.Load())
			}
		})
	}
}

func TestCacheResultsTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &counter{}
		mw := middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{TTL: 10 * time.Second})(h)
		tool := annotated("search", readOnly)
		callText := func() string {
			res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, asAda))
			if err != nil {
				t.Fatal(err)
			}
			return resultText(t, res)
		}
		start := time.Now()
		for _, step := range []struct {
			at   time.Duration
			want string
		}{
			{0, "call 1"},
			{5 * time.Second, "call 1"},
			{10*time.Second - time.Nanosecond, "call 1"},
			{10 * time.Second, "call 2"}, // expired: the tool runs
			{15 * time.Second, "call 2"},
		} {
			time.Sleep(time.Until(start.Add(step.at)))
			if got := callText(); got != step.want {
				t.Errorf("at %v: %q, want %q", step.at, got, step.want)
			}
		}
	})
}

// TestCacheResultsCopies checks that a hit is a new result: changing one
// changes neither the cache nor the next hit.
func TestCacheResultsCopies(t *testing.T) {
	mw := middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)(&counter{respond: func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "t"}},
			StructuredContent: json.RawMessage(`{"n":12345678901234567}`),
			Meta:              mcp.Meta{"k": "v"},
		}, nil
	}})
	tool := annotated("search", readOnly)
	mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, asAda))
	hit, _ := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, asAda))
	hit.Content[0].(*mcp.TextContent).Text = "changed"
	hit.Meta["k"] = "changed"
	hit.StructuredContent.(json.RawMessage)[0] = '['
	again, _ := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, asAda))
	if again == hit || resultText(t, again) != "t" || again.Meta["k"] != "v" || string(again.StructuredContent.(json.RawMessage)) != `{"n":12345678901234567}` {
		t.Errorf("second hit %+v shares the first's changes", again)
	}
}

// failingStore is a Cache and an IdempotencyStore whose methods fail with
// errStore, and counts the calls.
type failingStore struct{ calls atomic.Int32 }

func (s *failingStore) Get(context.Context, string) ([]byte, bool, error) {
	s.calls.Add(1)
	return nil, false, errStore
}

func (s *failingStore) Set(context.Context, string, []byte, time.Duration) error {
	s.calls.Add(1)
	return errStore
}

func (s *failingStore) Claim(context.Context, string, middleware.IdempotencyRecord, time.Duration) (middleware.IdempotencyRecord, bool, error) {
	s.calls.Add(1)
	return middleware.IdempotencyRecord{}, false, errStore
}

func (s *failingStore) Complete(context.Context, string, string, []byte, time.Duration) error {
	s.calls.Add(1)
	return errStore
}

func (s *failingStore) Release(context.Context, string, string) error {
	s.calls.Add(1)
	return errStore
}

// setFailing is a Cache whose Get works (always a miss) and whose Set fails.
type setFailing struct{ failingStore }

func (s *setFailing) Get(context.Context, string) ([]byte, bool, error) { return nil, false, nil }

// TestCacheResultsFailsOpen checks that a failing cache is a miss: the
// tool runs, and one warning says so however many calls fail in a minute.
func TestCacheResultsFailsOpen(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cache middleware.Cache
		warn  string
	}{
		{"Get fails", &failingStore{}, "middleware: cache unavailable, calling the tool"},
		{"Set fails", &setFailing{}, "middleware: cache unavailable, result not kept"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				h := &counter{}
				mw := middleware.CacheResults(tt.cache, &middleware.CacheOptions{Logger: logs.logger()})(h)
				tool := annotated("search", readOnly)
				for i := range 5 {
					res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, asAda))
					if err != nil || resultText(t, res) != fmt.Sprintf("call %d", i+1) {
						t.Fatalf("call %d: %v, %v", i, res, err)
					}
				}
				time.Sleep(time.Minute)
				mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, asAda))
				recs := logs.records(t)
				if len(recs) != 2 {
					t.Fatalf("%d records, want 2 (one a minute): %v", len(recs), recs)
				}
				if recs[0]["msg"] != tt.warn || recs[0]["level"] != "WARN" || recs[0]["error"] != errStore.Error() || recs[0]["tool"] != "search" {
					t.Errorf("first record: %v", recs[0])
				}
				if recs[1]["suppressed"] != float64(4) {
					t.Errorf("second record: %v, want suppressed=4", recs[1])
				}
			})
		})
	}
}

func TestCacheResultsOptions(t *testing.T) {
	if h := mcpkit.HandlerFunc(ok); fmt.Sprint(middleware.CacheResults(nil, nil)(h)) != fmt.Sprint(h) {
		t.Error("a nil cache adds a layer")
	}
	for _, opts := range []*middleware.CacheOptions{{TTL: -1}, {MaxResultBytes: -1}} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.HasPrefix(fmt.Sprint(v), "middleware: CacheResults: ") {
					t.Errorf("%+v: recover() = %v", opts, v)
				}
			}()
			middleware.CacheResults(middleware.NewMemoryCache(1), opts)
		}()
	}
}

// TestCacheResultsPipeline checks that a server lists CacheResults on the
// tools it caches and as skipped on the others.
func TestCacheResultsPipeline(t *testing.T) {
	srv := newServer(t, []mcpkit.Middleware{middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)},
		withHandler(annotated("search", readOnly), ok), newTool("plain", ok))
	for name, skipped := range map[string]bool{"search": false, "plain": true} {
		layers, _ := srv.Pipeline(name)
		if len(layers) != 2 || layers[0].Name != "middleware.CacheResults" || layers[0].Skipped != skipped {
			t.Errorf("%s: %+v", name, layers)
		}
	}
}

// TestCacheResultsEndToEnd calls a cached tool through real SDK clients on
// every transport: a hit reaches the client with every kind of content,
// structured content and _meta as the first answer had them, and the hit
// mark. The in-memory transport carries no identity: the server has one
// client, as over stdio, and says so with a Key.
func TestCacheResultsEndToEnd(t *testing.T) {
	var runs atomic.Int32
	newSrv := func(t *testing.T) *mcpkit.Server {
		runs.Store(0)
		tool := &mcpkit.Tool{
			Tool: mcp.Tool{Name: "report", InputSchema: &jsonschema.Schema{Type: "object"}, Annotations: readOnly,
				OutputSchema: &jsonschema.Schema{Type: "object"}},
			Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				runs.Add(1)
				return &mcp.CallToolResult{
					Content: []mcp.Content{
						&mcp.TextContent{Text: "summary", Annotations: &mcp.Annotations{Priority: 0.5}},
						&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
						&mcp.AudioContent{Data: []byte{1, 2}, MIMEType: "audio/wav"},
						&mcp.ResourceLink{URI: "file:///r.txt", Name: "r"},
						&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///e.txt", MIMEType: "text/plain", Text: "embedded"}},
					},
					StructuredContent: map[string]any{"total": 12345678901234567, "items": []any{"a", "b"}},
					Meta:              mcp.Meta{"com.example/source": "db"},
				}, nil
			}),
		}
		oneClient := &middleware.CacheOptions{Key: func(*mcpkit.Request) string { return "the one client" }}
		return newServer(t, []mcpkit.Middleware{middleware.CacheResults(middleware.NewMemoryCache(1<<20), oneClient)}, tool)
	}
	mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
		first, err := ts.CallTool(t.Context(), "report", map[string]any{"from": "2026-01-01", "to": "2026-02-01"})
		if err != nil || first.IsError {
			t.Fatalf("%v, %+v", err, first)
		}
		hit, err := ts.CallTool(t.Context(), "report", map[string]any{"to": "2026-02-01", "from": "2026-01-01"})
		if err != nil || hit.IsError {
			t.Fatalf("%v, %+v", err, hit)
		}
		if runs.Load() != 1 {
			t.Errorf("the tool ran %d times, want once", runs.Load())
		}
		if hit.Meta[middleware.MetaKeyCache] != "hit" || first.Meta[middleware.MetaKeyCache] != nil {
			t.Errorf("_meta: first %v, hit %v", first.Meta, hit.Meta)
		}
		delete(hit.Meta, middleware.MetaKeyCache)
		a, _ := json.Marshal(first)
		b, _ := json.Marshal(hit)
		if string(a) != string(b) {
			t.Errorf("the hit differs from the first answer:\n%s\n%s", a, b)
		}
	}, nil)
}

// TestCacheResultsPrincipalsEndToEnd serves one server to two users with
// verified tokens over HTTP: each gets the results of their own calls only.
func TestCacheResultsPrincipalsEndToEnd(t *testing.T) {
	var runs atomic.Int32
	srv := newServer(t, []mcpkit.Middleware{middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)},
		withHandler(annotated("balance", readOnly), func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return textResult(fmt.Sprintf("balance of %s (run %d)", req.TokenInfo().UserID, runs.Add(1))), nil
		}))
	tokens := map[string]*auth.TokenInfo{"tok-ada": {UserID: "ada"}, "tok-bob": {UserID: "bob"}}
	clients := map[string]*mcpkittest.Server{}
	for _, user := range []string{"ada", "bob"} {
		clients[user] = mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "tok-" + user})
	}
	for i, c := range []struct{ user, want string }{
		{"ada", "balance of ada (run 1)"},
		{"bob", "balance of bob (run 2)"},
		{"ada", "balance of ada (run 1) hit"},
		{"bob", "balance of bob (run 2) hit"},
	} {
		res, err := clients[c.user].CallTool(t.Context(), "balance", map[string]any{"account": "main"})
		if err != nil {
			t.Fatal(err)
		}
		got := resultText(t, res)
		if res.Meta[middleware.MetaKeyCache] == "hit" {
			got += " hit"
		}
		if got != c.want {
			t.Errorf("call %d: %q, want %q", i, got, c.want)
		}
	}
}

// TestCacheResultsConcurrent calls a cached tool from many goroutines with
// a few sets of arguments, for the race detector: every answer is the one
// for its arguments, and hits are copies the callers may change.
func TestCacheResultsConcurrent(t *testing.T) {
	mw := middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)(&counter{respond: func(n int32, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("for " + string(req.Arguments)), nil
	}})
	tool := annotated("search", readOnly)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				args := fmt.Sprintf(`{"q":%d}`, (g+i)%5)
				res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, json.RawMessage(args), asAda))
				if err != nil || resultText(t, res) != "for "+args {
					t.Errorf("%s: %v, %v", args, res, err)
					return
				}
				res.Content[0].(*mcp.TextContent).Text = "changed"
				res.Meta = nil
			}
		})
	}
	wg.Wait()
}

// Calls that miss one entry while it is being computed wait for that call:
// the tool runs once, and the others answer its result as hits.
func TestCacheResultsOneRunPerMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		h := &counter{respond: func(n int32, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-open
			return textResult(fmt.Sprintf("run %d", n)), nil
		}}
		mw := middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)(h)
		tool := annotated("search", readOnly)
		const callers = 8
		results := make(chan *mcp.CallToolResult, callers)
		for range callers {
			go func() {
				res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]any{"q": "paris"}, asAda))
				if err != nil {
					t.Error(err)
				}
				results <- res
			}()
		}
		synctest.Wait() // all eight are in: one in the tool, seven waiting
		close(open)
		hits := 0
		for range callers {
			res := <-results
			if got := resultText(t, res); got != "run 1" {
				t.Errorf("result %q, want run 1", got)
			}
			if res.Meta[middleware.MetaKeyCache] == "hit" {
				hits++
			}
		}
		if n := h.n.Load(); n != 1 {
			t.Errorf("the tool ran %d times for %d concurrent misses, want once", n, callers)
		}
		if hits != callers-1 {
			t.Errorf("%d hits, want %d", hits, callers-1)
		}
	})
}

// When the call the others wait for keeps nothing (it failed, or
// panicked), each of them runs on its own; a waiting call whose caller goes
// away returns at once.
func TestCacheResultsOneRunPerMissFallsBack(t *testing.T) {
	for _, first := range []string{"error", "isError", "panic"} {
		t.Run(first, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				open := make(chan struct{})
				h := &counter{respond: func(n int32, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					if n > 1 {
						return textResult(fmt.Sprintf("run %d", n)), nil
					}
					<-open
					switch first {
					case "error":
						return nil, fmt.Errorf("database down")
					case "isError":
						return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, nil
					}
					panic("boom")
				}}
				mw := middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)(h)
				tool := annotated("search", readOnly)
				call := func() (*mcp.CallToolResult, error) {
					return mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]any{"q": "paris"}, asAda))
				}
				leader := make(chan struct{})
				go func() {
					defer close(leader)
					defer func() { recover() }()
					call()
				}()
				synctest.Wait()
				const waiting = 3
				results := make(chan string, waiting)
				for range waiting {
					go func() {
						res, err := call()
						if err != nil {
							t.Error(err)
						}
						results <- resultText(t, res)
					}()
				}
				gone, cancel := context.WithCancel(t.Context())
				goneErr := make(chan error, 1)
				go func() {
					_, err := mw.ServeTool(gone, mcpkittest.NewRequest(tool, map[string]any{"q": "paris"}, asAda))
					goneErr <- err
				}()
				synctest.Wait()
				cancel()
				if err := <-goneErr; !errors.Is(err, context.Canceled) {
					t.Errorf("a waiting call whose context ends: %v, want context.Canceled", err)
				}
				close(open)
				<-leader
				for range waiting {
					if got := <-results; !strings.HasPrefix(got, "run ") {
						t.Errorf("a waiting call answered %q, want its own run", got)
					}
				}
				if n := h.n.Load(); n != 1+waiting {
					t.Errorf("the tool ran %d times, want %d: the first, then each waiting call", n, 1+waiting)
				}
			})
		})
	}
}
