package transform_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// recorder is a parent handler that records the request it was called
// with.
type recorder struct{ req *mcpkit.Request }

func (r *recorder) ServeTool(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	r.req = req
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Arguments)}}}, nil
}

// args returns the arguments the parent received, decoded.
func (r *recorder) args(t *testing.T) map[string]any {
	t.Helper()
	if r.req == nil {
		t.Fatal("the parent was not called")
	}
	var m map[string]any
	if err := json.Unmarshal(r.req.Arguments, &m); err != nil {
		t.Fatalf("the parent got %s: %v", r.req.Arguments, err)
	}
	return m
}

func TestHandlerMapsArguments(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"q":{"type":"string"},"limit":{"type":"integer"},"user":{"type":"string"},
		"org":{"type":"string","default":"acme"},"tz":{"type":"string"},"Q":{"type":"string"},"User":{"type":"string"}},
		"required":["q","user"]}`
	byToken := func(_ context.Context, req *mcpkit.Request) (any, error) {
		if req.TokenInfo() == nil {
			return nil, errors.New("not signed in")
		}
		return req.TokenInfo().UserID, nil
	}
	rec := &recorder{}
	parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "search", InputSchema: json.RawMessage(schema)}, Handler: rec}
	d, err := transform.Tool(parent, transform.Spec{Name: "find", Arguments: map[string]transform.Arg{
		"q":     {Name: "query"},
		"limit": {Name: "max"},
		"user":  {Hide: true, ValueFunc: byToken},
		"org":   {Hide: true},
		"tz":    {Hide: true, Value: "UTC"},
		"Q":     {Hide: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	alice := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "alice"})
	for _, tc := range []struct {
		name string
		args string
		want map[string]any
	}{
		{"renamed and hidden", `{"query":"go","max":3}`,
			map[string]any{"q": "go", "limit": 3.0, "user": "alice", "org": "acme", "tz": "UTC"}},
		{"no arguments", ``, map[string]any{"user": "alice", "org": "acme", "tz": "UTC"}},
		{"null", ` null `, map[string]any{"user": "alice", "org": "acme", "tz": "UTC"}},
		{"hidden arguments sent anyway", `{"user":"mallory","USER":"mallory","\u0075ser":"mallory","Tz":"x","org":"evil","query":"go"}`,
			map[string]any{"q": "go", "user": "alice", "org": "acme", "tz": "UTC"}},
		{"old names sent anyway", `{"q":"old","limit":100,"LIMIT":100,"query":"new"}`,
			map[string]any{"q": "new", "user": "alice", "org": "acme", "tz": "UTC"}},
		{"an untouched argument that differs from a dropped one only by case", `{"User":"kept"}`,
			map[string]any{"User": "kept", "user": "alice", "org": "acme", "tz": "UTC"}},
		{"a hidden argument without a value is never sent", `{"Q":"dropped","query":"x"}`,
			map[string]any{"q": "x", "user": "alice", "org": "acme", "tz": "UTC"}},
		{"other arguments pass, as written", `{ "extra" : {"user":"nested", "q":[1,"]}"]} , "n":1.50 }`,
			map[string]any{"extra": map[string]any{"user": "nested", "q": []any{1.0, "]}"}}, "n": 1.5, "user": "alice", "org": "acme", "tz": "UTC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.req = nil
			req := mcpkittest.NewRequest(d, json.RawMessage(tc.args), alice)
			if _, err := d.Handler.ServeTool(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if got := rec.args(t); !jsonEqual(t, mustJSON(t, got), mustJSON(t, tc.want)) {
				t.Errorf("the parent got %s, want %s", rec.req.Arguments, mustJSON(t, tc.want))
			}
			if rec.req.Tool.Name != "search" || !strings.Contains(mustJSON(t, rec.req.Tool.InputSchema), `"user"`) {
				t.Errorf("the parent's req.Tool is %q with %s, want its own definition", rec.req.Tool.Name, mustJSON(t, rec.req.Tool.InputSchema))
			}
			if got := string(rec.req.Call.Params.Arguments); got != string(rec.req.Arguments) {
				t.Errorf("the SDK form carries %s, the request %s", got, rec.req.Arguments)
			}
			if string(req.Arguments) != tc.args {
				t.Errorf("the caller's request changed: %s", req.Arguments)
			}
		})
	}

	t.Run("not an object", func(t *testing.T) {
		for _, args := range []string{`[1]`, `"x"`, `{"query":`, `{"a":1}x`, `{"a":[1}}`} {
			rec.req = nil
			_, err := d.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(d, json.RawMessage(args), alice))
			if out, class := mcpkit.Classify(nil, err); out != mcpkit.OutcomeToolError || class != mcpkit.Retryable || rec.req != nil {
				t.Errorf("%s: got %v (%s, %s), parent called: %v; want a retryable tool error", args, err, out, class, rec.req != nil)
			}
		}
	})

	t.Run("ValueFunc fails", func(t *testing.T) {
		rec.req = nil
		_, err := d.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(d, map[string]any{"query": "go"}))
		var ve *transform.ValueError
		if !errors.As(err, &ve) || ve.Tool != "find" || ve.Argument != "user" || ve.Err.Error() != "not signed in" {
			t.Fatalf("got %v, want a *ValueError for find's user", err)
		}
		if err.Error() != `tool "find": no value for argument "user": not signed in` {
			t.Errorf("text %q", err)
		}
		if out, class := mcpkit.Classify(nil, err); out != mcpkit.OutcomeError || class != mcpkit.Fatal {
			t.Errorf("classified %s, %s; want an internal error, fatal", out, class)
		}
		if rec.req != nil {
			t.Error("the parent was called")
		}
	})
}

func TestValueFunc(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"type":"string","default":"da"},"b":{"type":"string"},"c":{"type":"string"}},"required":["c"]}`
	for _, tc := range []struct {
		name    string
		fn      func(context.Context, *mcpkit.Request) (any, error)
		arg     string
		want    string // the parent's arguments
		wantErr func(error) bool
	}{
		{name: "a value", arg: "b", fn: constant(map[string]int{"x": 1}), want: `{"b":{"x":1}}`},
		{name: "nil: the parent's default", arg: "a", fn: constant(nil), want: `{"a":"da"}`},
		{name: "nil: left out", arg: "b", fn: constant(nil), want: `{}`},
		{name: "nil for a required argument", arg: "c", fn: constant(nil), wantErr: func(err error) bool {
			var ve *transform.ValueError
			return errors.As(err, &ve) && ve.Argument == "c"
		}},
		{name: "a value that does not marshal", arg: "b", fn: constant(func() {}), wantErr: func(err error) bool {
			var ve *transform.ValueError
			return errors.As(err, &ve)
		}},
		{name: "a tool error keeps its class", arg: "b",
			fn: func(context.Context, *mcpkit.Request) (any, error) {
				return nil, mcpkit.ToolErrorf("quota exceeded")
			},
			wantErr: func(err error) bool {
				out, class := mcpkit.Classify(nil, err)
				return out == mcpkit.OutcomeToolError && class == mcpkit.Retryable
			}},
		{name: "a protocol error stays one", arg: "b",
			fn: func(context.Context, *mcpkit.Request) (any, error) {
				return nil, mcpkit.NewProtocolError(-32602, "no")
			},
			wantErr: func(err error) bool {
				out, _ := mcpkit.Classify(nil, err)
				return out == mcpkit.OutcomeProtocolError
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "p", InputSchema: json.RawMessage(schema)}, Handler: rec}
			spec := args(tc.arg, transform.Arg{Hide: true, ValueFunc: tc.fn})
			d, err := transform.Tool(parent, spec)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(d, nil))
			if tc.wantErr != nil {
				if !tc.wantErr(err) || rec.req != nil {
					t.Fatalf("got %v (parent called: %v)", err, rec.req != nil)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(rec.req.Arguments); got != tc.want {
				t.Errorf("the parent got %s, want %s", got, tc.want)
			}
		})
	}
}

func constant(v any) func(context.Context, *mcpkit.Request) (any, error) {
	return func(context.Context, *mcpkit.Request) (any, error) { return v, nil }
}

// TestNoMappingWithoutRenames: a derived tool that renames and hides
// nothing calls the parent's handler with the request as it came.
func TestNoMappingWithoutRenames(t *testing.T) {
	rec := &recorder{}
	parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "p", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{}}}`)}, Handler: rec}
	d, err := transform.Tool(parent, transform.Spec{Name: "d", Description: "D.", Arguments: map[string]transform.Arg{
		"a": {Description: "A.", Default: 1, Required: transform.Optional},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Handler != mcpkit.Handler(rec) {
		t.Fatalf("handler %T, want the parent's", d.Handler)
	}
	req := mcpkittest.NewRequest(d, map[string]int{"a": 2})
	d.Handler.ServeTool(context.Background(), req)
	if rec.req != req {
		t.Error("the request was copied")
	}
}
