package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// The contents the kinds upstream serves, which the proxy must pass on
// byte for byte: text with characters JSON escapes, and every byte value
// as a blob.
var (
	oddText  = "línea 1\r\n\ttab \u2028 \"quoted\" <b>&amp;</b> \x00 end \U0001F600"
	allBytes = func() []byte {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}()
)

// kindsUpstream is an upstream mcpkit server on a loopback HTTP port with
// prompts, resources and templates, which counts the requests it receives
// by method and records their _meta and Authorization headers.
type kindsUpstream struct {
	srv   *mcpkit.Server
	url   string
	close func()

	mu      sync.Mutex
	methods map[string]int
	metas   []mcp.Meta
	auths   []string
}

func (k *kindsUpstream) count(method string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.methods[method]
}

func (k *kindsUpstream) lastMeta() mcp.Meta {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.metas) == 0 {
		return nil
	}
	return k.metas[len(k.metas)-1]
}

func (k *kindsUpstream) authorizations() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.auths)
}

// newKindsUpstream serves the kinds over streamable HTTP, with sessions
// for older clients, in pages of 2; with completes, its prompt "greet"
// and template "users://{id}/profile" complete their arguments.
func newKindsUpstream(t *testing.T, sessions, completes bool) *kindsUpstream {
	t.Helper()
	k := &kindsUpstream{methods: map[string]int{}}
	k.srv = mcpkit.NewServer(&mcp.Implementation{Name: "kinds", Version: "1"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 2}})
	k.srv.MCPServer().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			k.mu.Lock()
			k.methods[method]++
			if p := req.GetParams(); p != nil && (method == "prompts/get" || method == "resources/read") {
				k.metas = append(k.metas, p.GetMeta())
			}
			k.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	if err := k.srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "echo", InputSchema: objectSchema("")},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("echo"), nil })}); err != nil {
		t.Fatal(err)
	}
	addKinds(t, k.srv, completes)
	h := k.srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: sessions})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.auths = append(k.auths, r.Header.Get("Authorization"))
		k.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	k.url = ts.URL
	k.close = func() { ts.Listener.Close(); ts.CloseClientConnections() }
	return k
}

