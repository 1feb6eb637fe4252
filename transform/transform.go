package transform

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// Errors that [Tool] returns, wrapped with the detail of what is wrong.
var (
	// ErrInvalidTool: the tool is nil, has no handler, has a schema or
	// _meta that is not JSON, or its derived definition fails the SDK's
	// checks (such as its x-mcp-header annotations).
	ErrInvalidTool = errors.New("transform: invalid tool")
	// ErrInvalidSpec: the Spec contradicts itself (Value and ValueFunc
	// both set, a Default on a Required argument, ...) or holds a value
	// that cannot be marshalled, a nil middleware, or a Default that its
	// argument's schema does not admit.
	ErrInvalidSpec = errors.New("transform: invalid spec")
	// ErrInvalidName: the derived tool's name or a new argument name is
	// not valid.
	ErrInvalidName = errors.New("transform: invalid name")
	// ErrUnknownArgument: the Spec names an argument the tool does not
	// have.
	ErrUnknownArgument = errors.New("transform: unknown argument")
	// ErrDuplicateArgument: two arguments would have the same name.
	ErrDuplicateArgument = errors.New("transform: duplicate argument")
	// ErrMissingValue: an argument the tool requires would have no value:
	// it is hidden without a Value, a ValueFunc or a default, or made
	// Optional without a default.
	ErrMissingValue = errors.New("transform: required argument without a value")
	// ErrUnsupportedSchema: the input schema uses a construct that the
	// argument transforms cannot rewrite correctly (see [Tool]).
	ErrUnsupportedSchema = errors.New("transform: schema cannot be rewritten")
)

// Spec says how a derived tool differs from its parent. The zero value of
// each field keeps what the parent has.
type Spec struct {
	// Name, Title and Description replace the parent's; "" keeps them.
	// Name must be a valid tool name (see [mcpkit.ValidateToolName]).
	Name, Title, Description string

	// Tags replace the parent's; nil keeps them, an empty slice clears
	// them.
	Tags []string

	// Annotations replace the parent's; nil keeps them.
	Annotations *mcp.ToolAnnotations

	// Meta is merged into the parent's _meta: each key replaces the
	// parent's entry of that name, and a key whose value is nil removes
	// it. Nil keeps the parent's _meta as it is.
	Meta mcp.Meta

	// Icons replace the parent's; nil keeps them.
	Icons []mcp.Icon

	// Version replaces the parent's; "" keeps it.
	Version string

	// Arguments changes arguments, keyed by their name in the parent's
	// input schema. Arguments it does not name are kept as they are.
	Arguments map[string]Arg

	// Middleware wraps the derived tool: it comes first in the derived
	// tool's [mcpkit.Tool.Middleware], before (outside) the parent's own
	// middleware, so it sees the call first and the result last, after
	// the parent's middleware has had it. Like all of a tool's
	// middleware it runs around the server's validation and sees the
	// arguments under their new names. A middleware that changes the
	// structured content must leave it matching the output schema, or
	// the caller replaces the derived tool's OutputSchema.
	Middleware []mcpkit.Middleware
}

// Arg says how one argument of the derived tool differs from the parent's.
// The zero value keeps the argument as it is.
type Arg struct {
	// Name renames the argument: clients see and send it under Name,
	// and the parent receives it under its own name. "" keeps the name.
	// A new name is 1 to 64 characters of A-Z, a-z, 0-9, '_', '-' and
	// '.', the names that every major model provider accepts.
	Name string

	// Description replaces the argument's description; "" keeps it.
	Description string

	// Default sets the argument's default in the advertised schema,
	// which validation fills in when a client leaves the argument out.
	// Nil keeps the parent's default. Tool refuses a Default that the
	// argument's schema does not admit (unless the parent's schema
	// already has such defaults, which Tool then cannot tell apart).
	Default any

	// Required makes the argument required or optional; the zero value
	// keeps what the parent says. Required adds it to the root's
	// required list. Optional takes it out of the lists that hold for
	// every call (the root's and those of allOf), leaving requirements
	// that hold under a condition (anyOf, if/then, ...) as they are; an
	// argument the parent requires can be made Optional only if it has
	// a default (its own, or Default), so that the parent still gets a
	// value.
	Required Requiredness

	// Examples replace the argument's examples; nil keeps them.
	Examples []any

	// Hide removes the argument from the advertised schema: clients
	// neither see nor send it, and the parent receives Value, or what
	// ValueFunc returns, or the default of the parent's schema, or
	// nothing. A client that sends it anyway (under any case, as
	// encoding/json would match it to a struct field) does not reach
	// the parent with it, and neither does one sending a renamed
	// argument under its old name. A hidden argument takes only Value
	// or ValueFunc; Hide is an error for an argument the parent requires
	// that has none of the three.
	Hide bool

	// Value is the value of a hidden argument on every call.
	Value any

	// ValueFunc computes the value of a hidden argument for each call,
	// from the call's request (the caller's user ID from
	// [mcpkit.Request.TokenInfo], a header, ...). Its request is the
	// derived tool's, arguments under their new names. A nil value
	// stands for "not given": the parent's default is used if it has
	// one, and otherwise the argument is left out, unless the parent
	// requires it. An error, or a nil value for a required argument
	// without a default, ends the call with a [*ValueError].
	ValueFunc func(ctx context.Context, req *mcpkit.Request) (any, error)
}

