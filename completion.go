package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxCompletions is the most values a completion/complete answers, as the
// protocol allows: a completer that returns more has the first
// MaxCompletions sent, with their total and hasMore set.
const MaxCompletions = 100

// A CompleteFunc suggests values for one argument of a prompt, or one
// variable of a URI template, that the user is typing: typically those
// that start with req.Value. The values are sent in the order returned.
// Its error is answered as a prompt's or a template's would be (see
// [PromptHandler]): a [*jsonrpc.Error] is kept, any other is -32603.
//
// [*jsonrpc.Error]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/jsonrpc#Error
type CompleteFunc func(ctx context.Context, req *CompleteRequest) ([]string, error)

// A CompleteRequest is one completion/complete as a [CompleteFunc] sees
// it.
type CompleteRequest struct {
	// Prompt is the prompt whose argument is completed, or nil. It is
	// shared and must not be modified.
	Prompt *Prompt

	// Template is the template whose variable is completed, or nil. It
	// is shared and must not be modified.
	Template *ResourceTemplate

	// Argument is the name of the argument (template variable) to
	// complete.
	Argument string

	// Value is what the user has typed of it so far.
	Value string

	// Arguments are the other arguments (variables) already resolved, as
	// the client sent them in the request's context, or nil. The map
	// belongs to the request and must not be modified.
	Arguments map[string]string

	// Call is the SDK's form of the request. It is nil only for a
	// CompleteRequest built by hand.
	Call *mcp.CompleteRequest
}

// Session returns the SDK session the request arrived on, or nil; see
// [Request.Session].
func (r *CompleteRequest) Session() *mcp.ServerSession {
	return sdkCall[*mcp.CompleteParams]{r.Call}.Session()
}

// ProtocolVersion returns the MCP protocol version of the request, or "".
func (r *CompleteRequest) ProtocolVersion() string {
	return sdkCall[*mcp.CompleteParams]{r.Call}.ProtocolVersion()
}

// ClientCapabilities returns the capabilities the client declared, or nil.
func (r *CompleteRequest) ClientCapabilities() *mcp.ClientCapabilities {
	return sdkCall[*mcp.CompleteParams]{r.Call}.ClientCapabilities()
}

// ClientInfo returns the name and version the client gave, or nil.
func (r *CompleteRequest) ClientInfo() *mcp.Implementation {
	return sdkCall[*mcp.CompleteParams]{r.Call}.ClientInfo()
}

// Meta returns the request's _meta object, or nil. It must not be
// modified.
func (r *CompleteRequest) Meta() mcp.Meta {
	return sdkCall[*mcp.CompleteParams]{r.Call}.Meta()
}

// Header returns the HTTP headers of the request, or nil on transports
// without HTTP.
func (r *CompleteRequest) Header() http.Header {
	return sdkCall[*mcp.CompleteParams]{r.Call}.Header()
}

// TokenInfo returns the verified bearer token of the request, or nil.
func (r *CompleteRequest) TokenInfo() *auth.TokenInfo {
	return sdkCall[*mcp.CompleteParams]{r.Call}.TokenInfo()
}

// noteCompleters records that s serves something that completes, if
// complete (a prompt's or template's Complete) has a completer: from then
// on s declares the completions capability and answers
// completion/complete (see complete).
func (s *Server) noteCompleters(complete map[string]CompleteFunc) {
	if len(complete) > 0 {
		s.noteCompleting()
	}
}

// noteCompleting records that s serves something that completes, and so
// do the servers s is mounted into.
func (s *Server) noteCompleting() {
	if s.completes.Swap(true) {
		return // and so were the servers s is mounted into (see attach)
	}
	s.mu.Lock()
	in := s.mountedIn
	s.mu.Unlock()
	for _, m := range in {
		m.parent.noteCompleting()
	}
}

// checkCompleters checks the completers of the target of kind what under
// key: each is a function, for one of the target's names (arguments or
// variables, what they are called).
func checkCompleters(what, key, of string, complete map[string]CompleteFunc, names map[string]bool) error {
	for _, name := range slices.Sorted(maps.Keys(complete)) {
		if complete[name] == nil {
			return fmt.Errorf("mcpkit: %s %q: the completer of %q is nil", what, key, name)
		}
		if !names[name] {
			return fmt.Errorf("mcpkit: %s %q has a completer for %q, which is not one of its %ss", what, key, name, of)
		}
	}
	return nil
}

