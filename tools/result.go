package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type outKind int

const (
	outObject   outKind = iota // structured content, an object
	outValue                   // structured content, any other JSON value
	outString                  // structured content, with the string itself as text
	outBytes                   // an embedded resource with a blob
	outContent                 // one mcp.Content (the interface or a concrete block)
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
	slice   bool // a nil output is the empty list
	schema  any  // the advertised output schema, or nil
}

var (
	contentType  = reflect.TypeFor[mcp.Content]()
	contentsType = reflect.TypeFor[[]mcp.Content]()
	resultType   = reflect.TypeFor[*mcp.CallToolResult]()
	bytesType    = reflect.TypeFor[[]byte]()
)

func newConverter(t reflect.Type, opts *Options) (*converter, error) {
	c := &converter{}
	switch k := t.Kind(); {
	case t == resultType:
		c.kind = outResult
	case t == contentType || t.Kind() != reflect.Interface && t.Implements(contentType):
		c.kind = outContent // *mcp.ImageContent and the like, too
	case t == bytesType:
		c.kind = outBytes
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
		c.kind = outValue
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Interface, reflect.Slice:
		c.nilable = true
	}
	c.slice = t.Kind() == reflect.Slice && c.kind == outValue

	switch c.kind {
	case outObject, outValue, outString:
		if opts.OutputSchema != nil {
			c.schema = opts.OutputSchema
			break
		}
		s, err := outputSchema(t, opts)
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

// outputSchema returns the schema of the structured content of a result
// of type t: any JSON value, as protocol 2026-07-28 allows (the server
// wraps a non-object as {"result": value}, schema included, for older
// clients).
func outputSchema(t reflect.Type, opts *Options) (*jsonschema.Schema, error) {
	root := t
	for root.Kind() == reflect.Pointer {
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
	case outBytes:
		return blobResult(out.([]byte)), nil
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
	text := string(b)
	if c.kind == outString {
		text = reflect.ValueOf(out).String()
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(b),
	}, nil
}

// blobResult returns bytes as an embedded resource with a blob, typed by
// their content when http.DetectContentType can tell.
func blobResult(data []byte) *mcp.CallToolResult {
	mime := http.DetectContentType(data)
	if mime == "text/plain; charset=utf-8" && !utf8.Valid(data) || mime == "application/octet-stream" {
		mime = "application/octet-stream"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{
		Resource: &mcp.ResourceContents{URI: "resource://result", MIMEType: mime, Blob: data},
	}}}
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
	case []byte:
		return blobResult(v), nil
	case string:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v}}}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tools: encoding the result: %w", err)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}, nil
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
