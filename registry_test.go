package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

func reply(s string) mcpkit.HandlerFunc {
	return func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult(s), nil }
}

func TestValidateToolName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"get_user.v2-beta", true},
		{strings.Repeat("x", 128), true},
		{"", false},
		{strings.Repeat("x", 129), false},
		{"has space", false},
		{"slash/name", false},
		{"ünïcode", false},
		{"semi;colon", false},
	}
	for _, tt := range tests {
		err := mcpkit.ValidateToolName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateToolName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, mcpkit.ErrInvalidToolName) {
			t.Errorf("ValidateToolName(%q) = %v, does not wrap ErrInvalidToolName", tt.name, err)
		}
	}
}

func TestAddRejectsInvalidTools(t *testing.T) {
	tests := []struct {
		name string
		tool *mcpkit.Tool
		want error
	}{
		{"bad name", tool("no spaces", reply("x")), mcpkit.ErrInvalidToolName},
		{"no handler", tool("h", nil), mcpkit.ErrNoHandler},
		{"no schema", &mcpkit.Tool{Tool: mcp.Tool{Name: "s"}, Handler: reply("x")}, mcpkit.ErrInvalidSchema},
		{"array schema", &mcpkit.Tool{Tool: mcp.Tool{Name: "s", InputSchema: &jsonschema.Schema{Type: "array"}}, Handler: reply("x")}, mcpkit.ErrInvalidSchema},
		{"raw non-object schema", &mcpkit.Tool{Tool: mcp.Tool{Name: "s", InputSchema: json.RawMessage(`[1]`)}, Handler: reply("x")}, mcpkit.ErrInvalidSchema},
		{"raw string schema", &mcpkit.Tool{Tool: mcp.Tool{Name: "s", InputSchema: json.RawMessage(`{"type":"string"}`)}, Handler: reply("x")}, mcpkit.ErrInvalidSchema},
		{"bad output schema", &mcpkit.Tool{Tool: mcp.Tool{Name: "s", InputSchema: objectSchema, OutputSchema: json.RawMessage(`"x"`)}, Handler: reply("x")}, mcpkit.ErrInvalidSchema},
		{"bad header annotation", &mcpkit.Tool{Tool: mcp.Tool{Name: "s", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`)}, Handler: reply("x")}, mcpkit.ErrInvalidSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, nil)
			good := tool("good", reply("x"))
			err := srv.Add(good, tt.tool)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Add = %v, want %v", err, tt.want)
			}
			if len(srv.Tools()) != 0 {
				t.Errorf("a failed Add registered %d tools, want none", len(srv.Tools()))
			}
		})
	}
	t.Run("nil tool", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, nil)
		if err := srv.Add(nil); err == nil {
			t.Fatal("Add(nil) succeeded")
		}
	})
}

func TestAddAcceptsRawSchemas(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "raw"}, nil)
	schema := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}},"additionalProperties":false}`)
	if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "raw", InputSchema: schema}, Handler: reply("x")}); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.Tools[0].InputSchema)
	var a, b any
	json.Unmarshal(got, &a)
	json.Unmarshal(schema, &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("advertised schema\n%s\nwant verbatim\n%s", got, schema)
	}
}

func TestDuplicates(t *testing.T) {
	tests := []struct {
		replace bool
		wantErr bool
		want    string // what the tool answers after the second Add
	}{
		{false, true, "old"},
		{true, false, "new"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("replace=%v", tt.replace), func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "d"}, &mcpkit.ServerOptions{ReplaceDuplicates: tt.replace})
			if err := srv.Add(tool("t", reply("old"))); err != nil {
				t.Fatal(err)
			}
			err := srv.Add(tool("t", reply("new")))
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, mcpkit.ErrDuplicateTool)) {
				t.Fatalf("second Add = %v, wantErr %v", err, tt.wantErr)
			}
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			res, err := ts.CallTool(t.Context(), "t", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, res); got != tt.want {
				t.Errorf("tool answers %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("twice in one Add", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "d"}, &mcpkit.ServerOptions{ReplaceDuplicates: true})
		if err := srv.Add(tool("t", reply("a")), tool("t", reply("b"))); !errors.Is(err, mcpkit.ErrDuplicateTool) {
			t.Fatalf("Add = %v, want ErrDuplicateTool", err)
		}
	})
}

