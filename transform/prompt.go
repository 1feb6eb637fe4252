package transform

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// PromptSpec says how a derived prompt differs from its parent, as [Spec]
// does for a tool. The zero value of each field keeps what the parent has.
type PromptSpec struct {
	// Name, Title and Description replace the parent's; "" keeps them.
	// Name must be a valid prompt name (see [mcpkit.ValidateToolName]).
	Name, Title, Description string
	// Tags replace the parent's; nil keeps them, an empty slice clears
	// them.
	Tags []string
	// Meta is merged into the parent's _meta as [Spec.Meta] is.
	Meta mcp.Meta
	// Arguments changes arguments, keyed by their name in the parent.
	// Arguments it does not name are kept as they are.
	Arguments map[string]PromptArg
	// Middleware comes first in the derived prompt's
	// [mcpkit.Prompt.Middleware], outside the parent's own; it sees the
	// arguments under their new names.
	Middleware []mcpkit.Middleware
}

// PromptArg says how one argument of a derived prompt differs from the
// parent's. The zero value keeps the argument as it is.
type PromptArg struct {
	// Name renames the argument: clients see, send and complete it under
	// Name, and the parent receives it under its own name. "" keeps it.
	// A new name follows the rules of [Arg.Name].
	Name string
	// Description replaces the argument's description; "" keeps it.
	Description string
	// Required makes the argument required or optional; the zero value
	// keeps what the parent says. An argument the parent requires can be
	// made Optional only with a Default.
	Required Requiredness
	// Default is the value the parent receives when a client leaves the
	// argument out; "" gives none.
	Default string
	// Hide removes the argument from the derived prompt: clients neither
	// see, send nor complete it, and the parent receives Value, or what
	// ValueFunc returns, or Default, or nothing. A client that sends it
	// anyway (or a renamed argument under its old name) does not reach
	// the parent with it. Hide is an error for an argument the parent
	// requires that has no Value, ValueFunc or Default.
	Hide bool
	// Value is the value of a hidden argument on every request.
	Value string
	// ValueFunc computes the value of a hidden argument for each
	// request, from the derived prompt's request (arguments under their
	// new names). ok false stands for "not given". An error, or no value
	// for an argument the parent requires, ends the request with a
	// [*ValueError].
	ValueFunc func(ctx context.Context, req *mcpkit.PromptRequest) (value string, ok bool, err error)
}

// Prompt returns a prompt derived from p: served under its own name and
// arguments by p's handler, which receives the arguments as p names them,
// with the values of hidden arguments filled in. The derived prompt's
// Origin is p, so that a visibility rule, selection or audit keyed on p's
// identity ([mcpkit.Prompt.Key]) holds for it too; p's completers serve
// the derived prompt's arguments under their new names. Register the
// derived prompt in p's place with [mcpkit.Server.AddPrompts], or beside
// it.
//
// Prompt fails, wrapping [ErrInvalidTool] for a nil prompt or one without
// a handler, [ErrInvalidName] for an invalid name, [ErrUnknownArgument],
// [ErrDuplicateArgument], [ErrMissingValue] and [ErrInvalidSpec] as [Tool]
// does.
func Prompt(p *mcpkit.Prompt, spec PromptSpec) (*mcpkit.Prompt, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil prompt", ErrInvalidTool)
	}
	if f, isFunc := p.Handler.(mcpkit.PromptHandlerFunc); p.Handler == nil || isFunc && f == nil {
		return nil, fmt.Errorf("%w: prompt %q has no handler", ErrInvalidTool, p.Name)
	}
	name := cmp.Or(spec.Name, p.Name)
	if err := mcpkit.ValidateToolName(name); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidName, err)
	}
	for i, m := range spec.Middleware {
		if m == nil {
			return nil, fmt.Errorf("%w: prompt %q: middleware %d is nil", ErrInvalidSpec, p.Name, i)
		}
	}
	meta, err := copyMeta(p.Meta)
	if err != nil {
		return nil, fmt.Errorf("%w: prompt %q: _meta: %v", ErrInvalidTool, p.Name, err)
	}
	if err := mergeMeta(meta, spec.Meta); err != nil {
		return nil, fmt.Errorf("%w: prompt %q: Meta: %v", ErrInvalidSpec, p.Name, err)
	}
	m, args, err := promptArguments(p, spec.Arguments)
	if err != nil {
		return nil, err
	}
	d := &mcpkit.Prompt{
		Prompt: mcp.Prompt{
			Meta:        meta,
			Name:        name,
			Title:       cmp.Or(spec.Title, p.Title),
			Description: cmp.Or(spec.Description, p.Description),
			Arguments:   args,
			Icons:       copyIcons(p.Icons),
		},
		Handler:    p.Handler,
		Middleware: slices.Concat(spec.Middleware, p.Middleware),
		Tags:       slices.Clone(p.Tags),
		Unlisted:   p.Unlisted,
		Origin:     p,
	}
	if spec.Tags != nil {
		d.Tags = slices.Clone(spec.Tags)
	}
	m.parent, m.name = p, name
	if m.maps() {
		d.Handler = m
	}
	d.Complete = m.completers(p.Complete)
	return d, nil
}