// addKinds registers the upstream's prompts, resources and templates.
func addKinds(t *testing.T, srv *mcpkit.Server, completes bool) {
	t.Helper()
	greet := &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "greet", Description: "greets someone", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}, {Name: "tone"}}},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "a greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Arguments["name"] + " " + req.Arguments["tone"] + " " + oddText}},
			}}, nil
		}),
	}
	if completes {
		greet.Complete = map[string]mcpkit.CompleteFunc{"name": func(_ context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
			var out []string
			for _, n := range []string{"Ada", "Alan", "Grace"} {
				if strings.HasPrefix(n, req.Value) {
					out = append(out, n+"/"+req.Arguments["tone"])
				}
			}
			return out, nil
		}}
	}
	prompts := []*mcpkit.Prompt{greet,
		{Prompt: mcp.Prompt{Name: "review", Title: "Review"}, Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "docs://b", MIMEType: "application/octet-stream", Blob: allBytes}}},
				{Role: "user", Content: &mcp.ResourceLink{URI: "docs://a", Name: "a", MIMEType: "text/plain"}},
			}}, nil
		})},
		{Prompt: mcp.Prompt{Name: "boom"}, Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return nil, mcpkit.NewProtocolError(jsonrpc.CodeInternalError, "prompt store on fire")
		})},
		{Prompt: mcp.Prompt{Name: "ask"}, Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			p := req.Call.Params
			if p.RequestState != "asked" {
				return &mcp.GetPromptResult{
					InputRequests: mcp.InputRequestMap{"topic": &mcp.ElicitParams{
						Message:         "Which topic?",
						RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"topic": {Type: "string"}}},
					}},
					RequestState: "asked",
				}, nil
			}
			answer, _ := p.InputResponses["topic"].(*mcp.ElicitResult)
			if answer == nil {
				return nil, fmt.Errorf("no answer in %v", p.InputResponses)
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprint("topic ", answer.Content["topic"])}}}}, nil
		})},
		{Prompt: mcp.Prompt{Name: "zeta"}, Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "z"}}}}, nil
		})},
	}
	if err := srv.AddPrompts(prompts...); err != nil {
		t.Fatal(err)
	}
	read := func(contents func(uri string) *mcp.ResourceContents, hint mcp.Cacheable) mcpkit.ResourceHandlerFunc {
		return func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Cacheable: hint, Contents: []*mcp.ResourceContents{contents(req.URI)}}, nil
		}
	}
	if err := srv.AddResources(
		&mcpkit.Resource{Resource: mcp.Resource{URI: "docs://b", Name: "b", MIMEType: "application/octet-stream"},
			Handler: read(func(uri string) *mcp.ResourceContents {
				return &mcp.ResourceContents{URI: uri, MIMEType: "application/octet-stream", Blob: allBytes}
			}, mcp.Cacheable{})},
		&mcpkit.Resource{Resource: mcp.Resource{URI: "docs://a", Name: "a", MIMEType: "text/plain"},
			Handler: read(func(uri string) *mcp.ResourceContents {
				return &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: oddText}
			}, mcp.Cacheable{})},
		&mcpkit.Resource{Resource: mcp.Resource{URI: "mine://inbox", Name: "inbox"},
			Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
				// Each caller's own, and cacheable by that caller only.
				return &mcp.ReadResourceResult{Cacheable: mcp.Cacheable{TTLMs: 60_000, CacheScope: "private"},
					Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "inbox of " + req.Header().Get("Authorization")}}}, nil
			})},
	); err != nil {
		t.Fatal(err)
	}
	users := &mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "users://{id}/profile", Name: "profile", MIMEType: "application/json"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, MIMEType: "application/json", Text: `{"id":"` + req.Params["id"] + `"}`}}}, nil
		})}
	if completes {
		users.Complete = map[string]mcpkit.CompleteFunc{"id": func(_ context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
			return []string{req.Value + "1", req.Value + "2"}, nil
		}}
	}
	if err := srv.AddResourceTemplates(users,
		&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{name}", Name: "doc"},
			Handler: read(func(uri string) *mcp.ResourceContents { return &mcp.ResourceContents{URI: uri, Text: "doc " + uri} }, mcp.Cacheable{})},
	); err != nil {
		t.Fatal(err)
	}
}

// directClient connects an SDK client to the upstream, not through the
// proxy: what it reads is what the proxy must pass on.
func directClient(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "direct"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func promptNames(ps []*mcpkit.Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// getPrompt serves prompts/get of p through its Handler, as the local
// server would with args and meta.
func getPrompt(ctx context.Context, p *mcpkit.Prompt, args map[string]string, meta mcp.Meta) (*mcp.GetPromptResult, error) {
	return p.Handler.ServePrompt(ctx, &mcpkit.PromptRequest{Prompt: p, Arguments: args,
		Call: &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{Name: p.Name, Arguments: args, Meta: meta}}})
}

// readResource serves resources/read of r through its Handler.
// lookupRead returns what serves a read of uri through up: its resource
// at uri, or one standing for the read of uri by the template that
// matches it; nil for neither.
func lookupRead(ctx context.Context, up *proxy.Upstream, uri string) *mcpkit.Resource {
	if r, _ := up.LookupResource(ctx, nil, uri); r != nil {
		return r
	}
	if t, _ := up.LookupResourceTemplate(ctx, nil, uri); t != nil {
		return &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: t.Name}, Handler: t.Handler}
	}
	return nil
}

func readResource(ctx context.Context, r *mcpkit.Resource, extra *mcp.RequestExtra) (*mcp.ReadResourceResult, error) {
	return r.Handler.ServeResource(ctx, &mcpkit.ResourceRequest{Resource: r, URI: r.URI,
		Call: &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: r.URI}, Extra: extra}})
}

