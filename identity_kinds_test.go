package mcpkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// The identity matrix of prompts and resources (see identity_test.go for
// tools): a prompts/get or resources/read is judged by the prompt,
// resource or template it reaches, whichever way it came in. Each route
// below reaches one target (the prompt summarize, the resource
// notes://index, the template notes://{id}) by another way; each mechanism
// is configured with the target's identity alone (its Key as the route
// serves it: the origin's). Every pair runs through a real HTTP client,
// on both protocol eras.

// A targetKind is one of the three targets every route reaches.
type targetKind string

const (
	kindPrompt   targetKind = "prompt"
	kindResource targetKind = "resource"
	kindTemplate targetKind = "template"
)

var targetKinds = []targetKind{kindPrompt, kindResource, kindTemplate}

// kindTarget serves the three targets. Its handlers count their runs and,
// while block is set, hold until the request's context ends (or the
// fixture ends, or a safety bound passes, so that a layer that fails to
// cut them off fails the test rather than hanging it).
type kindTarget struct {
	runs    atomic.Int64
	block   atomic.Bool
	release chan struct{}
}

// holdSafety bounds a blocked handler's wait: a safety net, never reached
// when Timeout does its work.
const holdSafety = 30 * time.Second

// hold blocks while kt.block is set, and reports whether the request's
// context ended first.
func (kt *kindTarget) hold(ctx context.Context) error {
	if !kt.block.Load() {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-kt.release:
	case <-time.After(holdSafety):
	}
	return nil
}

// prompt returns summarize: a required argument text, an optional style.
func (kt *kindTarget) prompt() *mcpkit.Prompt {
	return &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "summarize", Arguments: []*mcp.PromptArgument{
			{Name: "text", Required: true}, {Name: "style"}}},
		Handler: mcpkit.PromptHandlerFunc(func(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			kt.runs.Add(1)
			if err := kt.hold(ctx); err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: summary(req.Arguments["text"], req.Arguments["style"])}}}}, nil
		}),
	}
}

// summary is what summarize answers.
func summary(text, style string) string {
	if style == "" {
		style = "full"
	}
	return "summary of " + text + " (" + style + ")"
}

// resource returns notes://index.
func (kt *kindTarget) resource() *mcpkit.Resource {
	return &mcpkit.Resource{
		Resource: mcp.Resource{URI: "notes://index", Name: "index"},
		Handler:  kt.read(func(*mcpkit.ResourceRequest) string { return "index" }),
	}
}

// template returns notes://{id}.
func (kt *kindTarget) template() *mcpkit.ResourceTemplate {
	return &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "notes://{id}", Name: "note"},
		Handler:          kt.read(noteText),
	}
}

// noteText is what a read of a note answers: its id, from the template's
// variables, or from the URI for a resource of its own.
func noteText(req *mcpkit.ResourceRequest) string {
	id, ok := req.Params["id"]
	if !ok {
		_, id, _ = strings.Cut(req.URI, "://")
	}
	return "note " + id
}

func (kt *kindTarget) read(text func(*mcpkit.ResourceRequest) string) mcpkit.ResourceHandler {
	return mcpkit.ResourceHandlerFunc(func(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		kt.runs.Add(1)
		if err := kt.hold(ctx); err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: text(req)}}}, nil
	})
}

// of returns the target of kind k.
func (kt *kindTarget) of(k targetKind) mcpkit.Target {
	switch k {
	case kindPrompt:
		return kt.prompt()
	case kindResource:
		return kt.resource()
	}
	return kt.template()
}

