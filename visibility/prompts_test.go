package visibility_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

// prompt returns a prompt called name, with tags, that answers its name.
func prompt(name string, tags ...string) *mcpkit.Prompt {
	return &mcpkit.Prompt{Prompt: mcp.Prompt{Name: name}, Tags: tags,
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: req.Prompt.Name}}}}, nil
		})}
}

// promptList returns the names prompts/list gives cs, joined.
func promptList(t testing.TB, cs *mcp.ClientSession) string {
	t.Helper()
	var names []string
	for p, err := range cs.Prompts(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// getPrompt returns the text prompts/get of name gives cs, or the JSON-RPC
// error's wire form.
func getPrompt(t testing.TB, cs *mcp.ClientSession, name string) string {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr):
		return werr.Error()
	case err != nil:
		t.Fatal(err)
	}
	return res.Messages[0].Content.(*mcp.TextContent).Text
}

// admins holds for the clients that declare the experimental capability
// "admin".
func admins(_ context.Context, c mcpkit.Caller) bool {
	caps := c.ClientCapabilities()
	return caps != nil && caps.Experimental["admin"] != nil
}

// asAdmin returns options of a client that admins holds for.
func asAdmin(o mcpkittest.Options) *mcpkittest.Options {
	o.Client = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Experimental: map[string]any{"admin": map[string]any{}}}}
	return &o
}

// TestRulesOnPrompts: one Rules decides prompts as it decides tools. A
// rule over targets (Require(match over mcpkit.Target)) hides tools and
// prompts alike; a rule over prompts disables prompts alone; a rule over
// tools leaves a prompt of the same name served. A prompt hidden or
// disabled is answered exactly as one never registered.
func TestRulesOnPrompts(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := newServer(t, nil, tool("open"), tool("wipe", "admin"))
			if err := srv.AddPrompts(prompt("open"), prompt("vault", "admin"), prompt("draft", "off")); err != nil {
				t.Fatal(err)
			}
			rules := visibility.New(
				visibility.Require(func(t mcpkit.Target) bool { return t.HasTag("admin") }, admins),
				visibility.Disable(func(p *mcpkit.Prompt) bool { return p.HasTag("off") }),
				visibility.Disable(mcpkit.Named("open")), // the tool, not the prompt
			)
			rules.Attach(srv)
			guest := era.Connect(t, srv, &mcpkittest.Options{}).Session
			admin := era.Connect(t, srv, asAdmin(mcpkittest.Options{})).Session

			if got := joined(names(t, guest)); got != "" {
				t.Errorf("guest lists tools %q, want none", got)
			}
			if got := joined(names(t, admin)); got != "wipe" {
				t.Errorf("admin lists tools %q, want wipe", got)
			}
			if got := promptList(t, guest); got != "open" {
				t.Errorf("guest lists prompts %q, want open", got)
			}
			if got := promptList(t, admin); got != "open,vault" {
				t.Errorf("admin lists prompts %q, want open,vault", got)
			}
			if got := getPrompt(t, admin, "vault"); got != "vault" {
				t.Errorf("admin gets vault: %s", got)
			}
			if got := getPrompt(t, guest, "open"); got != "open" {
				t.Errorf("guest gets open: %s", got)
			}
			hidden, disabled := getPrompt(t, guest, "vault"), getPrompt(t, admin, "draft")
			srv.RemovePrompts("vault", "draft")
			if gone := getPrompt(t, guest, "vault"); hidden != gone || !strings.Contains(gone, "unknown prompt") {
				t.Errorf("hidden prompt: %s; never registered: %s", hidden, gone)
			}
			if gone := getPrompt(t, admin, "draft"); disabled != gone {
				t.Errorf("disabled prompt: %s; never registered: %s", disabled, gone)
			}
		})
	}
}

