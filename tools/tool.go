package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// Options configures a tool built by [New] or [NewWithRequest]. A nil
// *Options means the defaults: no title or description, inferred schemas.
type Options struct {
	// Title, Description, Annotations, Icons and Meta go into the tool's
	// MCP definition as they are.
	Title       string
	Description string
	Annotations *mcp.ToolAnnotations
	Icons       []mcp.Icon
	Meta        mcp.Meta

	// Tags, Version and Middleware go into the [mcpkit.Tool].
	Tags       []string
	Version    string
	Middleware []mcpkit.Middleware

	// InputSchema, if set, is advertised instead of the schema inferred
	// from In. It must be a JSON object with "type": "object"; the caller
	// is responsible for it matching what In decodes.
	InputSchema any

	// OutputSchema, if set, is advertised instead of the schema inferred
	// from Out, and must describe Out's JSON.
	OutputSchema any

	// TypeSchemas gives the schema of types that cannot describe
	// themselves, for example types from other packages with a custom
	// MarshalJSON. They apply wherever the type appears, in input and
	// output.
	TypeSchemas map[reflect.Type]*jsonschema.Schema
}

// New returns a tool named name whose handler decodes the call's arguments
// into an In, calls fn and converts its Out into a result.
//
// In must be a struct, a map with string keys, or a pointer to one; its
// input schema is inferred from the fields as encoding/json sees them, with
// struct tags for the rest (see the package documentation). Out decides the
// result:
//
//   - a struct, a map or a pointer to one: structuredContent holding it, and
//     its JSON as a text block; the output schema is inferred from Out;
//   - numbers, strings, booleans, slices, arrays: structuredContent holding
//     the value, and a text block with its JSON (or the string itself); the
//     output schema is the value's. Protocol 2026-07-28 allows any JSON
//     value there (SEP-2106); for older clients the server sends
//     {"result": value} and advertises the schema of that object;
//   - []byte: an embedded resource holding the bytes as a blob, with the
//     MIME type http.DetectContentType finds;
//   - [mcp.Content], a concrete content type (*mcp.ImageContent, ...) or
//     []mcp.Content: those content blocks, no structured content;
//   - *[mcp.CallToolResult]: the result, untouched;
//   - struct{}: an empty result.
//
// A nil pointer, map, interface or content list is an empty result (which
// passes the output schema check: it carries no structured content); a nil
// slice is the empty list. Structured content is a json.RawMessage in the
// handler's result. Errors from fn are reported as the server's
// error table says; arguments that cannot be decoded into In are a
// retryable tool error naming the field.
//
// New returns an error for an invalid name, a type that has no JSON form,
// an invalid tag, or a schema that does not resolve.
func New[In, Out any](name string, fn func(ctx context.Context, in In) (Out, error), opts *Options) (*mcpkit.Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tools: %q: nil function", name)
	}
	return build(name, opts, func(ctx context.Context, _ *mcpkit.Request, in In) (Out, error) { return fn(ctx, in) })
}

// NewWithRequest is like [New] for functions that also need the request:
// progress ([mcpkit.Request.NotifyProgress]), the answers to input requests
// ([mcpkit.InputResponse]), headers ([mcpkit.Request.Header],
// [mcpkit.Request.ParamHeader]) or the caller's token
// ([mcpkit.Request.TokenInfo]).
func NewWithRequest[In, Out any](name string, fn func(ctx context.Context, req *mcpkit.Request, in In) (Out, error), opts *Options) (*mcpkit.Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tools: %q: nil function", name)
	}
	return build(name, opts, fn)
}

// Must returns t, and panics if err is not nil. It is meant for tools built
// at program start: srv.Add(tools.Must(tools.New("add", add, nil))).
func Must(t *mcpkit.Tool, err error) *mcpkit.Tool {
	if err != nil {
		panic(err)
	}
	return t
}

func build[In, Out any](name string, opts *Options, fn func(context.Context, *mcpkit.Request, In) (Out, error)) (*mcpkit.Tool, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := mcpkit.ValidateToolName(name); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	// Both types are inferred whatever the first says, so that their
	// problems (misspelt tags, say) are reported together, in one run.
	in, inErr := inputSchema(reflect.TypeFor[In](), opts)
	if inErr != nil {
		inErr = fmt.Errorf("tools: %q: input schema: %w", name, inErr)
	}
	conv, outErr := newConverter(reflect.TypeFor[Out](), opts)
	if outErr != nil {
		outErr = fmt.Errorf("tools: %q: output: %w", name, outErr)
	}
	if inErr != nil || outErr != nil {
		return nil, errors.Join(inErr, outErr)
	}
	h := &handler[In, Out]{fn: fn, conv: conv}
	t := &mcpkit.Tool{
		Tool: mcp.Tool{
			Name:         name,
			Title:        opts.Title,
			Description:  opts.Description,
			Annotations:  opts.Annotations,
			Icons:        opts.Icons,
			Meta:         opts.Meta,
			InputSchema:  in,
			OutputSchema: conv.schema,
		},
		Handler:    h,
		Middleware: opts.Middleware,
		Tags:       opts.Tags,
		Version:    opts.Version,
	}
	return t, nil
}

// inputSchema returns the advertised input schema: the override, or the
// schema inferred from t, checked to be an object that resolves.
func inputSchema(t reflect.Type, opts *Options) (any, error) {
	if opts.InputSchema != nil {
		return opts.InputSchema, nil
	}
	root := t
	for root.Kind() == reflect.Pointer {
		root = root.Elem()
	}
	if root.Kind() == reflect.Interface || root == rawMessageType {
		// The function takes the arguments as they come.
		return &jsonschema.Schema{Type: "object"}, nil
	}
	s, err := schemaFor(t, false, opts.TypeSchemas)
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("%s is not a struct or map: tool arguments are a JSON object", t)
	}
	if err := checkResolves(s); err != nil {
		return nil, err
	}
	if err := checkHeaders(s); err != nil {
		return nil, err
	}
	return s, nil
}

