package transform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/transform"
)

// echoArgs answers with the arguments it received, as text.
var echoArgs = mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var args map[string]any
	if err := json.Unmarshal(req.Arguments, &args); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Tool.Name + " " + mustMarshal(args)}}}, nil
})

func mustMarshal(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content blocks: %+v", len(res.Content), res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T", res.Content[0])
	}
	return tc.Text
}

// listed returns the definition of the tool name that the client sees.
func listed(t *testing.T, ts *mcpkittest.Server, name string) *mcp.Tool {
	t.Helper()
	res, err := ts.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("tools/list has no %q", name)
	return nil
}

// TestRenameEndToEnd: a client sees the renamed argument, is validated
// under its name, and the parent receives it under its own.
func TestRenameEndToEnd(t *testing.T) {
	parent := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object",
			"properties":{"q":{"type":"string","minLength":1},"limit":{"type":"integer","default":10}},
			"required":["q"],"additionalProperties":false}`)},
		Handler: echoArgs,
	}
	derived, err := transform.Tool(parent, transform.Spec{Name: "find", Arguments: map[string]transform.Arg{
		"q": {Name: "query", Description: "What to look for."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	newServer := func(t *testing.T) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "test"}, nil)
		if err := srv.Add(parent, derived); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	mcpkittest.ForEachTransport(t, newServer, func(t *testing.T, ts *mcpkittest.Server) {
		ctx := context.Background()
		want := `{"type":"object","properties":{"query":{"type":"string","minLength":1,"description":"What to look for."},
			"limit":{"type":"integer","default":10}},"required":["query"],"additionalProperties":false}`
		if got := mustJSON(t, listed(t, ts, "find").InputSchema); !jsonEqual(t, got, want) {
			t.Errorf("tools/list shows\n%s\nwant\n%s", got, compact(t, want))
		}

		res, err := ts.CallTool(ctx, "find", map[string]any{"query": "go"})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); res.IsError || got != `search {"limit":10,"q":"go"}` {
			t.Errorf("call: %q (isError %v)", got, res.IsError)
		}

		for _, tc := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{}, `invalid arguments: query: required property is missing`},
			{map[string]any{"query": ""}, `invalid arguments: query: want at least 1 character, got 0`},
			{map[string]any{"q": "go"}, `invalid arguments: q: unexpected property; query: required property is missing`},
		} {
			res, err := ts.CallTool(ctx, "find", tc.args)
			if err != nil {
				t.Fatal(err)
			}
			got := text(t, res)
			if !res.IsError || got != tc.want || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
				t.Errorf("%v: %q (isError %v, class %q), want the retryable error %q", tc.args, got, res.IsError, mcpkit.ErrorClassOf(res), tc.want)
			}
		}

		// The parent is served as it was.
		res, err = ts.CallTool(ctx, "search", map[string]any{"q": "go"})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); res.IsError || got != `search {"limit":10,"q":"go"}` {
			t.Errorf("the parent: %q (isError %v)", got, res.IsError)
		}
	}, nil)
}

// TestHiddenFromToken: a hidden argument takes the caller's identity from
// the bearer token the SDK's middleware verified, and a client cannot
// override it.
func TestHiddenFromToken(t *testing.T) {
	tokens := map[string]*auth.TokenInfo{
		"tok-alice": {UserID: "alice", Extra: map[string]any{"tenant": "acme"}},
	}
	fromToken := func(claim string) func(context.Context, *mcpkit.Request) (any, error) {
		return func(_ context.Context, req *mcpkit.Request) (any, error) {
			info := req.TokenInfo()
			if info == nil {
				return nil, mcpkit.NewToolError(fmt.Errorf("sign in to use %s", req.Tool.Name), mcpkit.Fatal)
			}
			if claim == "" {
				return info.UserID, nil
			}
			return info.Extra[claim], nil
		}
	}
	hide := map[string]transform.Arg{
		"user":   {Hide: true, ValueFunc: fromToken("")},
		"tenant": {Hide: true, ValueFunc: fromToken("tenant")},
	}
	newServer := func(closed bool) func(t *testing.T) *mcpkit.Server {
		return func(t *testing.T) *mcpkit.Server {
			schema := `{"type":"object","properties":{"text":{"type":"string"},"user":{"type":"string"},"tenant":{"type":"string"}},"required":["text","user","tenant"]}`
			if closed {
				schema = strings.Replace(schema, `{"type":"object",`, `{"type":"object","additionalProperties":false,`, 1)
			}
			parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "notes", InputSchema: json.RawMessage(schema)}, Handler: echoArgs}
			d, err := transform.Tool(parent, transform.Spec{Name: "my_notes", Arguments: hide})
			if err != nil {
				t.Fatal(err)
			}
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "test"}, nil)
			if err := srv.Add(d); err != nil {
				t.Fatal(err)
			}
			return srv
		}
	}
	opts := &mcpkittest.Options{Tokens: tokens, Token: "tok-alice"}
	for _, tc := range []struct {
		transport string
		connect   func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"stateful", mcpkittest.NewServer},
		{"stateless", mcpkittest.NewStatelessServer},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			ctx := context.Background()
			ts := tc.connect(t, newServer(false)(t), opts)
			want := `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
			if got := mustJSON(t, listed(t, ts, "my_notes").InputSchema); !jsonEqual(t, got, want) {
				t.Errorf("tools/list shows %s, want %s", got, want)
			}
			for _, args := range []map[string]any{
				{"text": "hi"},
				{"text": "hi", "user": "mallory", "tenant": "evil"},
				{"text": "hi", "User": "mallory", "TENANT": "evil"},
			} {
				res, err := ts.CallTool(ctx, "my_notes", args)
				if err != nil {
					t.Fatal(err)
				}
				if got := text(t, res); res.IsError || got != `notes {"tenant":"acme","text":"hi","user":"alice"}` {
					t.Errorf("%v: the parent got %q (isError %v)", args, got, res.IsError)
				}
			}

			// Where the schema admits no other property, sending the
			// hidden one fails validation instead.
			ts = tc.connect(t, newServer(true)(t), opts)
			res, err := ts.CallTool(ctx, "my_notes", map[string]any{"text": "hi", "user": "mallory"})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); !res.IsError || !strings.HasPrefix(got, "invalid arguments: user: ") {
				t.Errorf("a closed schema: %q (isError %v), want a validation error naming user", got, res.IsError)
			}
		})
	}
	t.Run("no token", func(t *testing.T) {
		ts := mcpkittest.NewInMemoryServer(t, newServer(false)(t), nil)
		res, err := ts.CallTool(context.Background(), "my_notes", map[string]any{"text": "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); !res.IsError || got != "sign in to use my_notes" || mcpkit.ErrorClassOf(res) != mcpkit.Fatal {
			t.Errorf("got %q (isError %v, class %q), want a fatal tool error", got, res.IsError, mcpkit.ErrorClassOf(res))
		}
	})
}

