package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// deadline is a tool error that wraps context.DeadlineExceeded, as a time
// limit reports one.
type deadline struct{}

func (deadline) Error() string { return "took too long" }
func (deadline) Unwrap() error { return context.DeadlineExceeded }

func TestClassify(t *testing.T) {
	panicked := &mcpkit.PanicError{Value: "boom"}
	tests := []struct {
		name    string
		res     *mcp.CallToolResult
		err     error
		outcome mcpkit.Outcome
		class   mcpkit.ErrorClass
	}{
		{"ok", &mcp.CallToolResult{}, nil, mcpkit.OutcomeOK, ""},
		{"nil nil", nil, nil, mcpkit.OutcomeOK, ""},
		{"isError result", &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{mcpkit.MetaKeyErrorClass: "fatal"}}, nil, mcpkit.OutcomeToolError, mcpkit.Fatal},
		{"tool error", nil, mcpkit.ToolErrorf("no"), mcpkit.OutcomeToolError, mcpkit.Retryable},
		{"wrapped fatal tool error", nil, fmt.Errorf("x: %w", mcpkit.NewToolError(errors.New("no"), mcpkit.Fatal)), mcpkit.OutcomeToolError, mcpkit.Fatal},
		{"timeout", nil, mcpkit.NewToolError(deadline{}, mcpkit.Retryable), mcpkit.OutcomeTimeout, mcpkit.Retryable},
		{"bare deadline is internal", nil, fmt.Errorf("query: %w", context.DeadlineExceeded), mcpkit.OutcomeError, mcpkit.Fatal},
		{"protocol error", nil, fmt.Errorf("x: %w", mcpkit.NewProtocolError(-32041, "busy")), mcpkit.OutcomeProtocolError, ""},
		{"code 0 is internal", nil, &jsonrpc.Error{Message: "zero"}, mcpkit.OutcomeError, mcpkit.Fatal},
		{"panic", nil, fmt.Errorf("x: %w", panicked), mcpkit.OutcomePanic, mcpkit.Fatal},
		{"panic inside a tool error", nil, mcpkit.NewToolError(panicked, mcpkit.Retryable), mcpkit.OutcomePanic, mcpkit.Fatal},
		{"internal", nil, errors.New("db down"), mcpkit.OutcomeError, mcpkit.Fatal},
		{"internal with a class", nil, classified{mcpkit.Retryable}, mcpkit.OutcomeError, mcpkit.Retryable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := mcpkit.Classify(tt.res, tt.err)
			if o != tt.outcome || c != tt.class {
				t.Errorf("Classify = %s, %q; want %s, %q", o, c, tt.outcome, tt.class)
			}
		})
	}
}

func TestNewPanicError(t *testing.T) {
	var p *mcpkit.PanicError
	func() {
		defer func() { p = mcpkit.NewPanicError(recover()) }()
		panic("boom")
	}()
	if p.Value != "boom" || !strings.Contains(string(p.Stack), "call_test.go") {
		t.Errorf("got %v with stack\n%s", p.Value, p.Stack)
	}
	if again := mcpkit.NewPanicError(p); again != p {
		t.Error("a *PanicError was not kept as is")
	}
}

func TestRequestCloneIsDeep(t *testing.T) {
	tl := tool("t", reply("x"))
	req := mcpkittest.NewRequest(tl, map[string]int{"a": 1})
	req.Call.Params.Meta = mcp.Meta{"k": "v"}
	req.Call.Extra = &mcp.RequestExtra{Header: http.Header{"X-A": {"1"}}}

	c := req.Clone()
	c.Arguments[1] = 'X'
	c.Call.Params.Meta["k"] = "changed"
	c.Call.Params.Name = "other"
	c.Call.Extra.Header.Set("X-A", "2")

	if string(req.Arguments) != `{"a":1}` || string(req.Call.Params.Arguments) != `{"a":1}` {
		t.Errorf("original arguments changed: %s", req.Arguments)
	}
	if req.Call.Params.Meta["k"] != "v" || req.Call.Params.Name != "t" || req.Header().Get("X-A") != "1" {
		t.Errorf("original request changed: %+v %v", req.Call.Params, req.Header())
	}
	if c.Tool != req.Tool {
		t.Error("the clone has another tool")
	}
}

