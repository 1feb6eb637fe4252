package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// WrapResultKey is set to true in the output schema of a tool whose
	// values are wrapped as {"result": value}, because MCP structured
	// content must be an object and the value is not one.
	WrapResultKey = "x-mcpkit-wrap-result"

	// MetaKeyWrapped is set to true in the _meta of a result whose
	// structuredContent is a wrapped {"result": value}. Clients that know it
	// unwrap with [Unwrap].
	MetaKeyWrapped = "io.github.mcpkit/wrappedResult"
)

// Unwrap returns the structured content of res as the tool's function
// returned it: the value under "result" when the result says it was
// wrapped, the structured content itself otherwise. It is meant for
// clients, where structured content arrives decoded, and works on a result
// straight from a handler too, whose structured content is JSON text.
func Unwrap(res *mcp.CallToolResult) any {
	if res == nil {
		return nil
	}
	sc := res.StructuredContent
	wrapped, _ := res.Meta[MetaKeyWrapped].(bool)
	if raw, ok := sc.(json.RawMessage); ok && wrapped {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			sc = m
		}
	}
	if m, ok := sc.(map[string]any); ok && wrapped {
		return m["result"]
	}
	return sc
}

type outKind int

const (
	outObject   outKind = iota // structured content, as is
	outWrapped                 // structured content {"result": value}
	outString                  // wrapped, with the string itself as text
	outContent                 // one mcp.Content
	outContents                // []mcp.Content
	outResult                  // *mcp.CallToolResult, untouched
	outNone                    // struct{}: an empty result
	outDynamic                 // an interface type: decided per call
)

// A converter turns a function's output into a result. Everything that
// depends only on the output type is decided when the tool is built.
type converter struct {
	kind    outKind
	nilable bool // the output type has a nil value
	slice   bool // a nil output is the empty list, wrapped
	schema  any  // the advertised output schema, or nil
}

var (
	contentType  = reflect.TypeFor[mcp.Content]()
	contentsType = reflect.TypeFor[[]mcp.Content]()
	resultType   = reflect.TypeFor[*mcp.CallToolResult]()
)

func newConverter(t reflect.Type, opts *Options) (*converter, error) {
	c := &converter{}
	switch k := t.Kind(); {
	case t == resultType:
		c.kind = outResult
	case t == contentType:
		c.kind = outContent
	case t == contentsType:
		c.kind = outContents
	case k == reflect.Struct && t.NumField() == 0:
		c.kind = outNone
	case k == reflect.Interface:
		c.kind = outDynamic
	case isObject(t):
		c.kind = outObject
	case k == reflect.String && !t.Implements(textMarshalerType) && !t.Implements(jsonMarshalerType):
		c.kind = outString
	default:
		c.kind = outWrapped
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Interface, reflect.Slice:
		c.nilable = true
	}
	c.slice = t.Kind() == reflect.Slice && c.kind == outWrapped

	switch c.kind {
	case outObject, outWrapped, outString:
		if opts.OutputSchema != nil {
			c.schema = opts.OutputSchema
			break
		}
		s, err := outputSchema(t, c.kind != outObject, opts)
		if err != nil {
			return nil, err
		}
		c.schema = s
	default:
		c.schema = opts.OutputSchema
	}
	return c, nil
}

// isObject reports whether values of t are JSON objects: structs and maps,
// or pointers to them, without custom JSON encodings.
func isObject(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType || t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return false
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

func outputSchema(t reflect.Type, wrap bool, opts *Options) (*jsonschema.Schema, error) {
	root := t
	for !wrap && root.Kind() == reflect.Pointer {
		root = root.Elem()
	}
	s, err := schemaFor(root, true, opts.TypeSchemas)
	if err != nil {
		return nil, err
	}
	// A nil root is not sent as null (see converter.convert), so the root
	// is not nullable.
	if i := slices.Index(s.Types, "null"); i >= 0 {
		s.Types = slices.Delete(s.Types, i, i+1)
		if len(s.Types) == 1 {
			s.Type, s.Types = s.Types[0], nil
		}
	}
	if wrap {
		defs := s.Defs
		s.Defs = nil
		s = &jsonschema.Schema{
			Type:                 "object",
			Properties:           map[string]*jsonschema.Schema{"result": s},
			Required:             []string{"result"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Defs:                 defs,
			Extra:                map[string]any{WrapResultKey: true},
		}
	}
	if err := checkResolves(s); err != nil {
		return nil, err
	}
	return s, nil
}

// emptyResult is a successful result with nothing to say.
func emptyResult() *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{}}
}

func (c *converter) convert(out any) (*mcp.CallToolResult, error) {
	if c.nilable && isNil(out) {
		if !c.slice {
			return emptyResult(), nil
		}
		out = []any{}
	}
	switch c.kind {
	case outResult:
		return out.(*mcp.CallToolResult), nil
	case outContent:
		return &mcp.CallToolResult{Content: []mcp.Content{out.(mcp.Content)}}, nil
	case outContents:
		return &mcp.CallToolResult{Content: out.([]mcp.Content)}, nil
	case outNone:
		return emptyResult(), nil
	case outDynamic:
		return dynamic(out)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tools: encoding the result: %w", err)
	}
	if c.kind == outObject {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
			StructuredContent: json.RawMessage(b),
		}, nil
	}
	text := string(b)
	if c.kind == outString {
		text = reflect.ValueOf(out).String()
	}
	return wrapped(b, text), nil
}

// wrapped returns a result whose structured content is {"result": value}.
func wrapped(value []byte, text string) *mcp.CallToolResult {
	sc := make([]byte, 0, len(`{"result":}`)+len(value))
	sc = append(sc, `{"result":`...)
	sc = append(sc, value...)
	sc = append(sc, '}')
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(sc),
		Meta:              mcp.Meta{MetaKeyWrapped: true},
	}
}

// dynamic converts the output of a function declared to return an
// interface, by the value's own type. Without an output schema, only
// objects become structured content.
func dynamic(out any) (*mcp.CallToolResult, error) {
	switch v := out.(type) {
	case *mcp.CallToolResult:
		return v, nil
	case mcp.Content:
		return &mcp.CallToolResult{Content: []mcp.Content{v}}, nil
	case []mcp.Content:
		return &mcp.CallToolResult{Content: v}, nil
	case string:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v}}}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tools: encoding the result: %w", err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	if len(b) > 0 && b[0] == '{' {
		res.StructuredContent = json.RawMessage(b)
	}
	return res, nil
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Interface, reflect.Slice:
		return rv.IsNil()
	}
	return false
}
