package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/paramheader"
)

// intercept is the SDK server's receiving middleware: it answers
// tools/list, prompts/list, resources/list and resources/templates/list
// from the registry (see answerList) and completion/complete (see
// complete), routes each tools/call, prompts/get and resources/read
// (see call, getPrompt, readResource), and answers the subscriptions to
// resources (see subscribe, listenResources); every other method goes to
// the SDK untouched.
func (s *Server) intercept(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		s.firstServe()
		switch r := req.(type) {
		case *mcp.ServerRequest[*mcp.InitializeParams], *mcp.ServerRequest[*mcp.DiscoverParams]:
			if ext := s.extensions.Load(); ext != nil {
				return declareExtensions(ctx, method, req, next, *ext)
			}
		case *mcp.ListToolsRequest:
			if method == "tools/list" {
				return s.listTools(ctx, r, next)
			}
		case *mcp.CallToolRequest:
			if method == "tools/call" && r.Params != nil {
				return s.call(ctx, r, next)
			}
		case *mcp.ListPromptsRequest:
			if method == "prompts/list" {
				return s.listPrompts(ctx, r, next)
			}
		case *mcp.GetPromptRequest:
			if method == "prompts/get" && r.Params != nil {
				return s.getPrompt(ctx, r, next)
			}
		case *mcp.ListResourcesRequest:
			if method == "resources/list" {
				return s.listResources(ctx, r, next)
			}
		case *mcp.ListResourceTemplatesRequest:
			if method == "resources/templates/list" {
				return s.listTemplates(ctx, r, next)
			}
		case *mcp.ReadResourceRequest:
			if method == "resources/read" && r.Params != nil {
				return s.readResource(ctx, r, next)
			}
		case *mcp.CompleteRequest:
			if method == "completion/complete" {
				return s.complete(ctx, r, next)
			}
		case *mcp.SubscribeRequest:
			if method == "resources/subscribe" && r.Params != nil {
				return s.subscribe(ctx, r, next)
			}
		case *mcp.UnsubscribeRequest:
			if method == "resources/unsubscribe" && r.Params != nil {
				return s.unsubscribe(ctx, r, next)
			}
		case *mcp.SubscriptionsListenRequest:
			if method == "subscriptions/listen" {
				return s.listenResources(ctx, r, next)
			}
		}
		return next(ctx, method, req)
	}
}

// routed is a call on its way through the SDK to serveRouted: the entry it
// reaches, the name it was called by, the request passed on to the SDK,
// and the request its chain is served (dropped once served: see
// serveRouted).
type routed struct {
	e     *entry
	name  string
	sdk   *mcp.CallToolRequest
	req   *Request
	start time.Time // when s began on the call, if it has observers
}

type routedKey struct{}

// callParts are what call makes for one routed call, allocated together:
// the Request its chain is served, and the request passed on to the SDK,
// which names the dispatch.
type callParts struct {
	req    Request
	sdk    mcp.CallToolRequest
	params mcp.CallToolParamsRaw
}

// call routes a tools/call: the one route decides which entry it reaches,
// and the call goes on through the SDK, so that the SDK does for it what
// it does for any tool (input_required over a session, say), with the
// entry in ctx, under the name of the one tool s registers with the SDK
// (dispatch): the SDK's table holds no name of s's tools, so that adding
// and removing tools costs the SDK nothing. A server made by Wrap calls
// registered tools under their own names instead (see tableNames).
//
// A name that reaches nothing gets the answer of a name never registered
// (its echo of the name clipped); when other code may have added tools to
// the SDK server, the SDK answers it instead, unless the name is one of
// s's registered tools (hidden from the caller, or its version not
// served), and its answer for a name it does not know either is replaced
// by mcpkit's.
func (s *Server) call(ctx context.Context, req *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	name := req.Params.Name
	parts := &callParts{req: Request{Arguments: req.Params.Arguments, Call: req}}
	rc := &routed{name: name, req: &parts.req}
	obs := s.observing()
	if obs != nil {
		rc.start = time.Now()
	}
	st := s.state.Load()
	rc.e = s.reach(ctx, st, rc.req, KindTool, name, pinOf(req))
	if rc.e == nil {
		unknown := func() (mcp.Result, error) {
			err := NewUnknownToolError(name)
			if obs != nil {
				observeUnrouted(ctx, obs, DecisionUnknown, name, nil, rc.req, err, rc.start)
			}
			return nil, err
		}
		if !s.foreign.Load() || name == s.dispatch {
			return unknown()
		}
		if _, ours := st.byName.Get(name); ours {
			return unknown()
		}
		res, err := next(ctx, "tools/call", req)
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams && isSDKUnknown("unknown tool ", wire.Message, name) {
			return unknown()
		}
		return res, err
	}
	rc.req.Tool = rc.e.tool
	if s.tableNames && !rc.e.provided {
		rc.sdk = req
		return next(context.WithValue(ctx, routedKey{}, rc), "tools/call", rc.sdk)
	}
	parts.params = *req.Params
	parts.params.Name = s.dispatch
	parts.sdk = *req
	parts.sdk.Params = &parts.params
	rc.sdk = &parts.sdk
	return next(context.WithValue(ctx, routedKey{}, rc), "tools/call", rc.sdk)
}