// TestResultsFitForTheWire checks what the server does to successful
// results before the SDK sends them, on every transport.
func TestResultsFitForTheWire(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "wire"}, nil)
	err := srv.Add(
		tool("nan", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"x": math.NaN()}}, nil
		}),
		tool("bad_raw", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"x":`)}, nil
		}),
		tool("inf_meta", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, Meta: mcp.Meta{"x": math.Inf(1)}}, nil
		}),
		tool("structured_only", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		ts := connect(srv)
		for _, name := range []string{"nan", "bad_raw", "inf_meta"} {
			res, err := ts.CallTool(t.Context(), name, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Fatal || !strings.Contains(resultText(t, res), "cannot be sent") {
				t.Errorf("%s: got %+v, want a fatal tool error", name, res)
			}
		}
		res, err := ts.CallTool(t.Context(), "structured_only", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); got != `{"n":1}` || res.IsError {
			t.Errorf("structured_only: text %q, isError %v; want its JSON", got, res.IsError)
		}
	})
}

// TestServerValidatesByDefault checks that a tool's schema is enforced
// without any middleware: required properties, enums, bounds and defaults.
func TestServerValidatesByDefault(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"unit":{"type":"string","enum":["c","f"],"default":"c"},
		"n":{"type":"integer","minimum":0}},"required":["n"],"additionalProperties":false}`)
	var got []string
	echo := func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		got = append(got, string(req.Arguments))
		return textResult("ok"), nil
	}
	for _, mode := range []mcpkit.ValidationMode{mcpkit.DefaultValidation, mcpkit.Strict, mcpkit.Lenient} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			got = nil
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, &mcpkit.ServerOptions{Validation: mode})
			if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: schema}, Handler: mcpkit.HandlerFunc(echo)}); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			for _, tt := range []struct {
				args any
				want string // the error's text, or "" for a call that reaches the handler
			}{
				{map[string]any{}, "invalid arguments: n: required property is missing"},
				{map[string]any{"n": -1}, "invalid arguments: n: "},
				{map[string]any{"n": 1, "unit": "k"}, "invalid arguments: unit: "},
				{map[string]any{"n": 1, "x": 1}, "invalid arguments: x: "},
				{map[string]any{"n": 1}, ""},
			} {
				res, err := ts.CallTool(t.Context(), "t", tt.args)
				if err != nil {
					t.Fatal(err)
				}
				text := resultText(t, res)
				if tt.want == "" && (res.IsError || text != "ok") || tt.want != "" && (!res.IsError || !strings.HasPrefix(text, tt.want)) {
					t.Errorf("%v: got %q (isError %v), want %q", tt.args, text, res.IsError, tt.want)
				}
			}
			// The default was filled in before the handler ran.
			if len(got) != 1 || got[0] != `{"n":1,"unit":"c"}` {
				t.Errorf("handler saw %q", got)
			}
			// Only lenient mode coerces.
			res, err := ts.CallTool(t.Context(), "t", map[string]any{"n": "2"})
			if err != nil {
				t.Fatal(err)
			}
			if coerced := !res.IsError; coerced != (mode == mcpkit.Lenient) {
				t.Errorf(`"2" for an integer: isError %v in mode %v`, res.IsError, mode)
			}
		})
	}
	t.Run("tool opts out", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, nil)
		tl := &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: schema}, Handler: mcpkit.HandlerFunc(echo), Validation: mcpkit.NoValidation}
		if err := srv.Add(tl); err != nil {
			t.Fatal(err)
		}
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		res, err := ts.CallTool(t.Context(), "t", map[string]any{"n": -1})
		if err != nil || res.IsError {
			t.Errorf("NoValidation tool rejected its call: %+v, %v", res, err)
		}
	})
}

// TestOutputValidatedByDefault checks structured content against the
// output schema: a mismatch is a fatal tool error, and the empty result is
// allowed.
func TestOutputValidatedByDefault(t *testing.T) {
	out := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}, Required: []string{"n"}}
	mk := func(name string, res *mcp.CallToolResult) *mcpkit.Tool {
		tl := tool(name, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return res, nil })
		tl.OutputSchema = out
		return tl
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "out"}, nil)
	if err := srv.Add(
		mk("good", &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}),
		mk("bad", &mcp.CallToolResult{StructuredContent: map[string]any{"n": "one"}}),
		mk("missing", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no structure"}}}),
		mk("empty", nil),
	); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	for name, wantErr := range map[string]bool{"good": false, "bad": true, "missing": true, "empty": false} {
		res, err := ts.CallTool(t.Context(), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != wantErr || wantErr && mcpkit.ErrorClassOf(res) != mcpkit.Fatal {
			t.Errorf("%s: isError %v class %q, want error %v (fatal)", name, res.IsError, mcpkit.ErrorClassOf(res), wantErr)
		}
	}
}

// TestNonObjectResultsByProtocolVersion checks SEP-2106 across protocol
// versions: a 2026-07-28 client gets any JSON value as structured content
// and output schema, an older client gets {"result": value} and the schema
// of that object.
func TestNonObjectResultsByProtocolVersion(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "sep2106"}, nil)
	list := tool("list", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(`[1,2]`)}, nil
	})
	list.OutputSchema = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "integer"}}
	if err := srv.Add(list); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		version, structured, schema string
	}{
		{"2026-07-28", `[1,2]`, `{"type":"array","items":{"type":"integer"}}`},
		{"2025-11-25", `{"result":[1,2]}`, `{"type":"object","properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"],"additionalProperties":false}`},
		{"2025-06-18", `{"result":[1,2]}`, `{"type":"object","properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"],"additionalProperties":false}`},
	} {
		t.Run(tt.version, func(t *testing.T) {
			ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{ProtocolVersion: tt.version})
			res, err := ts.CallTool(t.Context(), "list", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(res.StructuredContent); string(got) != tt.structured || resultText(t, res) != `[1,2]` {
				t.Errorf("structured %s, text %q; want %s and the value's JSON", got, resultText(t, res), tt.structured)
			}
			lres, err := ts.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(lres.Tools[0].OutputSchema); canonical(string(got)) != canonical(tt.schema) {
				t.Errorf("output schema %s, want %s", got, tt.schema)
			}
		})
	}
	// The registered definition is untouched.
	tl, _ := srv.Lookup("list")
	if tl.OutputSchema.(*jsonschema.Schema).Type != "array" {
		t.Error("the tool's own schema was modified")
	}
}