// TestKindsListAndLookup reads the upstream's prompts, resources and
// templates across its pages (of 2), on each protocol version, and
// serves them sorted, paged after a key, prompts under the prefix and
// URIs as they are; a URI one of its templates matches gets that
// template, the same one each time, and a URI nothing serves, or a
// template would match with a variable empty, gets nil.
func TestKindsListAndLookup(t *testing.T) {
	for _, ue := range upstreamEras {
		t.Run("upstream "+ue.version, func(t *testing.T) {
			k := newKindsUpstream(t, ue.sessions, false)
			up := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{Prefix: "crm_", ProtocolVersion: ue.version})
			ctx := t.Context()

			for method, min := range map[string]int{"prompts/list": 3, "resources/list": 2, "resources/templates/list": 1} {
				if n := k.count(method); n < min {
					t.Errorf("the proxy sent %s %d times; want every page of it read (at least %d)", method, n, min)
				}
			}
			ps, _ := up.ListPrompts(ctx, nil, "", 0)
			if got, want := promptNames(ps), []string{"crm_ask", "crm_boom", "crm_greet", "crm_review", "crm_zeta"}; !slices.Equal(got, want) {
				t.Errorf("ListPrompts = %v, want %v", got, want)
			}
			ps, _ = up.ListPrompts(ctx, nil, "crm_boom", 2)
			if got, want := promptNames(ps), []string{"crm_greet", "crm_review"}; !slices.Equal(got, want) {
				t.Errorf("ListPrompts after crm_boom, 2 = %v, want %v", got, want)
			}
			ps, _ = up.ListPrompts(ctx, nil, "crm_c", 0)
			if got, want := promptNames(ps), []string{"crm_greet", "crm_review", "crm_zeta"}; !slices.Equal(got, want) {
				t.Errorf("ListPrompts after crm_c = %v, want %v", got, want)
			}

			rs, _ := up.ListResources(ctx, nil, "", 0)
			var uris []string
			for _, r := range rs {
				uris = append(uris, r.URI)
			}
			if want := []string{"docs://a", "docs://b", "mine://inbox"}; !slices.Equal(uris, want) {
				t.Errorf("ListResources = %v, want %v", uris, want)
			}
			if rs, _ := up.ListResources(ctx, nil, "docs://a", 1); len(rs) != 1 || rs[0].URI != "docs://b" {
				t.Errorf("ListResources after docs://a, 1 = %v; want docs://b", rs)
			}
			ts, _ := up.ListResourceTemplates(ctx, nil, "", 0)
			var texts []string
			for _, tp := range ts {
				texts = append(texts, tp.URITemplate)
			}
			if want := []string{"docs://{name}", "users://{id}/profile"}; !slices.Equal(texts, want) {
				t.Errorf("ListResourceTemplates = %v, want %v", texts, want)
			}
			if ts, _ := up.ListResourceTemplates(ctx, nil, "docs://{name}", 0); len(ts) != 1 || ts[0].URITemplate != "users://{id}/profile" {
				t.Errorf("ListResourceTemplates after docs://{name} = %v", ts)
			}

			p, _ := up.LookupPrompt(ctx, nil, "crm_greet")
			if p == nil || p.Description != "greets someone" || len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Handler == nil {
				t.Fatalf("LookupPrompt(crm_greet) = %+v; want the upstream's definition", p)
			}
			if p.Complete != nil {
				t.Errorf("crm_greet has completers, but the upstream declares no completions")
			}
			if p, _ := up.LookupPrompt(ctx, nil, "greet"); p != nil {
				t.Errorf("LookupPrompt(greet) = %v; the prompt is served under the prefix only", p.Name)
			}

			listed := rs[0]
			if r, _ := up.LookupResource(ctx, nil, "docs://a"); r != listed {
				t.Errorf("LookupResource(docs://a) = %p, want the listed resource %p", r, listed)
			}
			if r, _ := up.LookupResource(ctx, nil, "users://42/profile"); r != nil {
				t.Errorf("LookupResource(users://42/profile) = %v; a template's URI is not a resource", r.URI)
			}
			tmpl, _ := up.LookupResourceTemplate(ctx, nil, "users://42/profile")
			if tmpl == nil || tmpl.URITemplate != "users://{id}/profile" || tmpl.Handler == nil {
				t.Fatalf("LookupResourceTemplate(users://42/profile) = %+v; want the upstream's template", tmpl)
			}
			if again, _ := up.LookupResourceTemplate(ctx, nil, "users://7/profile"); again != tmpl {
				t.Errorf("another URI of the template found another *ResourceTemplate")
			}
			long := "users://" + strings.Repeat("9", 4096) + "/profile"
			if tt, _ := up.LookupResourceTemplate(ctx, nil, long); tt != tmpl {
				t.Errorf("a long URI the template matches is not served")
			}
			for _, uri := range []string{"nope://x", "users:///profile", "users://42/settings", ""} {
				if r, _ := up.LookupResource(ctx, nil, uri); r != nil {
					t.Errorf("LookupResource(%q) = %v; want nil", uri, r.URI)
				}
				if tt, _ := up.LookupResourceTemplate(ctx, nil, uri); tt != nil {
					t.Errorf("LookupResourceTemplate(%q) = %v; want nil", uri, tt.URITemplate)
				}
			}
			if len(up.Problems()) != 0 {
				t.Errorf("Problems() = %v", up.Problems())
			}
		})
	}
}