// register adds tg to srv.
func register(t *testing.T, srv *mcpkit.Server, tg mcpkit.Target) {
	t.Helper()
	var err error
	switch tg := tg.(type) {
	case *mcpkit.Prompt:
		err = srv.AddPrompts(tg)
	case *mcpkit.Resource:
		err = srv.AddResources(tg)
	case *mcpkit.ResourceTemplate:
		err = srv.AddResourceTemplates(tg)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A kindRequest is a prompts/get (name, args) or a resources/read (uri).
type kindRequest struct {
	name string
	args map[string]string
	uri  string
}

// A kindRoute is one way to reach the target of each kind. install
// registers what the route needs on srv and returns the identity of the
// target of kind k as the route serves it; request and origin return the
// route's request of the target (with the template's id, the prompt's
// text), and the request that reaches it without the route.
type kindRoute struct {
	name    string
	install func(t *testing.T, srv *mcpkit.Server, kt *kindTarget, k targetKind) string
	request func(k targetKind, id string) kindRequest
	origin  func(k targetKind, id string) kindRequest
	// sameCall reports whether the route's request is, on the wire, the
	// origin's: then a result cached for one answers the other.
	sameCall bool
}

// direct is the request of the target of kind k under its own name and
// URI, prefixed by ns ("" for none) as a mount prefixes them.
func direct(k targetKind, id, promptPrefix, scheme, ns string) kindRequest {
	switch k {
	case kindPrompt:
		return kindRequest{name: promptPrefix + "summarize", args: map[string]string{"text": id}}
	case kindResource:
		return kindRequest{uri: scheme + "://" + ns + "index"}
	}
	return kindRequest{uri: scheme + "://" + ns + id}
}

func plain(k targetKind, id string) kindRequest { return direct(k, id, "", "notes", "") }

var kindRoutes = []kindRoute{
	{
		name: "name",
		install: func(t *testing.T, srv *mcpkit.Server, kt *kindTarget, k targetKind) string {
			tg := kt.of(k)
			register(t, srv, tg)
			return tg.Key()
		},
		request: plain, origin: plain, sameCall: true,
	},
	{
		// A prompt derived by transform.Prompt (brief: style hidden, fixed
		// to short), a resource and a template served under other URIs
		// whose Origin is the original; the originals are served too.
		name: "renamed",
		install: func(t *testing.T, srv *mcpkit.Server, kt *kindTarget, k targetKind) string {
			tg := kt.of(k)
			register(t, srv, tg)
			switch tg := tg.(type) {
			case *mcpkit.Prompt:
				d, err := transform.Prompt(tg, transform.PromptSpec{Name: "brief",
					Arguments: map[string]transform.PromptArg{"style": {Hide: true, Value: "short"}}})
				if err != nil {
					t.Fatal(err)
				}
				register(t, srv, d)
			case *mcpkit.Resource:
				d := *tg
				d.URI, d.Origin = "memo://index", tg
				register(t, srv, &d)
			case *mcpkit.ResourceTemplate:
				d := *tg
				d.URITemplate, d.Origin = "memo://{id}", tg
				register(t, srv, &d)
			}
			return tg.Key()
		},
		request: func(k targetKind, id string) kindRequest {
			if k == kindPrompt {
				return kindRequest{name: "brief", args: map[string]string{"text": id}}
			}
			return direct(k, id, "", "memo", "")
		},
		origin: plain,
	},
	{
		// The parent serves the target itself, and a child that serves it
		// too is mounted under ns: two routes to one identity.
		name: "mount",
		install: func(t *testing.T, srv *mcpkit.Server, kt *kindTarget, k targetKind) string {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "ns"}, nil)
			tg := kt.of(k)
			register(t, child, tg)
			if _, err := srv.Mount("ns", child); err != nil {
				t.Fatal(err)
			}
			register(t, srv, kt.of(k))
			return tg.Key()
		},
		request: func(k targetKind, id string) kindRequest { return direct(k, id, "ns_", "notes", "ns/") },
		origin:  plain,
		// A mounted prompt's name is not registered on the parent, so
		// its headers decide nothing; a URI is walked by the headers
		// (the parent's own resources have a requirement), the mount's
		// registry included.
	},
	{
		name: "provider",
		install: func(t *testing.T, srv *mcpkit.Server, kt *kindTarget, k targetKind) string {
			p := &kindsOf{}
			tg := kt.of(k)
			switch tg := tg.(type) {
			case *mcpkit.Prompt:
				p.prompt = tg
			case *mcpkit.Resource:
				p.resource = tg
			case *mcpkit.ResourceTemplate:
				p.template = tg
			}
			srv.AddProvider(p)
			return tg.Key()
		},
		request: plain, origin: plain, sameCall: true,
	},
	{
		// An upstream mcpkit server over HTTP, served through proxy.New:
		// the target's identity here is the one the proxy serves (the
		// prompt under the prefix; URIs as they are).
		name: "proxy",
		install: func(t *testing.T, srv *mcpkit.Server, kt *kindTarget, k targetKind) string {
			remote := mcpkit.NewServer(&mcp.Implementation{Name: "remote"}, nil)
			register(t, remote, kt.of(k))
			hs := httptest.NewServer(remote.HTTPHandler(nil))
			t.Cleanup(hs.Close)
			up, err := proxy.New(t.Context(), proxy.HTTP(hs.URL, nil), &proxy.Options{Prefix: "up."})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { up.Close() })
			srv.AddProvider(up)
			switch k {
			case kindPrompt:
				p, _ := up.LookupPrompt(t.Context(), nil, "up.summarize")
				if p == nil {
					t.Fatal("the proxy does not serve up.summarize")
				}
				return p.Key()
			case kindResource:
				r, _ := up.LookupResource(t.Context(), nil, "notes://index")
				if r == nil {
					t.Fatal("the proxy does not serve notes://index")
				}
				return r.Key()
			}
			ts, _ := up.ListResourceTemplates(t.Context(), nil, "", 0)
			if len(ts) != 1 {
				t.Fatalf("the proxy lists templates %v", ts)
			}
			return ts[0].Key()
		},
		request:  func(k targetKind, id string) kindRequest { return direct(k, id, "up.", "notes", "") },
		origin:   func(k targetKind, id string) kindRequest { return direct(k, id, "up.", "notes", "") },
		sameCall: true,
	},
}