func TestVersionsServeTheHighest(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ver"}, nil)
	v := func(ver string) *mcpkit.Tool {
		tl := tool("calc", reply("v"+ver))
		tl.Version = ver
		tl.Description = "calc " + ver
		return tl
	}
	if err := srv.Add(v("1.9"), v("1.10"), v("1.2")); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	check := func(want string) {
		t.Helper()
		res, err := ts.CallTool(t.Context(), "calc", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); got != "v"+want {
			t.Errorf("call reached %q, want v%s", got, want)
		}
		list, err := ts.Session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tools) != 1 || list.Tools[0].Description != "calc "+want {
			t.Errorf("tools/list = %+v, want one calc %s", list.Tools, want)
		}
	}
	check("1.10")
	if err := srv.Add(v("2")); err != nil {
		t.Fatal(err)
	}
	check("2")
	if tl, ok := srv.Lookup("calc"); !ok || tl.Version != "2" {
		t.Errorf("Lookup = %v, %v", tl, ok)
	}
}

func TestAddCopiesTheTool(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "copy"}, nil)
	tl := tool("t", reply("x"))
	tl.Tags = []string{"a"}
	if err := srv.Add(tl); err != nil {
		t.Fatal(err)
	}
	tl.Name = "changed"
	tl.Tags[0] = "changed"
	got, ok := srv.Lookup("t")
	if !ok || got.Name != "t" || !got.HasTag("a") {
		t.Errorf("registered tool changed with the caller's: %+v", got)
	}
}

func TestWrapListsForeignTools(t *testing.T) {
	sdk := mcp.NewServer(&mcp.Implementation{Name: "existing"}, nil)
	sdk.AddTool(&mcp.Tool{Name: "b_native", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("native"), nil
	})
	srv := mcpkit.Wrap(sdk, nil)
	srv.Add(tool("a_kit", reply("kit")), tool("c_kit", reply("kit")))
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "a_kit,b_native,c_kit" {
		t.Errorf("tools/list = %s", got)
	}
	call, err := ts.CallTool(t.Context(), "b_native", nil)
	if err != nil || resultText(t, call) != "native" {
		t.Errorf("native tool: %v, %v", call, err)
	}
}

func TestListPagination(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "page"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 3}})
	var want []string
	for i := range 8 {
		name := fmt.Sprintf("t%02d", i)
		want = append(want, name)
		if err := srv.Add(tool(name, reply(name))); err != nil {
			t.Fatal(err)
		}
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	var got []string
	pages := 0
	for tl, err := range ts.Session.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tl.Name)
	}
	cursor := ""
	for {
		res, err := ts.Session.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(res.Tools) > 3 {
			t.Errorf("page of %d tools, limit 3", len(res.Tools))
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || pages != 3 {
		t.Errorf("got %v in %d pages, want %v in 3", got, pages, want)
	}
	_, err := ts.Session.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: "not-a-cursor"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("bad cursor: %v, want -32602", err)
	}
}

func TestUseList(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "list"}, nil)
	var order []string
	tagList := func(tag string) mcpkit.ListMiddleware {
		return func(next mcpkit.Lister) mcpkit.Lister {
			return mcpkit.ListerFunc(func(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
				order = append(order, "<"+tag)
				tools, err := next.ServeList(ctx, req)
				order = append(order, ">"+tag)
				return tools, err
			})
		}
	}
	hideInternal := func(next mcpkit.Lister) mcpkit.Lister {
		return mcpkit.ListerFunc(func(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
			tools, err := next.ServeList(ctx, req)
			var out []*mcpkit.Tool
			for _, tl := range tools {
				if !tl.HasTag("internal") {
					out = append(out, tl)
				}
			}
			return out, err
		})
	}
	internal := tool("secret", reply("s"))
	internal.Tags = []string{"internal"}
	srv.Add(tool("public", reply("p")), internal)
	srv.UseList(tagList("a"), hideInternal, tagList("b"))
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "public" {
		t.Errorf("tools/list = %+v, want only public", res.Tools)
	}
	if got := strings.Join(order, " "); got != "<a <b >b >a" {
		t.Errorf("list middleware order = %q", got)
	}
}

func TestListMiddlewareError(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "list"}, nil)
	srv.Add(tool("t", reply("x")))
	srv.UseList(func(mcpkit.Lister) mcpkit.Lister {
		return mcpkit.ListerFunc(func(context.Context, *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
			return nil, mcpkit.NewProtocolError(-32042, "not allowed to list")
		})
	})
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	_, err := ts.Session.ListTools(t.Context(), nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32042 || werr.Message != "not allowed to list" {
		t.Errorf("ListTools = %v, want -32042", err)
	}
}