// A promptMapper serves a derived prompt with its parent's handler:
// arguments renamed back, hidden ones filled in, defaults given.
type promptMapper struct {
	parent *mcpkit.Prompt
	name   string            // the derived prompt's
	toOld  map[string]string // new name -> parent's, for the arguments clients send
	hidden map[string]PromptArg
	deflt  map[string]string // parent's name -> default, for arguments clients may leave out
	req    map[string]bool   // parent's names it requires
}

func (m *promptMapper) maps() bool {
	if len(m.hidden) > 0 || len(m.deflt) > 0 {
		return true
	}
	for n, o := range m.toOld {
		if n != o {
			return true
		}
	}
	return false
}

func (m *promptMapper) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	args, err := m.resolve(ctx, req.Arguments, req)
	if err != nil {
		return nil, err
	}
	for old := range m.req {
		if _, ok := args[old]; !ok {
			return nil, &ValueError{Tool: m.name, Argument: old, Err: fmt.Errorf("no value given")}
		}
	}
	return m.parent.Handler.ServePrompt(ctx, req.WithArguments(args))
}

// resolve returns args, a client's arguments under the derived names, as
// the parent names them, with the values of the hidden arguments (their
// ValueFunc sees pr) and the defaults of those left out.
func (m *promptMapper) resolve(ctx context.Context, args map[string]string, pr *mcpkit.PromptRequest) (map[string]string, error) {
	out := make(map[string]string, len(m.toOld)+len(m.hidden))
	for n, v := range args {
		if old, ok := m.toOld[n]; ok {
			out[old] = v
		}
	}
	for _, old := range slices.Sorted(maps.Keys(m.hidden)) {
		a := m.hidden[old]
		switch {
		case a.ValueFunc != nil:
			v, ok, err := a.ValueFunc(ctx, pr)
			if err != nil {
				return nil, &ValueError{Tool: m.name, Argument: old, Err: err}
			}
			if ok {
				out[old] = v
			}
		case a.Value != "":
			out[old] = a.Value
		}
	}
	for old, v := range m.deflt {
		if _, ok := out[old]; !ok {
			out[old] = v
		}
	}
	return out, nil
}

// completers returns the parent's completers under the derived names,
// each seeing the request as the parent names its arguments; hidden
// arguments are not completed.
func (m *promptMapper) completers(parent map[string]mcpkit.CompleteFunc) map[string]mcpkit.CompleteFunc {
	if len(parent) == 0 {
		return nil
	}
	out := make(map[string]mcpkit.CompleteFunc, len(parent))
	for n, old := range m.toOld {
		f := parent[old]
		if f == nil {
			continue
		}
		out[n] = func(ctx context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
			r := *req
			r.Argument = old
			args, err := m.completionArguments(ctx, req)
			if err != nil {
				return nil, err
			}
			r.Arguments = args
			return f(ctx, &r)
		}
	}
	return out
}

