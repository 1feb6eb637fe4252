package mcpkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// offKeys is a TargetVisibility of a parent: it disables the prompts and
// resources whose identity (Key) is one of its keys, and, like adminOnly,
// hides those tagged "admin" from clients that do not declare the
// experimental capability "admin".
type offKeys []string

func (offKeys) Enabled(*mcpkit.Tool) bool                                 { return true }
func (offKeys) PerRequest() bool                                          { return true }
func (offKeys) Allowed(context.Context, *mcpkit.Tool, mcpkit.Caller) bool { return true }
func (o offKeys) EnabledTarget(t mcpkit.Target) bool                      { return !slices.Contains(o, t.Key()) }
func (offKeys) AllowedTarget(ctx context.Context, t mcpkit.Target, c mcpkit.Caller) bool {
	return adminOnly{}.AllowedTarget(ctx, t, c)
}

// readNote is the handler of a resource or template of mountedKinds: it
// answers where it was read, the variables, and the URI it saw.
var readNote = mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	text := "static"
	if req.Template != nil {
		text = fmt.Sprintf("%s id=%s", req.Template.URITemplate, req.Params["id"])
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: text + " at " + req.URI}}}, nil
})

// mountedKinds is a parent that mounts a child under "docs". The child
// (adminOnly) has prompts greet (whose "who" completes), vault (admin),
// retired (off) and drop; resources file:///readme, file:///secret
// (admin), file:///drop, urn:isbn:1 (no "://": not mounted) and the
// template notes://{id} (whose "id" completes). The parent (offKeys) has
// a prompt hello and a resource file://docs//shadow that wins over the
// child's file:///shadow, and disables the child's drop prompt and
// file:///drop by their identity.
func mountedKinds(t *testing.T) (parent, child *mcpkit.Server) {
	t.Helper()
	child = mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	child.SetVisibility(adminOnly{})
	greet := say("greet", &mcp.PromptArgument{Name: "who"})
	greet.Complete = map[string]mcpkit.CompleteFunc{"who": prefixed("ann", "anna", "bob")}
	vault, retired := say("vault"), say("retired")
	vault.Tags, retired.Tags = []string{"admin"}, []string{"off"}
	if err := child.AddPrompts(greet, vault, retired, say("drop")); err != nil {
		t.Fatal(err)
	}
	res := func(uri string, tags ...string) *mcpkit.Resource {
		return &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"}, Handler: readNote, Tags: tags}
	}
	if err := child.AddResources(res("file:///readme"), res("file:///secret", "admin"), res("file:///drop"),
		res("file:///shadow"), res("urn:isbn:1")); err != nil {
		t.Fatal(err)
	}
	notes := &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "notes://{id}", Name: "notes"},
		Handler:          readNote,
		Complete:         map[string]mcpkit.CompleteFunc{"id": prefixed("41", "42", "7")},
	}
	if err := child.AddResourceTemplates(notes); err != nil {
		t.Fatal(err)
	}

	parent = mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	parent.SetVisibility(offKeys{"drop", "file:///drop"})
	if err := parent.AddPrompts(say("hello")); err != nil {
		t.Fatal(err)
	}
	shadow := res("file://docs//shadow")
	shadow.Handler = mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "the parent's"}}}, nil
	})
	if err := parent.AddResources(shadow); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	return parent, child
}

// templateTexts lists every page of resources/templates/list.
func templateTexts(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var out []string
	for tmpl, err := range cs.ResourceTemplates(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tmpl.URITemplate)
	}
	return strings.Join(out, ",")
}

