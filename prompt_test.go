package mcpkit_test

import (
	"context"
	"encoding/json"
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
)

// promptEras connects a client of each protocol era to srv: 2025-11-25 over the
// in-memory transports (a session), 2026-07-28 over HTTP, stateless.
var promptEras = []struct {
	name    string
	connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
}{
	{"2025-11-25", func(tb testing.TB, srv *mcpkit.Server, o *mcpkittest.Options) *mcpkittest.Server {
		opts := mcpkittest.Options{}
		if o != nil {
			opts = *o
		}
		opts.ProtocolVersion = mcpkittest.StatefulVersion
		return mcpkittest.NewInMemoryServer(tb, srv, &opts)
	}},
	{"2026-07-28", mcpkittest.NewStatelessServer},
}

// say returns a prompt called name that answers one user message: its
// name, then its arguments in order.
func say(name string, args ...*mcp.PromptArgument) *mcpkit.Prompt {
	return &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: name, Arguments: args},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			text := req.Prompt.Name
			for _, a := range req.Prompt.Arguments {
				text += " " + req.Arguments[a.Name]
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		}),
	}
}

// promptText returns the text of the only message of res.
func promptText(res *mcp.GetPromptResult) string {
	if res == nil || len(res.Messages) != 1 {
		return fmt.Sprintf("%+v", res)
	}
	if tc, ok := res.Messages[0].Content.(*mcp.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("%+v", res.Messages[0].Content)
}

// promptNames lists every page of prompts/list, and returns the names
// and the number of pages.
func promptNames(t *testing.T, cs *mcp.ClientSession) (string, int, *mcp.ListPromptsResult) {
	t.Helper()
	var names []string
	var first *mcp.ListPromptsResult
	pages, cursor := 0, ""
	for {
		res, err := cs.ListPrompts(t.Context(), &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		}
		pages++
		for _, p := range res.Prompts {
			names = append(names, p.Name)
		}
		if res.NextCursor == "" {
			return strings.Join(names, ","), pages, first
		}
		cursor = res.NextCursor
	}
}

// adminOnly is a TargetVisibility: prompts tagged "off" are not served,
// and prompts tagged "admin" only to clients that declare the
// experimental capability "admin". Tools are everyone's.
type adminOnly struct{}

func (adminOnly) Enabled(*mcpkit.Tool) bool                                 { return true }
func (adminOnly) PerRequest() bool                                          { return true }
func (adminOnly) Allowed(context.Context, *mcpkit.Tool, mcpkit.Caller) bool { return true }
func (adminOnly) EnabledTarget(t mcpkit.Target) bool                        { return !t.HasTag("off") }
func (adminOnly) AllowedTarget(_ context.Context, t mcpkit.Target, c mcpkit.Caller) bool {
	if !t.HasTag("admin") {
		return true
	}
	caps := c.ClientCapabilities()
	return caps != nil && caps.Experimental["admin"] != nil
}

// asAdmin are the options of a client that adminOnly lets see everything.
func asAdmin(o *mcpkittest.Options) *mcpkittest.Options {
	if o == nil {
		o = &mcpkittest.Options{}
	}
	if o.Client == nil {
		o.Client = &mcp.ClientOptions{}
	}
	o.Client.Capabilities = &mcp.ClientCapabilities{Experimental: map[string]any{"admin": map[string]any{}}}
	return o
}

// TestPrompts lists prompts page by page and gets them, with and without
// arguments, on both promptEras: an unlisted prompt is served but not listed;
// a list everyone sees alike is public; a missing required argument is
// -32602 naming it, and the handler is not called.
func TestPrompts(t *testing.T) {
	var served atomic.Int32
	count := func(p *mcpkit.Prompt) *mcpkit.Prompt {
		h := p.Handler
		p.Handler = mcpkit.PromptHandlerFunc(func(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			served.Add(1)
			return h.ServePrompt(ctx, req)
		})
		return p
	}
	hidden := say("gamma")
	hidden.Unlisted = true
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "prompts"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{
		PageSize:     2,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = 60000 },
	}})
	if err := srv.AddPrompts(say("alpha"), say("beta"), hidden, count(say("delta",
		&mcp.PromptArgument{Name: "who", Required: true}, &mcp.PromptArgument{Name: "mood"}))); err != nil {
		t.Fatal(err)
	}
	for _, era := range promptEras {
		t.Run(era.name, func(t *testing.T) {
			cs := era.connect(t, srv, nil).Session
			if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || !caps.Prompts.ListChanged {
				t.Errorf("prompts capability %+v, want declared with listChanged", caps.Prompts)
			}
			names, pages, first := promptNames(t, cs)
			if names != "alpha,beta,delta" || pages != 2 {
				t.Errorf("listed %s in %d pages, want alpha,beta,delta in 2", names, pages)
			}
			if first.CacheScope != "public" || first.TTLMs != 60000 {
				t.Errorf("cacheScope %q, ttlMs %d; want public, 60000 (SetCacheable's)", first.CacheScope, first.TTLMs)
			}
			res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "delta", Arguments: map[string]string{"who": "Ada", "mood": "glad"}})
			if err != nil || promptText(res) != "delta Ada glad" {
				t.Errorf("delta: %s, %v", promptText(res), err)
			}
			if res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "gamma"}); err != nil || promptText(res) != "gamma" {
				t.Errorf("unlisted gamma: %s, %v", promptText(res), err)
			}
			served.Store(0)
			_, err = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "delta", Arguments: map[string]string{"mood": "glad"}})
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || !strings.Contains(wire.Message, `missing required argument "who"`) {
				t.Errorf("without who: %v, want -32602 naming it", err)
			}
			if served.Load() != 0 {
				t.Error("the handler ran without a required argument")
			}
		})
	}
}

