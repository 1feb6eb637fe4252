package mcpkit_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// kindsProvider is a Provider of no tools that serves prompts and
// resources: the prompts p1, p2 and (to admins, see asAdmin) vip; the
// resources mem://1 to mem://5 and, through its template mem://n/{x},
// any mem://n/... made per read. It fails to look up "broken" and
// mem://err, panics on "panics" and mem://boom, and fails every list while
// failing is set.
type kindsProvider struct {
	prompts   []*mcpkit.Prompt
	resources []*mcpkit.Resource
	templates []*mcpkit.ResourceTemplate
	failing   atomic.Bool
}

func newKindsProvider() *kindsProvider {
	p := &kindsProvider{}
	vip := say("vip")
	vip.Tags = []string{"admin"}
	p.prompts = []*mcpkit.Prompt{say("p1"), say("p2"), vip}
	for _, uri := range []string{"mem://1", "mem://2", "mem://3", "mem://4", "mem://5"} {
		p.resources = append(p.resources, &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: "provided " + uri}, Handler: readNote})
	}
	p.templates = []*mcpkit.ResourceTemplate{{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "mem://n/{x}", Name: "n"}}}
	return p
}

// sees reports whether c may see t: admins see everything.
func (p *kindsProvider) sees(c mcpkit.Caller, t mcpkit.Target) bool {
	caps := c.ClientCapabilities()
	return !t.HasTag("admin") || caps != nil && caps.Experimental["admin"] != nil
}

// pageOf returns the items of all after after that c sees, at most limit.
func pageOf[T mcpkit.Target](p *kindsProvider, c mcpkit.Caller, all []T, key func(T) string, after string, limit int) ([]T, error) {
	if p.failing.Load() {
		return nil, errors.New("the catalog is down")
	}
	var out []T
	for _, t := range all {
		if key(t) > after && p.sees(c, t) && (limit <= 0 || len(out) < limit) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (*kindsProvider) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (*kindsProvider) LookupTool(context.Context, mcpkit.Caller, string) (*mcpkit.Tool, error) {
	return nil, nil
}

func (p *kindsProvider) ListPrompts(_ context.Context, c mcpkit.Caller, after string, limit int) ([]*mcpkit.Prompt, error) {
	return pageOf(p, c, p.prompts, func(x *mcpkit.Prompt) string { return x.Name }, after, limit)
}

func (p *kindsProvider) LookupPrompt(_ context.Context, c mcpkit.Caller, name string) (*mcpkit.Prompt, error) {
	switch name {
	case "broken":
		return nil, errors.New("the catalog is down")
	case "panics":
		panic("lookup of panics")
	}
	for _, x := range p.prompts {
		if x.Name == name && p.sees(c, x) {
			return x, nil
		}
	}
	return nil, nil
}

func (p *kindsProvider) ListResources(_ context.Context, c mcpkit.Caller, after string, limit int) ([]*mcpkit.Resource, error) {
	return pageOf(p, c, p.resources, func(x *mcpkit.Resource) string { return x.URI }, after, limit)
}

func (p *kindsProvider) ListResourceTemplates(_ context.Context, c mcpkit.Caller, after string, limit int) ([]*mcpkit.ResourceTemplate, error) {
	return pageOf(p, c, p.templates, func(x *mcpkit.ResourceTemplate) string { return x.URITemplate }, after, limit)
}

func (p *kindsProvider) LookupResource(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.Resource, error) {
	switch uri {
	case "mem://err":
		return nil, errors.New("the catalog is down")
	case "mem://boom":
		panic("lookup of mem://boom")
	}
	if strings.HasPrefix(uri, "mem://n/") {
		return &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: "n"}, Handler: readNote}, nil
	}
	for _, r := range p.resources {
		if r.URI == uri {
			return r, nil
		}
	}
	return nil, nil
}

// LookupResourceTemplate finds none: this provider makes a resource per
// URI of its own (see LookupResource).
func (p *kindsProvider) LookupResourceTemplate(context.Context, mcpkit.Caller, string) (*mcpkit.ResourceTemplate, error) {
	return nil, nil
}

// kindsServer serves a kindsProvider beside a registered prompt a0, a
// registered mem://3, which wins over the provider's, and a registered
// template mem://n/r{x}, which wins over the provider's reads of the URIs
// it matches, in pages of 2.
func kindsServer(t *testing.T) (*mcpkit.Server, *kindsProvider) {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "kinds"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 2}})
	if err := srv.AddPrompts(say("a0")); err != nil {
		t.Fatal(err)
	}
	own := &mcpkit.Resource{Resource: mcp.Resource{URI: "mem://3", Name: "registered"}, Handler: mcpkit.ResourceHandlerFunc(
		func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "registered"}}}, nil
		})}
	if err := srv.AddResources(own); err != nil {
		t.Fatal(err)
	}
	reserved := &mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "mem://n/r{x}", Name: "reserved"}, Handler: readNote}
	if err := srv.AddResourceTemplates(reserved); err != nil {
		t.Fatal(err)
	}
	p := newKindsProvider()
	srv.AddProvider(p)
	return srv, p
}