// Through real clients of both eras: the child's prompts are listed,
// got and completed under the namespace; those hidden by the child's
// visibility (per request, or disabled) or by the parent's rule keyed on
// the child's prompt are, at the parent, prompts never registered, to the
// byte; a draining child refuses through the parent.
func TestMountPrompts(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			parent, child := mountedKinds(t)
			guest := era.Connect(t, parent, nil).Session
			admin := era.Connect(t, parent, asAdmin(nil)).Session

			if names, _, list := promptNames(t, guest); names != "docs_greet,hello" || list.CacheScope != "private" {
				t.Errorf("guest lists %s (cacheScope %q), want docs_greet,hello (private)", names, list.CacheScope)
			}
			if names, _, _ := promptNames(t, admin); names != "docs_greet,docs_vault,hello" {
				t.Errorf("admin lists %s", names)
			}
			res, err := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "docs_greet", Arguments: map[string]string{"who": "ann"}})
			if err != nil || promptText(res) != "docs_greet ann" {
				t.Errorf("docs_greet: %s, %v", promptText(res), err)
			}
			if res, err := admin.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "docs_vault"}); err != nil || promptText(res) != "docs_vault" {
				t.Errorf("admin gets docs_vault: %s, %v", promptText(res), err)
			}
			comp, err := completeArg(guest, promptRef("docs_greet"), "who", "an", nil)
			if err != nil || !slices.Equal(comp.Completion.Values, []string{"ann", "anna"}) {
				t.Errorf("complete docs_greet who=an: %+v, %v", comp, err)
			}

			hidden := map[string]string{}
			for _, name := range []string{"docs_vault", "docs_retired", "docs_drop"} {
				_, err := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
				hidden[name] = wireError(t, err)
				if _, err := completeArg(guest, promptRef(name), "x", "", nil); err == nil || wireError(t, err) != hidden[name] {
					t.Errorf("complete %s: %v, want %s", name, err, hidden[name])
				}
			}
			child.RemovePrompts("vault", "retired", "drop")
			for name, was := range hidden {
				_, err := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
				if gone := wireError(t, err); gone != was || !strings.Contains(gone, "-32602") {
					t.Errorf("hidden %s: %s; never registered: %s", name, was, gone)
				}
			}

			if err := child.Drain(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "docs_greet", Arguments: map[string]string{"who": "x"}}); err == nil || !strings.Contains(err.Error(), "shutting down") {
				t.Errorf("docs_greet while the child drains: %v, want a refusal", err)
			}
			if res, err := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "hello"}); err != nil || promptText(res) != "hello" {
				t.Errorf("the parent's own prompt while the child drains: %s, %v", promptText(res), err)
			}
		})
	}
}

// A rule keyed on the child's prompt or resource by identity (Key, its
// Origin's) holds for the mounted one, and the mounted one's Origin is
// the child's.
func TestMountKindsIdentity(t *testing.T) {
	parent, _ := mountedKinds(t)
	var seen []string
	parent.Use(func(next mcpkit.Handler) mcpkit.Handler { return keyRecorder{next, &seen} })
	cs := mcpkittest.NewStatelessServer(t, parent, nil).Session
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "docs_greet", Arguments: map[string]string{"who": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := readText(cs, t.Context(), "notes://docs/9"); err != nil {
		t.Fatal(err)
	}
	if _, err := readText(cs, t.Context(), "file://docs//readme"); err != nil {
		t.Fatal(err)
	}
	want := []string{"prompt docs_greet greet origin=true", "template notes://docs/{id} notes://{id} origin=true", "resource file://docs//readme file:///readme origin=true"}
	if !slices.Equal(seen, want) {
		t.Errorf("the parent's middleware saw %q, want %q", seen, want)
	}
}

// keyRecorder is a middleware of every kind that records what it serves:
// its served name, its identity, and whether it has an Origin.
type keyRecorder struct {
	next mcpkit.Handler
	seen *[]string
}

func (k keyRecorder) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return k.next.ServeTool(ctx, req)
}

func (k keyRecorder) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	*k.seen = append(*k.seen, fmt.Sprintf("prompt %s %s origin=%v", req.Prompt.Name, req.Prompt.Key(), req.Prompt.Origin != nil))
	return k.next.(mcpkit.PromptHandler).ServePrompt(ctx, req)
}

func (k keyRecorder) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	if req.Template != nil {
		*k.seen = append(*k.seen, fmt.Sprintf("template %s %s origin=%v", req.Template.URITemplate, req.Template.Key(), req.Template.Origin != nil))
	} else {
		*k.seen = append(*k.seen, fmt.Sprintf("resource %s %s origin=%v", req.Resource.URI, req.Resource.Key(), req.Resource.Origin != nil))
	}
	return k.next.(mcpkit.ResourceHandler).ServeResource(ctx, req)
}