func TestUsePanicsOnNil(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "p"}, nil)
	for name, f := range map[string]func(){
		"Use":     func() { srv.Use(nil) },
		"UseList": func() { srv.UseList(nil) },
	} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.HasPrefix(fmt.Sprint(v), "mcpkit: "+name+":") {
					t.Errorf("%s(nil): recover() = %v", name, v)
				}
			}()
			f()
		}()
	}
}

func TestHandlerWithoutTransport(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "h"}, nil)
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			if err == nil {
				res.Content = append(res.Content, &mcp.TextContent{Text: "wrapped"})
			}
			return res, err
		})
	})
	srv.Add(tool("t", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult("x"), nil }))
	h, ok := srv.Handler("t")
	if !ok {
		t.Fatal("Handler(t) not found")
	}
	tl, _ := srv.Lookup("t")
	res, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(tl, map[string]any{}))
	if err != nil || len(res.Content) != 2 {
		t.Fatalf("got %+v, %v; want handler + middleware content", res, err)
	}
	if _, ok := srv.Handler("missing"); ok {
		t.Error("Handler(missing) found")
	}
}

func TestNoToolsAdvertisesListChanged(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "empty"}, nil)
	ts := mcpkittest.NewServer(t, srv, nil)
	caps := ts.Session.InitializeResult().Capabilities
	//lint:ignore SA1019 checking that the deprecated capability is absent
	if caps.Tools == nil || !caps.Tools.ListChanged || caps.Logging != nil {
		t.Errorf("capabilities = %+v, want tools.listChanged and no (deprecated) logging", caps)
	}
	if v := ts.Session.InitializeResult().ProtocolVersion; v != mcpkittest.StatefulVersion {
		t.Errorf("negotiated %s, want %s", v, mcpkittest.StatefulVersion)
	}
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil || res.Tools == nil || len(res.Tools) != 0 {
		t.Errorf("empty tools/list = %+v, %v", res, err)
	}
}

func TestStatelessNegotiatesNewProtocol(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "sl"}, nil)
	srv.Add(tool("t", reply("x")))
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if v := ts.Session.InitializeResult().ProtocolVersion; v != mcpkittest.StatelessVersion {
		t.Errorf("negotiated %s, want %s", v, mcpkittest.StatelessVersion)
	}
}

// TestForToolsResolvedOncePerTool checks that a selector learns each tool
// when its chain is built, also inside Chain and in a tool's own
// middleware, and is never asked again per call.
func TestForToolsResolvedOncePerTool(t *testing.T) {
	var asked []string
	match := func(where string) func(*mcpkit.Tool) bool {
		return func(tl *mcpkit.Tool) bool {
			if tl.Name == "" {
				return false // ForTools asks for the names it selects by (see SelectorNames)
			}
			asked = append(asked, where+":"+tl.Name)
			return tl.Name == "a"
		}
	}
	var ran []string
	mark := func(where string) mcpkit.Middleware {
		return func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				ran = append(ran, where+":"+req.Tool.Name)
				return next.ServeTool(ctx, req)
			})
		}
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "fortools"}, nil)
	srv.Use(mcpkit.ForTools(match("server"), mark("server")),
		mcpkit.Chain(mark("chain"), mcpkit.ForTools(match("chained"), mark("chained"))))
	ta, tb := tool("a", reply("x")), tool("b", reply("x"))
	tb.Middleware = []mcpkit.Middleware{mcpkit.ForTools(mcpkit.Named("b"), mark("own"))}
	if err := srv.Add(ta, tb); err != nil {
		t.Fatal(err)
	}
	slices.Sort(asked)
	if got := strings.Join(asked, ","); got != "chained:a,chained:b,server:a,server:b" {
		t.Errorf("selectors asked %s at construction", got)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	for _, name := range []string{"a", "b", "a"} {
		if res, err := ts.CallTool(t.Context(), name, nil); err != nil || resultText(t, res) != "x" {
			t.Fatalf("call %s: %v, %v", name, res, err)
		}
	}
	if len(asked) != 4 {
		t.Errorf("selectors were asked again per call: %v", asked)
	}
	want := "server:a,chain:a,chained:a,chain:b,own:b,server:a,chain:a,chained:a"
	if got := strings.Join(ran, ","); got != want {
		t.Errorf("layers ran %s\nwant       %s", got, want)
	}

	// Outside a server, the tool is known per call only.
	asked, ran = nil, nil
	h := mcpkit.ForTools(match("plain"), mark("plain"))(reply("x"))
	for _, name := range []string{"a", "b"} {
		h.ServeTool(t.Context(), mcpkittest.NewRequest(tool(name, reply("x")), nil))
	}
	if got := strings.Join(ran, ","); got != "plain:a" || len(asked) != 2 {
		t.Errorf("outside a server: ran %s, asked %v", got, asked)
	}
}