// checkResolves reports whether s is a valid schema whose references all
// resolve, as validation will need.
func checkResolves(s *jsonschema.Schema) error {
	if _, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return err
	}
	return nil
}

// handler is the mcpkit.Handler of a typed tool.
type handler[In, Out any] struct {
	fn   func(context.Context, *mcpkit.Request, In) (Out, error)
	conv *converter
}

func (h *handler[In, Out]) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var in In
	if args := req.Arguments; len(args) > 0 && !isNull(args) {
		if err := json.Unmarshal(args, &in); err != nil {
			// 10.0 and 1e2 are integers to JSON Schema, and so to the
			// validator, but not to encoding/json: write them as such and
			// try again, paying for it only when it is needed.
			fixed, ok := integralLiterals(args, err)
			if !ok {
				return nil, argumentError(err)
			}
			in = *new(In)
			if err := json.Unmarshal(fixed, &in); err != nil {
				return nil, argumentError(err)
			}
		}
	}
	out, err := h.fn(ctx, req, in)
	if err != nil {
		return nil, err
	}
	return h.conv.convert(out)
}

func isNull(b []byte) bool {
	return bytes.Equal(bytes.TrimSpace(b), []byte("null"))
}

// An ArgumentError reports arguments that could not be decoded into the
// tool's input type. It reaches the client as a retryable tool error whose
// text names the field as the validator does ("items/id: want integer, got
// string") and repeats at most 40 bytes of the arguments.
type ArgumentError struct {
	// Field is the dotted path of the offending field, as encoding/json
	// gives it ("items.id"), or empty when the arguments as a whole are at
	// fault.
	Field string
	// Err is the decoding error.
	Err error
}

func (e *ArgumentError) Error() string {
	at := ""
	if e.Field != "" {
		at = schema.Clip(strings.ReplaceAll(e.Field, ".", "/")) + ": "
	}
	var ute *json.UnmarshalTypeError
	if errors.As(e.Err, &ute) {
		want := jsonTypeName(ute.Type)
		got := ute.Value
		if lit, isNum := strings.CutPrefix(got, "number "); isNum {
			if numberOutOfRange(lit, ute.Type) {
				return fmt.Sprintf("invalid arguments: %swant %s, got a number out of its range: %s", at, want, schema.Clip(lit))
			}
			return fmt.Sprintf("invalid arguments: %swant %s, got number %s", at, want, schema.Clip(lit))
		}
		return fmt.Sprintf("invalid arguments: %swant %s, got %s", at, want, schema.Clip(got))
	}
	return fmt.Sprintf("invalid arguments: %s%s", at, schema.Clip(e.Err.Error()))
}

// Unwrap returns e.Err.
func (e *ArgumentError) Unwrap() error { return e.Err }

func argumentError(err error) error {
	ae := &ArgumentError{Err: err}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		ae.Field = ute.Field
	}
	return &mcpkit.ToolError{Err: ae, Class: mcpkit.Retryable}
}

// numberOutOfRange reports whether the number literal lit is beyond what a
// value of type t holds, rather than of the wrong kind (10.5 for an int).
func numberOutOfRange(lit string, t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return true // beyond float64
	}
	if t == nil || f != math.Trunc(f) {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		limit := math.Ldexp(1, t.Bits()-1)
		return f < -limit || f >= limit
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return f < 0 || f >= math.Ldexp(1, t.Bits())
	case reflect.Float32:
		return math.Abs(f) > math.MaxFloat32
	}
	return false
}

// integralLiterals returns args with every number literal that has a
// fraction or an exponent but an integral value within int64 (10.0, 1e2,
// -2.50e1) written as an integer, when err says a number did not fit an
// integer field; false when there is nothing to rewrite. Literals longer
// than 40 bytes or with exponents beyond 18 are left alone: no int64 is
// written that way, and big exponents would be costly to evaluate.
func integralLiterals(args []byte, err error) ([]byte, bool) {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) || !strings.HasPrefix(ute.Value, "number") {
		return nil, false
	}
	var out []byte
	last := 0
	for i := 0; i < len(args); i++ {
		switch c := args[i]; {
		case c == '"':
			for i++; i < len(args) && args[i] != '"'; i++ {
				if args[i] == '\\' {
					i++
				}
			}
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(args) && strings.IndexByte("0123456789.eE+-", args[j]) >= 0 {
				j++
			}
			if n, ok := integral(args[i:j]); ok {
				out = append(out, args[last:i]...)
				out = strconv.AppendInt(out, n, 10)
				last = j
			}
			i = j - 1
		}
	}
	if out == nil {
		return nil, false
	}
	return append(out, args[last:]...), true
}

// maxIntegralLiteral is the longest number literal integral rewrites: no
// int64 needs more.
const maxIntegralLiteral = 40

// integral returns the value of the number literal lit if it has a
// fraction or an exponent and is a whole number within int64.
func integral(lit []byte) (int64, bool) {
	if len(lit) > maxIntegralLiteral || !bytes.ContainsAny(lit, ".eE") {
		return 0, false
	}
	if k := bytes.IndexAny(lit, "eE"); k >= 0 {
		exp, err := strconv.Atoi(string(lit[k+1:]))
		if err != nil || exp > 18 || exp < -18 {
			return 0, false
		}
	}
	r, ok := new(big.Rat).SetString(string(lit))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// jsonTypeName names the JSON type that decodes into t.
func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}
