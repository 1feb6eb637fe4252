package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource subscriptions
//
// A client subscribes to a resource's URI to hear
// notifications/resources/updated when it changes: a session before
// 2026-07-28 with resources/subscribe, a 2026-07-28 subscriptions/listen
// stream with its resourceSubscriptions. s answers both itself, by the one
// route: a URI the caller does not reach is refused as a read of it is
// (resources/subscribe), or left out of what the stream's acknowledgement
// agrees to (listen). The SDK never sees these subscriptions: its own
// would be judged by no one. Each subscription keeps the request that made
// it, and ResourceUpdated asks the route again, for that request, when it
// sends: a subscriber that lost sight of the URI hears nothing.

// resourcesUpdated is the method of the notification subscribers hear.
const resourcesUpdated = "notifications/resources/updated"

// A subscription is one subscriber's subscription to one URI.
type subscription struct {
	// ctx holds the values of the request that subscribed, without its
	// cancellation: a per-request Visibility may read them.
	ctx    context.Context
	caller Caller // that request, as a resources/read of the URI from it would be judged

	ss *mcp.ServerSession // the session told, before 2026-07-28
	l  *ListenStream      // or the listen stream
}

// subscriptions are the subscriptions s answered, by URI, then by the
// session or listen stream that holds them.
type subscriptions struct {
	mu      sync.Mutex
	byURI   map[string]map[any]*subscription
	count   map[any]int                 // subscriptions by session or stream
	watched map[*mcp.ServerSession]bool // sessions whose end drops their subscriptions
}

// maxSubscriptions bounds the URIs one session or listen stream is
// subscribed to: a template serves any number of them.
const maxSubscriptions = 1024

// add notes sub, held by key (its session or stream), for uri, unless
// key holds maxSubscriptions already (full). It reports whether key is a
// session not watched yet: its caller then drops the session's
// subscriptions when it ends.
func (t *subscriptions) add(uri string, key any, sub *subscription) (watch, full bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byURI == nil {
		t.byURI = map[string]map[any]*subscription{}
		t.count = map[any]int{}
		t.watched = map[*mcp.ServerSession]bool{}
	}
	if t.byURI[uri] == nil {
		t.byURI[uri] = map[any]*subscription{}
	}
	if _, ok := t.byURI[uri][key]; !ok {
		if t.count[key] >= maxSubscriptions {
			if len(t.byURI[uri]) == 0 {
				delete(t.byURI, uri)
			}
			return false, true
		}
		t.count[key]++
	}
	t.byURI[uri][key] = sub
	if sub.ss != nil && !t.watched[sub.ss] {
		t.watched[sub.ss] = true
		return true, false
	}
	return false, false
}

// remove drops the subscription that key holds to each of uris, and
// reports whether there was one.
func (t *subscriptions) remove(key any, uris ...string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	had := false
	for _, uri := range uris {
		subs := t.byURI[uri]
		if _, ok := subs[key]; ok {
			had = true
			delete(subs, key)
			if t.count[key]--; t.count[key] <= 0 {
				delete(t.count, key)
			}
			if len(subs) == 0 {
				delete(t.byURI, uri)
			}
		}
	}
	return had
}

// dropSession drops every subscription of ss, which ended.
func (t *subscriptions) dropSession(ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.watched, ss)
	delete(t.count, ss)
	for uri, subs := range t.byURI {
		delete(subs, ss)
		if len(subs) == 0 {
			delete(t.byURI, uri)
		}
	}
}

// of returns the subscriptions to uri.
func (t *subscriptions) of(uri string) []*subscription {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*subscription, 0, len(t.byURI[uri]))
	for _, sub := range t.byURI[uri] {
		out = append(out, sub)
	}
	return out
}

// subscriber returns the Caller that subscribes to uri with a request
// from ss with extra and meta: a resources/read of uri from the same
// client, which the one route judges alike.
func subscriber(ss *mcp.ServerSession, extra *mcp.RequestExtra, meta mcp.Meta, uri string) *ResourceRequest {
	return &ResourceRequest{URI: uri, Call: &mcp.ReadResourceRequest{
		Session: ss,
		Extra:   extra,
		Params:  &mcp.ReadResourceParams{URI: uri, Meta: meta},
	}}
}

// emptyResult is the result of resources/subscribe and
// resources/unsubscribe: {}.
type emptyResult struct{ mcp.ResultBase }

