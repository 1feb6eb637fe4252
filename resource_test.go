package mcpkit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

// page is the parameters of the template of TestResources.
type page struct {
	Book string `json:"book"`
	N    number `json:"n"`
}

// number decodes a page number, refusing anything else.
type number int

func (n *number) UnmarshalText(b []byte) error {
	_, err := fmt.Sscanf(string(b), "%d", (*int)(n))
	return err
}

// resourceURIs lists every page of resources/list, and returns the URIs,
// the number of pages and the first page.
func resourceURIs(t *testing.T, cs *mcp.ClientSession) (string, int, *mcp.ListResourcesResult) {
	t.Helper()
	var uris []string
	var first *mcp.ListResourcesResult
	pages, cursor := 0, ""
	for {
		res, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		}
		pages++
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if res.NextCursor == "" {
			return strings.Join(uris, ","), pages, first
		}
		cursor = res.NextCursor
	}
}

// readText reads uri and returns the text of its only contents, with
// their URI and MIME type.
func readText(cs *mcp.ClientSession, ctx context.Context, uri string) (string, error) {
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		return fmt.Sprintf("%+v", res.Contents), nil
	}
	c := res.Contents[0]
	return fmt.Sprintf("%s %s %s%s", c.URI, c.MIMEType, c.Text, c.Blob), nil
}

// TestResources lists resources and templates page by page and reads
// them, on both eras: static text and blob, an unlisted resource, a
// resource whose handler leaves the URI and MIME type to the server, and
// URIs through a typed template (a parameter its field cannot decode is
// -32602). A list everyone sees alike is public, with SetCacheable's ttl.
func TestResources(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "resources"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{
		PageSize:     2,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = 60000 },
	}})
	bare := &mcpkit.Resource{
		Resource: mcp.Resource{URI: "memo://bare", Name: "bare", MIMEType: "text/markdown"},
		Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "# bare"}}}, nil
		}),
	}
	err := srv.AddResources(
		tools.TextResource("memo://a", "a", "text/plain", "alpha", nil),
		tools.BlobResource("memo://b", "b", "application/octet-stream", []byte{1, 2}, nil),
		tools.TextResource("memo://hidden", "hidden", "text/plain", "unlisted", &tools.ResourceOptions{Unlisted: true}),
		bare,
	)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := tools.MustTemplate(tools.NewTemplate("book://{book}/page/{n}",
		func(_ context.Context, req *mcpkit.ResourceRequest, p page) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: fmt.Sprintf("%s p%d", p.Book, p.N)}}}, nil
		}, &tools.TemplateOptions{Name: "page", MIMEType: "text/plain"}))
	if err := srv.AddResourceTemplates(tmpl); err != nil {
		t.Fatal(err)
	}
	for _, era := range promptEras {
		t.Run(era.name, func(t *testing.T) {
			cs := era.connect(t, srv, nil).Session
			if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.ListChanged {
				t.Errorf("resources capability %+v, want declared with listChanged", caps.Resources)
			}
			uris, pages, first := resourceURIs(t, cs)
			if uris != "memo://a,memo://b,memo://bare" || pages != 2 {
				t.Errorf("listed %s in %d pages", uris, pages)
			}
			if first.CacheScope != "public" || first.TTLMs != 60000 {
				t.Errorf("cacheScope %q, ttlMs %d; want public, 60000", first.CacheScope, first.TTLMs)
			}
			tl, err := cs.ListResourceTemplates(t.Context(), nil)
			if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "book://{book}/page/{n}" || tl.CacheScope != "public" {
				t.Errorf("templates: %+v, %v", tl, err)
			}
			for uri, want := range map[string]string{
				"memo://a":            "memo://a text/plain alpha",
				"memo://b":            "memo://b application/octet-stream \x01\x02",
				"memo://hidden":       "memo://hidden text/plain unlisted",
				"memo://bare":         "memo://bare text/markdown # bare",
				"book://go/page/7":    "book://go/page/7 text/plain go p7",
				"book://a%20b/page/1": "book://a%20b/page/1 text/plain a b p1",
			} {
				if got, err := readText(cs, t.Context(), uri); err != nil || got != want {
					t.Errorf("read %s: %q, %v; want %q", uri, got, err, want)
				}
			}
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://a"})
			if err != nil || era.name == "2026-07-28" && (res.CacheScope != "public" || res.TTLMs != 60000) {
				t.Errorf("read: %+v, %v; want cacheScope public, ttlMs 60000", res, err)
			}
			_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "book://go/page/seven"})
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || !strings.Contains(wire.Message, `parameter "n"`) {
				t.Errorf("an undecodable parameter: %v, want -32602 naming it", err)
			}
		})
	}
}