// complete answers a completion/complete, once s has completers: the one
// route decides which prompt (by name) or template (by its text, or a URI
// it matches) the reference reaches, and that target's completer for the
// argument answers; an argument without one gets no values. A reference
// that reaches nothing gets the answer prompts/get or resources/read gives
// for it; when the SDK may complete too (its CompletionHandler, or a
// server other code adds prompts to), the SDK answers it instead, and its
// answer that it cannot complete is replaced by mcpkit's. Requests the SDK
// refuses as malformed are left to it.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest, next mcp.MethodHandler) (mcp.Result, error) {
	p := req.Params
	if !s.completes.Load() || p == nil || p.Ref == nil || p.Argument.Name == "" {
		return next(ctx, "completion/complete", req)
	}
	creq := &CompleteRequest{Argument: p.Argument.Name, Value: p.Argument.Value, Call: req}
	if p.Context != nil {
		creq.Arguments = p.Context.Arguments
	}
	obs := s.observing()
	var start time.Time
	if obs != nil {
		start = time.Now()
	}
	st := s.state.Load()
	var (
		e       *entry
		unknown error
		kind    = KindPrompt
		key     = p.Ref.Name
	)
	switch p.Ref.Type {
	case "ref/prompt":
		e, unknown = s.reach(ctx, st, creq, KindPrompt, key, pin{}), NewUnknownPromptError(key)
	case "ref/resource":
		kind, key = KindResource, p.Ref.URI
		e, unknown = s.reachTemplate(ctx, st, creq, key), resourceNotFound(key)
	default:
		return next(ctx, "completion/complete", req)
	}
	if e == nil {
		refuse := func() (mcp.Result, error) {
			if obs != nil {
				observeTarget(ctx, obs, DecisionUnknown, key, nil, creq, unknown, start)
			}
			return nil, unknown
		}
		if !s.sdkCompletes && !s.foreign.Load() {
			return refuse()
		}
		res, err := next(ctx, "completion/complete", req)
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && wire.Code == jsonrpc.CodeMethodNotFound {
			return refuse()
		}
		return res, err
	}
	if refused := s.completionRefused(ctx, e, creq); refused != nil {
		refused.Kind = kind
		err := &ToolError{Err: refused, Class: Fatal}
		if obs != nil {
			observeTarget(ctx, obs, DecisionRefused, key, e, creq, err, start)
		}
		return nil, targetWireError(kind, key, err)
	}
	var f CompleteFunc
	switch {
	case e.prompt != nil:
		creq.Prompt, f = e.prompt, e.prompt.Complete[creq.Argument]
	case e.template != nil:
		creq.Template, f = e.template, e.template.Complete[creq.Argument]
	}
	var (
		values []string
		err    error
	)
	if f != nil {
		values, err = s.runComplete(ctx, f, kind, key, creq)
	}
	if obs != nil {
		observeTarget(ctx, obs, DecisionServed, key, e, creq, err, start)
	}
	if err != nil {
		return nil, targetWireError(kind, key, err)
	}
	return completion(values), nil
}

// completionRefused returns the refusal of a completion of e for req by
// the requirements that a prompts/get or resources/read of it meets
// first (see requirementRefusal), or nil. Over HTTP the refusal is the
// challenge those would get.
func (s *Server) completionRefused(ctx context.Context, e *entry, req *CompleteRequest) *InsufficientScopeError {
	err := s.requirementRefusal(ctx, e, req)
	if err != nil {
		ctx = s.withVerdict(ctx, req.Header())
		defer verdictOf(ctx).serving(req.Session())()
		verdictOf(ctx).refuse(req.Session(), err)
	}
	return err
}

// runComplete calls f; a panic is returned as a [*PanicError].
func (s *Server) runComplete(ctx context.Context, f CompleteFunc, k Kind, name string, req *CompleteRequest) (values []string, err error) {
	defer s.recoverTarget(k, name, &err)
	return f(ctx, req)
}

// completion returns the result that sends values: never null, at most
// MaxCompletions of them, with their total and hasMore when there are more.
func completion(values []string) *mcp.CompleteResult {
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}
	if len(values) > MaxCompletions {
		res.Completion.Values = values[:MaxCompletions:MaxCompletions]
		res.Completion.HasMore = true
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return res
}

// declareServed is a receiving middleware of the SDK server that adds to
// what initialize and server/discover declare what s serves beyond the
// SDK's own options, fixed when it was made: the completions capability,
// once s has completers, and resources.subscribe, once s serves resources
// (and so declares the resources capability), since s answers
// subscriptions itself (see subscribe).
func (s *Server) declareServed(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		var caps *mcp.ServerCapabilities
		switch r := res.(type) {
		case *mcp.InitializeResult:
			caps = r.Capabilities
		case *mcp.DiscoverResult:
			caps = r.Capabilities
		}
		if caps == nil {
			return res, err
		}
		// The SDK makes the capabilities anew for each answer, each
		// kind's a copy: they are this answer's own.
		if s.completes.Load() && caps.Completions == nil {
			caps.Completions = &mcp.CompletionCapabilities{}
		}
		if s.served[KindResource].Load() && caps.Resources != nil {
			caps.Resources.Subscribe = true
		}
		return res, err
	}
}