// TestPromptsNotDeclaredUntilServed checks that a server declares the
// prompts capability, and answers prompts/list, only once it serves a
// prompt.
func TestPromptsNotDeclaredUntilServed(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "later"}, nil)
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		if caps := cs.InitializeResult().Capabilities; caps.Prompts != nil {
			t.Errorf("%s: prompts declared without a prompt: %+v", era.name, caps.Prompts)
		}
		var wire *jsonrpc.Error
		if _, err := cs.ListPrompts(t.Context(), nil); !errors.As(err, &wire) || wire.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: prompts/list without prompts: %v, want -32601", era.name, err)
		}
	}
	if err := srv.AddPrompts(say("p")); err != nil {
		t.Fatal(err)
	}
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil {
			t.Errorf("%s: prompts not declared with a prompt", era.name)
		}
		if names, _, _ := promptNames(t, cs); names != "p" {
			t.Errorf("%s: listed %q", era.name, names)
		}
	}
}

// wireError returns the JSON of the JSON-RPC error in err.
func wireError(t *testing.T, err error) string {
	t.Helper()
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		t.Fatalf("%v is not a JSON-RPC error", err)
	}
	b, _ := json.Marshal(wire)
	return string(b)
}

// TestHiddenPromptIsUnknown checks, on both promptEras, that a prompt hidden
// from a caller by the Visibility (by tag, per request), or disabled for
// everyone, gets exactly the answer of a prompt never registered, and is
// not listed; the list is private, since it depends on who asks.
func TestHiddenPromptIsUnknown(t *testing.T) {
	newServer := func() *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "hide"}, nil)
		srv.SetVisibility(adminOnly{})
		vault, off := say("vault"), say("retired")
		vault.Tags, off.Tags = []string{"admin"}, []string{"off"}
		if err := srv.AddPrompts(say("open"), vault, off); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	for _, era := range promptEras {
		t.Run(era.name, func(t *testing.T) {
			srv := newServer()
			guest := era.connect(t, srv, nil).Session
			admin := era.connect(t, srv, asAdmin(nil)).Session
			if names, _, list := promptNames(t, guest); names != "open" || list.CacheScope != "private" {
				t.Errorf("guest lists %s (cacheScope %q), want open (private)", names, list.CacheScope)
			}
			if names, _, _ := promptNames(t, admin); names != "open,vault" {
				t.Errorf("admin lists %s, want open,vault", names)
			}
			if res, err := admin.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "vault"}); err != nil || promptText(res) != "vault" {
				t.Errorf("admin gets vault: %s, %v", promptText(res), err)
			}
			_, hiddenErr := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "vault"})
			_, offErr := admin.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "retired"})
			hidden, disabled := wireError(t, hiddenErr), wireError(t, offErr)
			srv.RemovePrompts("vault", "retired")
			_, goneErr := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "vault"})
			_, goneOff := admin.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "retired"})
			if gone := wireError(t, goneErr); hidden != gone || !strings.Contains(gone, `-32602`) {
				t.Errorf("hidden prompt: %s; never registered: %s", hidden, gone)
			}
			if gone := wireError(t, goneOff); disabled != gone {
				t.Errorf("disabled prompt: %s; never registered: %s", disabled, gone)
			}
		})
	}
	long := strings.Repeat("x", 300)
	_, err := mcpkittest.NewInMemoryServer(t, newServer(), nil).Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: long})
	if w := wireError(t, err); len(w) > 200 || !strings.Contains(w, "...") {
		t.Errorf("a long unknown name is echoed in full: %s", w)
	}
}