// TestKindsForward forwards prompts/get and resources/read through the
// Handlers of what the Upstream serves, and compares what they answer
// with what a client of the upstream reads directly, byte for byte:
// arguments reach the upstream prompt, embedded resources and resource
// links pass as they are, text and blob contents keep every byte, a
// template's resource reads its URI, and the request's _meta goes on
// without the keys of this hop.
func TestKindsForward(t *testing.T) {
	for _, ue := range upstreamEras {
		t.Run("upstream "+ue.version, func(t *testing.T) {
			k := newKindsUpstream(t, ue.sessions, false)
			up := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{Prefix: "crm_", ProtocolVersion: ue.version})
			direct := directClient(t, k.url, ue.version)
			ctx := t.Context()

			greet, _ := up.LookupPrompt(ctx, nil, "crm_greet")
			trace := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			res, err := getPrompt(ctx, greet, map[string]string{"name": "Ada", "tone": "warmly"}, mcp.Meta{"traceparent": trace, mcpkit.MetaKeyVersion: "2"})
			if err != nil {
				t.Fatal(err)
			}
			got := k.lastMeta()
			if got["traceparent"] != trace {
				t.Errorf("the upstream saw _meta %v; want the trace context", got)
			}
			if _, ok := got[mcpkit.MetaKeyVersion]; ok {
				t.Errorf("the upstream saw this hop's key %s: %v", mcpkit.MetaKeyVersion, got)
			}
			want, err := direct.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada", "tone": "warmly"}})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := marshal(t, res.Messages), marshal(t, want.Messages); !bytes.Equal(g, w) {
				t.Errorf("crm_greet answered\n%s\nwant\n%s", g, w)
			}
			if tc, _ := res.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != "Say hello to Ada warmly "+oddText {
				t.Errorf("crm_greet text %#v", tc)
			}

			review, _ := up.LookupPrompt(ctx, nil, "crm_review")
			res, err = getPrompt(ctx, review, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _ = direct.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review"})
			if g, w := marshal(t, res.Messages), marshal(t, want.Messages); !bytes.Equal(g, w) {
				t.Errorf("crm_review answered\n%s\nwant\n%s", g, w)
			}
			if er, _ := res.Messages[0].Content.(*mcp.EmbeddedResource); er == nil || !bytes.Equal(er.Resource.Blob, allBytes) {
				t.Errorf("the embedded resource did not pass as it is: %#v", res.Messages[0].Content)
			}
			if rl, _ := res.Messages[1].Content.(*mcp.ResourceLink); rl == nil || rl.URI != "docs://a" {
				t.Errorf("the resource link did not pass as it is: %#v", res.Messages[1].Content)
			}

			for _, uri := range []string{"docs://a", "docs://b", "users://42/profile", "docs://c%2Fd"} {
				r := lookupRead(ctx, up, uri)
				if r == nil {
					t.Fatalf("LookupResource(%s) = nil", uri)
				}
				got, err := readResource(ctx, r, nil)
				if err != nil {
					t.Fatalf("read %s: %v", uri, err)
				}
				want, err := direct.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := marshal(t, got.Contents), marshal(t, want.Contents); !bytes.Equal(g, w) {
					t.Errorf("read %s:\n%s\nwant\n%s", uri, g, w)
				}
			}
			a := lookupRead(ctx, up, "docs://a")
			b := lookupRead(ctx, up, "docs://b")
			ra, _ := readResource(ctx, a, nil)
			rb, _ := readResource(ctx, b, nil)
			if ra == nil || ra.Contents[0].Text != oddText || rb == nil || !bytes.Equal(rb.Contents[0].Blob, allBytes) {
				t.Errorf("the contents changed on the way: %q, %v", ra.Contents[0].Text, rb.Contents[0].Blob)
			}
			profile := lookupRead(ctx, up, "users://7/profile")
			if res, err := readResource(ctx, profile, nil); err != nil || res.Contents[0].Text != `{"id":"7"}` {
				t.Errorf("read users://7/profile: %v, %v; want the template's reading of its URI", res, err)
			}
		})
	}
}

