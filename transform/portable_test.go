package transform_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/portable"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// The constants are literals, for godoc; they must stay the internal
// package's.
func TestProfileValues(t *testing.T) {
	for p, want := range map[transform.Profile]portable.Profile{
		transform.AllProviders: portable.AllProviders,
		transform.Gemini:       portable.Gemini,
		transform.OpenAIStrict: portable.OpenAIStrict,
	} {
		if portable.Profile(p) != want || p.String() != want.String() {
			t.Errorf("%v is %d, want %v", p, int(p), want)
		}
	}
	if s := transform.Profile(7).String(); s != "Profile(7)" {
		t.Errorf("Profile(7).String() = %q", s)
	}
}

func TestPortablePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Portable":      func() { transform.Portable(0, nil) },
		"CheckPortable": func() { transform.CheckPortable(4) },
	} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(v.(string), "unknown profile") {
					t.Errorf("%s with an unknown profile: panic %v", name, v)
				}
			}()
			f()
		}()
	}
}

// rawTool is a tool with the input schema s (JSON) whose handler answers
// with the arguments it got and the name of the tool it finds in req.Tool.
func rawTool(name, s string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(s)},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			in, _ := json.Marshal(req.Tool.InputSchema)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Arguments) + " " + string(in)}}}, nil
		}),
	}
}

func TestPortableErrors(t *testing.T) {
	for _, tt := range []struct {
		p      transform.Profile
		name   string
		schema string
		want   string
	}{
		{transform.OpenAIStrict, "gh.search", `{"type":"object"}`, `not portable: OpenAIStrict: tool name "gh.search": OpenAI takes a tool name of letters, digits, _ and -, at most 64`},
		{transform.Gemini, "t", `{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}}}`, `not portable: Gemini: input schema: /properties/labels: an object without properties: Gemini refuses one below the root`},
		{transform.OpenAIStrict, "t", `{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}}}`, `/properties/labels: an object with arbitrary property names (a map)`},
		{transform.AllProviders, "t", `{"type":"object","properties":{"data":{}}}`, `/properties/data: any JSON value is valid here, and AllProviders needs a type`},
		{transform.Gemini, "t", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a"}}}`, `only references within the schema can be rewritten`},
	} {
		_, err := transform.Portable(tt.p, nil)(rawTool(tt.name, tt.schema))
		if !errors.Is(err, transform.ErrNotPortable) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %s: error %v, want ErrNotPortable with %q", tt.p, tt.schema, err, tt.want)
		}
	}

	// A server names the tool it refuses, and keeps its catalog.
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil)
	if err := srv.Add(rawTool("ok", `{"type":"object"}`), rawTool("maps", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":true}}}`)); err != nil {
		t.Fatal(err)
	}
	err := srv.Transform(transform.Portable(transform.OpenAIStrict, nil))
	if err == nil || !strings.Contains(err.Error(), "maps") || !errors.Is(err, transform.ErrNotPortable) {
		t.Errorf("Transform: %v", err)
	}
	// Select leaves that tool alone; OmitUnsupported leaves out what the
	// profile cannot say.
	err = srv.Transform(transform.Select(mcpkit.Not(mcpkit.Named("maps")), transform.Portable(transform.OpenAIStrict, nil)))
	if err != nil {
		t.Errorf("Transform with Select: %v", err)
	}
	if _, err := transform.Portable(transform.OpenAIStrict, &transform.PortableOptions{OmitUnsupported: true})(rawTool("maps", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":true}}}`)); err != nil {
		t.Errorf("OmitUnsupported: %v", err)
	}
}

// The tool's schema is not modified, whatever its Go type, and the derived
// tool shares nothing with it.
func TestPortableKeepsTheTool(t *testing.T) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"a": {Types: []string{"string", "null"}},
		"b": {Type: "array", Items: &jsonschema.Schema{Type: "integer"}},
	}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: s}, Handler: echoArgs, Tags: []string{"x"}}
	before := mustMarshal(s)
	for _, p := range profiles {
		d, err := transform.Portable(p, nil)(tool)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustMarshal(s); got != before {
			t.Errorf("%v changed the schema: %s", p, got)
		}
		if _, ok := d.InputSchema.(json.RawMessage); !ok || d == tool || &d.Tags[0] == &tool.Tags[0] {
			t.Errorf("%v: derived tool %+v", p, d)
		}
	}
}

// The tool's handler finds its own definition in req.Tool when the derived
// tool's handler runs; middleware sees the derived tool.
func TestPortableRequestTool(t *testing.T) {
	tool := rawTool("t", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil)
	var seen string
	tool.Middleware = []mcpkit.Middleware{func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			seen = string(req.Arguments)
			return next.ServeTool(ctx, req)
		})
	}}
	if err := srv.Add(tool); err != nil {
		t.Fatal(err)
	}
	if err := srv.Transform(transform.Portable(transform.OpenAIStrict, nil)); err != nil {
		t.Fatal(err)
	}
	res, err := mcpkittest.ServeTool(context.Background(), srv, "t", map[string]any{"a": nil})
	if err != nil {
		t.Fatal(err)
	}
	want := `{} {"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`
	if got := text(t, res); got != want || seen != `{"a":null}` {
		t.Errorf("the tool got %s (want %s); its middleware %s", got, want, seen)
	}
}