// TestPromptInputRequired gets a prompt that asks the client for input
// (an input_required result, then the same request with the answer),
// through the recommended chain, on both promptEras: a 2026-07-28 client asks
// again itself, the SDK asks a 2025-11-25 client over its session.
func TestPromptInputRequired(t *testing.T) {
	var asked, answered atomic.Int32
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mrtr"}, nil)
	srv.Use(middleware.Recommended(nil))
	err := srv.AddPrompts(&mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "greet"},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			resp, ok := req.Call.Params.InputResponses["name"].(*mcp.ElicitResult)
			if !ok {
				asked.Add(1)
				return &mcp.GetPromptResult{
					InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
						Message:         "Who is there?",
						RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
					}},
					RequestState: "step-1",
				}, nil
			}
			answered.Add(1)
			if req.Call.Params.RequestState != "step-1" || req.Call.Params.Name != "greet" {
				return nil, fmt.Errorf("lost state %q or name %q", req.Call.Params.RequestState, req.Call.Params.Name)
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("hello %v", resp.Content["name"])}}}}, nil
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
		res, err := era.connect(t, srv, opts).Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet"})
		if err != nil || promptText(res) != "hello Ada" {
			t.Errorf("%s: %s, %v", era.name, promptText(res), err)
		}
		if asked.Load() != 1 || answered.Load() != 1 {
			t.Errorf("%s: asked %d times, answered %d times; want once each", era.name, asked.Load(), answered.Load())
		}
	}
}

// TestPromptListChanged checks that notifications/prompts/list_changed
// reaches a listening client only when a change touches a prompt it sees:
// over a 2025-11-25 session and over a 2026-07-28 subscriptions/listen
// stream (both in memory, in a synctest bubble, so that the test can tell
// that a notification was not sent). With the SDK server handed out
// (prompts registered on it directly are everyone's), a change of those
// reaches everyone, and a change of mcpkit's still only those who see it.
func TestPromptListChanged(t *testing.T) {
	for _, version := range []string{mcpkittest.StatefulVersion, mcpkittest.StatelessVersion} {
		for _, foreign := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/foreign=%v", version, foreign), func(t *testing.T) {
				testPromptListChanged(t, version, foreign)
			})
		}
	}
}