// Through real clients of both eras: a PromptProvider's prompts and a
// ResourceProvider's resources and templates are listed after the
// registered ones, page by page, and served; a registered resource wins
// over the provider's of the same URI; the provider decides per caller;
// its failures (errors, panics) are answers of names never registered,
// and a list it fails is the registry's alone, never an error.
func TestProviderKinds(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv, p := kindsServer(t)
			guest := era.Connect(t, srv, nil).Session
			admin := era.Connect(t, srv, asAdmin(nil)).Session

			if names, pages, list := promptNames(t, guest); names != "a0,p1,p2" || pages != 2 || list.CacheScope != "private" {
				t.Errorf("guest lists %s in %d pages (cacheScope %q), want a0,p1,p2 in 2 (private)", names, pages, list.CacheScope)
			}
			if names, _, _ := promptNames(t, admin); names != "a0,p1,p2,vip" {
				t.Errorf("admin lists %s", names)
			}
			if res, err := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "p2"}); err != nil || promptText(res) != "p2" {
				t.Errorf("p2: %s, %v", promptText(res), err)
			}
			if res, err := admin.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "vip"}); err != nil || promptText(res) != "vip" {
				t.Errorf("admin gets vip: %s, %v", promptText(res), err)
			}
			for _, name := range []string{"vip", "broken", "panics"} {
				_, err := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
				if got, want := wireError(t, err), wireError(t, mcpkit.NewUnknownPromptError(name)); got != want {
					t.Errorf("get %s: %s, want %s", name, got, want)
				}
			}

			if uris, pages, _ := resourceURIs(t, guest); uris != "mem://1,mem://2,mem://3,mem://4,mem://5" || pages != 3 {
				t.Errorf("resources: %s in %d pages", uris, pages)
			}
			if got := templateTexts(t, guest); got != "mem://n/r{x},mem://n/{x}" {
				t.Errorf("templates: %s", got)
			}
			for uri, want := range map[string]string{
				"mem://3":    "mem://3  registered",
				"mem://4":    "mem://4  static at mem://4",
				"mem://n/7":  "mem://n/7  static at mem://n/7",
				"mem://n/r7": "mem://n/r7  mem://n/r{x} id= at mem://n/r7",
			} {
				if got, err := readText(guest, t.Context(), uri); err != nil || got != want {
					t.Errorf("read %s: %q, %v; want %q", uri, got, err, want)
				}
			}
			var notFound string
			for _, uri := range []string{"mem://err", "mem://boom", "mem://none"} {
				_, err := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				got := strings.ReplaceAll(wireError(t, err), uri, "URI")
				if notFound == "" {
					notFound = got
				}
				if got != notFound || !strings.Contains(got, "-32602") || strings.Contains(got, "down") || strings.Contains(got, "panic") {
					t.Errorf("read %s: %s, want %s", uri, got, notFound)
				}
			}

			p.failing.Store(true)
			if names, _, _ := promptNames(t, guest); names != "a0" {
				t.Errorf("while the provider fails, prompts %s, want a0", names)
			}
			if uris, _, _ := resourceURIs(t, guest); uris != "mem://3" {
				t.Errorf("while the provider fails, resources %s, want mem://3", uris)
			}
		})
	}
}

// ProviderChanged tells the listeners of prompts and resources too.
func TestProviderChangedKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, _ := kindsServer(t)
		var prompts, resources atomic.Int32
		cs := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
			PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts.Add(1) },
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources.Add(1) },
		}})
		synctest.Wait()
		srv.ProviderChanged("")
		time.Sleep(time.Second)
		synctest.Wait()
		if prompts.Load() != 1 || resources.Load() != 1 {
			t.Errorf("after ProviderChanged, heard %d prompts and %d resources notifications, want 1 each", prompts.Load(), resources.Load())
		}
		cs.Close()
	})
}

// Paging resources across the registry and two sources (a provider and
// a mount) keeps every URI once, in order, with each page size.
func TestProviderKindsPaging(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	for _, uri := range []string{"mem://0", "mem://9"} {
		if err := child.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: uri}, Handler: readNote}); err != nil {
			t.Fatal(err)
		}
	}
	want := "mem://1,mem://2,mem://3,mem://4,mem://5,mem://c/0,mem://c/9"
	for _, size := range []int{1, 2, 3, 4, 50} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "kinds"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: size}})
		srv.AddProvider(newKindsProvider())
		if err := srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "mem://3", Name: "own"}, Handler: readNote}); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Mount("c", child); err != nil {
			t.Fatal(err)
		}
		cs := mcpkittest.NewStatelessServer(t, srv, nil).Session
		uris, pages, _ := resourceURIs(t, cs)
		if uris != want {
			t.Errorf("page size %d: %s, want %s", size, uris, want)
		}
		if min := (len(strings.Split(want, ",")) + size - 1) / size; pages < min {
			t.Errorf("page size %d: %d pages, fewer than %d", size, pages, min)
		}
		// A cursor read twice gives the same page.
		first, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if first.NextCursor != "" {
			a, err1 := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
			b, err2 := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
			if err1 != nil || err2 != nil || !slices.EqualFunc(a.Resources, b.Resources, func(x, y *mcp.Resource) bool { return x.URI == y.URI }) || a.NextCursor != b.NextCursor {
				t.Errorf("page size %d: a cursor answers two pages: %v %v", size, err1, err2)
			}
		}
	}
}