// subscribe answers a resources/subscribe (a session before 2026-07-28),
// once s serves resources: a URI the caller reaches is subscribed; any
// other gets the answer a read of it gets (see notSubscribed).
func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.served[KindResource].Load() {
		return next(ctx, "resources/subscribe", req)
	}
	uri := req.Params.URI
	c := subscriber(req.Session, req.Extra, req.Params.Meta, uri)
	st := s.state.Load()
	if !s.hearsOf(ctx, st, c, uri, nil) {
		return s.notSubscribed(ctx, st, uri, "resources/subscribe", req, next)
	}
	sub := &subscription{ctx: context.WithoutCancel(ctx), caller: c, ss: req.Session}
	watch, full := s.subs.add(uri, req.Session, sub)
	if full {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("too many subscriptions: a session holds at most %d", maxSubscriptions)}
	}
	if watch && req.Session != nil {
		go func() {
			req.Session.Wait()
			s.subs.dropSession(req.Session)
		}()
	}
	return &emptyResult{}, nil
}

// unsubscribe answers a resources/unsubscribe, once s serves resources:
// the session's subscription to the URI, if any, ends; a URI it held no
// subscription to, and does not reach, gets the answer of subscribe.
func (s *Server) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.served[KindResource].Load() {
		return next(ctx, "resources/unsubscribe", req)
	}
	uri := req.Params.URI
	if s.subs.remove(req.Session, uri) {
		return &emptyResult{}, nil
	}
	st := s.state.Load()
	if e, _ := s.reachResource(ctx, st, subscriber(req.Session, req.Extra, req.Params.Meta, uri), uri); e == nil {
		return s.notSubscribed(ctx, st, uri, "resources/unsubscribe", req, next)
	}
	return &emptyResult{}, nil
}

// notSubscribed answers a resources/subscribe (unsubscribe, for method)
// of a URI the caller does not reach: the answer of a read of a URI never
// served, whether s serves it to others or not. When other code may have
// added resources to the SDK server, a URI s serves to no one is the
// SDK's to answer; its answer that it has no subscriptions is replaced by
// mcpkit's.
func (s *Server) notSubscribed(ctx context.Context, st *state, uri, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if e, _ := s.reachResource(ctx, st, nil, uri); e != nil || !s.foreign.Load() {
		return nil, resourceNotFound(uri)
	}
	res, err := next(ctx, method, req)
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code == jsonrpc.CodeMethodNotFound {
		return nil, resourceNotFound(uri)
	}
	return res, err
}

// listenResources serves the resourceSubscriptions of a 2026-07-28
// subscriptions/listen: it subscribes the stream to the URIs the caller
// reaches, and adds them to the acknowledgement, the subset s agreed to
// honor; the SDK is passed the request without them. The stream is held
// open until the client goes, also when the SDK has nothing to send on it.
// Over a transport without a [ListenStream] (not [Server.HTTPHandler]),
// and before s serves resources, none is agreed to.
func (s *Server) listenResources(ctx context.Context, req *mcp.SubscriptionsListenRequest, next mcp.MethodHandler) (mcp.Result, error) {
	const method = "subscriptions/listen"
	if req.Params == nil || req.Params.Notifications == nil || len(req.Params.Notifications.ResourceSubscriptions) == 0 {
		return next(ctx, method, req)
	}
	want := req.Params.Notifications.ResourceSubscriptions
	r, params, notes := *req, *req.Params, *req.Params.Notifications
	notes.ResourceSubscriptions = nil
	params.Notifications = &notes
	r.Params = &params
	l := ListenStreamFrom(ctx)
	if l == nil || !s.served[KindResource].Load() {
		return next(ctx, method, &r)
	}
	st := s.state.Load()
	var agreed []string
	seen := make(map[string]bool, len(want))
	for _, uri := range want {
		if seen[uri] {
			continue
		}
		seen[uri] = true
		c := subscriber(req.Session, req.Extra, req.Params.Meta, uri)
		if !s.hearsOf(ctx, st, c, uri, nil) {
			continue
		}
		if _, full := s.subs.add(uri, l, &subscription{ctx: context.WithoutCancel(ctx), caller: c, l: l}); full {
			break // the rest are not agreed to
		}
		agreed = append(agreed, uri)
	}
	if len(agreed) == 0 {
		return next(ctx, method, &r)
	}
	defer s.subs.remove(l, agreed...)
	if err := l.Acknowledge("resourceSubscriptions", agreed); err != nil {
		return nil, err
	}
	res, err := next(ctx, method, &r)
	if err == nil {
		<-ctx.Done()
	}
	return res, err
}