// Requiredness says whether clients must send an argument.
type Requiredness int

// The values of [Arg.Required].
const (
	// KeepRequiredness, the zero value, keeps what the parent says.
	KeepRequiredness Requiredness = iota
	// Required makes clients send the argument.
	Required
	// Optional lets clients leave the argument out.
	Optional
)

// A ValueError reports that a hidden argument's [Arg.ValueFunc] failed, or
// gave no value for an argument the parent requires: the call ends without
// reaching the parent, with a result whose isError is set. What the client
// sees follows the server's error table: the text of a [*mcpkit.ToolError]
// that Err wraps, with its class; for any other error, this error's text
// (hidden by error masking) and the class Fatal, since the model cannot
// change what the server derives from the request by trying again.
type ValueError struct {
	Tool     string // the derived tool (or prompt)
	Argument string // the hidden argument, by its name in the parent
	Err      error
}

// Error says which argument of which tool got no value, and why.
func (e *ValueError) Error() string {
	return fmt.Sprintf("tool %q: no value for argument %q: %v", e.Tool, e.Argument, e.Err)
}

// Unwrap returns e.Err.
func (e *ValueError) Unwrap() error { return e.Err }

// Tool returns a new tool derived from t according to spec. The derived
// tool advertises the rewritten definition, and the server validates calls
// against it; its handler maps each call back onto t's argument names,
// adds the hidden arguments, and calls t's handler with the request's
// Tool set to (a copy of) t, so that t's handler sees its own definition.
// When spec renames and hides nothing, the derived tool's handler is t's
// own and calls cost nothing more.
//
// t is not modified, and the derived tool shares nothing mutable with it:
// its schemas, _meta (copied through its JSON form), annotations, icons,
// tags and middleware are its own, and the caller may change them. Its
// schemas have the Go type of t's where they can: a *jsonschema.Schema (as
// tools.New makes) stays one, a json.RawMessage stays one, and any other
// becomes a map[string]any tree, with numbers as [json.Number] to keep
// their exact text.
// The derived tool's Origin is (a copy of) t: it has t's identity
// ([mcpkit.Tool.ID]), so that visibility rules, selectors, limits and keys
// about t hold for it too (see "A call is judged by the tool it reaches"
// in docs/concepts.md).
// The derived tool keeps t's Validation mode, middleware (after
// spec.Middleware) and, unless spec says otherwise, everything else; its
// output schema is t's.
//
// The input schema is rewritten wherever it speaks of the arguments of the
// call: in the properties, required, dependentRequired and dependentSchemas
// of the root and of the subschemas that apply to the same object (allOf,
// anyOf, oneOf, not, if, then, else, dependentSchemas). A hidden argument
// leaves with its x-mcp-header annotation; a renamed one keeps its own.
// Every other keyword, $defs included, is kept. Renaming, hiding or making
// an argument optional fails with [ErrUnsupportedSchema] when the schema
// makes a correct rewrite impossible: a $ref among the subschemas that apply
// to the root object, or one from elsewhere that points back at them; for a
// rename, propertyNames, or a patternProperties pattern that matches only
// one of the old and the new name; for a hidden argument, minProperties or
// maxProperties, or a mention in a conditional subschema or a dependency.
//
// Tool's other errors wrap [ErrInvalidTool], [ErrInvalidSpec],
// [ErrInvalidName], [ErrUnknownArgument], [ErrDuplicateArgument] and
// [ErrMissingValue].
func Tool(t *mcpkit.Tool, spec Spec) (*mcpkit.Tool, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil tool", ErrInvalidTool)
	}
	if f, isFunc := t.Handler.(mcpkit.HandlerFunc); t.Handler == nil || isFunc && f == nil {
		return nil, fmt.Errorf("%w: tool %q has no handler", ErrInvalidTool, t.Name)
	}
	name := cmp.Or(spec.Name, t.Name)
	if err := mcpkit.ValidateToolName(name); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidName, err)
	}
	for i, m := range spec.Middleware {
		if m == nil {
			return nil, fmt.Errorf("%w: tool %q: middleware %d is nil", ErrInvalidSpec, t.Name, i)
		}
	}

	inJSON, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: input schema: %v", ErrInvalidTool, t.Name, err)
	}
	in, err := decodeObject(inJSON)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: input schema: %v", ErrInvalidTool, t.Name, err)
	}
	var outJSON []byte
	if t.OutputSchema != nil {
		if outJSON, err = json.Marshal(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("%w: tool %q: output schema: %v", ErrInvalidTool, t.Name, err)
		}
	}
	meta, err := copyMeta(t.Meta)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: _meta: %v", ErrInvalidTool, t.Name, err)
	}
	if err := mergeMeta(meta, spec.Meta); err != nil {
		return nil, fmt.Errorf("%w: tool %q: Meta: %v", ErrInvalidSpec, t.Name, err)
	}

	rw, err := rewrite(in, spec.Arguments)
	if err != nil {
		var se *specError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: tool %q: %s", se.sentinel, t.Name, se.msg)
		}
		return nil, err
	}
	if rw.newDefaults {
		if err := checkDefaults(inJSON, in); err != nil {
			return nil, fmt.Errorf("%w: tool %q: %v", ErrInvalidSpec, t.Name, err)
		}
	}

	d := &mcpkit.Tool{
		Tool: mcp.Tool{
			Meta:         meta,
			Annotations:  copyAnnotations(cmp.Or(spec.Annotations, t.Annotations)),
			Description:  cmp.Or(spec.Description, t.Description),
			InputSchema:  likeParent(t.InputSchema, remarshal(in)),
			Name:         name,
			OutputSchema: likeParent(t.OutputSchema, outJSON),
			Title:        cmp.Or(spec.Title, t.Title),
			Icons:        copyIcons(t.Icons),
		},
		Handler:    t.Handler,
		Middleware: slices.Concat(spec.Middleware, t.Middleware),
		Tags:       slices.Clone(t.Tags),
		Validation: t.Validation,
		Version:    cmp.Or(spec.Version, t.Version),
	}
	if spec.Icons != nil {
		d.Icons = copyIcons(spec.Icons)
	}
	if spec.Tags != nil {
		d.Tags = slices.Clone(spec.Tags)
	}
	parent := parentView(t, inJSON, outJSON)
	d.Origin = parent
	if rw.maps() {
		d.Handler = newMapper(parent, rw)
	}
	if err := mcpkit.CheckTool(d); err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", ErrInvalidTool, t.Name, err)
	}
	return d, nil
}