// A Gemini tool whose schema says nullable is checked by its handler, in
// the tool's mode or the one the options give, output included.
func TestPortableGeminiValidation(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":["integer","null"]}},"required":["n"]}`
	output := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, Required: []string{"ok"}}
	newTool := func(mode mcpkit.ValidationMode, out any) *mcpkit.Tool {
		tool := rawTool("t", schema)
		tool.Validation = mode
		tool.OutputSchema = output
		tool.Handler = mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: out, Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
		return tool
	}
	serve := func(tool *mcpkit.Tool, opts *transform.PortableOptions, args string) (*mcp.CallToolResult, error) {
		d, err := transform.Portable(transform.Gemini, opts)(tool)
		if err != nil {
			t.Fatal(err)
		}
		if d.Validation != mcpkit.NoValidation && tool.Validation != mcpkit.NoValidation {
			t.Errorf("the derived tool leaves validation to the server: %v", d.Validation)
		}
		return d.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(d, json.RawMessage(args)))
	}
	good := map[string]any{"ok": true}

	if _, err := serve(newTool(mcpkit.DefaultValidation, good), nil, `{"n":null}`); err != nil {
		t.Errorf("null: %v", err)
	}
	_, err := serve(newTool(mcpkit.DefaultValidation, good), nil, `{"n":"5"}`)
	var ve *mcpkit.ValidationError
	if !errors.As(err, &ve) || ve.Output || len(ve.Issues) != 1 || ve.Issues[0].Path != "n" || class(err) != mcpkit.Retryable {
		t.Errorf(`"5" for an integer, strictly: %v`, err)
	}
	if _, err := serve(newTool(mcpkit.DefaultValidation, good), &transform.PortableOptions{Validation: mcpkit.Lenient}, `{"n":"5"}`); err != nil {
		t.Errorf(`"5" for an integer on a lenient server: %v`, err)
	}
	if _, err := serve(newTool(mcpkit.Lenient, good), nil, `{"n":"5"}`); err != nil {
		t.Errorf(`"5" for an integer to a lenient tool: %v`, err)
	}
	if _, err := serve(newTool(mcpkit.DefaultValidation, good), nil, `{}`); !errors.As(err, &ve) || !strings.Contains(err.Error(), "n") {
		t.Errorf("n left out: %v", err)
	}
	_, err = serve(newTool(mcpkit.DefaultValidation, map[string]any{"ok": "yes"}), nil, `{"n":1}`)
	if !errors.As(err, &ve) || !ve.Output || class(err) != mcpkit.Fatal {
		t.Errorf("bad output: %v", err)
	}
	if _, err := serve(newTool(mcpkit.NoValidation, map[string]any{"ok": "yes"}), nil, `{"n":"x"}`); err != nil {
		t.Errorf("a tool that checks nothing: %v", err)
	}
	// On a server that checks nothing, the derived tool checks nothing
	// either, and leaves its mode as it was.
	d, err := transform.Portable(transform.Gemini, &transform.PortableOptions{Validation: mcpkit.NoValidation})(newTool(mcpkit.DefaultValidation, good))
	if err != nil || d.Validation != mcpkit.DefaultValidation {
		t.Fatalf("on a server without validation: %+v, %v", d, err)
	}
	if _, err := d.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(d, json.RawMessage(`{"n":"x"}`))); err != nil {
		t.Errorf("on a server without validation: %v", err)
	}
}

// class returns the retry class a client gets for err.
func class(err error) mcpkit.ErrorClass {
	_, c := mcpkit.Classify(nil, err)
	return c
}

func TestCheckPortable(t *testing.T) {
	good := rawTool("good", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	bad := rawTool("bad.name", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`)
	got := transform.CheckPortable(transform.AllProviders, &good.Tool, nil, &bad.Tool, &good.Tool)
	want := []string{
		`bad.name: (root): a portable tool name is a letter or _, then letters, digits, _ and -, at most 64`,
		`bad.name: /properties/a/type: "type" is a list; AllProviders takes one type name (anyOf with {"type": "null"} admits null)`,
	}
	if len(got) != len(want) {
		t.Fatalf("CheckPortable = %q", got)
	}
	for i, pb := range got {
		if pb.String() != want[i] {
			t.Errorf("problem %d: %q, want %q", i, pb, want[i])
		}
	}
	if pbs := transform.CheckPortable(transform.Gemini, &good.Tool); pbs != nil {
		t.Errorf("a portable tool: %v", pbs)
	}
	unmarshalable := &mcp.Tool{Name: "u", InputSchema: func() {}}
	if pbs := transform.CheckPortable(transform.Gemini, unmarshalable); len(pbs) != 1 || !strings.Contains(pbs[0].Rule, "not JSON") {
		t.Errorf("a schema that is not JSON: %v", pbs)
	}
}
