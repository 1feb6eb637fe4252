package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// NewUnknownPromptError returns the JSON-RPC error (-32602) a client gets
// for a prompt that does not exist: `unknown prompt "name"`, the name
// clipped as [NewUnknownToolError] clips it. The server answers a prompt
// hidden from the caller with it too.
func NewUnknownPromptError(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", schema.Clip(name))}
}

// answers reports whether s answers the methods of kind k (prompts or
// resources): once it serves one of k (and so declares the capability),
// when the capability was declared for it, or when other code may serve
// them on the SDK server. Otherwise they are methods s does not have.
func (s *Server) answers(k Kind) bool {
	return s.served[k].Load() || s.declares[k] || s.foreign.Load()
}

// errNoPrompts and errNoResources answer the methods of a kind s does not
// serve.
var (
	errNoPrompts   = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "prompts are not supported"}
	errNoResources = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "resources are not supported"}
)

// listPrompts answers one prompts/list: the page of what the caller is
// listed (see Server.page), merged with the prompts registered on the SDK
// server directly.
func (s *Server) listPrompts(ctx context.Context, req *mcp.ListPromptsRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.answers(KindPrompt) {
		return nil, errNoPrompts
	}
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	page, err := answerList(ctx, s, promptList{req}, cursor, next)
	if err != nil {
		return nil, err
	}
	return &mcp.ListPromptsResult{Cacheable: page.cacheable, Prompts: page.items, NextCursor: page.next}, nil
}

// promptList is a prompts/list as answerList reads it.
type promptList struct{ req *mcp.ListPromptsRequest }

func (promptList) kind() Kind               { return KindPrompt }
func (l promptList) request() mcp.Request   { return l.req }
func (promptList) key(p *mcp.Prompt) string { return p.Name }
func (promptList) mine(s *Server, st *state, p *mcp.Prompt) bool {
	_, ours := st.targets[famPrompt].Get(p.Name)
	return ours || p.Name == s.promptDispatch
}

func (l promptList) ours(ctx context.Context, s *Server, st *state, after string, limit int) ([]*mcp.Prompt, bool, string, error) {
	pg := s.page(ctx, st, sdkCall[*mcp.ListPromptsParams]{l.req}, shelfPrompts, after, limit, false)
	out := make([]*mcp.Prompt, 0, len(pg.items))
	for _, e := range pg.targets() {
		out = append(out, &e.prompt.Prompt)
	}
	return out, pg.more, pg.last, nil
}

func (l promptList) sdkPage(ctx context.Context, next mcp.MethodHandler, cursor string) ([]*mcp.Prompt, string, mcp.Cacheable, error) {
	res, err := askSDK[*mcp.ListPromptsResult](ctx, next, "prompts/list", l.req, &mcp.ListPromptsParams{Cursor: cursor, Meta: sdkCall[*mcp.ListPromptsParams]{l.req}.Meta()})
	if err != nil {
		return nil, "", mcp.Cacheable{}, err
	}
	return res.Prompts, res.NextCursor, res.Cacheable, nil
}

// routedPrompt is a prompts/get on its way through the SDK to
// servePromptRouted, as routed is for a tools/call.
type routedPrompt struct {
	e     *entry
	name  string
	sdk   *mcp.GetPromptRequest
	req   *PromptRequest
	start time.Time // when s began on the request, if it has observers

	private bool // what the caller gets depends on who asks
}

type routedPromptKey struct{}

// getPrompt routes a prompts/get: the one route decides which prompt it
// reaches, its required arguments are checked, and it goes on through the
// SDK under the name of the one prompt s registers with it, so that the
// SDK does for it what it does for any prompt (input_required over a
// session), with the entry in ctx. A name that reaches nothing gets the
// answer of a name never registered; when other code may have added
// prompts to the SDK server, the SDK answers it instead, and its answer
// for a name it does not know either is replaced by mcpkit's.
func (s *Server) getPrompt(ctx context.Context, req *mcp.GetPromptRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.answers(KindPrompt) {
		return nil, errNoPrompts
	}
	name := req.Params.Name
	rp := &routedPrompt{name: name, req: &PromptRequest{Arguments: req.Params.Arguments, Call: req}}
	obs := s.observing()
	if obs != nil {
		rp.start = time.Now()
	}
	st := s.state.Load()
	rp.e = s.reach(ctx, st, rp.req, KindPrompt, name, pin{})
	rp.private = !st.uniform(KindPrompt)
	rp.req.private = rp.private
	if rp.e == nil {
		unknown := func() (mcp.Result, error) {
			err := NewUnknownPromptError(name)
			if obs != nil {
				observeTarget(ctx, obs, DecisionUnknown, name, nil, rp.req, err, rp.start)
			}
			return nil, err
		}
		if !s.foreign.Load() || name == s.promptDispatch {
			return unknown()
		}
		res, err := next(ctx, "prompts/get", req)
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams && isSDKUnknown("unknown prompt ", wire.Message, name) {
			return unknown()
		}
		return res, err
	}
	rp.req.Prompt = rp.e.prompt
	if err := missingArgument(rp.e.prompt, req.Params.Arguments); err != nil {
		if obs != nil {
			observeTarget(ctx, obs, DecisionInvalid, name, rp.e, rp.req, err, rp.start)
		}
		return nil, err
	}
	sdkReq := *req
	params := *req.Params
	params.Name = s.promptDispatch
	sdkReq.Params = &params
	rp.sdk = &sdkReq
	return next(context.WithValue(ctx, routedPromptKey{}, rp), "prompts/get", rp.sdk)
}

