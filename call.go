package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// routeCall sends a tools/call to the SDK, which runs the handler it has
// for the name (sdkHandler, for s's tools), unless the name is none of s's
// tools. Then, when no other code may have added tools to the SDK server,
// it answers as for an unknown tool itself; otherwise the SDK answers, and
// its answer for a name it does not know either is replaced by mcpkit's.
// Either way a name never registered gets the answer of a hidden tool,
// whose echo of the name is clipped: the SDK's holds all of it, megabytes
// if the name has them.
func (s *Server) routeCall(ctx context.Context, req *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if req.Params == nil || s.registered(req.Params.Name) {
		return next(ctx, "tools/call", req)
	}
	name := req.Params.Name
	if st := s.state.Load(); len(st.providers) > 0 {
		if e := s.lookupProvided(ctx, st, &Request{Call: req}, name, &Request{Call: req}); e != nil {
			// Through the SDK, as a registered tool's call goes, under the
			// name of the tool that serves provided ones.
			r := *req
			params := *req.Params
			params.Name = s.dispatch
			r.Params = &params
			return next(context.WithValue(ctx, providedCallKey{}, &providedCall{e: e, name: name}), "tools/call", &r)
		}
	}
	if !s.foreign.Load() {
		return nil, NewUnknownToolError(name)
	}
	res, err := next(ctx, "tools/call", req)
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams && isSDKUnknownTool(wire.Message, name) {
		return nil, NewUnknownToolError(name)
	}
	return res, err
}

// isSDKUnknownTool reports whether msg is the SDK's message for a call of
// name, a tool it does not have.
func isSDKUnknownTool(msg, name string) bool {
	const prefix = "unknown tool "
	q, ok := strings.CutPrefix(msg, prefix)
	if !ok {
		return false
	}
	unq, err := strconv.Unquote(q)
	return err == nil && unq == name
}

// sdkHandler returns the SDK handler registered for name. It looks the tool
// up on each call, so that Use and version changes apply without touching
// the SDK's registry.
func (s *Server) sdkHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, call *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st := s.state.Load()
		n, _ := st.byName.get(name)
		if n == nil {
			return nil, NewUnknownToolError(name)
		}
		req := &Request{Arguments: call.Params.Arguments, Call: call}
		e := st.resolve(ctx, n, req)
		if e == nil {
			return nil, NewUnknownToolError(name)
		}
		if hs := e.paramHeaders(); len(hs) > 0 && call.Extra != nil && call.Extra.Header.Get(protocolVersionHeader) >= statelessVersion {
			// Checked here, once visibility chose the version the call
			// reaches: a call of a tool hidden from the caller got the
			// unknown-tool answer above, whatever its headers.
			if err := checkParamHeaders(call.Extra.Header, call.Params.Arguments, hs); err != nil {
				markHeaderFault(ctx)
				return nil, err
			}
		}
		req.Tool = e.tool
		return s.serve(ctx, e, req)
	}
}

// serve runs req through e's chain and maps the outcome onto the wire.
func (s *Server) serve(ctx context.Context, e *entry, req *Request) (res *mcp.CallToolResult, err error) {
	ctx, end := withProgress(ctx, req.Call)
	defer end()
	defer func() {
		if v := recover(); v != nil {
			pe := NewPanicError(v)
			s.logger.Error("mcpkit: tool panicked", "tool", e.tool.Name, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
			res, err = wireResult(e.tool.Name, pe)
		}
	}()
	res, err = e.handler.ServeTool(ctx, req)
	if err != nil {
		return wireResult(e.tool.Name, err)
	}
	return finishAs(e.tool.Name, res, e.wrapping(req.ProtocolVersion()))
}

// wireResult applies the error table of the package documentation to err,
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
	m := mcp.Meta{}
	var rme ResultMetaError
	if meta != nil && errors.As(meta, &rme) {
		maps.Copy(m, rme.ResultMeta())
	}
	m[MetaKeyErrorClass] = string(class)
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		IsError: true,
		Meta:    m,
	}
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