// Through real clients of both eras: the child's resources and templates
// are listed with the namespace after the scheme's "://" (a URI without
// one left out), read by the child's route (exact URI, then templates,
// variables decoded, the child's handler seeing its own URI and the
// contents naming it answered under the URI read), completed;
// the parent's registered resource wins; those hidden by either server's
// visibility are not found, byte for byte as a URI never served.
func TestMountResources(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			parent, child := mountedKinds(t)
			guest := era.Connect(t, parent, nil).Session
			admin := era.Connect(t, parent, asAdmin(nil)).Session

			want := "file://docs//readme,file://docs//shadow"
			if uris, _, list := resourceURIs(t, guest); uris != want || list.CacheScope != "private" {
				t.Errorf("guest lists %s (cacheScope %q), want %s (private)", uris, list.CacheScope, want)
			}
			if uris, _, _ := resourceURIs(t, admin); uris != "file://docs//readme,file://docs//secret,file://docs//shadow" {
				t.Errorf("admin lists %s", uris)
			}
			if got := templateTexts(t, guest); got != "notes://docs/{id}" {
				t.Errorf("templates: %s", got)
			}
			for uri, want := range map[string]string{
				"file://docs//readme":  "file://docs//readme text/plain static at file:///readme",
				"file://docs//shadow":  "file://docs//shadow text/plain the parent's",
				"notes://docs/42":      "notes://docs/42  notes://{id} id=42 at notes://42",
				"notes://docs/a%2F..b": "notes://docs/a%2F..b  notes://{id} id=a/..b at notes://a%2F..b",
			} {
				if got, err := readText(guest, t.Context(), uri); err != nil || got != want {
					t.Errorf("read %s: %q, %v; want %q", uri, got, err, want)
				}
			}
			if got, err := readText(admin, t.Context(), "file://docs//secret"); err != nil || !strings.HasSuffix(got, "static at file:///secret") {
				t.Errorf("admin reads the secret: %q, %v", got, err)
			}
			comp, err := completeArg(guest, resourceRef("notes://docs/{id}"), "id", "4", nil)
			if err != nil || !slices.Equal(comp.Completion.Values, []string{"41", "42"}) {
				t.Errorf("complete notes://docs/{id}: %+v, %v", comp, err)
			}

			hidden := map[string]string{}
			for _, uri := range []string{"file://docs//secret", "file://docs//drop", "urn:docs/isbn:1", "file:///readme"} {
				_, err := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				hidden[uri] = wireError(t, err)
			}
			child.RemoveResources("file:///secret", "file:///drop", "urn:isbn:1")
			for uri, was := range hidden {
				_, err := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				if gone := wireError(t, err); gone != was || !strings.Contains(gone, "-32602") || !strings.Contains(gone, `"uri":"`+uri) {
					t.Errorf("hidden %s: %s; never served: %s", uri, was, gone)
				}
			}
		})
	}
}

// A mounted tool's MCP Apps view (_meta.ui.resourceUri, and the
// deprecated flat key) names the view as the parent serves it, and the
// view is readable there; the child's tool keeps its own _meta.
func TestMountAppsView(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "weather"}, nil)
	forecast, legacy := okTool("forecast"), okTool("legacy")
	if err := apps.SetTool(forecast, apps.ToolUI{ResourceURI: "ui://weather/view.html"}); err != nil {
		t.Fatal(err)
	}
	legacy.Meta = mcp.Meta{"ui/resourceUri": "ui://weather/view.html"}
	if err := child.Add(forecast, legacy); err != nil {
		t.Fatal(err)
	}
	view := &mcpkit.Resource{Resource: mcp.Resource{URI: "ui://weather/view.html", Name: "view", MIMEType: apps.MIMEType}, Handler: readNote}
	if err := child.AddResources(view); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("wx", child); err != nil {
		t.Fatal(err)
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, parent, nil).Session
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, tl := range res.Tools {
				ui, _ := apps.Tool(&mcpkit.Tool{Tool: *tl})
				got[tl.Name] = ui.ResourceURI
			}
			const want = "ui://wx/weather/view.html"
			if got["wx_forecast"] != want || got["wx_legacy"] != want {
				t.Errorf("views named %v, want %s", got, want)
			}
			if text, err := readText(cs, t.Context(), want); err != nil || !strings.HasSuffix(text, "static at ui://weather/view.html") {
				t.Errorf("read the view: %q, %v", text, err)
			}
		})
	}
	if ui, _ := apps.Tool(child.Tools()[0]); ui.ResourceURI != "ui://weather/view.html" {
		t.Errorf("the child's tool now names %s", ui.ResourceURI)
	}
}

