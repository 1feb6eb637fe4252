package mcpkit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// resourceNotFound is the JSON-RPC error (-32602) of a resources/read of
// a URI the caller reaches nothing at, in the SDK's shape: unknown, hidden
// and removed resources alike. The URI it echoes is clipped.
func resourceNotFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": schema.Clip(uri)})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: data}
}

// NewResourceNotFoundError returns the JSON-RPC error (-32602) a client
// gets for a resources/read of a URI that nothing serves: "Resource not
// found", with the URI, clipped, in its data. The server answers a
// resource hidden from the caller with it too.
func NewResourceNotFoundError(uri string) error { return resourceNotFound(uri) }

// listResources answers one resources/list: the page of what the caller
// is listed, merged with the resources registered on the SDK server
// directly.
func (s *Server) listResources(ctx context.Context, req *mcp.ListResourcesRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.answers(KindResource) {
		return nil, errNoResources
	}
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	page, err := answerList(ctx, s, resourceList{req}, cursor, next)
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Cacheable: page.cacheable, Resources: page.items, NextCursor: page.next}, nil
}

// listTemplates answers one resources/templates/list, as listResources
// answers resources/list.
func (s *Server) listTemplates(ctx context.Context, req *mcp.ListResourceTemplatesRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.answers(KindResource) {
		return nil, errNoResources
	}
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	page, err := answerList(ctx, s, templateList{req}, cursor, next)
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourceTemplatesResult{Cacheable: page.cacheable, ResourceTemplates: page.items, NextCursor: page.next}, nil
}

// resourceList is a resources/list as answerList reads it.
type resourceList struct{ req *mcp.ListResourcesRequest }

func (resourceList) kind() Kind                 { return KindResource }
func (l resourceList) request() mcp.Request     { return l.req }
func (resourceList) key(r *mcp.Resource) string { return r.URI }
func (resourceList) mine(s *Server, st *state, r *mcp.Resource) bool {
	_, ours := st.targets[famResource].Get(r.URI)
	return ours || r.URI == s.resourceDispatch
}

func (l resourceList) ours(ctx context.Context, s *Server, st *state, after string, limit int) ([]*mcp.Resource, bool, string, error) {
	pg := s.page(ctx, st, sdkCall[*mcp.ListResourcesParams]{l.req}, shelfResources, after, limit, false)
	out := make([]*mcp.Resource, 0, len(pg.items))
	for _, e := range pg.targets() {
		out = append(out, &e.resource.Resource)
	}
	return out, pg.more, pg.last, nil
}

func (l resourceList) sdkPage(ctx context.Context, next mcp.MethodHandler, cursor string) ([]*mcp.Resource, string, mcp.Cacheable, error) {
	res, err := askSDK[*mcp.ListResourcesResult](ctx, next, "resources/list", l.req, &mcp.ListResourcesParams{Cursor: cursor, Meta: sdkCall[*mcp.ListResourcesParams]{l.req}.Meta()})
	if err != nil {
		return nil, "", mcp.Cacheable{}, err
	}
	return res.Resources, res.NextCursor, res.Cacheable, nil
}

// templateList is a resources/templates/list as answerList reads it.
type templateList struct {
	req *mcp.ListResourceTemplatesRequest
}

func (templateList) kind() Kind                         { return KindResource }
func (l templateList) request() mcp.Request             { return l.req }
func (templateList) key(t *mcp.ResourceTemplate) string { return t.URITemplate }
func (templateList) mine(_ *Server, st *state, t *mcp.ResourceTemplate) bool {
	_, ours := st.targets[famTemplate].Get(t.URITemplate)
	return ours
}

func (l templateList) ours(ctx context.Context, s *Server, st *state, after string, limit int) ([]*mcp.ResourceTemplate, bool, string, error) {
	pg := s.page(ctx, st, sdkCall[*mcp.ListResourceTemplatesParams]{l.req}, shelfTemplates, after, limit, false)
	out := make([]*mcp.ResourceTemplate, 0, len(pg.items))
	for _, e := range pg.targets() {
		out = append(out, &e.template.ResourceTemplate)
	}
	return out, pg.more, pg.last, nil
}

func (l templateList) sdkPage(ctx context.Context, next mcp.MethodHandler, cursor string) ([]*mcp.ResourceTemplate, string, mcp.Cacheable, error) {
	res, err := askSDK[*mcp.ListResourceTemplatesResult](ctx, next, "resources/templates/list", l.req,
		&mcp.ListResourceTemplatesParams{Cursor: cursor, Meta: sdkCall[*mcp.ListResourceTemplatesParams]{l.req}.Meta()})
	if err != nil {
		return nil, "", mcp.Cacheable{}, err
	}
	return res.ResourceTemplates, res.NextCursor, res.Cacheable, nil
}

// routedResource is a resources/read on its way through the SDK to
// serveResourceRouted, as routed is for a tools/call.
type routedResource struct {
	e       *entry
	uri     string
	params  map[string]string
	private bool // what the caller reads depends on who asks
	sdk     *mcp.ReadResourceRequest
	req     *ResourceRequest
	start   time.Time // when s began on the request, if it has observers
}

type routedResourceKey struct{}