// TestResourcesNotDeclaredUntilServed checks that a server declares the
// resources capability, and answers its methods, only once it serves a
// resource or a template.
func TestResourcesNotDeclaredUntilServed(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "later"}, nil)
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		if caps := cs.InitializeResult().Capabilities; caps.Resources != nil {
			t.Errorf("%s: resources declared without one: %+v", era.name, caps.Resources)
		}
		var wire *jsonrpc.Error
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://a"}); !errors.As(err, &wire) || wire.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: resources/read without resources: %v, want -32601", era.name, err)
		}
	}
	if err := srv.AddResourceTemplates(tools.MustTemplate(tools.NewTemplate("memo://{id}",
		func(context.Context, *mcpkit.ResourceRequest, struct {
			ID string `json:"id"`
		}) (*mcp.ReadResourceResult, error) {
			return nil, nil
		}, nil))); err != nil {
		t.Fatal(err)
	}
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		if caps := cs.InitializeResult().Capabilities; caps.Resources == nil {
			t.Errorf("%s: resources not declared with a template", era.name)
		}
		if res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://x"}); err != nil || res.Contents == nil {
			t.Errorf("%s: a nil result: %+v, %v; want empty contents", era.name, res, err)
		}
	}
}

// TestTemplateMatching checks the order in which templates match a URI
// (an exact URI first, then the longest literal prefix, then the text),
// that an empty variable matches nothing, and that a reserved expansion
// hands its value over as it is, ".." included.
func TestTemplateMatching(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "match"}, nil)
	echo := func(label string) mcpkit.ResourceHandler {
		return mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: fmt.Sprintf("%s %v", label, req.Params)}}}, nil
		})
	}
	err := srv.AddResourceTemplates(
		&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{path}", Name: "any"}, Handler: echo("any")},
		&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://api/{name}", Name: "api"}, Handler: echo("api")},
		&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "files://{+rest}", Name: "files"}, Handler: echo("files")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "docs://api/index", Name: "index"}, Handler: echo("exact")}); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	for uri, want := range map[string]string{
		"docs://api/index": "docs://api/index  exact map[]",
		"docs://api/x":     "docs://api/x  api map[name:x]",
		"docs://intro":     "docs://intro  any map[path:intro]",
		"files://a/../b":   "files://a/../b  files map[rest:a/../b]",
	} {
		if got, err := readText(cs, t.Context(), uri); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", uri, got, err, want)
		}
	}
	for _, uri := range []string{"docs://", "docs://api/", "files://"} {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if w := wireError(t, err); w != fmt.Sprintf(`{"code":-32602,"message":"Resource not found","data":{"uri":%q}}`, uri) {
			t.Errorf("%s, an empty variable: %s", uri, w)
		}
	}
	if _, ok := srv.ResourcePipeline("docs://api/x"); !ok {
		t.Error("no pipeline for a URI a template serves")
	}
	if _, ok := srv.ResourcePipeline("files://{+rest}"); !ok {
		t.Error("no pipeline for a template, by its text")
	}
	for _, bad := range []*mcpkit.ResourceTemplate{
		{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "{scheme}://x", Name: "n"}, Handler: echo("")},
		{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{unclosed", Name: "n"}, Handler: echo("")},
		{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{x}/y"}, Handler: echo("")},
	} {
		if err := srv.AddResourceTemplates(bad); err == nil {
			t.Errorf("%q (name %q) was accepted", bad.URITemplate, bad.Name)
		}
	}
	if err := srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "relative/path", Name: "r"}, Handler: echo("")}); err == nil {
		t.Error("a relative URI was accepted")
	}
	for text, at := range map[string]string{"docs://a%2/{x}": "byte 8", "docs://{x}%": "byte 10", "docs://%zz{x}": "byte 7"} {
		err := srv.AddResourceTemplates(&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: text, Name: "n"}, Handler: echo("")})
		if err == nil || !strings.Contains(err.Error(), "percent sign at "+at) {
			t.Errorf("%q: %v; want the percent sign at %s named", text, err, at)
		}
	}
	if err := srv.AddResourceTemplates(&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://a/b%20c/{x}", Name: "n"}, Handler: echo("")}); err != nil {
		t.Errorf("a template with an escaped space: %v", err)
	}
}