// TestKindsInputRequired passes an upstream prompt's input_required
// round (2026-07-28) through the proxy as it is, and its answers and
// request state back to the upstream.
func TestKindsInputRequired(t *testing.T) {
	k := newKindsUpstream(t, false, false)
	up := newProxy(t, proxy.HTTP(k.url, nil), nil)
	ctx := t.Context()
	ask, _ := up.LookupPrompt(ctx, nil, "ask")
	res, err := getPrompt(ctx, ask, nil, nil)
	if err != nil || res.RequestState != "asked" || res.InputRequests["topic"] == nil {
		t.Fatalf("first round: %+v, %v; want the upstream's input_required result", res, err)
	}
	answers := mcp.InputResponseMap{"topic": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"topic": "tides"}}}
	res, err = ask.Handler.ServePrompt(ctx, &mcpkit.PromptRequest{Prompt: ask, Call: &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{
		Name: "ask", InputResponses: answers, RequestState: res.RequestState,
	}}})
	if err != nil || len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != "topic tides" {
		t.Fatalf("second round: %+v, %v; want the answer to reach the upstream", res, err)
	}
}

// TestKindsErrors maps what goes wrong upstream: a prompt or resource the
// upstream no longer has gets the local server's not-found answer (and
// the catalog is read again), a JSON-RPC error of the upstream prompt is
// an *UpstreamError with its code, and an upstream that is gone is one
// that wraps ErrUnavailable.
func TestKindsErrors(t *testing.T) {
	k := newKindsUpstream(t, false, false)
	up := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{Prefix: "crm_"})
	ctx := t.Context()

	boom, _ := up.LookupPrompt(ctx, nil, "crm_boom")
	_, err := getPrompt(ctx, boom, nil, nil)
	var ue *proxy.UpstreamError
	if !errors.As(err, &ue) || ue.Code != jsonrpc.CodeInternalError || ue.Kind != mcpkit.KindPrompt || ue.Tool != "boom" || errors.Is(err, proxy.ErrUnavailable) ||
		err.Error() != `upstream "kinds" failed prompt "boom": JSON-RPC error -32603: prompt store on fire` {
		t.Errorf("crm_boom: %v; want an *UpstreamError with the upstream's code", err)
	}
	if errors.As(err, new(*jsonrpc.Error)) {
		t.Errorf("the upstream's JSON-RPC error is the local server's: %v", err)
	}

	zeta, _ := up.LookupPrompt(ctx, nil, "crm_zeta")
	k.srv.RemovePrompts("zeta")
	_, err = getPrompt(ctx, zeta, nil, nil)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != `unknown prompt "crm_zeta"` {
		t.Errorf("a prompt gone upstream: %v; want the local unknown-prompt error", err)
	}

	a := lookupRead(ctx, up, "docs://a")
	k.srv.RemoveResources("docs://a")
	k.srv.RemoveResourceTemplates("docs://{name}")
	_, err = readResource(ctx, a, nil)
	if want := mcpkit.NewResourceNotFoundError("docs://a"); err == nil || err.Error() != want.Error() || !errors.As(err, &wire) || string(wire.Data) != string(want.(*jsonrpc.Error).Data) {
		t.Errorf("a resource gone upstream: %v; want %v", err, want)
	}

	greet, _ := up.LookupPrompt(ctx, nil, "crm_greet")
	k.close()
	_, err = getPrompt(ctx, greet, map[string]string{"name": "x"}, nil)
	if !errors.As(err, &ue) || !errors.Is(err, proxy.ErrUnavailable) || ue.Kind != mcpkit.KindPrompt {
		t.Errorf("an upstream gone: %v; want an *UpstreamError wrapping ErrUnavailable", err)
	}
	profile := lookupRead(ctx, up, "users://1/profile")
	_, err = readResource(ctx, profile, nil)
	if !errors.As(err, &ue) || !errors.Is(err, proxy.ErrUnavailable) || ue.Kind != mcpkit.KindResource || ue.Tool != "users://1/profile" {
		t.Errorf("an upstream gone: %v; want an *UpstreamError wrapping ErrUnavailable", err)
	}
}

