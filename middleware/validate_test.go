package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

// orderSchema exercises $ref, defaults behind $ref, nested arrays and
// additionalProperties: false.
const orderSchema = `{
	"type": "object",
	"$defs": {
		"line": {"type": "object", "properties": {
			"sku": {"type": "string", "minLength": 3},
			"qty": {"type": "integer", "minimum": 1},
			"gift": {"type": "boolean", "default": false}
		}, "required": ["sku", "qty"], "additionalProperties": false},
		"priority": {"type": "string", "enum": ["low", "high"], "default": "low"}
	},
	"properties": {
		"lines": {"type": "array", "items": {"$ref": "#/$defs/line"}, "minItems": 1},
		"priority": {"$ref": "#/$defs/priority"},
		"note": {"type": "string"}
	},
	"required": ["lines"],
	"additionalProperties": false
}`

// echoArgs answers with the arguments it received.
func echoArgs(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return textResult(string(req.Arguments)), nil
}

func orderTool() *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: "order", InputSchema: json.RawMessage(orderSchema)}, Handler: mcpkit.HandlerFunc(echoArgs)}
}

func TestValidateArguments(t *testing.T) {
	tests := []struct {
		name   string
		mode   middleware.ValidationMode
		args   string
		want   string // the arguments the handler saw, or the error text
		failed bool
	}{
		{"valid, defaults through $ref", middleware.Strict, `{"lines":[{"sku":"abc","qty":2}]}`,
			`{"lines":[{"sku":"abc","qty":2,"gift":false}],"priority":"low"}`, false},
		{"valid, nothing missing", middleware.Strict, `{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"high"}`,
			`{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"high"}`, false},
		{"every failing field named", middleware.Strict, `{"lines":[{"sku":"ab","qty":0},{"qty":1,"color":"red"}],"priority":"urgent","extra":1}`,
			"invalid arguments: ", true},
		{"strict does not coerce", middleware.Strict, `{"lines":[{"sku":"abc","qty":"2"}]}`,
			"invalid arguments: lines/0/qty: ", true},
		{"lenient coerces numbers and booleans", middleware.Lenient, `{"lines":[{"sku":"abc","qty":"2","gift":"true"}]}`,
			`{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"low"}`, false},
		{"lenient decodes JSON in a string", middleware.Lenient, `{"lines":"[{\"sku\":\"abc\",\"qty\":1}]"}`,
			`{"lines":[{"sku":"abc","qty":1,"gift":false}],"priority":"low"}`, false},
		{"lenient still rejects nonsense", middleware.Lenient, `{"lines":[{"sku":"abc","qty":"two"}]}`,
			"invalid arguments: lines/0/qty: ", true},
		{"missing required", middleware.Lenient, `{}`, "invalid arguments: lines: ", true},
		{"no arguments at all", middleware.Lenient, ``, "invalid arguments: lines: ", true},
		{"not JSON", middleware.Strict, `{"lines":`, "invalid arguments: not valid JSON at offset", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, []mcpkit.Middleware{middleware.Validate(&middleware.ValidateOptions{Mode: tt.mode})}, orderTool())
			h, _ := srv.Handler("order")
			tl, _ := srv.Lookup("order")
			res, err := call(t, h, tl, json.RawMessage(tt.args))
			if tt.failed {
				var te *mcpkit.ToolError
				var ve *middleware.ValidationError
				if !errors.As(err, &te) || !errors.As(err, &ve) || te.ErrorClass() != mcpkit.Retryable {
					t.Fatalf("got %v, %v; want a retryable *ValidationError", res, err)
				}
				if !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("error %q, want prefix %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			json.Unmarshal([]byte(resultText(t, res)), &got)
			json.Unmarshal([]byte(tt.want), &want)
			if gb, wb := mustMarshal(got), mustMarshal(want); gb != wb {
				t.Errorf("handler saw %s, want %s", gb, wb)
			}
		})
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestValidateNamesEveryField(t *testing.T) {
	h := middleware.Validate(&middleware.ValidateOptions{Mode: middleware.Strict})(mcpkit.HandlerFunc(echoArgs))
	_, err := call(t, h, orderTool(), json.RawMessage(`{"lines":[{"sku":"ab","qty":0},{"qty":1,"color":"red"}],"priority":"urgent","extra":1}`))
	var ve *middleware.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v", err)
	}
	var paths []string
	for _, is := range ve.Issues {
		paths = append(paths, is.Path)
	}
	for _, want := range []string{"lines/0/sku", "lines/0/qty", "lines/1/sku", "lines/1/color", "priority", "extra"} {
		found := false
		for _, p := range paths {
			found = found || p == want
		}
		if !found || !strings.Contains(err.Error(), want+": ") {
			t.Errorf("issue at %s not reported: %v", want, err)
		}
	}
}

type Forecast struct {
	City  string  `json:"city"`
	TempC float64 `json:"tempC"`
}

func TestValidateOutput(t *testing.T) {
	outSchema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	tool := func(name string, res *mcp.CallToolResult) *mcpkit.Tool {
		return &mcpkit.Tool{
			Tool: mcp.Tool{Name: name, InputSchema: objectSchema, OutputSchema: outSchema},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return res, nil
			}),
		}
	}
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want string // "" for success
	}{
		{"matches", &mcp.CallToolResult{StructuredContent: map[string]int{"n": 1}}, ""},
		{"raw JSON matches", &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"n":2}`)}, ""},
		{"mismatch", &mcp.CallToolResult{StructuredContent: map[string]any{"n": "one"}},
			`tool "mismatch" returned structured content that does not match its output schema: n: `},
		{"missing", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
			`tool "missing" returned structured content that does not match its output schema: no structured content`},
		{"error results are not checked", &mcp.CallToolResult{IsError: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, []mcpkit.Middleware{middleware.Validate(nil)}, tool(strings.ReplaceAll(tt.name, " ", "_"), tt.res))
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			res, err := ts.CallTool(t.Context(), strings.ReplaceAll(tt.name, " ", "_"), map[string]any{})
			if err != nil {
				t.Fatalf("got JSON-RPC error %v; output problems must be isError results", err)
			}
			if tt.want == "" {
				if res.IsError != tt.res.IsError {
					t.Errorf("got %+v", res)
				}
				return
			}
			if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Fatal || !strings.HasPrefix(resultText(t, res), tt.want) {
				t.Errorf("got %q (isError %v, class %q), want prefix %q", resultText(t, res), res.IsError, mcpkit.ErrorClassOf(res), tt.want)
			}
		})
	}
	// A typed tool's results always match its inferred schema.
	forecast := tools.Must(tools.New("forecast", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (Forecast, error) {
		return Forecast{City: in.City, TempC: 21.5}, nil
	}, nil))
	ts := mcpkittest.NewInMemoryServer(t, newServer(t, []mcpkit.Middleware{middleware.Validate(nil)}, forecast), nil)
	if res, err := ts.CallTool(t.Context(), "forecast", map[string]any{"city": "Oslo"}); err != nil || res.IsError {
		t.Errorf("typed tool: %+v, %v", res, err)
	}
}

func TestValidatePerTool(t *testing.T) {
	loose := orderTool()
	loose.Name = "loose"
	strict := orderTool()
	strict.Name = "strict"
	off := orderTool()
	off.Name = "off"
	mw := middleware.Validate(&middleware.ValidateOptions{
		Mode: middleware.Lenient,
		PerTool: middleware.ByName(map[string]middleware.ValidationMode{
			"strict": middleware.Strict, "off": middleware.NoValidation,
		}),
	})
	srv := newServer(t, []mcpkit.Middleware{mw}, loose, strict, off)
	args := json.RawMessage(`{"lines":[{"sku":"abc","qty":"2"}]}`)
	for name, wantErr := range map[string]bool{"loose": false, "strict": true, "off": false} {
		h, _ := srv.Handler(name)
		tl, _ := srv.Lookup(name)
		res, err := call(t, h, tl, args)
		if (err != nil) != wantErr {
			t.Errorf("%s: %v, %v", name, res, err)
		}
		if name == "off" && err == nil && resultText(t, res) != string(args) {
			t.Errorf("off: handler saw %s, want the arguments untouched", resultText(t, res))
		}
	}
}

func TestValidateSchemaThatCannotCompile(t *testing.T) {
	logs := &logBuffer{}
	remote := &mcpkit.Tool{
		Tool:    mcp.Tool{Name: "remote", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)},
		Handler: mcpkit.HandlerFunc(echoArgs),
	}
	srv := newServer(t, []mcpkit.Middleware{middleware.Validate(&middleware.ValidateOptions{Logger: logs.logger()})}, remote)
	if !strings.Contains(logs.String(), "remote") {
		t.Errorf("compile failure not logged at registration: %s", logs.String())
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.CallTool(t.Context(), "remote", map[string]any{"a": 1})
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Fatal || !strings.Contains(resultText(t, res), "remote $ref") {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestValidateEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		srv := newServer(t, []mcpkit.Middleware{middleware.MaskErrors(nil), middleware.Validate(nil)}, orderTool())
		ts := connect(srv)
		res, err := ts.CallTool(t.Context(), "order", map[string]any{"lines": []any{map[string]any{"sku": "abc", "qty": "x"}}, "bogus": true})
		if err != nil {
			t.Fatal(err)
		}
		text := resultText(t, res)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable ||
			!strings.Contains(text, "lines/0/qty: ") || !strings.Contains(text, "bogus: ") {
			t.Errorf("got %q (isError %v), want both failing fields named, unmasked", text, res.IsError)
		}
		issues, _ := res.Meta[middleware.MetaKeyValidationIssues].([]any)
		if len(issues) != 2 {
			t.Errorf("_meta issues = %v", res.Meta[middleware.MetaKeyValidationIssues])
		}
		res, err = ts.CallTool(t.Context(), "order", map[string]any{"lines": []any{map[string]any{"sku": "abc", "qty": "3"}}})
		if err != nil || res.IsError || canonicalJSON(resultText(t, res)) != `{"lines":[{"gift":false,"qty":3,"sku":"abc"}],"priority":"low"}` {
			t.Errorf("lenient call: %+v, %v", res, err)
		}
	})
}

func TestValidateAddsNoAllocationsOnValidArguments(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool allocate")
	}
	args := json.RawMessage(`{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"high","note":"x"}`)
	ctx := context.Background()
	allocs := func(mw []mcpkit.Middleware) float64 {
		srv := newServer(t, mw, orderTool())
		h, _ := srv.Handler("order")
		tl, _ := srv.Lookup("order")
		req := mcpkittest.NewRequest(tl, args)
		return testing.AllocsPerRun(200, func() {
			if _, err := h.ServeTool(ctx, req); err != nil {
				t.Fatal(err)
			}
		})
	}
	bare := allocs(nil)
	for _, mode := range []middleware.ValidationMode{middleware.Strict, middleware.Lenient} {
		if got := allocs([]mcpkit.Middleware{middleware.Validate(&middleware.ValidateOptions{Mode: mode})}); got != bare {
			t.Errorf("mode %d: %v allocations per call, %v without validation", mode, got, bare)
		}
	}
}