// TestHiddenResourceIsUnknown checks, on both eras, that a resource or
// template hidden from a caller, or disabled, gets exactly the answer of
// a URI never served, and is not listed; the lists are private then, and
// so is a read.
func TestHiddenResourceIsUnknown(t *testing.T) {
	newServer := func() *mcpkit.Server {
		// Cache hints that say public: what a caller sees depends on who
		// asks, and that wins.
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "hide"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{
			SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "public" },
		}})
		srv.SetVisibility(adminOnly{})
		vault := tools.TextResource("memo://vault", "vault", "text/plain", "gold", &tools.ResourceOptions{Tags: []string{"admin"}})
		off := tools.TextResource("memo://retired", "retired", "text/plain", "old", &tools.ResourceOptions{Tags: []string{"off"}})
		if err := srv.AddResources(tools.TextResource("memo://open", "open", "text/plain", "hi", nil), vault, off); err != nil {
			t.Fatal(err)
		}
		secret := tools.MustTemplate(tools.NewTemplate("secret://{id}", func(_ context.Context, _ *mcpkit.ResourceRequest, p struct {
			ID string `json:"id"`
		}) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: p.ID}}}, nil
		}, &tools.TemplateOptions{Tags: []string{"admin"}}))
		if err := srv.AddResourceTemplates(secret); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	for _, era := range promptEras {
		t.Run(era.name, func(t *testing.T) {
			srv := newServer()
			guest := era.connect(t, srv, nil).Session
			admin := era.connect(t, srv, asAdmin(nil)).Session
			if uris, _, list := resourceURIs(t, guest); uris != "memo://open" || list.CacheScope != "private" {
				t.Errorf("guest lists %s (cacheScope %q), want memo://open (private)", uris, list.CacheScope)
			}
			if uris, _, _ := resourceURIs(t, admin); uris != "memo://open,memo://vault" {
				t.Errorf("admin lists %s", uris)
			}
			if tl, err := guest.ListResourceTemplates(t.Context(), nil); err != nil || len(tl.ResourceTemplates) != 0 || tl.CacheScope != "private" {
				t.Errorf("guest lists templates %+v, %v", tl, err)
			}
			if tl, err := admin.ListResourceTemplates(t.Context(), nil); err != nil || len(tl.ResourceTemplates) != 1 {
				t.Errorf("admin lists templates %+v, %v", tl, err)
			}
			res, err := admin.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://vault"})
			if err != nil || res.Contents[0].Text != "gold" {
				t.Fatalf("admin reads the vault: %+v, %v", res, err)
			}
			if era.name == "2026-07-28" && res.CacheScope != "private" {
				t.Errorf("a read that depends on who asks: cacheScope %q, want private", res.CacheScope)
			}
			if got, err := readText(admin, t.Context(), "secret://42"); err != nil || got != "secret://42  42" {
				t.Errorf("admin reads through the template: %q, %v", got, err)
			}
			_, hiddenErr := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://vault"})
			_, offErr := admin.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://retired"})
			_, tmplErr := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "secret://42"})
			hidden, disabled, hiddenTmpl := wireError(t, hiddenErr), wireError(t, offErr), wireError(t, tmplErr)
			srv.RemoveResources("memo://vault", "memo://retired")
			srv.RemoveResourceTemplates("secret://{id}")
			_, goneErr := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://vault"})
			_, goneOff := admin.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memo://retired"})
			_, goneTmpl := admin.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "secret://42"})
			if gone := wireError(t, goneErr); hidden != gone || gone != `{"code":-32602,"message":"Resource not found","data":{"uri":"memo://vault"}}` {
				t.Errorf("hidden resource: %s; removed: %s", hidden, gone)
			}
			if gone := wireError(t, goneOff); disabled != gone {
				t.Errorf("disabled resource: %s; removed: %s", disabled, gone)
			}
			if gone := wireError(t, goneTmpl); hiddenTmpl != gone {
				t.Errorf("hidden template: %s; removed: %s", hiddenTmpl, gone)
			}
		})
	}
	long := "memo://" + strings.Repeat("x", 300)
	_, err := mcpkittest.NewInMemoryServer(t, newServer(), nil).Session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: long})
	if w := wireError(t, err); len(w) > 200 || !strings.Contains(w, "...") {
		t.Errorf("a long unknown URI is echoed in full: %s", w)
	}
}