// TestMiddlewareEndToEnd: a derived tool's middleware post-processes the
// result, around the parent's own middleware.
func TestMiddlewareEndToEnd(t *testing.T) {
	suffix := func(s string) mcpkit.Middleware {
		return func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				res, err := next.ServeTool(ctx, req)
				if err != nil || res.IsError {
					return res, err
				}
				out := *res // the result belongs to the handler: change a copy
				out.Content = []mcp.Content{&mcp.TextContent{Text: res.Content[0].(*mcp.TextContent).Text + s}}
				return &out, nil
			})
		}
	}
	upper := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			if err != nil || res.IsError {
				return res, err
			}
			out := *res
			out.Content = []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(res.Content[0].(*mcp.TextContent).Text)}}
			return &out, nil
		})
	}
	parent := &mcpkit.Tool{
		Tool:       mcp.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`)},
		Handler:    echoArgs,
		Middleware: []mcpkit.Middleware{suffix(" (parent)")},
	}
	derived, err := transform.Tool(parent, transform.Spec{
		Name:       "shout",
		Arguments:  map[string]transform.Arg{"who": {Name: "name"}},
		Middleware: []mcpkit.Middleware{upper, suffix("!")},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "test"}, nil)
	if err := srv.Add(parent, derived); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	ctx := context.Background()
	for _, tc := range []struct{ tool, arg, want string }{
		{"shout", "name", `GREET {"WHO":"ADA"} (PARENT)!`},
		{"greet", "who", `greet {"who":"Ada"} (parent)`},
	} {
		res, err := ts.CallTool(ctx, tc.tool, map[string]any{tc.arg: "Ada"})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); res.IsError || got != tc.want {
			t.Errorf("%s: %q (isError %v), want %q", tc.tool, got, res.IsError, tc.want)
		}
	}
	layers, _ := srv.Pipeline("shout")
	var names []string
	for _, l := range layers {
		names = append(names, l.From)
	}
	if got := strings.Join(names, ","); got != "tool,tool,tool,server" {
		t.Errorf("pipeline of shout: %v", layers)
	}
}

type searchIn struct {
	Query string `json:"q" description:"The query."`
	Limit int    `json:"limit" default:"10"`
	User  string `json:"user"`
}

type searchOut struct {
	Hits []string `json:"hits"`
	User string   `json:"user"`
}

// TestTypedToolEndToEnd transforms a tool made by tools.New.
func TestTypedToolEndToEnd(t *testing.T) {
	search := tools.Must(tools.New("search", func(_ context.Context, in searchIn) (searchOut, error) {
		hits := []string{}
		for i := range min(in.Limit, 3) {
			hits = append(hits, fmt.Sprintf("%s-%d", in.Query, i))
		}
		return searchOut{Hits: hits, User: in.User}, nil
	}, &tools.Options{Description: "Search."}))
	derived, err := transform.Tool(search, transform.Spec{
		Name:        "find",
		Description: "Find documents.",
		Arguments: map[string]transform.Arg{
			"q":     {Name: "query"},
			"limit": {Name: "max", Default: 2},
			"user":  {Hide: true, Value: "bob"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.ForEachTransport(t, func(t *testing.T) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "test"}, nil)
		if err := srv.Add(derived); err != nil {
			t.Fatal(err)
		}
		return srv
	}, func(t *testing.T, ts *mcpkittest.Server) {
		def := listed(t, ts, "find")
		want := `{"type":"object","properties":{"query":{"type":"string","description":"The query."},"max":{"type":"integer","default":2}},"required":["query"],"additionalProperties":false}`
		if got := mustJSON(t, def.InputSchema); !jsonEqual(t, got, want) {
			t.Errorf("input schema %s, want %s", got, want)
		}
		if got, want := mustJSON(t, def.OutputSchema), mustJSON(t, search.OutputSchema); !jsonEqual(t, got, want) {
			t.Errorf("output schema %s, want the parent's %s", got, want)
		}
		res, err := ts.CallTool(context.Background(), "find", map[string]any{"query": "go"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mustJSON(t, res.StructuredContent), `{"hits":["go-0","go-1"],"user":"bob"}`; res.IsError || got != want {
			t.Errorf("structured content %s (isError %v), want %s", got, res.IsError, want)
		}
		res, err = ts.CallTool(context.Background(), "find", map[string]any{"query": "go", "user": "eve"})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); !res.IsError || !strings.HasPrefix(got, "invalid arguments: user: ") {
			t.Errorf("sending the hidden user: %q (isError %v), want a validation error", got, res.IsError)
		}
	}, nil)
}

// TestParamHeaderEndToEnd: over protocol 2026-07-28 the client mirrors
// annotated arguments into Mcp-Param headers, which the SDK checks against
// the body. A renamed argument keeps its header; a hidden one's is gone, so
// the client does not send it.
func TestParamHeaderEndToEnd(t *testing.T) {
	seen := make(chan string, 1)
	parent := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "deploy", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"secret":{"type":"string","x-mcp-header":"Secret"}},"required":["region","secret"]}`)},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			seen <- fmt.Sprintf("%s region=%q secret=%q", req.Arguments, req.Header().Get("Mcp-Param-Region"), req.Header().Get("Mcp-Param-Secret"))
			return &mcp.CallToolResult{}, nil
		}),
	}
	derived, err := transform.Tool(parent, transform.Spec{Arguments: map[string]transform.Arg{
		"region": {Name: "area"},
		"secret": {Hide: true, Value: "s3cr3t"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "test"}, nil)
	if err := srv.Add(derived); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	want := `{"type":"object","properties":{"area":{"type":"string","x-mcp-header":"Region"}},"required":["area"]}`
	if got := mustJSON(t, listed(t, ts, "deploy").InputSchema); !jsonEqual(t, got, want) {
		t.Errorf("tools/list shows %s, want %s", got, want)
	}
	res, err := ts.CallTool(context.Background(), "deploy", map[string]any{"area": "eu-west"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("call failed: %s", text(t, res))
	}
	if got, want := <-seen, `{"region":"eu-west","secret":"s3cr3t"} region="eu-west" secret=""`; got != want {
		t.Errorf("the parent saw %s, want %s", got, want)
	}
}
