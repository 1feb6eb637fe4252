package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
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

func orderTool(name string) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(orderSchema)}, Handler: mcpkit.HandlerFunc(echoArgs)}
}

// serveChain calls the full chain of the tool called name with args,
// without a transport.
func serveChain(t *testing.T, srv *mcpkit.Server, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	t.Helper()
	h, ok := srv.Handler(name)
	tl, _ := srv.Lookup(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	return h.ServeTool(t.Context(), mcpkittest.NewRequest(tl, args))
}

func canonical(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "not JSON: " + s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestValidateArguments(t *testing.T) {
	tests := []struct {
		name   string
		mode   mcpkit.ValidationMode
		args   string
		want   string // the arguments the handler saw, or the error text
		failed bool
	}{
		{"valid, defaults through $ref", mcpkit.Strict, `{"lines":[{"sku":"abc","qty":2}]}`,
			`{"lines":[{"sku":"abc","qty":2,"gift":false}],"priority":"low"}`, false},
		{"valid, nothing missing", mcpkit.Strict, `{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"high"}`,
			`{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"high"}`, false},
		{"every failing field named", mcpkit.Strict, `{"lines":[{"sku":"ab","qty":0},{"qty":1,"color":"red"}],"priority":"urgent","extra":1}`,
			"invalid arguments: ", true},
		{"strict does not coerce", mcpkit.Strict, `{"lines":[{"sku":"abc","qty":"2"}]}`,
			"invalid arguments: lines/0/qty: ", true},
		{"lenient coerces numbers and booleans", mcpkit.Lenient, `{"lines":[{"sku":"abc","qty":"2","gift":"true"}]}`,
			`{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"low"}`, false},
		{"lenient decodes JSON in a string", mcpkit.Lenient, `{"lines":"[{\"sku\":\"abc\",\"qty\":1}]"}`,
			`{"lines":[{"sku":"abc","qty":1,"gift":false}],"priority":"low"}`, false},
		{"lenient still rejects nonsense", mcpkit.Lenient, `{"lines":[{"sku":"abc","qty":"two"}]}`,
			"invalid arguments: lines/0/qty: ", true},
		{"missing required", mcpkit.Lenient, `{}`, "invalid arguments: lines: ", true},
		{"no arguments at all", mcpkit.Strict, ``, "invalid arguments: lines: ", true},
		{"not JSON", mcpkit.Strict, `{"lines":`, "invalid arguments: not valid JSON at offset", true},
		{"number beyond float64", mcpkit.Strict, `{"lines":[{"sku":"abc","qty":1e400}]}`, "invalid arguments: lines/0/qty: want a number within the range of a 64-bit float", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, &mcpkit.ServerOptions{Validation: tt.mode})
			if err := srv.Add(orderTool("order")); err != nil {
				t.Fatal(err)
			}
			res, err := serveChain(t, srv, "order", json.RawMessage(tt.args))
			if tt.failed {
				var te *mcpkit.ToolError
				var ve *mcpkit.ValidationError
				if !errors.As(err, &te) || !errors.As(err, &ve) || te.ErrorClass() != mcpkit.Retryable || !errors.Is(err, mcpkit.ErrValidation) {
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
			if got, want := canonical(resultText(t, res)), canonical(tt.want); got != want {
				t.Errorf("handler saw %s, want %s", got, want)
			}
		})
	}
}

func TestValidateNamesEveryField(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, nil)
	srv.Add(orderTool("order"))
	_, err := serveChain(t, srv, "order", json.RawMessage(`{"lines":[{"sku":"ab","qty":0},{"qty":1,"color":"red"}],"priority":"urgent","extra":1}`))
	var ve *mcpkit.ValidationError
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

func TestValidateOutputCases(t *testing.T) {
	outSchema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	mk := func(name string, res *mcp.CallToolResult) *mcpkit.Tool {
		tl := tool(name, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return res, nil })
		tl.OutputSchema = outSchema
		return tl
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
		{"error results are not checked", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.ReplaceAll(tt.name, " ", "_")
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "out"}, nil)
			if err := srv.Add(mk(name, tt.res)); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			res, err := ts.CallTool(t.Context(), name, map[string]any{})
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
	type Forecast struct {
		City  string  `json:"city"`
		TempC float64 `json:"tempC"`
	}
	forecast := tools.Must(tools.New("forecast", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (Forecast, error) {
		return Forecast{City: in.City, TempC: 21.5}, nil
	}, nil))
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "out"}, nil)
	srv.Add(forecast)
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if res, err := ts.CallTool(t.Context(), "forecast", map[string]any{"city": "Oslo"}); err != nil || res.IsError {
		t.Errorf("typed tool: %+v, %v", res, err)
	}
}