// kindsOf is a PromptProvider and ResourceProvider of what it holds, to
// everyone. Its template is listed, and serves the reads of the URIs it
// matches through LookupResourceTemplate.
type kindsOf struct {
	prompt   *mcpkit.Prompt
	resource *mcpkit.Resource
	template *mcpkit.ResourceTemplate
}

func (*kindsOf) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (*kindsOf) LookupTool(context.Context, mcpkit.Caller, string) (*mcpkit.Tool, error) {
	return nil, nil
}

func (p *kindsOf) ListPrompts(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Prompt, error) {
	if p.prompt != nil && p.prompt.Name > after {
		return []*mcpkit.Prompt{p.prompt}, nil
	}
	return nil, nil
}

func (p *kindsOf) LookupPrompt(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Prompt, error) {
	if p.prompt != nil && p.prompt.Name == name {
		return p.prompt, nil
	}
	return nil, nil
}

func (p *kindsOf) ListResources(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Resource, error) {
	if p.resource != nil && p.resource.URI > after {
		return []*mcpkit.Resource{p.resource}, nil
	}
	return nil, nil
}

func (p *kindsOf) ListResourceTemplates(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.ResourceTemplate, error) {
	if p.template != nil && p.template.URITemplate > after {
		return []*mcpkit.ResourceTemplate{p.template}, nil
	}
	return nil, nil
}

func (p *kindsOf) LookupResource(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.Resource, error) {
	if p.resource != nil && p.resource.URI == uri {
		return p.resource, nil
	}
	return nil, nil
}

func (p *kindsOf) LookupResourceTemplate(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.ResourceTemplate, error) {
	if id, ok := strings.CutPrefix(uri, "notes://"); p.template == nil || !ok || id == "" || strings.Contains(id, "/") {
		return nil, nil
	}
	return p.template, nil
}

// kindOutcome is what a request got, as the matrix tells outcomes apart.
type kindOutcome struct {
	wire       *jsonrpc.Error // a JSON-RPC error
	challenged bool           // an HTTP 403 (a requirement's challenge)
	text       string         // the first message's (contents') text
	hit        bool           // answered from the cache
}

func (o kindOutcome) ran() bool { return o.wire == nil && !o.challenged }

func (o kindOutcome) String() string {
	if o.wire != nil {
		b, _ := json.Marshal(o.wire)
		return "error " + string(b)
	}
	if o.challenged {
		return "HTTP 403"
	}
	return "text " + o.text
}

// A kindsEra serves a server to clients of one protocol era, one client
// per bearer token of identityTokens.
type kindsEra struct {
	name  string
	serve func(t *testing.T, srv *mcpkit.Server) func(t *testing.T, token string, r kindRequest) kindOutcome
}

var kindsEras = []kindsEra{
	{mcpkittest.StatelessVersion, serveStateless},
	{mcpkittest.StatefulVersion, serveSessions},
}