// readResource routes a resources/read: the one route decides which
// resource or template it reaches, and it goes on through the SDK under
// the URI of the one resource s registers with it, so that the SDK does
// for it what it does for any resource (input_required over a session),
// with the entry in ctx. A URI that reaches nothing gets the answer of a
// URI never served; when other code may have added resources to the SDK
// server, the SDK answers it instead, and its answer for a URI it does not
// know either is replaced by mcpkit's.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.answers(KindResource) {
		return nil, errNoResources
	}
	uri := req.Params.URI
	rr := &routedResource{uri: uri, req: &ResourceRequest{URI: uri, Call: req}}
	obs := s.observing()
	if obs != nil {
		rr.start = time.Now()
	}
	st := s.state.Load()
	rr.e, rr.params = s.reachResource(ctx, st, rr.req, uri)
	if rr.e == nil {
		unknown := func() (mcp.Result, error) {
			err := resourceNotFound(uri)
			if obs != nil {
				observeTarget(ctx, obs, DecisionUnknown, uri, nil, rr.req, err, rr.start)
			}
			return nil, err
		}
		if !s.foreign.Load() || uri == s.resourceDispatch {
			return unknown()
		}
		res, err := next(ctx, "resources/read", req)
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams && wire.Message == "Resource not found" {
			return unknown()
		}
		return res, err
	}
	rr.private = !st.uniform(KindResource)
	rr.req.Resource, rr.req.Template, rr.req.Params, rr.req.private = rr.e.resource, rr.e.template, rr.params, rr.private
	sdkReq := *req
	params := *req.Params
	params.URI = s.resourceDispatch
	sdkReq.Params = &params
	rr.sdk = &sdkReq
	res, err := next(context.WithValue(ctx, routedResourceKey{}, rr), "resources/read", rr.sdk)
	if r, ok := res.(*mcp.ReadResourceResult); ok && r != nil && rr.private {
		// What the caller reads depends on who asks: no shared cache may
		// keep it, whatever the SDK's cache hints said. r is s's own copy
		// (see finishResource).
		r.CacheScope = "private"
	}
	return res, err
}

// serveResourceRouted is the handler of s's one SDK resource: it serves
// the resources/read that readResource routed to it, once the SDK passed
// it on.
func (s *Server) serveResourceRouted(ctx context.Context, sdkReq *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rr, ok := ctx.Value(routedResourceKey{}).(*routedResource)
	if !ok {
		return nil, resourceNotFound(sdkReq.Params.URI)
	}
	req := rr.req
	if sdkReq != rr.sdk {
		// The SDK asks again with another request: the same read, with
		// the answers to the input it asked for (a client before
		// 2026-07-28, over a session).
		call := *sdkReq
		params := *sdkReq.Params
		params.URI = rr.uri
		call.Params = &params
		req = &ResourceRequest{Resource: rr.e.resource, Template: rr.e.template, URI: rr.uri, Params: rr.params, Call: &call, private: rr.private}
	}
	rr.sdk, rr.req = nil, nil
	ctx = s.withVerdict(ctx, req.Header())
	defer verdictOf(ctx).serving(req.Session())()
	var (
		res *mcp.ReadResourceResult
		err error
	)
	if refused := s.requirementRefusal(ctx, rr.e, req); refused != nil {
		// Refused before the chain, as its requirement would: no layer
		// of it answers a caller the requirement refuses.
		refused.Kind = KindResource
		verdictOf(ctx).refuse(req.Session(), refused)
		err = &ToolError{Err: refused, Class: Fatal}
	} else {
		res, err = s.runResource(ctx, rr.e, req)
	}
	if obs := s.observing(); obs != nil {
		observeTarget(ctx, obs, DecisionServed, rr.uri, rr.e, req, err, rr.start)
	}
	if err != nil {
		return nil, targetWireError(KindResource, req.name(), err)
	}
	return finishResource(rr, req, res), nil
}

// runResource runs req through e's chain; a panic is returned as a
// [*PanicError].
func (s *Server) runResource(ctx context.Context, e *entry, req *ResourceRequest) (res *mcp.ReadResourceResult, err error) {
	defer s.recoverTarget(KindResource, req.name(), &err)
	return e.chain.resource.ServeResource(ctx, req)
}

// finishResource completes what the chain of a read returned, as the SDK
// completes a read it serves itself: contents without a URI have the URI
// read, without a MIME type the resource's (template's); a nil result is
// an empty one, as are the contents of an input_required result to a
// client before 2026-07-28. The SDK (and readResource, for a private
// read) writes into the result it is given (its cache hints, contents
// without a MIME type): the result and those contents are copies, never
// the handler's own, which it may share between reads.
func finishResource(rr *routedResource, req *ResourceRequest, res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	if res == nil {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}
	}
	r := *res
	if r.InputRequests != nil {
		if r.Contents == nil && req.ProtocolVersion() < statelessVersion {
			// The SDK asks a client before 2026-07-28 for the input
			// (see serverMultiRoundTripMiddleware) once its own read
			// returns, which refuses nil contents.
			r.Contents = []*mcp.ResourceContents{}
		}
		return &r
	}
	if r.Contents == nil {
		r.Contents = []*mcp.ResourceContents{}
	}
	mime := ""
	if rr.e.resource != nil {
		mime = rr.e.resource.MIMEType
	} else {
		mime = rr.e.template.MIMEType
	}
	copied := false
	for i, c := range r.Contents {
		if c == nil || c.URI != "" && c.MIMEType != "" {
			continue
		}
		if !copied {
			r.Contents, copied = slices.Clone(r.Contents), true
		}
		cc := *c
		cc.URI = cmp.Or(cc.URI, rr.uri)
		cc.MIMEType = cmp.Or(cc.MIMEType, mime)
		r.Contents[i] = &cc
	}
	return &r
}