// parentView returns the copy of t that its handler finds in req.Tool:
// its own definition, sharing nothing mutable with t.
func parentView(t *mcpkit.Tool, inJSON, outJSON []byte) *mcpkit.Tool {
	p := *t
	p.InputSchema = likeParent(t.InputSchema, inJSON)
	p.OutputSchema = likeParent(t.OutputSchema, outJSON)
	p.Meta, _ = copyMeta(t.Meta) // it was copied once already
	p.Annotations = copyAnnotations(t.Annotations)
	p.Icons = copyIcons(t.Icons)
	p.Middleware = slices.Clone(t.Middleware)
	p.Tags = slices.Clone(t.Tags)
	return &p
}

// decode returns the value that data, valid JSON, holds, with numbers as
// json.Number so that they keep their text.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// remarshal returns the JSON of v, a tree that decode made (and rewrite
// changed), which always marshals.
func remarshal(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic("transform: marshalling a decoded schema: " + err.Error())
	}
	return data
}

// likeParent returns a new schema whose JSON is data, of the Go type of
// the parent's schema where it can: a *jsonschema.Schema (as typed tools
// have), a json.RawMessage, or else a map[string]any tree with numbers as
// json.Number. Data is what json.Marshal wrote; nil stays nil.
func likeParent(parent any, data []byte) any {
	if data == nil {
		return nil
	}
	switch parent.(type) {
	case *jsonschema.Schema:
		s := new(jsonschema.Schema)
		if json.Unmarshal(data, s) == nil {
			return s
		}
	case json.RawMessage:
		return json.RawMessage(data)
	}
	v, err := decode(data)
	if err != nil {
		panic("transform: decoding what json.Marshal wrote: " + err.Error())
	}
	return v
}

// decodeObject decodes data, which must hold a JSON object.
func decodeObject(data []byte) (map[string]any, error) {
	v, err := decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: %.40s", data)
	}
	return m, nil
}

// deepCopy returns a copy of v made through its JSON form.
func deepCopy(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decode(data)
}

func copyMeta(m mcp.Meta) (mcp.Meta, error) {
	if m == nil {
		return nil, nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	obj, err := decodeObject(data)
	return mcp.Meta(obj), err
}

// mergeMeta merges a copy of add into m, as [Spec.Meta] says.
func mergeMeta(m mcp.Meta, add mcp.Meta) error {
	for _, k := range slices.Sorted(maps.Keys(add)) {
		v := add[k]
		if v == nil {
			delete(m, k)
			continue
		}
		c, err := deepCopy(v)
		if err != nil {
			return fmt.Errorf("%q: %v", k, err)
		}
		m[k] = c
	}
	return nil
}

func copyAnnotations(a *mcp.ToolAnnotations) *mcp.ToolAnnotations {
	if a == nil {
		return nil
	}
	c := *a
	c.DestructiveHint = copyBool(a.DestructiveHint)
	c.OpenWorldHint = copyBool(a.OpenWorldHint)
	return &c
}

func copyBool(p *bool) *bool {
	if p == nil {
		return nil
	}
	b := *p
	return &b
}

func copyIcons(icons []mcp.Icon) []mcp.Icon {
	c := slices.Clone(icons)
	for i := range c {
		c[i].Sizes = slices.Clone(c[i].Sizes)
	}
	return c
}