// TestResourceInputRequired reads a resource that asks the client for
// input, through the recommended chain, on both eras: a 2026-07-28 client
// asks again itself, the SDK asks a 2025-11-25 client over its session.
func TestResourceInputRequired(t *testing.T) {
	var asked, answered atomic.Int32
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mrtr"}, nil)
	srv.Use(middleware.Recommended(nil))
	err := srv.AddResources(&mcpkit.Resource{
		Resource: mcp.Resource{URI: "memo://greeting", Name: "greeting"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			resp, ok := req.Call.Params.InputResponses["name"].(*mcp.ElicitResult)
			if !ok {
				asked.Add(1)
				return &mcp.ReadResourceResult{
					InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
						Message:         "Who is there?",
						RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
					}},
					RequestState: "step-1",
				}, nil
			}
			answered.Add(1)
			if req.Call.Params.RequestState != "step-1" || req.Call.Params.URI != "memo://greeting" || req.URI != "memo://greeting" {
				return nil, fmt.Errorf("lost state %q or URI %q", req.Call.Params.RequestState, req.Call.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: fmt.Sprintf("hello %v", resp.Content["name"])}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}}
	for _, era := range promptEras {
		asked.Store(0)
		answered.Store(0)
		got, err := readText(era.connect(t, srv, opts).Session, t.Context(), "memo://greeting")
		if err != nil || got != "memo://greeting  hello Ada" {
			t.Errorf("%s: %q, %v", era.name, got, err)
		}
		if asked.Load() != 1 || answered.Load() != 1 {
			t.Errorf("%s: asked %d times, answered %d times; want once each", era.name, asked.Load(), answered.Load())
		}
	}
}

// TestResourceListChanged checks that notifications/resources/list_changed
// reaches a listening client only when a change touches a resource or
// template it sees, over a 2025-11-25 session and a 2026-07-28
// subscriptions/listen stream (in memory, in a synctest bubble).
func TestResourceListChanged(t *testing.T) {
	for _, version := range []string{mcpkittest.StatefulVersion, mcpkittest.StatelessVersion} {
		for _, foreign := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/foreign=%v", version, foreign), func(t *testing.T) {
				testResourceListChanged(t, version, foreign)
			})
		}
	}
}

func testResourceListChanged(t *testing.T, version string, foreign bool) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "notify"}, nil)
		if foreign {
			srv.MCPServer()
		}
		srv.SetVisibility(adminOnly{})
		if err := srv.AddResources(tools.TextResource("memo://open", "open", "", "", nil)); err != nil {
			t.Fatal(err)
		}
		var heard [2]atomic.Int32 // guest, admin
		listen := func(i int) *mcpkittest.Options {
			return &mcpkittest.Options{ProtocolVersion: version, Client: &mcp.ClientOptions{
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { heard[i].Add(1) },
			}}
		}
		guest := mcpkittest.NewInMemoryServer(t, srv, listen(0))
		admin := mcpkittest.NewInMemoryServer(t, srv, asAdmin(listen(1)))
		synctest.Wait()
		step := func(what string, change func(), guestHears, adminHears int32) {
			t.Helper()
			heard[0].Store(0)
			heard[1].Store(0)
			change()
			time.Sleep(time.Second) // past the SDK's debounce, on the bubble's clock
			synctest.Wait()
			if g, a := heard[0].Load(), heard[1].Load(); g != guestHears || a != adminHears {
				t.Errorf("%s: guest heard %d, admin %d; want %d, %d", what, g, a, guestHears, adminHears)
			}
		}
		vault := tools.TextResource("memo://vault", "vault", "", "", &tools.ResourceOptions{Tags: []string{"admin"}})
		tmpl := &mcpkit.ResourceTemplate{
			ResourceTemplate: mcp.ResourceTemplate{URITemplate: "admin://{id}", Name: "admin"},
			Handler:          vault.Handler,
			Tags:             []string{"admin"},
		}
		step("an admin resource added", func() { srv.AddResources(vault) }, 0, 1)
		step("an admin template added", func() { srv.AddResourceTemplates(tmpl) }, 0, 1)
		step("a resource for everyone added", func() { srv.AddResources(tools.TextResource("memo://more", "more", "", "", nil)) }, 1, 1)
		step("an admin resource removed", func() { srv.RemoveResources("memo://vault") }, 0, 1)
		step("an admin template removed", func() { srv.RemoveResourceTemplates("admin://{id}") }, 0, 1)
		step("a prompt added", func() { srv.AddPrompts(say("p")) }, 0, 0)
		if foreign {
			step("an SDK resource added", func() {
				srv.MCPServer().AddResource(&mcp.Resource{URI: "sdk://x", Name: "sdk"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil })
			}, 1, 1)
			step("an SDK resource removed", func() { srv.MCPServer().RemoveResources("sdk://x") }, 1, 1)
			step("an admin resource added again", func() { srv.AddResources(vault) }, 0, 1)
			srv.RemoveResources("memo://vault")
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if uris, _, _ := resourceURIs(t, guest.Session); uris != "memo://more,memo://open" {
			t.Errorf("guest lists %s", uris)
		}
		guest.Close()
		admin.Close()
	})
}

