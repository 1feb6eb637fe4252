package tools

import (
	"context"
	"encoding"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// PromptOptions configures a prompt built by [NewPrompt]. A nil
// *PromptOptions means the defaults: no title or description.
type PromptOptions struct {
	// Title, Description, Icons and Meta go into the prompt's MCP
	// definition as they are; Description is also the description of
	// each result.
	Title       string
	Description string
	Icons       []mcp.Icon
	Meta        mcp.Meta

	// Tags, Middleware and Complete go into the [mcpkit.Prompt];
	// Complete is keyed by argument name (see [CompleteFrom]).
	Tags       []string
	Middleware []mcpkit.Middleware
	Complete   map[string]mcpkit.CompleteFunc
}

// NewPrompt returns a prompt named name whose handler decodes the
// request's arguments into an In, calls fn and answers the messages it
// returns.
//
// In must be a struct (or a pointer to one) whose exported fields are the
// prompt's arguments: named as encoding/json names them (a json tag, "-"
// to leave a field out), each a string, a type whose pointer implements
// [encoding.TextUnmarshaler], or a pointer to either, since prompt
// arguments are strings on the wire. An argument is required unless its
// field is a pointer or is tagged omitempty or omitzero; its description
// comes from a description:"..." tag (jsonschema:"..." works too), its
// title from title:"...". The server answers a request without a required
// argument with -32602 before any middleware runs; a value the field
// cannot decode is answered -32602 too, naming the argument.
//
// NewPrompt returns an error for an invalid name, a nil fn, or an In
// whose fields are not all arguments.
func NewPrompt[In any](name string, fn func(ctx context.Context, req *mcpkit.PromptRequest, in In) ([]*mcp.PromptMessage, error), opts *PromptOptions) (*mcpkit.Prompt, error) {
	if opts == nil {
		opts = &PromptOptions{}
	}
	if err := mcpkit.ValidateToolName(name); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	if fn == nil {
		return nil, fmt.Errorf("tools: %q: nil function", name)
	}
	fields, err := promptFields(reflect.TypeFor[In]())
	if err != nil {
		return nil, fmt.Errorf("tools: prompt %q: %w", name, err)
	}
	args := make([]*mcp.PromptArgument, len(fields))
	for i, f := range fields {
		args[i] = &mcp.PromptArgument{Name: f.name, Title: f.title, Description: f.description, Required: f.required}
	}
	return &mcpkit.Prompt{
		Prompt: mcp.Prompt{
			Name:        name,
			Title:       opts.Title,
			Description: opts.Description,
			Icons:       opts.Icons,
			Meta:        opts.Meta,
			Arguments:   args,
		},
		Handler:    &promptHandler[In]{fn: fn, fields: fields, description: opts.Description},
		Middleware: opts.Middleware,
		Tags:       opts.Tags,
		Complete:   opts.Complete,
	}, nil
}

// MustPrompt returns p, and panics if err is not nil, as [Must] does for
// tools.
func MustPrompt(p *mcpkit.Prompt, err error) *mcpkit.Prompt {
	if err != nil {
		panic(err)
	}
	return p
}

// promptField is a field of a prompt's arguments struct.
type promptField struct {
	index       []int
	name        string
	title       string
	description string
	required    bool
	pointer     bool // the field is a pointer to its value
	text        bool // the value is decoded by UnmarshalText, not assigned
}

// promptFields returns the arguments of t, a struct or a pointer to one.
func promptFields(t reflect.Type) ([]promptField, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arguments type %v is not a struct", t)
	}
	var out []promptField
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		if sf.Anonymous {
			return nil, fmt.Errorf("field %s: embedded fields are not arguments", sf.Name)
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		f := promptField{index: sf.Index, name: name, title: sf.Tag.Get("title")}
		f.description = sf.Tag.Get("description")
		if f.description == "" {
			f.description = sf.Tag.Get("jsonschema")
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.pointer, ft = true, ft.Elem()
		}
		switch {
		case reflect.PointerTo(ft).Implements(textUnmarshalerType):
			f.text = true
		case ft.Kind() == reflect.String:
		default:
			return nil, fmt.Errorf("field %s: type %v is neither a string nor an encoding.TextUnmarshaler", sf.Name, sf.Type)
		}
		f.required = !f.pointer && !hasOption(opts, "omitempty") && !hasOption(opts, "omitzero")
		if seen[name] {
			return nil, fmt.Errorf("argument %q appears twice", name)
		}
		seen[name] = true
		out = append(out, f)
	}
	return out, nil
}

// hasOption reports whether the options of a json tag hold opt.
func hasOption(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// promptHandler is the handler of a prompt built by NewPrompt.
type promptHandler[In any] struct {
	fn          func(context.Context, *mcpkit.PromptRequest, In) ([]*mcp.PromptMessage, error)
	fields      []promptField
	description string
}

func (h *promptHandler[In]) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	var in In
	if err := decodeStrings(&in, h.fields, req.Arguments, "argument"); err != nil {
		return nil, err
	}
	msgs, err := h.fn(ctx, req, in)
	if err != nil {
		return nil, err
	}
	if msgs == nil {
		msgs = []*mcp.PromptMessage{}
	}
	return &mcp.GetPromptResult{Description: h.description, Messages: msgs}, nil
}

// decodeStrings sets the fields of *in (a struct, or a pointer to one,
// allocated here) from values, as promptFields read them. A required
// field without a value, or a value its field cannot decode, is -32602,
// naming it as what (an "argument", a "parameter").
func decodeStrings[In any](in *In, fields []promptField, values map[string]string, what string) error {
	v := reflect.ValueOf(in).Elem()
	if v.Kind() == reflect.Pointer {
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	for _, f := range fields {
		s, ok := values[f.name]
		if !ok {
			if f.required {
				return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("missing required %s %q", what, f.name)}
			}
			continue
		}
		fv := v.FieldByIndex(f.index)
		if f.pointer {
			fv.Set(reflect.New(fv.Type().Elem()))
			fv = fv.Elem()
		}
		if !f.text {
			fv.SetString(s)
			continue
		}
		if err := fv.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s %q: %s", what, f.name, schema.Clip(err.Error()))}
		}
	}
	return nil
}