// completionArguments returns the arguments a completion of the derived
// prompt has resolved, as the parent names them, with the values of the
// hidden arguments (and defaults) that a prompts/get would give them: the
// parent's completer completes within what the derived prompt fixes.
func (m *promptMapper) completionArguments(ctx context.Context, req *mcpkit.CompleteRequest) (map[string]string, error) {
	if req.Arguments == nil && len(m.hidden) == 0 && len(m.deflt) == 0 {
		return nil, nil
	}
	pr := &mcpkit.PromptRequest{Prompt: req.Prompt, Arguments: req.Arguments}
	if req.Call != nil {
		pr.Call = &mcp.GetPromptRequest{Session: req.Call.Session, Extra: req.Call.Extra,
			Params: &mcp.GetPromptParams{Name: m.name, Arguments: req.Arguments}}
	}
	return m.resolve(ctx, req.Arguments, pr)
}

// promptArguments returns the mapper of p's arguments under specs and the
// derived prompt's argument list.
func promptArguments(p *mcpkit.Prompt, specs map[string]PromptArg) (*promptMapper, []*mcp.PromptArgument, error) {
	m := &promptMapper{toOld: make(map[string]string), hidden: make(map[string]PromptArg), deflt: make(map[string]string), req: make(map[string]bool)}
	known := make(map[string]bool, len(p.Arguments))
	for _, a := range p.Arguments {
		if a != nil {
			known[a.Name] = true
		}
	}
	for _, old := range slices.Sorted(maps.Keys(specs)) {
		if !known[old] {
			return nil, nil, fmt.Errorf("%w: prompt %q has no argument %q", ErrUnknownArgument, p.Name, old)
		}
	}
	var out []*mcp.PromptArgument
	taken := make(map[string]string)
	for _, a := range p.Arguments {
		if a == nil {
			continue
		}
		s := specs[a.Name]
		if err := s.check(p.Name, a); err != nil {
			return nil, nil, err
		}
		if s.Hide {
			m.hidden[a.Name] = s
			if s.Default != "" {
				m.deflt[a.Name] = s.Default
			}
			if a.Required && s.ValueFunc != nil && s.Default == "" {
				m.req[a.Name] = true
			}
			continue
		}
		d := *a
		d.Name = cmp.Or(s.Name, a.Name)
		d.Description = cmp.Or(s.Description, a.Description)
		switch s.Required {
		case Required:
			d.Required = true
		case Optional:
			d.Required = false
		}
		if s.Default != "" {
			m.deflt[a.Name] = s.Default
		}
		if prev, ok := taken[strings.ToLower(d.Name)]; ok {
			return nil, nil, fmt.Errorf("%w: prompt %q: %q and %q", ErrDuplicateArgument, p.Name, prev, d.Name)
		}
		taken[strings.ToLower(d.Name)] = d.Name
		m.toOld[d.Name] = a.Name
		out = append(out, &d)
	}
	return m, out, nil
}

// check checks s, the spec of p's argument a.
func (s PromptArg) check(prompt string, a *mcp.PromptArgument) error {
	if s.Name != "" && !validArgName(s.Name) {
		return fmt.Errorf("%w: prompt %q: argument name %q", ErrInvalidName, prompt, s.Name)
	}
	if (s.Value != "" || s.ValueFunc != nil) && !s.Hide {
		return fmt.Errorf("%w: prompt %q: argument %q has a Value but is not hidden", ErrInvalidSpec, prompt, a.Name)
	}
	if s.Value != "" && s.ValueFunc != nil {
		return fmt.Errorf("%w: prompt %q: argument %q has both Value and ValueFunc", ErrInvalidSpec, prompt, a.Name)
	}
	if s.Hide && (s.Name != "" || s.Required != KeepRequiredness) {
		return fmt.Errorf("%w: prompt %q: hidden argument %q is renamed or made required", ErrInvalidSpec, prompt, a.Name)
	}
	if a.Required && s.Hide && s.Value == "" && s.ValueFunc == nil && s.Default == "" {
		return fmt.Errorf("%w: prompt %q: hidden argument %q", ErrMissingValue, prompt, a.Name)
	}
	if a.Required && s.Required == Optional && s.Default == "" {
		return fmt.Errorf("%w: prompt %q: argument %q made optional", ErrMissingValue, prompt, a.Name)
	}
	if s.Required == Required && s.Default != "" {
		return fmt.Errorf("%w: prompt %q: argument %q is required and has a Default", ErrInvalidSpec, prompt, a.Name)
	}
	return nil
}