// TestResourcePipeline checks that a resource's chain holds the layers
// that serve resources, and lists a tools-only layer (and a prompts-only
// one) as skipped, with the reason.
func TestResourcePipeline(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	toolsOnly := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return next.ServeTool(ctx, req)
		})
	}
	srv.Use(middleware.Recover(nil), toolsOnly, mcpkit.ForTools(mcpkit.Named("t"), middleware.MaskErrors(nil)), middleware.Timeout(time.Minute, nil))
	r := tools.TextResource("memo://r", "r", "text/plain", "r", &tools.ResourceOptions{Middleware: []mcpkit.Middleware{middleware.MaskErrors(nil)}})
	if err := srv.AddResources(r); err != nil {
		t.Fatal(err)
	}
	layers, ok := srv.ResourcePipeline("memo://r")
	if !ok {
		t.Fatal("no pipeline for memo://r")
	}
	var got []string
	for _, l := range layers {
		s := l.Name
		if l.Skipped {
			s += " (skipped: " + l.Reason + ")"
		}
		if l.From != mcpkit.FromServer {
			s += " from " + l.From
		}
		got = append(got, s)
	}
	want := "middleware.Recover, mcpkit_test.TestResourcePipeline (skipped: does not serve resources), " +
		"middleware.MaskErrors (skipped: mcpkit.ForTools selects tools only), middleware.Timeout, " +
		"middleware.MaskErrors from resource"
	if strings.Join(got, ", ") != want {
		t.Errorf("resource pipeline:\n%s\nwant\n%s", strings.Join(got, ", "), want)
	}
	if _, ok := srv.ResourcePipeline("memo://none"); ok {
		t.Error("a pipeline for a URI not served")
	}
	if got, err := readText(mcpkittest.NewInMemoryServer(t, srv, nil).Session, t.Context(), "memo://r"); err != nil || got != "memo://r text/plain r" {
		t.Errorf("read through the chain: %q, %v", got, err)
	}
}

// TestResourceErrors checks the error table for resources, through
// Recover, MaskErrors and Timeout, on both eras.
func TestResourceErrors(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "errs"}, nil)
	srv.Use(middleware.Recover(nil), middleware.MaskErrors(nil), middleware.Timeout(50*time.Millisecond, nil))
	res := func(uri string, f func(ctx context.Context) (*mcp.ReadResourceResult, error)) *mcpkit.Resource {
		return &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: uri},
			Handler: mcpkit.ResourceHandlerFunc(func(ctx context.Context, _ *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) { return f(ctx) })}
	}
	err := srv.AddResources(
		res("err://boom", func(context.Context) (*mcp.ReadResourceResult, error) { panic("secret value") }),
		res("err://slow", func(ctx context.Context) (*mcp.ReadResourceResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		res("err://db", func(context.Context) (*mcp.ReadResourceResult, error) {
			return nil, errors.New("dial postgres://admin:pw@db")
		}),
		res("err://teapot", func(context.Context) (*mcp.ReadResourceResult, error) {
			return nil, fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: 418, Message: "teapot"})
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"err://boom":   `{"code":-32603,"message":"internal error in resource \"err://boom\"","data":{"io.github.mcpkit/errorClass":"fatal"}}`,
		"err://slow":   `{"code":-32603,"message":"resource \"err://slow\" timed out after 50ms","data":{"io.github.mcpkit/errorClass":"retryable","io.github.mcpkit/timeoutMs":50}}`,
		"err://db":     `{"code":-32603,"message":"error reading resource \"err://db\"","data":{"io.github.mcpkit/errorClass":"fatal"}}`,
		"err://teapot": `{"code":418,"message":"teapot"}`,
	}
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		for uri, w := range want {
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			if err == nil {
				t.Errorf("%s %s: no error", era.name, uri)
				continue
			}
			if got := wireError(t, err); got != w {
				t.Errorf("%s %s:\n got %s\nwant %s", era.name, uri, got, w)
			}
		}
	}
}