func TestValidatePerTool(t *testing.T) {
	loose, strict, off := orderTool("loose"), orderTool("strict"), orderTool("off")
	strict.Validation, off.Validation = mcpkit.Strict, mcpkit.NoValidation
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, &mcpkit.ServerOptions{Validation: mcpkit.Lenient})
	if err := srv.Add(loose, strict, off); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"lines":[{"sku":"abc","qty":"2"}]}`)
	for name, wantErr := range map[string]bool{"loose": false, "strict": true, "off": false} {
		res, err := serveChain(t, srv, name, args)
		if (err != nil) != wantErr {
			t.Errorf("%s: %v, %v", name, res, err)
		}
		if name == "off" && err == nil && resultText(t, res) != string(args) {
			t.Errorf("off: handler saw %s, want the arguments untouched", resultText(t, res))
		}
	}
}

// TestAddRefusesSchemasItCannotEnforce checks that a schema the validator
// cannot compile is an error from Add naming the tool, not a failure of
// every call.
func TestAddRefusesSchemasItCannotEnforce(t *testing.T) {
	for name, schema := range map[string]string{
		"remote_ref":   `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`,
		"dangling_ref": `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
		"bad_pattern":  `{"type":"object","properties":{"a":{"type":"string","pattern":"(["}}}`,
		"bad_type":     `{"type":"object","properties":{"a":{"type":"strng"}}}`,
		"misspelt":     `{"type":"object","properties":{"a":{"type":"integer","mininum":1}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, nil)
			err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)}, Handler: mcpkit.HandlerFunc(echoArgs)})
			if !errors.Is(err, mcpkit.ErrInvalidSchema) || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) ||
				!strings.Contains(err.Error(), "input schema: /properties/a") {
				t.Fatalf("Add = %v, want ErrInvalidSchema naming the tool", err)
			}
			if _, ok := srv.Lookup(name); ok {
				t.Error("the tool was registered anyway")
			}
			// Without validation, the server takes the schema as it is.
			srv = mcpkit.NewServer(&mcp.Implementation{Name: "v"}, &mcpkit.ServerOptions{Validation: mcpkit.NoValidation})
			if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)}, Handler: mcpkit.HandlerFunc(echoArgs)}); err != nil && name != "bad_type" {
				t.Errorf("NoValidation: Add = %v", err)
			}
		})
	}
}

func TestValidateEndToEnd(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, &mcpkit.ServerOptions{Validation: mcpkit.Lenient})
	srv.Add(orderTool("order"))
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		ts := connect(srv)
		res, err := ts.CallTool(t.Context(), "order", map[string]any{"lines": []any{map[string]any{"sku": "abc", "qty": "x"}}, "bogus": true})
		if err != nil {
			t.Fatal(err)
		}
		text := resultText(t, res)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable ||
			!strings.Contains(text, "lines/0/qty: ") || !strings.Contains(text, "bogus: ") {
			t.Errorf("got %q (isError %v), want both failing fields named", text, res.IsError)
		}
		issues, _ := res.Meta[mcpkit.MetaKeyValidationIssues].([]any)
		if len(issues) != 2 {
			t.Errorf("_meta issues = %v", res.Meta[mcpkit.MetaKeyValidationIssues])
		}
		res, err = ts.CallTool(t.Context(), "order", map[string]any{"lines": []any{map[string]any{"sku": "abc", "qty": "3"}}})
		if err != nil || res.IsError || canonical(resultText(t, res)) != `{"lines":[{"gift":false,"qty":3,"sku":"abc"}],"priority":"low"}` {
			t.Errorf("lenient call: %+v, %v", res, err)
		}
	})
}

func TestValidateAddsNoAllocationsOnValidArguments(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool allocate")
	}
	args := json.RawMessage(`{"lines":[{"sku":"abc","qty":2,"gift":true}],"priority":"high","note":"x"}`)
	allocs := func(mode mcpkit.ValidationMode) float64 {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, &mcpkit.ServerOptions{Validation: mode})
		srv.Add(orderTool("order"))
		h, _ := srv.Handler("order")
		tl, _ := srv.Lookup("order")
		req := mcpkittest.NewRequest(tl, args)
		return testing.AllocsPerRun(200, func() {
			if _, err := h.ServeTool(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		})
	}
	bare := allocs(mcpkit.NoValidation)
	for _, mode := range []mcpkit.ValidationMode{mcpkit.Strict, mcpkit.Lenient} {
		if got := allocs(mode); got != bare {
			t.Errorf("mode %d: %v allocations per call, %v without validation", mode, got, bare)
		}
	}
}

// Example_validation shows the server's validation: defaults filled in,
// strict by default, lenient on request.
func Example_validation() {
	type In struct {
		City string `json:"city" minLength:"2"`
		Days int    `json:"days" minimum:"1" maximum:"7" default:"3"`
	}
	forecast := func() *mcpkit.Tool {
		return tools.Must(tools.New("forecast", func(ctx context.Context, in In) (string, error) {
			return fmt.Sprintf("%d days in %s", in.Days, in.City), nil
		}, nil))
	}
	show := func(cs *mcp.ClientSession, args map[string]any) {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "forecast", Arguments: args})
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	strict := mcpkit.NewServer(&mcp.Implementation{Name: "strict"}, nil)
	strict.Add(forecast())
	cs := connect(strict)
	defer cs.Close()
	show(cs, map[string]any{"city": "Oslo"}) // the default applies
	show(cs, map[string]any{"city": "Oslo", "days": "5"})
	show(cs, map[string]any{"city": "X", "days": 9, "unit": "C"})

	lenient := mcpkit.NewServer(&mcp.Implementation{Name: "lenient"}, &mcpkit.ServerOptions{Validation: mcpkit.Lenient})
	lenient.Add(forecast())
	cs2 := connect(lenient)
	defer cs2.Close()
	show(cs2, map[string]any{"city": "Oslo", "days": "5"}) // "5" is coerced to 5
	// Output:
	// false 3 days in Oslo
	// true invalid arguments: days: want integer, got string
	// true invalid arguments: city: want at least 2 characters, got 1; days: want <= 7, got 9; unit: unexpected property
	// false 5 days in Oslo
}