// serveRouted is the handler of s's one SDK tool: it serves the call that
// call routed to it, once the SDK passed it on.
func (s *Server) serveRouted(ctx context.Context, sdkReq *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	rc, ok := ctx.Value(routedKey{}).(*routed)
	if !ok {
		return nil, NewUnknownToolError(sdkReq.Params.Name)
	}
	req := rc.req
	if sdkReq != rc.sdk {
		// The SDK calls again with another request: the same call, with
		// the answers to the input it asked for (a client before
		// 2026-07-28, over a session).
		call := sdkReq
		if sdkReq.Params.Name != rc.name {
			c := *sdkReq
			params := *sdkReq.Params
			params.Name = rc.name
			c.Params = &params
			call = &c
		}
		req = &Request{Tool: rc.e.tool, Arguments: call.Params.Arguments, Call: call}
	}
	// Work the call starts may keep its context (a task), which holds
	// the routed call: that must not keep the request (a stateless
	// session holds the call's whole message).
	rc.sdk, rc.req = nil, nil
	ctx = s.withVerdict(ctx, req.Header())
	defer verdictOf(ctx).serving(req.Session())()
	// A client builds the headers of a call from the definition it is
	// listed: a call pinned to another version need not carry them.
	obs := s.observing()
	if err := rc.e.checkHeaders(ctx, req, !pinOf(req.Call).set); err != nil {
		if obs != nil {
			observeUnrouted(ctx, obs, DecisionHeaderMismatch, rc.name, rc.e, req, err, rc.start)
		}
		return nil, err
	}
	ctx, end := withProgress(ctx, req.Call)
	defer end()
	res, err := s.run(ctx, rc.e, req)
	if obs != nil {
		observeServed(ctx, obs, rc.name, rc.e, req, res, err, rc.start)
	}
	if err != nil {
		return wireResult(rc.e.tool.Name, err)
	}
	return finishAs(rc.e.tool.Name, res, rc.e.wrapping(req.ProtocolVersion()))
}

// checkHeaders checks the Mcp-Param headers (SEP-2243) of req, a
// 2026-07-28 call over HTTP that reaches e, against its arguments: every
// header sent for an argument e's schema mirrors must agree with it and,
// when required (an unpinned call of e by its own name, whose client built
// its headers from e's definition), every such argument must have its
// header. mcpkit checks them, not the SDK (whose table has no
// schema of mcpkit's tools), once the route chose the version a call
// reaches, and only then: a call of a tool hidden from the caller gets the
// unknown-tool answer, whatever its headers, and a pinned version is
// checked by its own schema. A disagreement is the JSON-RPC error -32020,
// answered with HTTP status 400.
func (e *entry) checkHeaders(ctx context.Context, req *Request, required bool) error {
	h := req.Header()
	if h == nil || h.Get(protocolVersionHeader) < statelessVersion {
		return nil
	}
	hs := e.paramHeaders()
	if len(hs) == 0 {
		return nil
	}
	if err := paramheader.Agree(h, req.Arguments, hs, required); err != nil {
		verdictOf(ctx).headerFault(req)
		return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: err.Error()}
	}
	return nil
}

// run runs req through e's chain; a panic is returned as a [*PanicError].
func (s *Server) run(ctx context.Context, e *entry, req *Request) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := NewPanicError(v)
			s.logger.Error("mcpkit: tool panicked", "tool", e.tool.Name, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
			res, err = nil, pe
		}
	}()
	return e.chain.handler.ServeTool(ctx, req)
}