// TestSDKResourcesKept checks that resources registered on the SDK server
// directly are listed beside mcpkit's and served by the SDK, while the
// resource through which mcpkit's pass is never listed.
func TestSDKResourcesKept(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mixed"}, nil)
	srv.MCPServer().AddResource(&mcp.Resource{URI: "legacy://x", Name: "legacy", MIMEType: "text/plain"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "legacy"}}}, nil
	})
	if err := srv.AddResources(tools.TextResource("mine://x", "mine", "text/plain", "mine", nil)); err != nil {
		t.Fatal(err)
	}
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		if uris, _, _ := resourceURIs(t, cs); uris != "legacy://x,mine://x" {
			t.Errorf("%s: listed %s", era.name, uris)
		}
		for uri, want := range map[string]string{"legacy://x": "legacy://x text/plain legacy", "mine://x": "mine://x text/plain mine"} {
			if got, err := readText(cs, t.Context(), uri); err != nil || got != want {
				t.Errorf("%s %s: %q, %v", era.name, uri, got, err)
			}
		}
		_, unknown := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "nosuch://x"})
		if w := wireError(t, unknown); w != `{"code":-32602,"message":"Resource not found","data":{"uri":"nosuch://x"}}` {
			t.Errorf("%s: unknown resource: %s", era.name, w)
		}
	}
}

// stamp is a middleware that serves resources alone, adding its mark to
// the text of every content a read answers.
func stamp(mark string) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return stamped{Handler: next, next: next.(mcpkit.ResourceHandler), mark: mark}
	}
}

type stamped struct {
	mcpkit.Handler
	next mcpkit.ResourceHandler
	mark string
}

func (s stamped) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	res, err := s.next.ServeResource(ctx, req)
	if err != nil {
		return nil, err
	}
	out := *res
	out.Contents = nil
	for _, c := range res.Contents {
		cc := *c
		cc.Text += s.mark
		out.Contents = append(out.Contents, &cc)
	}
	return &out, nil
}

// TestResourceChainsFollowUse checks that middleware added with Use
// after resources and templates serve them: their chains are built
// anew, in order (the first Use outermost).
func TestResourceChainsFollowUse(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "use"}, nil)
	if err := srv.AddResources(tools.TextResource("memo://r", "r", "text/plain", "r", nil)); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResourceTemplates(&mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "memo://t/{id}", Name: "t", MIMEType: "text/plain"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: req.Params["id"]}}}, nil
		}),
	}); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	srv.Use(stamp("+outer"))
	srv.Use(stamp("+inner"))
	for uri, want := range map[string]string{
		"memo://r":   "memo://r text/plain r+inner+outer",
		"memo://t/7": "memo://t/7 text/plain 7+inner+outer",
	} {
		if got, err := readText(cs, t.Context(), uri); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", uri, got, err, want)
		}
	}
}

// BenchmarkRead compares one resources/read over in-memory transports: a
// handler registered directly on the SDK server, and the same handler
// served by mcpkit through the recommended chain (no logger), at a fixed
// URI and through a template.
func BenchmarkRead(b *testing.B) {
	contents := []*mcp.ResourceContents{{URI: "memo://x/1", MIMEType: "text/plain", Text: "ok"}}
	sdkHandler := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: contents}, nil
	}
	handler := mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: contents}, nil
	})
	for _, template := range []bool{false, true} {
		name := "uri"
		if template {
			name = "template"
		}
		b.Run(name+"/sdk", func(b *testing.B) {
			s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
			if template {
				s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "memo://x/{id}", Name: "x"}, sdkHandler)
			} else {
				s.AddResource(&mcp.Resource{URI: "memo://x/1", Name: "x"}, sdkHandler)
			}
			benchReads(b, connectSDK(b, s))
		})
		b.Run(name+"/mcpkit", func(b *testing.B) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
			srv.Use(middleware.Recommended(nil))
			var err error
			if template {
				err = srv.AddResourceTemplates(&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "memo://x/{id}", Name: "x"}, Handler: handler})
			} else {
				err = srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "memo://x/1", Name: "x"}, Handler: handler})
			}
			if err != nil {
				b.Fatal(err)
			}
			st, ct := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(context.Background(), st, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close(); ss.Close() })
			benchReads(b, cs)
		})
	}
}

func benchReads(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	params := &mcp.ReadResourceParams{URI: "memo://x/1"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.ReadResource(ctx, params)
		if err != nil || len(res.Contents) != 1 {
			b.Fatal(err, res)
		}
	}
}