// serveStateless serves srv statelessly over HTTP; each request is one
// POST of a mcpkittest.RawClient.
func serveStateless(t *testing.T, srv *mcpkit.Server) func(t *testing.T, token string, r kindRequest) kindOutcome {
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "admin"})
	return func(t *testing.T, token string, r kindRequest) kindOutcome {
		t.Helper()
		raw := mcpkittest.RawClient{Endpoint: ts.URL, Token: token}
		var (
			res json.RawMessage
			err error
		)
		if r.uri != "" {
			res, err = raw.Call(t.Context(), "resources/read", map[string]any{"uri": r.uri})
		} else {
			res, err = raw.Call(t.Context(), "prompts/get", map[string]any{"name": r.name, "arguments": r.args})
		}
		var wire *jsonrpc.Error
		switch {
		case errors.As(err, &wire):
			return kindOutcome{wire: wire}
		case err != nil && strings.Contains(err.Error(), "HTTP 403"):
			if !strings.Contains(err.Error(), "insufficient scope") || !strings.Contains(err.Error(), "requires scope") {
				t.Errorf("a 403 that does not say what is required: %v", err)
			}
			return kindOutcome{challenged: true}
		case err != nil:
			t.Fatal(err)
		}
		var out struct {
			Meta     map[string]any `json:"_meta"`
			Messages []struct {
				Content struct{ Text string } `json:"content"`
			} `json:"messages"`
			Contents []struct{ Text string } `json:"contents"`
		}
		if err := json.Unmarshal(res, &out); err != nil {
			t.Fatal(err)
		}
		o := kindOutcome{hit: out.Meta[middleware.MetaKeyCache] == "hit"}
		switch {
		case len(out.Messages) > 0:
			o.text = out.Messages[0].Content.Text
		case len(out.Contents) > 0:
			o.text = out.Contents[0].Text
		}
		return o
	}
}

// serveSessions serves srv over HTTP with sessions, to an SDK client of
// 2025-11-25 per token.
func serveSessions(t *testing.T, srv *mcpkit.Server) func(t *testing.T, token string, r kindRequest) kindOutcome {
	sessions := map[string]*mcp.ClientSession{}
	return func(t *testing.T, token string, r kindRequest) kindOutcome {
		t.Helper()
		cs := sessions[token]
		if cs == nil {
			cs = mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: token}).Session
			sessions[token] = cs
		}
		var (
			o    kindOutcome
			meta mcp.Meta
			err  error
		)
		if r.uri != "" {
			var res *mcp.ReadResourceResult
			if res, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: r.uri}); err == nil {
				meta = res.Meta
				if len(res.Contents) > 0 {
					o.text = res.Contents[0].Text
				}
			}
		} else {
			var res *mcp.GetPromptResult
			if res, err = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: r.name, Arguments: r.args}); err == nil {
				meta = res.Meta
				if len(res.Messages) > 0 {
					o.text = res.Messages[0].Content.(*mcp.TextContent).Text
				}
			}
		}
		var wire *jsonrpc.Error
		switch {
		case errors.As(err, &wire):
			return kindOutcome{wire: wire}
		case err != nil && strings.Contains(err.Error(), "Forbidden"):
			// The session is closed after a refusal (docs/testing.md):
			// the next request of this token opens another.
			delete(sessions, token)
			return kindOutcome{challenged: true}
		case err != nil:
			t.Fatal(err)
		}
		o.hit = meta[middleware.MetaKeyCache] == "hit"
		return o
	}
}

// kindFixture is one route with one mechanism, for the target of one kind,
// served to clients of one era.
type kindFixture struct {
	route kindRoute
	kind  targetKind
	kt    *kindTarget
	era   kindsEra
	send  func(t *testing.T, token string, r kindRequest) kindOutcome
	// outer counts the requests that reach the server's middleware (the
	// outermost layer), by kind.
	outer atomic.Int64
}