// ResourceUpdated sends notifications/resources/updated for uri to each
// client subscribed to it that still reaches it, judged again now as a
// read of uri from the request that subscribed would be: on protocols
// before 2026-07-28, sessions that sent resources/subscribe; on
// 2026-07-28, the subscriptions/listen streams that asked for uri. A
// subscriber hidden from uri since hears nothing (and hears again if it
// regains sight). A failure to reach one subscriber is logged.
//
// When s shares its changes (see [Server.ShareChanges]), the update is
// also published, so that the other replicas tell their own subscribers;
// ResourceUpdated returns the error of that publication, once its own
// subscribers were told.
//
// The servers that s is mounted into (see [Server.Mount]) tell their
// subscribers to the URI they serve uri under, by the same rules. uri is
// the URI clients read: a resource served again at another URI
// (transform.Resource) is announced at that URI too.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) error {
	return s.updated(ctx, uri, nil, true)
}

// updated tells s's subscribers to uri that it was updated (those that
// reach it through path, the mounts it came up through, when set), and
// the servers s is mounted into, under the URIs they serve it at. With
// publish set (an update s's code announces), s publishes it to its other
// replicas, and so does each server it is mounted into that shares its
// changes; without (an update another replica published), it goes on
// only to the servers that do not share theirs: one that does hears it
// from its own bus.
func (s *Server) updated(ctx context.Context, uri string, path []*mount, publish bool) error {
	s.notifyUpdated(ctx, uri, path)
	s.mu.Lock()
	sharers := slices.Clone(s.sharers)
	mounts := slices.Clone(s.mountedIn)
	s.mu.Unlock()
	var errs []error
	if publish {
		for _, sh := range sharers {
			errs = append(errs, sh.publishUpdate(ctx, uri))
		}
	}
	for _, m := range mounts {
		mounted, ok := prefixURI(strings.TrimSuffix(m.prefix, mountSeparator), uri)
		if !ok {
			continue
		}
		m.parent.mu.Lock()
		shares := len(m.parent.sharers) > 0
		m.parent.mu.Unlock()
		if publish || !shares {
			errs = append(errs, m.parent.updated(ctx, mounted, append(slices.Clip(path), m), publish))
		}
	}
	return errors.Join(errs...)
}

// notifyUpdated tells s's own subscribers to uri that still reach it (by
// path, the mounts it came up through from the server that announced it,
// when set), and meet the requirements of what they reach, that it was
// updated. Each is judged with the values of the request that
// subscribed, and ctx's cancellation.
func (s *Server) notifyUpdated(ctx context.Context, uri string, path []*mount) {
	subs := s.subs.of(uri)
	if len(subs) == 0 {
		return
	}
	st := s.state.Load()
	for _, sub := range subs {
		if ctx.Err() != nil {
			return
		}
		if !s.hearsOf(valuesOf{ctx, sub.ctx}, st, sub.caller, uri, path) {
			continue
		}
		params := &mcp.ResourceUpdatedNotificationParams{URI: uri}
		var err error
		if sub.l != nil {
			if err = sub.l.Notify(resourcesUpdated, params); errors.Is(err, ErrListenClosed) {
				continue // the client went: its subscriptions end with its request
			}
		} else {
			_, err = s.sdkSend(ctx, resourcesUpdated, &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: sub.ss, Params: params})
		}
		if err != nil {
			s.logger.Warn("mcpkit: notifying a subscriber of an updated resource failed", "uri", uri, "error", err)
		}
	}
}

// hearsOf reports whether c may hear of the updates of uri: it reaches
// it (through path, the mounts the update came up through, when set:
// for c, at each server on the way, the mounted resource, not one of that
// server's own that shadows it), from no provider that never announces
// its changes (see ResourceNotifier), and meets the requirements
// (RequireToken, RequireScopes) of what it reaches, as a read of it must.
func (s *Server) hearsOf(ctx context.Context, st *state, c Caller, uri string, path []*mount) bool {
	e, _ := s.reachResource(ctx, st, c, uri)
	if e == nil || e.silent {
		return false
	}
	for i, down := len(path)-1, e; i >= 0; i-- {
		mh := mountedOf(down)
		if mh == nil || mh.child != path[i].child {
			return false
		}
		down = mh.origin
	}
	return s.requirementRefusal(ctx, e, c) == nil
}

// valuesOf is a context with the values of one context and the
// deadline and cancellation of another.
type valuesOf struct {
	context.Context                 // for the deadline and cancellation
	values          context.Context // for the values
}

func (c valuesOf) Value(key any) any { return c.values.Value(key) }

// keepSender is the SDK server's sending middleware that keeps the
// handler beneath it, through which notifyUpdated sends to sessions.
func (s *Server) keepSender(next mcp.MethodHandler) mcp.MethodHandler {
	s.sdkSend = next
	return next
}
