package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Kind is what a request reaches: a tool, a resource or a prompt.
type Kind uint8

// The kinds. The zero value is KindTool.
const (
	KindTool Kind = iota
	KindResource
	KindPrompt

	numKinds = iota
)

// String returns "tool", "resource" or "prompt".
func (k Kind) String() string {
	switch k {
	case KindTool:
		return "tool"
	case KindResource:
		return "resource"
	case KindPrompt:
		return "prompt"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// A Target is what a request reaches, for decisions that concern every
// kind (see [TargetVisibility]): a [*Tool], a [*Prompt], a [*Resource] or
// a [*ResourceTemplate].
type Target interface {
	// Kind returns the kind of the target.
	Kind() Kind
	// Key returns the target's identity: the name of the tool or prompt
	// at the end of its chain of origins, the URI of a resource, the text
	// of a template.
	Key() string
	// HasTag reports whether the target carries tag.
	HasTag(tag string) bool

	target()
}

// Kind returns KindTool.
func (t *Tool) Kind() Kind { return KindTool }

// Key returns the name of t's identity (see [Tool.ID]).
func (t *Tool) Key() string { return t.root().Name }

func (t *Tool) target() {}

// A TargetVisibility is a [Visibility] that also decides which prompts,
// resources and templates exist, and for whom. One that is not visible is
// hidden everywhere, as a tool is: absent from its list, and a request of
// it gets exactly the answer of a name (URI) never registered. With a
// Visibility that does not implement it, every prompt and resource is
// served to everyone. Tools are decided by the Visibility's own methods.
type TargetVisibility interface {
	Visibility

	// EnabledTarget reports whether t is served at all. It is asked when
	// the registry or the visibility changes, never per request.
	EnabledTarget(t Target) bool

	// AllowedTarget reports whether the request c may see and reach t, an
	// enabled target; it is asked per request when the Visibility's
	// PerRequest reports true, and must be fast.
	AllowedTarget(ctx context.Context, t Target, c Caller) bool
}

// A Prompt is an MCP prompt definition together with the code that serves
// it.
//
// The embedded [mcp.Prompt] is what clients see in prompts/list: name,
// title, description, arguments, icons and _meta. Arguments marked
// required are checked before any middleware runs: a prompts/get without
// one is answered -32602, naming it. [Server.AddPrompts] copies the
// Prompt; changing it afterwards has no effect on the server.
type Prompt struct {
	mcp.Prompt

	// Handler serves prompts/get of the prompt. It is required.
	Handler PromptHandler

	// Middleware wraps Handler for this prompt only, inside the
	// server-wide middleware. Only the layers whose Handler also serves
	// prompts apply (see [PromptHandler]).
	Middleware []Middleware

	// Complete suggests values for the prompt's arguments, by argument
	// name, for completion/complete; an argument without one is
	// completed with no values. Once a prompt or template with a
	// completer is added, the server declares the completions
	// capability.
	Complete map[string]CompleteFunc

	// Tags are free-form labels for filtering and visibility rules.
	Tags []string

	// Unlisted keeps the prompt out of prompts/list while prompts/get
	// still serves it.
	Unlisted bool

	// Origin is the prompt this one derives from, or nil for a prompt of
	// its own; see [Tool.Origin]. It is shared and must not be modified.
	Origin *Prompt
}

// Kind returns KindPrompt.
func (p *Prompt) Kind() Kind { return KindPrompt }

// Key returns the name of the prompt at the end of p's chain of origins.
func (p *Prompt) Key() string {
	o := p
	for i := 0; o.Origin != nil && i < maxOrigins; i++ {
		o = o.Origin
	}
	return o.Name
}

// HasTag reports whether p carries tag.
func (p *Prompt) HasTag(tag string) bool { return slices.Contains(p.Tags, tag) }

func (p *Prompt) target() {}

// A PromptHandler answers a prompts/get.
//
// A middleware serves prompts as well as tools when the Handler it
// returns also implements PromptHandler; building a prompt's chain, the
// Server gives each middleware a next Handler that implements it, and
// leaves out (listed as skipped by [Server.PromptPipeline]) a layer whose
// Handler does not. Errors are mapped onto the wire as for tools, as
// JSON-RPC errors: a [*jsonrpc.Error] is kept, any other error is -32603
// with its text (generic when masked, for panics), its class in the
// error's data under [MetaKeyErrorClass].
//
// [*jsonrpc.Error]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/jsonrpc#Error
type PromptHandler interface {
	ServePrompt(ctx context.Context, req *PromptRequest) (*mcp.GetPromptResult, error)
}

// The PromptHandlerFunc type is an adapter to allow the use of ordinary
// functions as prompt handlers.
type PromptHandlerFunc func(ctx context.Context, req *PromptRequest) (*mcp.GetPromptResult, error)

// ServePrompt calls f(ctx, req).
func (f PromptHandlerFunc) ServePrompt(ctx context.Context, req *PromptRequest) (*mcp.GetPromptResult, error) {
	return f(ctx, req)
}

// A PromptRequest is one prompts/get as middleware and handlers see it.
// Like a [Request], it is treated as immutable once passed on.
type PromptRequest struct {
	// Prompt is the prompt being served. It is shared and must not be
	// modified.
	Prompt *Prompt

	// Arguments are the arguments of the request, as received (nil when
	// there are none). The map belongs to the request.
	Arguments map[string]string

	// Call is the SDK's form of the request. It is nil only for a
	// PromptRequest built by hand.
	Call *mcp.GetPromptRequest

	private bool // see Private
}

// Private reports whether what the caller gets depends on who asks: a
// per-request rule decides prompts, so that two callers may reach two
// prompts of one name. A cache whose key several principals share must
// not keep the result.
func (r *PromptRequest) Private() bool { return r.private }

// WithArguments returns a copy of r whose arguments are args, in its SDK
// form too; r itself is unchanged.
func (r *PromptRequest) WithArguments(args map[string]string) *PromptRequest {
	r2 := *r
	r2.Arguments = args
	if r.Call != nil {
		call := *r.Call
		if r.Call.Params != nil {
			params := *r.Call.Params
			params.Arguments = args
			call.Params = &params
		}
		r2.Call = &call
	}
	return &r2
}

// Session returns the SDK session the request arrived on, or nil; see
// [Request.Session].
func (r *PromptRequest) Session() *mcp.ServerSession {
	return sdkCall[*mcp.GetPromptParams]{r.Call}.Session()
}

// ProtocolVersion returns the MCP protocol version of the request, or "".
func (r *PromptRequest) ProtocolVersion() string {
	return sdkCall[*mcp.GetPromptParams]{r.Call}.ProtocolVersion()
}

// ClientCapabilities returns the capabilities the client declared, or nil.
func (r *PromptRequest) ClientCapabilities() *mcp.ClientCapabilities {
	return sdkCall[*mcp.GetPromptParams]{r.Call}.ClientCapabilities()
}

// ClientInfo returns the name and version the client gave, or nil.
func (r *PromptRequest) ClientInfo() *mcp.Implementation {
	return sdkCall[*mcp.GetPromptParams]{r.Call}.ClientInfo()
}

// Meta returns the request's _meta object, or nil. It must not be
// modified.
func (r *PromptRequest) Meta() mcp.Meta {
	return sdkCall[*mcp.GetPromptParams]{r.Call}.Meta()
}

// Header returns the HTTP headers of the request, or nil on transports
// without HTTP.
func (r *PromptRequest) Header() http.Header {
	return sdkCall[*mcp.GetPromptParams]{r.Call}.Header()
}

// TokenInfo returns the verified bearer token of the request, or nil.
func (r *PromptRequest) TokenInfo() *auth.TokenInfo {
	return sdkCall[*mcp.GetPromptParams]{r.Call}.TokenInfo()
}

// ErrDuplicatePrompt is returned by [Server.AddPrompts] for a prompt
// already registered under its name.
var ErrDuplicatePrompt = errors.New("mcpkit: duplicate prompt")

// AddPrompts registers prompts. Each is checked first: its name (as tool
// names are, see [ValidateToolName]), its handler, its arguments (each
// named, once), and its completers (each of an argument it has). If any is invalid, or already registered under its
// name (unless [ServerOptions.ReplaceDuplicates] is set), AddPrompts
// returns an error naming it and registers none of them.
//
// AddPrompts copies each Prompt. Once a prompt is added, the server
// declares the prompts capability; clients listening for changes that
// see an added prompt receive notifications/prompts/list_changed.
func (s *Server) AddPrompts(prompts ...*Prompt) error {
	if len(prompts) == 0 {
		return nil
	}
	copies := make([]*Prompt, len(prompts))
	for i, p := range prompts {
		if p == nil {
			return fmt.Errorf("mcpkit: AddPrompts: prompt %d is nil", i)
		}
		if err := p.validate(); err != nil {
			return err
		}
		c := *p
		c.Middleware = slices.Clone(p.Middleware)
		c.Tags = slices.Clone(p.Tags)
		c.Complete = maps.Clone(p.Complete)
		copies[i] = &c
	}
	ts := make([]Target, len(copies))
	for i, p := range copies {
		ts[i] = p
	}
	if err := s.addTargets(famPrompt, ts, ErrDuplicatePrompt, "AddPrompts"); err != nil {
		return err
	}
	for _, p := range copies {
		s.noteCompleters(p.Complete)
	}
	return nil
}

// RemovePrompts unregisters the prompts registered under the given names.
// Names that are not registered are ignored. A prompts/get already
// running finishes; later ones get the unknown-prompt error.
func (s *Server) RemovePrompts(names ...string) {
	s.removeTargets(famPrompt, names)
}

// PromptPipeline returns the layers that serve prompts/get of the prompt
// called name, outermost first, and whether name is served: the
// server-wide middleware and the prompt's own, those whose Handler does
// not serve prompts (and those a [ForTools] selection holds) marked as
// skipped, with the reason.
func (s *Server) PromptPipeline(name string) ([]Layer, bool) {
	return s.state.Load().targetPipeline(famPrompt, name)
}

// validate checks what AddPrompts needs of p.
func (p *Prompt) validate() error {
	if err := ValidateToolName(p.Name); err != nil {
		return fmt.Errorf("mcpkit: prompt %q: %w", p.Name, err)
	}
	if p.Handler == nil {
		return fmt.Errorf("mcpkit: prompt %q has no handler", p.Name)
	}
	seen := make(map[string]bool, len(p.Arguments))
	for i, a := range p.Arguments {
		if a == nil || a.Name == "" {
			return fmt.Errorf("mcpkit: prompt %q: argument %d has no name", p.Name, i)
		}
		if seen[a.Name] {
			return fmt.Errorf("mcpkit: prompt %q: argument %q appears twice", p.Name, a.Name)
		}
		seen[a.Name] = true
	}
	for i, m := range p.Middleware {
		if m == nil {
			return fmt.Errorf("mcpkit: prompt %q: middleware %d is nil", p.Name, i)
		}
	}
	return checkCompleters("prompt", p.Name, "argument", p.Complete, seen)
}

// missingArgument returns the -32602 error of a prompts/get of p without
// one of its required arguments, or nil when none is missing.
func missingArgument(p *Prompt, args map[string]string) error {
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %q: missing required argument %q", p.Name, a.Name)}
		}
	}
	return nil
}