// TestListToleratesUnsortedMiddleware checks that a list middleware that
// reorders tools does not break the sorted, paginated answer.
func TestListToleratesUnsortedMiddleware(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "unsorted"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 2}})
	srv.Add(tool("a", reply("a")), tool("b", reply("b")), tool("c", reply("c")))
	srv.UseList(func(next mcpkit.Lister) mcpkit.Lister {
		return mcpkit.ListerFunc(func(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
			tools, err := next.ServeList(ctx, req)
			reversed := slices.Clone(tools)
			slices.Reverse(reversed)
			return reversed, err
		})
	})
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	var names []string
	cursor := ""
	for page := 0; page < 5; page++ { // bounded: a broken cursor must not loop
		res, err := ts.Session.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if got := strings.Join(names, ","); got != "a,b,c" {
		t.Errorf("tools/list = %s, want a,b,c", got)
	}
}

// A raw schema that is not JSON is refused in the schema author's words:
// what is wrong and where, no decoder internals.
func TestAddRawSchemaErrors(t *testing.T) {
	for raw, want := range map[string]string{
		"":                   `tool "t": input schema: empty, want a JSON object such as {"type":"object"}`,
		"  ":                 `tool "t": input schema: empty, want a JSON object such as {"type":"object"}`,
		"{":                  `tool "t": input schema: not valid JSON: it ends before the value is complete: {`,
		`{"type":"object",}`: `tool "t": input schema: not valid JSON: unexpected '}' at byte 18, after {"type":"object",`,
		`[]`:                 `tool "t": input schema: not a JSON object: []`,
		`{"type":"object","propertees":{"n":{"type":"integer"}}}`: `tool "t": input schema: /propertees: unknown keyword "propertees": did you mean "properties"? (name an annotation of your own x-...)`,
	} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil)
		err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(raw)}, Handler: reply("x")})
		if !errors.Is(err, mcpkit.ErrInvalidSchema) || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "MarshalJSON") {
			t.Errorf("%q: %v\nwant ...%s", raw, err, want)
		}
	}
}

// Add checks x-mcp-header annotations as clients do (SEP-2243), in its own
// words.
func TestAddHeaderAnnotations(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`:                                           `property "a": x-mcp-header is only for an argument of type string, integer or boolean, not "object"`,
		`{"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`:                                  `property "a": x-mcp-header is only for an argument of type string, integer or boolean, not ["string","null"]`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`:                                            `property "a": x-mcp-header is empty or not a string`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`:                                             `property "a": x-mcp-header is empty or not a string`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Région"}}}`:                                      `property "a": x-mcp-header "Région" is not an HTTP header name: it has 'é'`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"integer","x-mcp-header":"x"}}}`: `property "b": x-mcp-header "x" names the header of "a" too (header names ignore case)`,
		`{"type":"object","properties":{"o":{"type":"object","properties":{"c":{"type":"boolean","x-mcp-header":"A:B"}}}}}`:   `property "o.c": x-mcp-header "A:B" is not an HTTP header name: it has ':'`,
	} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil)
		err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(schema)}, Handler: reply("x")})
		if !errors.Is(err, mcpkit.ErrInvalidSchema) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v\nwant ...%s", schema, err, want)
		}
	}
	ok := `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Tenant-Id"},"o":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`
	if err := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil).Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(ok)}, Handler: reply("x")}); err != nil {
		t.Errorf("valid annotations refused: %v", err)
	}
}

// Tools lists the registered tools whatever the per-request rules, without
// asking them about a request that is not there.
func TestToolsIgnoresPerRequestRules(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil)
	srv.SetVisibility(perRequestOnly{})
	if err := srv.Add(tool("a", reply("a")), tool("b", reply("b"))); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range srv.Tools() {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "a,b" {
		t.Errorf("Tools() = %v, want a,b", names)
	}
}

// perRequestOnly enables every tool and allows one to a caller with a
// token only; it reads the caller's token, as predicates do.
type perRequestOnly struct{}

func (perRequestOnly) Enabled(*mcpkit.Tool) bool { return true }
func (perRequestOnly) PerRequest() bool          { return true }
func (perRequestOnly) Allowed(_ context.Context, _ *mcpkit.Tool, c mcpkit.Caller) bool {
	return c.TokenInfo() != nil
}