func newKindFixture(t *testing.T, era kindsEra, r kindRoute, k targetKind, install func(srv *mcpkit.Server, match func(mcpkit.Target) bool)) *kindFixture {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "identity-kinds", Version: "1"}, nil)
	f := &kindFixture{route: r, kind: k, era: era, kt: &kindTarget{release: make(chan struct{})}}
	srv.Use(seeing(&f.outer))
	key := r.install(t, srv, f.kt, k)
	install(srv, keyed(k, key))
	f.send = era.serve(t, srv)
	// Registered last, run first: a handler still held lets the servers
	// close.
	t.Cleanup(func() { close(f.kt.release) })
	return f
}

// keyed returns a match function selecting the targets of kind k whose
// identity is key: the configuration every mechanism is given.
func keyed(k targetKind, key string) func(mcpkit.Target) bool {
	kind := mcpkit.KindPrompt
	if k != kindPrompt {
		kind = mcpkit.KindResource
	}
	return func(t mcpkit.Target) bool { return t.Kind() == kind && t.Key() == key }
}

// seeing returns a layer, for every kind, that counts the requests it sees.
func seeing(n *atomic.Int64) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler { return &seeingHandler{n: n, next: next} }
}

type seeingHandler struct {
	n    *atomic.Int64
	next mcpkit.Handler
}

func (h *seeingHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	h.n.Add(1)
	return h.next.ServeTool(ctx, req)
}

func (h *seeingHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	h.n.Add(1)
	return h.next.(mcpkit.PromptHandler).ServePrompt(ctx, req)
}

func (h *seeingHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	h.n.Add(1)
	return h.next.(mcpkit.ResourceHandler).ServeResource(ctx, req)
}

// wantText is what the route's request with id answers.
func (f *kindFixture) wantText(id string) string {
	switch f.kind {
	case kindPrompt:
		if f.route.name == "renamed" {
			return summary(id, "short")
		}
		return summary(id, "")
	case kindResource:
		return "index"
	}
	return "note " + id
}

// neverRegistered returns what a server that never served the target
// answers the holder of token for r: one that serves another target of
// the kind, so that it has the kind's methods.
func (f *kindFixture) neverRegistered(t *testing.T, token string, r kindRequest) kindOutcome {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "identity-kinds", Version: "1"}, nil)
	other := (&kindTarget{}).of(f.kind)
	switch o := other.(type) {
	case *mcpkit.Prompt:
		o.Name = "unrelated"
	case *mcpkit.Resource:
		o.URI = "other://index"
	case *mcpkit.ResourceTemplate:
		o.URITemplate = "other://{id}"
	}
	register(t, srv, other)
	return f.era.serve(t, srv)(t, token, r)
}

// wantHiddenKind checks that the route answers the holder of token, byte
// for byte, as a server that never served the target, and that the
// target did not run.
func wantHiddenKind(t *testing.T, f *kindFixture, token string) {
	t.Helper()
	r := f.route.request(f.kind, "7")
	got, want := f.send(t, token, r), f.neverRegistered(t, token, r)
	if want.wire == nil {
		t.Fatalf("the server that never served it answered %v", want)
	}
	if got.wire == nil {
		t.Errorf("%s: the route reached a hidden %s: %v", token, f.kind, got)
	} else if g, w := marshalWire(t, got.wire), marshalWire(t, want.wire); !bytes.Equal(g, w) {
		t.Errorf("%s: the route's answer\n%s\nis not the answer of a %s never served\n%s", token, g, f.kind, w)
	}
	if f.kind == kindPrompt {
		// Without its required argument: a hidden prompt's checks must
		// not tell that it exists.
		r.args = nil
		got, want := f.send(t, token, r), f.neverRegistered(t, token, r)
		if got.wire == nil || want.wire == nil || !bytes.Equal(marshalWire(t, got.wire), marshalWire(t, want.wire)) {
			t.Errorf("%s: without its required argument, the hidden prompt answered %v; never served: %v", token, got, want)
		}
	}
	if n := f.kt.runs.Load(); n != 0 {
		t.Errorf("the hidden %s ran %d times", f.kind, n)
	}
}