func testPromptListChanged(t *testing.T, version string, foreign bool) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "notify"}, nil)
		if foreign {
			srv.MCPServer()
		}
		srv.SetVisibility(adminOnly{})
		if err := srv.AddPrompts(say("open")); err != nil {
			t.Fatal(err)
		}
		var heard [2]atomic.Int32 // guest, admin
		listen := func(i int) *mcpkittest.Options {
			return &mcpkittest.Options{ProtocolVersion: version, Client: &mcp.ClientOptions{
				PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { heard[i].Add(1) },
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
		vault := say("vault")
		vault.Tags = []string{"admin"}
		step("an admin prompt added", func() { srv.AddPrompts(vault) }, 0, 1)
		step("a prompt for everyone added", func() { srv.AddPrompts(say("more")) }, 1, 1)
		step("an admin prompt removed", func() { srv.RemovePrompts("vault") }, 0, 1)
		step("a tool added", func() { srv.Add(tool("t", reply("t"))) }, 0, 0)
		if foreign {
			step("an SDK prompt added", func() {
				srv.MCPServer().AddPrompt(&mcp.Prompt{Name: "sdk"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
			}, 1, 1)
			srv.MCPServer().RemovePrompts("sdk")
			time.Sleep(time.Second)
			synctest.Wait()
			step("an admin prompt added again", func() { srv.AddPrompts(vault) }, 0, 1)
			srv.RemovePrompts("vault")
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if names, _, _ := promptNames(t, guest.Session); names != "more,open" {
			t.Errorf("guest lists %s", names)
		}
		if names, _, _ := promptNames(t, admin.Session); names != "more,open" {
			t.Errorf("admin lists %s", names)
		}
		guest.Close()
		admin.Close()
	})
}

// TestPromptPipeline checks that a prompt's chain holds the layers that
// serve prompts, in order, and lists a tools-only layer and a ForTools
// selection as skipped, with the reason, while a tool's chain has them
// all.
func TestPromptPipeline(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	toolsOnly := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return next.ServeTool(ctx, req)
		})
	}
	srv.Use(middleware.Recover(nil), toolsOnly, mcpkit.ForTools(mcpkit.Named("t"), middleware.MaskErrors(nil)), middleware.Timeout(time.Minute, nil))
	srv.Use(mcpkit.Chain(mcpkit.NamedMiddleware("acme.audit", toolsOnly), middleware.MaskErrors(nil)))
	p := say("p")
	p.Middleware = []mcpkit.Middleware{middleware.Recover(nil)}
	if err := srv.AddPrompts(p); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(tool("t", reply("t"))); err != nil {
		t.Fatal(err)
	}
	layers, ok := srv.PromptPipeline("p")
	if !ok {
		t.Fatal("no pipeline for p")
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
	want := "middleware.Recover, mcpkit_test.TestPromptPipeline (skipped: does not serve prompts), " +
		"middleware.MaskErrors (skipped: mcpkit.ForTools selects tools only), middleware.Timeout, " +
		"acme.audit (skipped: does not serve prompts), middleware.MaskErrors, middleware.Recover from prompt"
	if strings.Join(got, ", ") != want {
		t.Errorf("prompt pipeline:\n%s\nwant\n%s", strings.Join(got, ", "), want)
	}
	if layers[3].Settings == nil {
		t.Error("Timeout's settings are not shown")
	}
	tl, _ := srv.Pipeline("t")
	if len(tl) != 7 || tl[1].Skipped || tl[2].Skipped || tl[4].Skipped {
		t.Errorf("tool pipeline %+v: want every layer, none skipped", tl)
	}
	if _, ok := srv.PromptPipeline("t"); ok {
		t.Error("a tool has a prompt pipeline")
	}
	// The skipped layer is not run; the others are.
	res, err := mcpkittest.NewInMemoryServer(t, srv, nil).Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "p"})
	if err != nil || promptText(res) != "p" {
		t.Errorf("p: %s, %v", promptText(res), err)
	}
}