// isSDKUnknown reports whether msg is the SDK's message, starting with
// prefix, for a request of name, which it does not have.
func isSDKUnknown(prefix, msg, name string) bool {
	q, ok := strings.CutPrefix(msg, prefix)
	if !ok {
		return false
	}
	unq, err := strconv.Unquote(q)
	return err == nil && unq == name
}

// servePromptRouted is the handler of s's one SDK prompt: it serves the
// prompts/get that getPrompt routed to it, once the SDK passed it on.
func (s *Server) servePromptRouted(ctx context.Context, sdkReq *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	rp, ok := ctx.Value(routedPromptKey{}).(*routedPrompt)
	if !ok {
		return nil, NewUnknownPromptError(sdkReq.Params.Name)
	}
	req := rp.req
	if sdkReq != rp.sdk {
		// The SDK asks again with another request: the same prompts/get,
		// with the answers to the input it asked for (a client before
		// 2026-07-28, over a session).
		call := *sdkReq
		params := *sdkReq.Params
		params.Name = rp.name
		call.Params = &params
		req = &PromptRequest{Prompt: rp.e.prompt, Arguments: params.Arguments, Call: &call, private: rp.private}
	}
	rp.sdk, rp.req = nil, nil
	ctx = s.withVerdict(ctx, req.Header())
	defer verdictOf(ctx).serving(req.Session())()
	var (
		res *mcp.GetPromptResult
		err error
	)
	if refused := s.requirementRefusal(ctx, rp.e, req); refused != nil {
		// Refused before the chain, as its requirement would: no layer
		// of it answers a caller the requirement refuses.
		refused.Kind = KindPrompt
		verdictOf(ctx).refuse(req.Session(), refused)
		err = &ToolError{Err: refused, Class: Fatal}
	} else {
		res, err = s.runPrompt(ctx, rp.e, req)
	}
	if obs := s.observing(); obs != nil {
		observeTarget(ctx, obs, DecisionServed, rp.name, rp.e, req, err, rp.start)
	}
	return finishPrompt(rp.e, res, err)
}

// runPrompt runs req through e's chain; a panic is returned as a
// [*PanicError].
func (s *Server) runPrompt(ctx context.Context, e *entry, req *PromptRequest) (res *mcp.GetPromptResult, err error) {
	defer s.recoverTarget(KindPrompt, e.prompt.Name, &err)
	return e.chain.prompt.ServePrompt(ctx, req)
}

// recoverTarget, deferred, turns a panic of the chain of a target of kind
// k called name into a [*PanicError] in *err, and logs it.
func (s *Server) recoverTarget(k Kind, name string, err *error) {
	if v := recover(); v != nil {
		pe := NewPanicError(v)
		s.logger.Error("mcpkit: "+k.String()+" panicked", k.String(), name, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		*err = pe
	}
}

// finishPrompt maps what e's chain returned onto the wire.
func finishPrompt(e *entry, res *mcp.GetPromptResult, err error) (*mcp.GetPromptResult, error) {
	name := e.prompt.Name
	if err != nil {
		return nil, targetWireError(KindPrompt, name, err)
	}
	if res == nil {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{}}, nil
	}
	if res.Messages == nil && res.InputRequests == nil {
		r := *res
		r.Messages = []*mcp.PromptMessage{}
		return &r, nil
	}
	return res, nil
}

// targetWireError applies the error table to err, which came out of the
// chain of the prompt or resource (of kind k) called name: a JSON-RPC
// error is kept; any other is -32603, with the text a tool's error result
// would have (generic for a panic, the tool error's own, the masked one),
// and the class and the entries of the first [ResultMetaError] in its
// data.
func targetWireError(k Kind, name string, err error) error {
	outcome, class := Classify(nil, err)
	var (
		text string
		meta error
	)
	switch outcome {
	case OutcomeProtocolError:
		var wire *jsonrpc.Error
		errors.As(err, &wire)
		return wire
	case OutcomePanic:
		text = fmt.Sprintf("internal error in %v %q", k, name)
	case OutcomeToolError, OutcomeTimeout:
		var te *ToolError
		errors.As(err, &te)
		text, meta = te.Error(), te.Err
	default:
		text, meta = err.Error(), err
		if text == "" {
			text = fmt.Sprintf("error %s %v %q", servingVerb(k), k, name)
		}
	}
	data, jerr := json.Marshal(errorMeta(class, meta))
	if jerr != nil {
		data, _ = json.Marshal(mcp.Meta{MetaKeyErrorClass: string(class)})
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: text, Data: data}
}

// servingVerb is what serving a request of kind k does, in messages:
// "calling" a tool, "getting" a prompt, "reading" a resource.
func servingVerb(k Kind) string {
	switch k {
	case KindPrompt:
		return "getting"
	case KindResource:
		return "reading"
	}
	return "calling"
}