func marshalWire(t *testing.T, e *jsonrpc.Error) []byte {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantServedKind checks that the route reaches the target for the holder
// of token.
func wantServedKind(t *testing.T, f *kindFixture, token string) {
	t.Helper()
	if o := f.send(t, token, f.route.request(f.kind, "7")); !o.ran() || o.text != f.wantText("7") {
		t.Errorf("%s: the route did not reach the %s: %v", token, f.kind, o)
	}
}

// A kindMechanism is a decision keyed on a target, configured with the
// target's identity alone (match), with the property every route must
// show.
type kindMechanism struct {
	name    string
	install func(srv *mcpkit.Server, match func(mcpkit.Target) bool)
	check   func(t *testing.T, f *kindFixture)
}

var kindMechanisms = []kindMechanism{
	{
		name: "visibility.Disable(Key)",
		install: func(srv *mcpkit.Server, match func(mcpkit.Target) bool) {
			visibility.New(visibility.Disable(match)).Attach(srv)
		},
		check: func(t *testing.T, f *kindFixture) {
			wantHiddenKind(t, f, "admin")
		},
	},
	{
		name: "visibility.Require(Key, Scopes)",
		install: func(srv *mcpkit.Server, match func(mcpkit.Target) bool) {
			visibility.New(visibility.Require(match, visibility.Scopes("admin"))).Attach(srv)
		},
		check: func(t *testing.T, f *kindFixture) {
			wantHiddenKind(t, f, "user")
			wantServedKind(t, f, "admin")
		},
	},
	{
		name: "mcpkit.For(Key, RequireScopes)",
		install: func(srv *mcpkit.Server, match func(mcpkit.Target) bool) {
			srv.Use(mcpkit.For(match, mcpkit.RequireScopes("admin")))
		},
		check: func(t *testing.T, f *kindFixture) {
			if o := f.send(t, "user", f.route.request(f.kind, "7")); !o.challenged {
				t.Errorf("the route escaped the %s's scope requirement: %v", f.kind, o)
			}
			if n := f.kt.runs.Load(); n != 0 {
				t.Errorf("the %s ran %d times for a caller without the scope", f.kind, n)
			}
			// Refused by its headers where they decide, and else once
			// reached, before the chain: the request never reaches the
			// server's middleware.
			if n := f.outer.Load(); n != 0 {
				t.Errorf("the server's middleware ran %d times for a refused request", n)
			}
			wantServedKind(t, f, "admin")
		},
	},
	{
		name: "mcpkit.For(Key, Timeout)",
		install: func(srv *mcpkit.Server, match func(mcpkit.Target) bool) {
			srv.Use(mcpkit.For(match, middleware.Timeout(50*time.Millisecond, nil)))
		},
		check: func(t *testing.T, f *kindFixture) {
			f.kt.block.Store(true)
			o := f.send(t, "admin", f.route.request(f.kind, "7"))
			if o.wire == nil || o.wire.Code != jsonrpc.CodeInternalError || !strings.Contains(o.wire.Message, "timed out") {
				t.Errorf("the route escaped the %s's timeout: %v", f.kind, o)
			}
		},
	},
	{
		name: "mcpkit.For(Key, RateLimit)",
		install: func(srv *mcpkit.Server, match func(mcpkit.Target) bool) {
			srv.Use(mcpkit.For(match, middleware.RateLimit(middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil), nil)))
		},
		check: func(t *testing.T, f *kindFixture) {
			// A template's URIs share one budget: the route reads
			// another URI than the origin.
			if o := f.send(t, "admin", f.route.origin(f.kind, "1")); !o.ran() {
				t.Fatalf("first request: %v", o)
			}
			o := f.send(t, "admin", f.route.request(f.kind, "2"))
			if o.wire == nil || !strings.Contains(o.wire.Message, "rate limited") {
				t.Errorf("the route got a fresh budget: %v", o)
			}
			// A budget per caller: another has its own.
			if o := f.send(t, "user", f.route.request(f.kind, "2")); !o.ran() {
				t.Errorf("another caller: %v", o)
			}
		},
	},
	{
		name: "middleware.CacheResults(Targets: Key)",
		install: func(srv *mcpkit.Server, match func(mcpkit.Target) bool) {
			srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{Targets: match}))
		},
		check: func(t *testing.T, f *kindFixture) {
			if o := f.send(t, "admin", f.route.origin(f.kind, "1")); !o.ran() {
				t.Fatalf("first request: %v", o)
			}
			want := f.wantText("1")
			first := f.send(t, "admin", f.route.request(f.kind, "1"))
			if !first.ran() || first.text != want {
				t.Fatalf("the route: %v, want text %q (answered with another route's result?)", first, want)
			}
			runs := f.kt.runs.Load()
			if f.route.sameCall && (runs != 1 || !first.hit) {
				t.Errorf("the same request by the route missed the origin's entry: ran %d times, hit %v", runs, first.hit)
			}
			second := f.send(t, "admin", f.route.request(f.kind, "1"))
			if !second.hit || second.text != want {
				t.Errorf("the route's second request was not a hit: %v (hit %v)", second, second.hit)
			}
			if n := f.kt.runs.Load(); n != runs {
				t.Errorf("the route's second request ran the %s again", f.kind)
			}
		},
	},
}