// TestKindsListChanged changes the upstream's prompts, then its
// resources: each notifications/…/list_changed makes the proxy read that
// kind again (and not the tools), the local server's listening client
// hears of it, and what did not change keeps its value.
func TestKindsListChanged(t *testing.T) {
	for _, ue := range upstreamEras {
		t.Run("upstream "+ue.version, func(t *testing.T) {
			k := newKindsUpstream(t, ue.sessions, false)
			up := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{ProtocolVersion: ue.version})
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			changed := make(chan struct{}, 16)
			mcpkittest.NewServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed <- struct{}{} },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
			}})
			ctx := t.Context()
			tools := k.count("tools/list")
			greet, _ := up.LookupPrompt(ctx, nil, "greet")
			a := lookupRead(ctx, up, "docs://a")

			k.srv.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "fresh"}, Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "fresh"}}}}, nil
			})})
			for {
				<-changed
				if p, _ := up.LookupPrompt(ctx, nil, "fresh"); p != nil {
					break
				}
			}
			fresh, _ := up.LookupPrompt(ctx, nil, "fresh")
			if res, err := getPrompt(ctx, fresh, nil, nil); err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "fresh" {
				t.Errorf("fresh: %v, %v", res, err)
			}
			if g, _ := up.LookupPrompt(ctx, nil, "greet"); g != greet {
				t.Errorf("greet, unchanged, is another *Prompt after the refresh")
			}

			k.srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "docs://new", Name: "new"},
				Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "new"}}}, nil
				})})
			for {
				<-changed
				if rs, _ := up.ListResources(ctx, nil, "docs://b", 1); len(rs) == 1 && rs[0].URI == "docs://new" {
					break
				}
			}
			if r := lookupRead(ctx, up, "docs://a"); r != a {
				t.Errorf("docs://a, unchanged, is another *Resource after the refresh")
			}
			if n := k.count("tools/list"); n != tools {
				t.Errorf("the proxy read the tools again (%d lists, was %d) for changes of prompts and resources", n, tools)
			}
		})
	}
}