// TestAllowlistPrompts: an allowlist serves the prompts an Enable rule
// selects and no other; enabling them while serving tells the clients
// listening with notifications/prompts/list_changed.
func TestAllowlistPrompts(t *testing.T) {
	for _, version := range []string{mcpkittest.StatefulVersion, mcpkittest.StatelessVersion} {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newServer(t, nil, tool("a"))
				if err := srv.AddPrompts(prompt("p")); err != nil {
					t.Fatal(err)
				}
				rules := visibility.NewAllowlist(visibility.Enable(visibility.AllTools))
				rules.Attach(srv)
				var heard atomic.Int32
				ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: version, Client: &mcp.ClientOptions{
					PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { heard.Add(1) },
				}})
				synctest.Wait()
				if got := promptList(t, ts.Session); got != "" {
					t.Errorf("an allowlist of tools lists prompts %q", got)
				}
				if got := getPrompt(t, ts.Session, "p"); !strings.Contains(got, "unknown prompt") {
					t.Errorf("a prompt not enabled: %s", got)
				}
				rules.Add(visibility.Enable(visibility.AllPrompts))
				time.Sleep(time.Second) // past the SDK's debounce, on the bubble's clock
				synctest.Wait()
				if n := heard.Load(); n != 1 {
					t.Errorf("heard %d prompts/list_changed, want 1", n)
				}
				if got := promptList(t, ts.Session); got != "p" {
					t.Errorf("after Enable(AllPrompts) lists %q", got)
				}
				if got := joined(names(t, ts.Session)); got != "a" {
					t.Errorf("tools %q", got)
				}
				ts.Close()
			})
		})
	}
}

// TestRulesOnResources: the same rules decide resources and templates: a
// rule over targets hides what is tagged from the callers it does not
// hold for, a rule over resources disables resources alone, and a hidden
// resource reads as one never registered.
func TestRulesOnResources(t *testing.T) {
	text := func(uri string, tags ...string) *mcpkit.Resource {
		r := tools.TextResource(uri, uri, "text/plain", "at "+uri, nil)
		r.Tags = tags
		return r
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := newServer(t, nil, tool("open"))
			if err := srv.AddResources(text("docs://open"), text("docs://vault", "admin"), text("docs://draft", "off")); err != nil {
				t.Fatal(err)
			}
			tpl := tools.MustTemplate(tools.NewTemplate("docs://secret/{id}", func(_ context.Context, req *mcpkit.ResourceRequest, p struct {
				ID string `json:"id"`
			}) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "secret " + p.ID}}}, nil
			}, nil))
			tpl.Tags = []string{"admin"}
			if err := srv.AddResourceTemplates(tpl); err != nil {
				t.Fatal(err)
			}
			visibility.New(
				visibility.Require(func(t mcpkit.Target) bool { return t.HasTag("admin") }, admins),
				visibility.Disable(func(r *mcpkit.Resource) bool { return r.HasTag("off") }),
			).Attach(srv)
			guest := era.Connect(t, srv, nil).Session
			admin := era.Connect(t, srv, asAdmin(mcpkittest.Options{})).Session
			uris := func(cs *mcp.ClientSession) string {
				var out []string
				for r, err := range cs.Resources(t.Context(), nil) {
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, r.URI)
				}
				for r, err := range cs.ResourceTemplates(t.Context(), nil) {
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, r.URITemplate)
				}
				return strings.Join(out, ",")
			}
			if got := uris(guest); got != "docs://open" {
				t.Errorf("guest lists %q", got)
			}
			if got := uris(admin); got != "docs://open,docs://vault,docs://secret/{id}" {
				t.Errorf("admin lists %q", got)
			}
			read := func(cs *mcp.ClientSession, uri string) string {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				var werr *jsonrpc.Error
				if errors.As(err, &werr) {
					b, _ := json.Marshal(werr)
					return string(b)
				}
				if err != nil {
					t.Fatal(err)
				}
				return res.Contents[0].Text
			}
			if got := read(admin, "docs://secret/7"); got != "secret 7" {
				t.Errorf("admin reads the template: %s", got)
			}
			hidden, tplHidden, disabled := read(guest, "docs://vault"), read(guest, "docs://secret/7"), read(admin, "docs://draft")
			never := func(uri string) string { return read(admin, uri) }
			if want := never("docs://never"); strings.Replace(hidden, "vault", "never", 1) != want || !strings.Contains(want, "-32602") {
				t.Errorf("hidden resource: %s; never registered: %s", hidden, want)
			}
			if want := never("docs://nosuch/7"); strings.Replace(tplHidden, "secret", "nosuch", 1) != want {
				t.Errorf("hidden template: %s; never registered: %s", tplHidden, want)
			}
			if want := never("docs://nope"); strings.Replace(disabled, "draft", "nope", 1) != want {
				t.Errorf("disabled resource: %s; never registered: %s", disabled, want)
			}
		})
	}
}