// TestPromptErrors checks the error table for prompts, through Recover,
// MaskErrors and Timeout, on both promptEras: a panic and a timeout are -32603
// with their class in the error's data; an internal error is masked; a
// JSON-RPC error is kept.
func TestPromptErrors(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "errs"}, nil)
	srv.Use(middleware.Recover(nil), middleware.MaskErrors(nil), middleware.Timeout(50*time.Millisecond, nil))
	handler := func(f func(ctx context.Context) (*mcp.GetPromptResult, error)) mcpkit.PromptHandler {
		return mcpkit.PromptHandlerFunc(func(ctx context.Context, _ *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) { return f(ctx) })
	}
	err := srv.AddPrompts(
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "boom"}, Handler: handler(func(context.Context) (*mcp.GetPromptResult, error) { panic("secret value") })},
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "slow"}, Handler: handler(func(ctx context.Context) (*mcp.GetPromptResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})},
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "db"}, Handler: handler(func(context.Context) (*mcp.GetPromptResult, error) {
			return nil, errors.New("dial postgres://admin:pw@db")
		})},
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "teapot"}, Handler: handler(func(context.Context) (*mcp.GetPromptResult, error) {
			return nil, fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: 418, Message: "teapot"})
		})},
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "empty"}, Handler: handler(func(context.Context) (*mcp.GetPromptResult, error) { return nil, nil })},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"boom":   `{"code":-32603,"message":"internal error in prompt \"boom\"","data":{"io.github.mcpkit/errorClass":"fatal"}}`,
		"slow":   `{"code":-32603,"message":"prompt \"slow\" timed out after 50ms","data":{"io.github.mcpkit/errorClass":"retryable","io.github.mcpkit/timeoutMs":50}}`,
		"db":     `{"code":-32603,"message":"error getting prompt \"db\"","data":{"io.github.mcpkit/errorClass":"fatal"}}`,
		"teapot": `{"code":418,"message":"teapot"}`,
	}
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		for name, w := range want {
			_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
			if err == nil {
				t.Errorf("%s %s: no error", era.name, name)
				continue
			}
			if got := wireError(t, err); got != w {
				t.Errorf("%s %s:\n got %s\nwant %s", era.name, name, got, w)
			}
		}
		if res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "empty"}); err != nil || res.Messages == nil {
			t.Errorf("%s empty: %+v, %v; want an empty result", era.name, res, err)
		}
	}
}

// TestSDKPromptsKept checks that prompts registered on the SDK server
// directly are listed beside mcpkit's and served by the SDK, while the
// prompt through which mcpkit's pass is never listed nor reachable.
func TestSDKPromptsKept(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mixed"}, nil)
	srv.MCPServer().AddPrompt(&mcp.Prompt{Name: "legacy"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "legacy"}}}}, nil
	})
	if err := srv.AddPrompts(say("mine")); err != nil {
		t.Fatal(err)
	}
	for _, era := range promptEras {
		cs := era.connect(t, srv, nil).Session
		if names, _, _ := promptNames(t, cs); names != "legacy,mine" {
			t.Errorf("%s: listed %s, want legacy,mine", era.name, names)
		}
		for _, name := range []string{"legacy", "mine"} {
			if res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name}); err != nil || promptText(res) != name {
				t.Errorf("%s %s: %s, %v", era.name, name, promptText(res), err)
			}
		}
		_, unknown := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "nosuch"})
		if w := wireError(t, unknown); w != `{"code":-32602,"message":"unknown prompt \"nosuch\""}` {
			t.Errorf("%s: unknown prompt: %s", era.name, w)
		}
	}
}

// TestDerivedPromptServedUnderItsName checks that a prompt deriving from
// another (Origin set) is registered, listed and served under its own
// name, while its Key is its origin's.
func TestDerivedPromptServedUnderItsName(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "derived"}, nil)
	p := say("brief")
	p.Origin = say("summary")
	if p.Key() != "summary" {
		t.Errorf("Key %q, want the origin's name", p.Key())
	}
	if err := srv.AddPrompts(p); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	if names, _, _ := promptNames(t, cs); names != "brief" {
		t.Errorf("listed %s, want brief", names)
	}
	if res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "brief"}); err != nil || promptText(res) != "brief" {
		t.Errorf("brief: %s, %v", promptText(res), err)
	}
	srv.RemovePrompts("brief")
	if _, ok := srv.PromptPipeline("brief"); ok {
		t.Error("brief is still served after RemovePrompts")
	}
}