// TestKindsCapabilities reads only the kinds the upstream declares: an
// upstream with tools alone is asked for no prompts or resources.
func TestKindsCapabilities(t *testing.T) {
	us := newUpstream(t, false, 0)
	k := &kindsUpstream{methods: map[string]int{}}
	us.srv.MCPServer().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			k.mu.Lock()
			k.methods[method]++
			k.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	up := newProxy(t, proxy.HTTP(us.url, nil), nil)
	if tl, _ := up.LookupTool(t.Context(), nil, "echo"); tl == nil {
		t.Fatal("the tools were not read")
	}
	for _, m := range []string{"prompts/list", "resources/list", "resources/templates/list"} {
		if n := k.count(m); n != 0 {
			t.Errorf("the proxy sent %s %d times to an upstream without the capability", m, n)
		}
	}
	if ps, _ := up.ListPrompts(t.Context(), nil, "", 0); len(ps) != 0 {
		t.Errorf("ListPrompts = %v", ps)
	}
	if r, _ := up.LookupResource(t.Context(), nil, "docs://a"); r != nil {
		t.Errorf("LookupResource = %v", r)
	}
}

// TestKindsCompletions forwards completion/complete of a prompt's
// argument and a template's variable to an upstream that declares
// completions, with the arguments already resolved.
func TestKindsCompletions(t *testing.T) {
	k := newKindsUpstream(t, false, true)
	up := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{Prefix: "crm_"})
	ctx := t.Context()
	greet, _ := up.LookupPrompt(ctx, nil, "crm_greet")
	if greet.Complete["name"] == nil || greet.Complete["tone"] == nil {
		t.Fatalf("crm_greet completes %v; want each argument", greet.Complete)
	}
	vals, err := greet.Complete["name"](ctx, &mcpkit.CompleteRequest{Prompt: greet, Argument: "name", Value: "A", Arguments: map[string]string{"tone": "warm"}})
	if err != nil || !slices.Equal(vals, []string{"Ada/warm", "Alan/warm"}) {
		t.Errorf("completing name: %v, %v", vals, err)
	}
	ts, _ := up.ListResourceTemplates(ctx, nil, "users://", 0)
	if len(ts) != 1 || ts[0].Complete["id"] == nil {
		t.Fatalf("templates %v; want users://{id}/profile completing id", ts)
	}
	vals, err = ts[0].Complete["id"](ctx, &mcpkit.CompleteRequest{Template: ts[0], Argument: "id", Value: "4"})
	if err != nil || !slices.Equal(vals, []string{"41", "42"}) {
		t.Errorf("completing id: %v, %v", vals, err)
	}
}