// kindDefects are the pairs that fail because of a defect of the product,
// by route and kind (every mechanism) or route, kind and mechanism, with
// the symptom.
var kindDefects = map[string]string{}

func TestIdentityKindsMatrix(t *testing.T) {
	for _, era := range kindsEras {
		t.Run(era.name, func(t *testing.T) {
			for _, r := range kindRoutes {
				t.Run(r.name, func(t *testing.T) {
					for _, k := range targetKinds {
						t.Run(string(k), func(t *testing.T) {
							for _, m := range kindMechanisms {
								t.Run(m.name, func(t *testing.T) {
									for _, pair := range []string{r.name + "/" + string(k), r.name + "/" + string(k) + "/" + m.name} {
										if d, ok := kindDefects[pair]; ok {
											t.Skip("defect: " + d)
										}
									}
									f := newKindFixture(t, era, r, k, m.install)
									m.check(t, f)
								})
							}
						})
					}
				})
			}
		})
	}
}

// TestIdentityKindsProxyUpstreamBudget: through the proxy, a limit is the
// server's that holds it. The local server's RateLimit is keyed on the
// local identity and the local verified caller (the matrix's proxy route);
// the upstream's own RateLimit sees every proxied request as one caller,
// the proxy, which sends no caller's token: anonymous, there, as a direct
// client without a token is. So one local caller's requests spend the
// budget of every other local caller, and of the upstream's anonymous
// clients, at the upstream.
func TestIdentityKindsProxyUpstreamBudget(t *testing.T) {
	kt := &kindTarget{release: make(chan struct{})}
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "remote"}, nil)
	remote.Use(middleware.RateLimit(middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil), nil))
	register(t, remote, kt.prompt())
	hs := httptest.NewServer(remote.HTTPHandler(nil))
	t.Cleanup(hs.Close)
	up, err := proxy.New(t.Context(), proxy.HTTP(hs.URL, nil), &proxy.Options{Prefix: "up."})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	local.Use(mcpkit.For(keyed(kindPrompt, "up.summarize"), middleware.RateLimit(middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil), nil)))
	up.AddTo(local)
	send := serveStateless(t, local)
	get := kindRequest{name: "up.summarize", args: map[string]string{"text": "1"}}

	if o := send(t, "admin", get); !o.ran() {
		t.Fatalf("admin's first request: %v", o)
	}
	// user's local budget is untouched; the upstream's, shared, is spent:
	// the refusal is the upstream's, relayed as its failure.
	o := send(t, "user", get)
	if o.wire == nil || !strings.Contains(o.wire.Message, `upstream "remote" failed prompt "summarize"`) || !strings.Contains(o.wire.Message, "rate limited") {
		t.Errorf("user's first request through the proxy: %v; want the upstream's rate limit", o)
	}
	if n := kt.runs.Load(); n != 1 {
		t.Errorf("the upstream prompt ran %d times, want 1", n)
	}
	// A client of the upstream without a token shares that budget.
	raw := mcpkittest.RawClient{Endpoint: hs.URL}
	_, err = raw.Call(t.Context(), "prompts/get", map[string]any{"name": "summarize", "arguments": map[string]any{"text": "1"}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || !strings.Contains(wire.Message, "rate limited") {
		t.Errorf("an anonymous client of the upstream: %v; want the rate limit the proxy spent", err)
	}
	// admin's second request is refused by the local limit first: the
	// upstream is not asked.
	o = send(t, "admin", get)
	if o.wire == nil || !strings.Contains(o.wire.Message, `prompt "up.summarize" is rate limited`) {
		t.Errorf("admin's second request: %v; want the local limit", o)
	}
}