// wireResult applies the error table (docs/concepts.md, "Errors") to err,
// which came out of the chain of the tool called name.
func wireResult(name string, err error) (*mcp.CallToolResult, error) {
	outcome, class := Classify(nil, err)
	switch outcome {
	case OutcomePanic:
		// A panic's value may be anything, even a JSON-RPC error: never
		// show it.
		return errorResult(fmt.Sprintf("internal error in tool %q", name), class, nil), nil
	case OutcomeToolError, OutcomeTimeout:
		// Only the tool error's own text and _meta were meant for the
		// client: context that wrappers added around it
		// (fmt.Errorf("%s: %w", dsn, te)) was not.
		var te *ToolError
		errors.As(err, &te)
		return errorResult(te.Error(), class, te.Err), nil
	case OutcomeProtocolError:
		var wire *jsonrpc.Error
		errors.As(err, &wire)
		return nil, wire
	}
	text := err.Error()
	if text == "" {
		text = fmt.Sprintf("error calling tool %q", name)
	}
	return errorResult(text, class, err), nil
}

// errorResult returns a result with isError set, text as its only content,
// and class and the entries of the first [ResultMetaError] in meta's chain
// in its _meta.
func errorResult(text string, class ErrorClass, meta error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		IsError: true,
		Meta:    errorMeta(class, meta),
	}
}

// errorMeta returns the _meta of an error: class, and the entries of the
// first [ResultMetaError] in meta's chain.
func errorMeta(class ErrorClass, meta error) mcp.Meta {
	m := mcp.Meta{}
	var rme ResultMetaError
	if meta != nil && errors.As(meta, &rme) {
		maps.Copy(m, rme.ResultMeta())
	}
	m[MetaKeyErrorClass] = string(class)
	return m
}

// finish is finishAs for a result whose tool is not known, only whether its
// client needs objects: a value that is not an object is wrapped.
func finish(name string, res *mcp.CallToolResult, objects bool) (*mcp.CallToolResult, error) {
	w := asIs
	if objects {
		w = wrapNonObjects
	}
	return finishAs(name, res, w)
}

// finishAs makes a successful result fit for the wire: nil becomes an empty
// result (the SDK cannot send nil), structured content without content
// gets its JSON as a text block (the spec's SHOULD, for clients that read
// only content), structured content is wrapped as w says, and a result that
// cannot be marshalled (a NaN in structuredContent, say), which the SDK
// would drop without an answer, becomes a fatal tool error. Structured
// content given as a Go value is marshalled here once, and those bytes are
// what the SDK sends, so it is not marshalled again. The handler's result is
// never modified.
func finishAs(name string, res *mcp.CallToolResult, w wrapping) (*mcp.CallToolResult, error) {
	if res == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
	}
	if res.InputRequests != nil {
		return res, nil // input_required (SEP-2322): the SDK sends it as it is
	}
	var structured []byte
	marshalled := false // structured was marshalled here: send these bytes, not a second marshal
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if !json.Valid(sc) {
			return unmarshalable(name, errors.New("structuredContent is not valid JSON"))
		}
		structured = sc
	default:
		b, err := json.Marshal(sc)
		if err != nil {
			return unmarshalable(name, err)
		}
		structured, marshalled = b, true
	}
	if len(res.Meta) > 0 {
		if _, err := json.Marshal(res.Meta); err != nil {
			return unmarshalable(name, err)
		}
	}
	textCopy := len(res.Content) == 0 && structured != nil
	wrap := structured != nil && (w == wrapAll || w == wrapNonObjects && !isObjectJSON(structured))
	if !textCopy && !wrap && !marshalled {
		return res, nil
	}
	r := *res
	if marshalled {
		r.StructuredContent = json.RawMessage(structured)
	}
	if textCopy {
		r.Content = []mcp.Content{&mcp.TextContent{Text: string(structured)}}
	}
	if wrap {
		r.StructuredContent = wrapValue(structured)
	}
	return &r, nil
}

// unmarshalable answers a result that cannot be sent.
func unmarshalable(name string, err error) (*mcp.CallToolResult, error) {
	return errorResult(fmt.Sprintf("tool %q returned a result that cannot be sent: %v", name, err), Fatal, nil), nil
}