// TestKindsCredentials sends the headers of TargetCredentials with
// prompts/get and resources/read, per caller, and refuses those requests
// without reaching the upstream when only Credentials (for tool calls) is
// set. A read cacheable by its caller alone is read again for the next
// caller, not served from the proxy's client cache, and the hint goes on.
func TestKindsCredentials(t *testing.T) {
	k := newKindsUpstream(t, false, false)
	up := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{
		TargetCredentials: func(_ context.Context, c mcpkit.Caller, tg mcpkit.Target) (http.Header, error) {
			return http.Header{"authorization": {"Bearer for-" + c.Header().Get("X-User") + "-" + tg.Key()}}, nil
		},
	})
	ctx := t.Context()
	inbox := lookupRead(ctx, up, "mine://inbox")
	for _, user := range []string{"ada", "bob"} {
		res, err := readResource(ctx, inbox, &mcp.RequestExtra{Header: http.Header{"X-User": {user}}})
		want := "inbox of Bearer for-" + user + "-mine://inbox"
		if err != nil || res.Contents[0].Text != want {
			t.Fatalf("%s read %v, %v; want %q", user, res, err, want)
		}
		if res.TTLMs != 60_000 || res.CacheScope != "private" {
			t.Errorf("the upstream's cache hint was lost: %+v", res.Cacheable)
		}
	}
	if !slices.Contains(k.authorizations(), "Bearer for-ada-mine://inbox") {
		t.Errorf("the upstream saw %v", k.authorizations())
	}

	strict := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{
		Credentials: func(context.Context, *mcpkit.Request) (http.Header, error) {
			return http.Header{"Authorization": {"Bearer tools-only"}}, nil
		},
	})
	reads := k.count("resources/read")
	gets := k.count("prompts/get")
	greet, _ := strict.LookupPrompt(ctx, nil, "greet")
	_, err := getPrompt(ctx, greet, map[string]string{"name": "x"}, nil)
	var te *mcpkit.ToolError
	if !errors.As(err, &te) || te.Class != mcpkit.Fatal || !strings.Contains(err.Error(), "TargetCredentials") {
		t.Errorf("a prompt without TargetCredentials: %v; want a fatal refusal", err)
	}
	a, _ := strict.LookupResource(ctx, nil, "docs://a")
	if _, err := readResource(ctx, a, nil); !errors.As(err, &te) {
		t.Errorf("a read without TargetCredentials: %v; want a refusal", err)
	}
	if k.count("resources/read") != reads || k.count("prompts/get") != gets {
		t.Errorf("a refused request reached the upstream")
	}
}

// TestKindsPartialFailure serves the upstream's tools when its prompts
// cannot be read, and reads the prompts again with the next refresh,
// whatever kind it is for.
func TestKindsPartialFailure(t *testing.T) {
	k := newKindsUpstream(t, false, false)
	var lists atomic.Int32
	k.srv.MCPServer().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "prompts/list" && lists.Add(1) == 1 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "prompt store down"}
			}
			return next(ctx, method, req)
		}
	})
	up := newProxy(t, proxy.HTTP(k.url, nil), nil)
	ctx := t.Context()
	if tl, _ := up.LookupTool(ctx, nil, "echo"); tl == nil {
		t.Fatal("the tools are not served while the prompts cannot be read")
	}
	if r := lookupRead(ctx, up, "docs://a"); r == nil {
		t.Fatal("the resources are not served while the prompts cannot be read")
	}
	if p, _ := up.LookupPrompt(ctx, nil, "greet"); p != nil {
		t.Fatal("a prompt is served from a list that failed")
	}

	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	changed := make(chan struct{}, 16)
	mcpkittest.NewServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	k.srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "fresh", InputSchema: objectSchema("")},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("fresh"), nil })})
	for {
		<-changed
		if tl, _ := up.LookupTool(ctx, nil, "fresh"); tl != nil {
			break
		}
	}
	if p, _ := up.LookupPrompt(ctx, nil, "greet"); p == nil {
		t.Errorf("the prompts were not read again with the tools' refresh")
	}
}

// TestKindsPromptsOnly serves the prompts of an SDK server that has no
// tools, and so does not declare them, over in-memory transports, though
// it refuses tools/list.
func TestKindsPromptsOnly(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "prompts-only"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			}
			return next(ctx, method, req)
		}
	})
	srv.AddPrompt(&mcp.Prompt{Name: "hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	up := newProxy(t, func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}, nil)
	p, _ := up.LookupPrompt(t.Context(), nil, "hello")
	if p == nil {
		t.Fatal("the prompt of an upstream without tools is not served")
	}
	res, err := getPrompt(t.Context(), p, nil, nil)
	if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "hello" {
		t.Errorf("hello: %v, %v", res, err)
	}
}