// A change of the child's prompts or resources reaches, as
// notifications/prompts/list_changed or resources/list_changed, only the
// parent's listeners whose list it changes.
func TestMountKindsListChanged(t *testing.T) {
	for _, version := range []string{mcpkittest.StatefulVersion, mcpkittest.StatelessVersion} {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, child := mountedKinds(t)
				var prompts, resources [2]atomic.Int32 // guest, admin
				listen := func(i int) *mcpkittest.Options {
					return &mcpkittest.Options{ProtocolVersion: version, Client: &mcp.ClientOptions{
						PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts[i].Add(1) },
						ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources[i].Add(1) },
					}}
				}
				guest := mcpkittest.NewInMemoryServer(t, parent, listen(0))
				admin := mcpkittest.NewInMemoryServer(t, parent, asAdmin(listen(1)))
				synctest.Wait()
				step := func(what string, change func(), wantPrompts, wantResources [2]int32) {
					t.Helper()
					for i := range 2 {
						prompts[i].Store(0)
						resources[i].Store(0)
					}
					change()
					time.Sleep(time.Second) // past the SDK's debounce, on the bubble's clock
					synctest.Wait()
					gotP := [2]int32{prompts[0].Load(), prompts[1].Load()}
					gotR := [2]int32{resources[0].Load(), resources[1].Load()}
					if gotP != wantPrompts || gotR != wantResources {
						t.Errorf("%s: prompts heard %v, resources %v; want %v, %v (guest, admin)", what, gotP, gotR, wantPrompts, wantResources)
					}
				}
				admins := say("keys")
				admins.Tags = []string{"admin"}
				step("an admin prompt added to the child", func() { child.AddPrompts(admins) }, [2]int32{0, 1}, [2]int32{})
				step("a prompt for everyone added to the child", func() { child.AddPrompts(say("more")) }, [2]int32{1, 1}, [2]int32{})
				step("an admin resource added to the child", func() {
					child.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "file:///keys", Name: "keys"}, Handler: readNote, Tags: []string{"admin"}})
				}, [2]int32{}, [2]int32{0, 1})
				step("a template added to the child", func() {
					child.AddResourceTemplates(&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "logs://{day}", Name: "logs"}, Handler: readNote})
				}, [2]int32{}, [2]int32{1, 1})
				step("a prompt the parent disables added to the child", func() { child.AddPrompts(say("drop")) }, [2]int32{}, [2]int32{})
				step("a tool added to the child", func() { child.Add(okTool("t")) }, [2]int32{}, [2]int32{})
				if names, _, _ := promptNames(t, admin.Session); names != "docs_greet,docs_keys,docs_more,docs_vault,hello" {
					t.Errorf("admin lists %s", names)
				}
				guest.Close()
				admin.Close()
			})
		})
	}
}

// Paging across the parent's resources and a mount's: every URI once, in
// order, whatever the page size.
func TestMountResourcePaging(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	var want []string
	for _, uri := range []string{"a://1", "a://2", "b://1", "file:///x", "file:///y", "zz://9", "urn:skip"} {
		if err := child.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: uri}, Handler: readNote}); err != nil {
			t.Fatal(err)
		}
	}
	want = []string{"a://m/1", "a://m/2", "b://m/1", "file://m//x", "file://m//y", "zz://m/9"}
	for _, size := range []int{1, 2, 3, 100} {
		parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: size}})
		own := []string{"a://l", "a://n", "b://", "file://m/", "file://m0", "y://"}
		for _, uri := range own {
			if err := parent.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: uri}, Handler: readNote}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := parent.Mount("m", child); err != nil {
			t.Fatal(err)
		}
		all := slices.Sorted(slices.Values(append(slices.Clone(own), want...)))
		got, _, _ := resourceURIs(t, mcpkittest.NewStatelessServer(t, parent, nil).Session)
		if got != strings.Join(all, ",") {
			t.Errorf("page size %d: %s, want %s", size, got, strings.Join(all, ","))
		}
	}
}
