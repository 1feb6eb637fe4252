package mcpkit_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tasks"
)

// The probes of this file attack the registry as session 46 left it: the
// indexes held by value in each state, the chains found in the entries of
// the state before (no map of built chains), and list_changed decided by
// the listeners a NewServer server saw open.

// atk46Toggle is a Visibility that disables the tools named in off.
type atk46Toggle struct {
	mu  sync.Mutex
	off map[string]bool
}

func (v *atk46Toggle) set(name string, off bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.off == nil {
		v.off = map[string]bool{}
	}
	v.off[name] = off
}

func (v *atk46Toggle) Enabled(t *mcpkit.Tool) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return !v.off[t.Name]
}
func (v *atk46Toggle) PerRequest() bool { return false }
func (v *atk46Toggle) Allowed(context.Context, *mcpkit.Tool, mcpkit.Caller) bool {
	return true
}

// atk46Tag is a middleware that appends tag to the text of the result.
func atk46Tag(tag string) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			if err == nil && res != nil && len(res.Content) == 1 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					return textResult(tc.Text + "+" + tag), nil
				}
			}
			return res, err
		})
	}
}

// TestAttack46ChainAfterDisableEnable: a tool disabled by the Visibility
// and enabled again runs its whole chain (server middleware, its own
// middleware, validation of its arguments), in both eras; and the layer
// that can never take effect in its chain is reported once, not again
// each time the tool comes back (the chain is the same as before).
func TestAttack46ChainAfterDisableEnable(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			var logs bytes.Buffer
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			srv.Use(middleware.Timeout(30*time.Second, nil), atk46Tag("server"))
			srv.Use(mcpkit.ForTools(mcpkit.Named("t"), middleware.Timeout(5*time.Minute, nil)))
			vis := &atk46Toggle{}
			srv.SetVisibility(vis)
			tl := tool("t", reply("t"))
			tl.Middleware = []mcpkit.Middleware{atk46Tag("own")}
			tl.InputSchema = &jsonschema.Schema{Type: "object", Required: []string{"n"},
				Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}
			if err := srv.Add(tl); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			call := func(args any) string {
				t.Helper()
				res, err := ts.CallTool(t.Context(), "t", args)
				if err != nil {
					return "error: " + err.Error()
				}
				return resultText(t, res)
			}
			for round := range 3 {
				if got := call(map[string]any{"n": 1}); got != "t+own+server" {
					t.Errorf("round %d: t = %q, want its whole chain t+own+server", round, got)
				}
				res, err := ts.CallTool(t.Context(), "t", map[string]any{"n": "x"})
				if err != nil || !res.IsError || !strings.Contains(resultText(t, res), "n") {
					t.Errorf("round %d: t with a bad argument: %v, %v; want a validation error naming n", round, res, err)
				}
				vis.set("t", true)
				srv.Refresh()
				if got := call(map[string]any{"n": 1}); !strings.Contains(got, unknownAnswer("t")) {
					t.Errorf("round %d: disabled t = %q", round, got)
				}
				vis.set("t", false)
				srv.Refresh()
			}
			if n := strings.Count(logs.String(), "can never take effect"); n != 1 {
				// The chain of a tool enabled again is the one built before
				// (the server keeps chains while their tools are registered).
				t.Errorf("the moot layer of a tool enabled again is reported %d times in all, want once", n)
			}
		})
	}
}

// TestAttack46UseAfterTools: middleware added by Use runs for the tools
// added before and after it; a call already running when Use is called
// finishes with the chain it started with; RemoveVersion of the highest
// version serves the next with the new chain.
func TestAttack46UseAfterTools(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-use"}, nil)
			started, release := make(chan struct{}), make(chan struct{})
			slow := tool("slow", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
				started <- struct{}{}
				<-release
				return textResult("slow"), nil
			})
			v1, v2 := tool("v", reply("v1")), tool("v", reply("v2"))
			v1.Version, v2.Version = "1", "2"
			if err := srv.Add(slow, v1, v2); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			running := make(chan string, 1)
			go func() {
				res, err := ts.CallTool(context.Background(), "slow", nil)
				if err != nil {
					running <- err.Error()
					return
				}
				running <- resultText(t, res)
			}()
			<-started
			srv.Use(atk46Tag("a"))
			if err := srv.Add(tool("late", reply("late"))); err != nil {
				t.Fatal(err)
			}
			close(release)
			if got := <-running; got != "slow" {
				t.Errorf("the call running across Use = %q, want slow (its own chain)", got)
			}
			for name, want := range map[string]string{"v": "v2+a", "late": "late+a"} {
				if got := text(name); got != want {
					t.Errorf("%s after Use = %q, want %q", name, got, want)
				}
			}
			go func() { <-started }()
			srv.Use(atk46Tag("b"))
			if !srv.RemoveVersion("v", "2") {
				t.Fatal("RemoveVersion")
			}
			if got := text("v"); got != "v1+b+a" {
				t.Errorf("v after a second Use and RemoveVersion 2 = %q, want v1+b+a", got)
			}
		})
	}
}

// TestAttack46ReplaceAndFailedTransform: ReplaceDuplicates serves the new
// handler at once, never the old; a Transform that fails is rolled back,
// and calls then run the chains they ran before, the new tool's included.
func TestAttack46ReplaceAndFailedTransform(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-replace"}, &mcpkit.ServerOptions{ReplaceDuplicates: true})
			srv.Use(atk46Tag("s"))
			if err := srv.Add(tool("r", reply("old")), tool("k", reply("k"))); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			if got := text("r"); got != "old+s" {
				t.Fatalf("r = %q", got)
			}
			if err := srv.Add(tool("r", reply("new"))); err != nil {
				t.Fatal(err)
			}
			if got := text("r"); got != "new+s" {
				t.Errorf("r after ReplaceDuplicates = %q, want new+s", got)
			}
			fail := func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
				if tl.Name == "k" {
					return nil, errAtk46
				}
				return tl, nil
			}
			if err := srv.Transform(fail); err == nil {
				t.Fatal("the failing Transform succeeded")
			}
			for name, want := range map[string]string{"r": "new+s", "k": "k+s"} {
				if got := text(name); got != want {
					t.Errorf("%s after a failed Transform = %q, want %q", name, got, want)
				}
			}
			srv.Use(atk46Tag("u"))
			if got := text("r"); got != "new+u+s" && got != "new+s+u" {
				t.Errorf("r after Use that follows the failed Transform = %q", got)
			}
		})
	}
}

var errAtk46 = &atk46Error{}

type atk46Error struct{}

func (*atk46Error) Error() string { return "atk46: transform refuses k" }

// atk46Hear returns options whose client sends to the channel returned the
// method of each list_changed of the tools it hears.
func atk46Hear(opts *mcpkittest.Options) (*mcpkittest.Options, <-chan string) {
	heard := make(chan string, 64)
	if opts == nil {
		opts = &mcpkittest.Options{}
	}
	opts.Client = &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		heard <- "notifications/tools/list_changed"
	}}
	return opts, heard
}

const atk46Changed = "notifications/tools/list_changed"

// TestAttack46ListChangedReachesEveryListener: each change of the registry
// (Add, Remove, RemoveVersion, SetVisibility, Transform) reaches a
// 2025-11-25 session in memory and over streamable HTTP, and a 2026-07-28
// subscriptions/listen stream; a parent that mounts the server tells its
// own listeners; a session that connects after the changes lists what
// they made.
func TestAttack46ListChangedReachesEveryListener(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-lc"}, nil)
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-lc-parent"}, nil)
	if _, err := parent.Mount("m", srv); err != nil {
		t.Fatal(err)
	}
	v1, v2 := tool("v", reply("v1")), tool("v", reply("v2"))
	v1.Version, v2.Version = "1", "2"
	if err := srv.Add(tool("a", reply("a")), v1, v2); err != nil {
		t.Fatal(err)
	}
	listeners := map[string]<-chan string{}
	opts, heard := atk46Hear(&mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	mcpkittest.NewInMemoryServer(t, srv, opts)
	listeners["in-memory 2025-11-25"] = heard
	opts, heard = atk46Hear(nil)
	mcpkittest.NewServer(t, srv, opts)
	listeners["HTTP 2025-11-25"] = heard
	listeners["listen 2026-07-28"] = atk45bListen(t, mcpkittest.NewStatelessServer(t, srv, nil).URL, "")
	opts, heard = atk46Hear(&mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	mcpkittest.NewInMemoryServer(t, parent, opts)
	listeners["parent in-memory 2025-11-25"] = heard
	listeners["parent listen 2026-07-28"] = atk45bListen(t, mcpkittest.NewStatelessServer(t, parent, nil).URL, "")

	vis := &atk46Toggle{}
	for _, c := range []struct {
		what string
		do   func()
	}{
		{"Add", func() {
			if err := srv.Add(tool("b", reply("b"))); err != nil {
				t.Fatal(err)
			}
		}},
		{"Remove", func() { srv.Remove("a") }},
		{"RemoveVersion", func() { srv.RemoveVersion("v", "2") }},
		{"SetVisibility", func() { vis.set("b", true); srv.SetVisibility(vis) }},
		{"Transform", func() {
			if err := srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
				c := *tl
				c.Description = "changed"
				return &c, nil
			}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		c.do()
		for who, heard := range listeners {
			atk45bUntil(t, who+" after "+c.what, heard, atk46Changed)
		}
	}
	late := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	if got := listAll(t, late.Session); strings.Join(got, ",") != "v" {
		t.Errorf("a session after the changes lists %v, want [v]", got)
	}
	if got := atk45bText(t, late)("v"); got != "v1" {
		t.Errorf("v for a session after the changes = %q, want v1", got)
	}
}

// TestAttack46ListenerClosesThenAnother: a 2025-11-25 session that closes,
// then a change, then a new session: the new one hears the next change,
// and so does a new 2026-07-28 stream after the first one closed.
func TestAttack46ListenerClosesThenAnother(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-close"}, nil)
	if err := srv.Add(tool("a", reply("a"))); err != nil {
		t.Fatal(err)
	}
	opts, _ := atk46Hear(&mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	first := mcpkittest.NewInMemoryServer(t, srv, opts)
	url := mcpkittest.NewStatelessServer(t, srv, nil).URL
	raw := mcpkittest.RawClient{Endpoint: url}
	st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(); err != nil {
		t.Fatal(err)
	}
	first.Close()
	st.Close()
	srv.Remove("a")
	opts, heard := atk46Hear(&mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	mcpkittest.NewInMemoryServer(t, srv, opts)
	stream := atk45bListen(t, url, "")
	if err := srv.Add(tool("b", reply("b"))); err != nil {
		t.Fatal(err)
	}
	atk45bUntil(t, "a new session", heard, atk46Changed)
	atk45bUntil(t, "a new stream", stream, atk46Changed)
}

// TestAttack46WrapSessionBeforeWrap: a session connected to an SDK server
// before Wrap hears of mcpkit's changes.
func TestAttack46WrapSessionBeforeWrap(t *testing.T) {
	sdk := mcp.NewServer(&mcp.Implementation{Name: "atk46-wrapped"}, nil)
	heard := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		heard <- atk46Changed
	}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := sdk.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: mcpkittest.StatefulVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	srv := mcpkit.Wrap(sdk, nil)
	if err := srv.Add(tool("a", reply("a"))); err != nil {
		t.Fatal(err)
	}
	atk45bUntil(t, "a session older than Wrap, after Add", heard, atk46Changed)
	srv.Remove("a")
	atk45bUntil(t, "a session older than Wrap, after Remove", heard, atk46Changed)
	if got := listAll(t, cs); len(got) != 0 {
		t.Errorf("listed after Remove: %v", got)
	}
}

// TestAttack46NamesJudgedAfterUse: a name written in ForTools by a Use
// after the server first served is reported when it selects nothing, once:
// on a server with registered tools, and on one whose tools are all
// mounted or disabled (no registered tool has a chain to read it from).
func TestAttack46NamesJudgedAfterUse(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, srv *mcpkit.Server)
	}{
		{"registered", func(t *testing.T, srv *mcpkit.Server) {
			if err := srv.Add(tool("search", reply("s"))); err != nil {
				t.Fatal(err)
			}
		}},
		{"mounted only", func(t *testing.T, srv *mcpkit.Server) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			if err := child.Add(tool("search", reply("s"))); err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Mount("m", child); err != nil {
				t.Fatal(err)
			}
		}},
		{"disabled only", func(t *testing.T, srv *mcpkit.Server) {
			vis := &atk46Toggle{}
			vis.set("search", true)
			srv.SetVisibility(vis)
			if err := srv.Add(tool("search", reply("s"))); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-names"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c.setup(t, srv)
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			listAll(t, ts.Session) // the first serve
			srv.Use(mcpkit.ForTools(mcpkit.Named("serch"), middleware.Timeout(time.Minute, nil)))
			srv.Use(atk46Tag("x"))
			listAll(t, ts.Session)
			if n := strings.Count(logs.String(), `tool name \"serch\" selects no tool`); n != 1 {
				t.Errorf("serch, written in a Use after the first serve, reported %d times, want once:\n%s", n, logs.String())
			}
		})
	}
}

// TestAttack46DisabledToolNamesAtFirstServe: a tool enabled, then disabled
// before the server first serves: the name written in its own middleware,
// which selects nothing, is reported at the first serve (its chain was
// built while it was enabled).
func TestAttack46DisabledToolNamesAtFirstServe(t *testing.T) {
	var logs bytes.Buffer
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-first"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	tl := tool("deleteOrder", reply("d"))
	tl.Middleware = []mcpkit.Middleware{mcpkit.ForTools(mcpkit.Named("deleteOrdr"), middleware.Timeout(time.Minute, nil))}
	if err := srv.Add(tl, tool("other", reply("o"))); err != nil {
		t.Fatal(err)
	}
	vis := &atk46Toggle{}
	vis.set("deleteOrder", true)
	srv.SetVisibility(vis)
	listAll(t, mcpkittest.NewInMemoryServer(t, srv, nil).Session)
	if !strings.Contains(logs.String(), `tool name \"deleteOrdr\" selects no tool`) {
		// firstServe reads the names of every chain built, a disabled
		// tool's too.
		t.Error("a name in the own middleware of a tool disabled before the first serve is not reported")
	}
}

// TestAttack46ChurnWhilePaging removes and adds 300 tools one at a time
// (each round removes more than an eighth of the index: a compaction)
// while clients page through the server and a parent that mounts it, with
// cursors held across the changes, and call its tools. Every page walk
// holds each permanent tool once, in order; a call answers its own tool's
// text or the unknown-tool error; ChangedSince names each change.
func TestAttack46ChurnWhilePaging(t *testing.T) {
	const permanent, churn = 600, 300
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-churn"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 37}})
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-churn-parent"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 41}})
	if _, err := parent.Mount("m", srv); err != nil {
		t.Fatal(err)
	}
	pname := func(i int) string { return fmt.Sprintf("p%04d", i) }
	cname := func(i int) string { return fmt.Sprintf("c%04d", i) }
	for i := range permanent {
		if err := srv.Add(tool(pname(i), reply(pname(i)))); err != nil {
			t.Fatal(err)
		}
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil)
	ps := mcpkittest.NewInMemoryServer(t, parent, nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	walk := func(ts *mcpkittest.Server, prefix string) {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			var got []string
			cursor := ""
			for {
				res, err := ts.Session.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					t.Errorf("%s list: %v", prefix, err)
					return
				}
				for _, tl := range res.Tools {
					if strings.HasPrefix(tl.Name, prefix+"p") {
						got = append(got, tl.Name)
					}
				}
				if cursor = res.NextCursor; cursor == "" {
					break
				}
			}
			if len(got) != permanent || !slices.IsSorted(got) || slices.Compact(slices.Clone(got))[permanent-1] != prefix+pname(permanent-1) {
				t.Errorf("%s walk: %d permanent tools (sorted %v)", prefix, len(got), slices.IsSorted(got))
				return
			}
		}
	}
	call := func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			for _, name := range []string{pname(i % permanent), cname(i % churn)} {
				res, err := cs.CallTool(context.Background(), name, nil)
				switch {
				case err != nil && strings.Contains(err.Error(), unknownAnswer(name)) && name[0] == 'c':
				case err != nil:
					t.Errorf("call %s: %v", name, err)
					return
				case resultText(t, res) != name:
					t.Errorf("call %s answered %q", name, resultText(t, res))
					return
				}
			}
		}
	}
	wg.Add(3)
	go walk(cs, "")
	go walk(ps, "m_")
	go call()
	for round := range 3 {
		for i := range churn {
			gen := srv.Generation()
			if err := srv.Add(tool(cname(i), reply(cname(i)))); err != nil {
				t.Fatal(err)
			}
			if names, _, ok := srv.ChangedSince(gen); !ok || !slices.Equal(names, []string{cname(i)}) {
				t.Fatalf("round %d: ChangedSince after Add %s: %v, %v", round, cname(i), names, ok)
			}
		}
		for i := range churn {
			gen := srv.Generation()
			srv.Remove(cname(i))
			if names, _, ok := srv.ChangedSince(gen); !ok || !slices.Equal(names, []string{cname(i)}) {
				t.Fatalf("round %d: ChangedSince after Remove %s: %v, %v", round, cname(i), names, ok)
			}
		}
	}
	close(done)
	wg.Wait()
	if got := listAll(t, ps.Session); len(got) != permanent {
		t.Errorf("the parent lists %d tools at the end, want %d", len(got), permanent)
	}
}

// TestAttack46ParkedTaskAcrossChainChanges parks a task waiting for input,
// then changes what serves its tool's name: a Use (the chain is built
// again for the same tool), the Visibility disabling and enabling the tool
// (its entry made anew), or ReplaceDuplicates putting another tool in its
// place. The round after the input runs on the tool that made the task,
// with the chain of now, in the first two cases, and never on the new tool
// in the third; nor on the version below it after a RemoveVersion of the
// highest, on which the task was made.
func TestAttack46ParkedTaskAcrossChainChanges(t *testing.T) {
	for _, c := range []string{"Use", "disable and enable", "ReplaceDuplicates", "RemoveVersion"} {
		t.Run(c, func(t *testing.T) {
			caps := &mcp.ServerCapabilities{}
			caps.AddExtension(tasks.ExtensionID, map[string]any{})
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-task"}, &mcpkit.ServerOptions{ReplaceDuplicates: true, SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
			m := tasks.NewManager(nil)
			if err := m.Attach(srv); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Shutdown(context.Background()) })
			var oldRuns, newRuns atomic.Int64
			asker := func(label string, runs *atomic.Int64, version string) *mcpkit.Tool {
				tl := atk45bAsker(m, "ask", label, runs)
				tl.Version = version
				return tl
			}
			if err := srv.Add(asker("old", &oldRuns, "2")); err != nil {
				t.Fatal(err)
			}
			if c == "RemoveVersion" {
				if err := srv.Add(asker("v1", &newRuns, "1")); err != nil {
					t.Fatal(err)
				}
			}
			url := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: atk45bTokens, Token: "alice"}).URL
			call := atk45bCaller(t, url)
			res := call("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}})
			id, _ := res["taskId"].(string)
			if id == "" {
				t.Fatalf("tools/call: %v", res)
			}
			get := func() map[string]any { return call("tasks/get", map[string]any{"taskId": id}) }
			if got := atk45bAwait(t, get, "input_required"); got["status"] != "input_required" {
				t.Fatalf("ask: %v", got)
			}
			want := "old+tag"
			switch c {
			case "Use":
				srv.Use(atk46Tag("tag"))
			case "disable and enable":
				srv.Use(atk46Tag("tag"))
				vis := &atk46Toggle{}
				vis.set("ask", true)
				srv.SetVisibility(vis)
				vis.set("ask", false)
				srv.Refresh()
			case "ReplaceDuplicates":
				if err := srv.Add(asker("new", &newRuns, "2")); err != nil {
					t.Fatal(err)
				}
				want = ""
			case "RemoveVersion":
				if !srv.RemoveVersion("ask", "2") {
					t.Fatal("RemoveVersion")
				}
				want = ""
			}
			call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
			got := atk45bAwait(t, get, "")
			if want != "" && (got["status"] != "completed" || atk45bTaskText(got) != want) {
				t.Errorf("parked task after %s: %v; want completed with %q", c, got, want)
			}
			if want == "" && got["status"] != "failed" {
				t.Errorf("parked task after %s: %v; want failed", c, got)
			}
			if n := newRuns.Load(); n != 0 {
				t.Errorf("the new tool ran %d rounds of the old task", n)
			}
		})
	}
}

// TestAttack46UseOnMountedTools: a Use on the child and one on the parent,
// after the mount and after a call through it, both run for the mounted
// tool (the child's inside the parent's); a child tool disabled and
// enabled again runs them too.
func TestAttack46UseOnMountedTools(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-child"}, nil)
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-parent"}, nil)
			if err := child.Add(tool("x", reply("x"))); err != nil {
				t.Fatal(err)
			}
			if _, err := parent.Mount("m", child); err != nil {
				t.Fatal(err)
			}
			text := atk45bText(t, era.Connect(t, parent, nil))
			if got := text("m_x"); got != "x" {
				t.Fatalf("m_x = %q", got)
			}
			child.Use(atk46Tag("child"))
			parent.Use(atk46Tag("parent"))
			if got := text("m_x"); got != "x+child+parent" {
				t.Errorf("m_x after both Use = %q, want x+child+parent", got)
			}
			vis := &atk46Toggle{}
			vis.set("x", true)
			child.SetVisibility(vis)
			if got := text("m_x"); !strings.Contains(got, unknownAnswer("m_x")) {
				t.Errorf("m_x disabled in the child = %q", got)
			}
			vis.set("x", false)
			child.Refresh()
			if got := text("m_x"); got != "x+child+parent" {
				t.Errorf("m_x enabled again = %q, want x+child+parent", got)
			}
		})
	}
}

// TestAttack46MootLayerReportedOnce: the layer of a tool that can never
// take effect is reported once across changes that keep its chain: a new
// version of another name, the removal of a lower version of its own, a
// Refresh, a tool of another name replaced, and a Transform that fails
// (rolled back: it made no chain that serves).
func TestAttack46MootLayerReportedOnce(t *testing.T) {
	var logs bytes.Buffer
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46-moot"}, &mcpkit.ServerOptions{ReplaceDuplicates: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv.Use(middleware.Timeout(30*time.Second, nil))
	srv.Use(mcpkit.ForTools(mcpkit.Named("t"), middleware.Timeout(5*time.Minute, nil)))
	t1, t2 := tool("t", reply("t1")), tool("t", reply("t2"))
	t1.Version, t2.Version = "1", "2"
	if err := srv.Add(t1, t2, tool("o", reply("o"))); err != nil {
		t.Fatal(err)
	}
	text := atk45bText(t, mcpkittest.NewInMemoryServer(t, srv, nil))
	count := func() int { return strings.Count(logs.String(), "can never take effect") }
	if n := count(); n != 2 {
		t.Fatalf("reported %d times for t's two versions, want 2:\n%s", n, logs.String())
	}
	steps := []struct {
		what string
		do   func()
	}{
		{"Add of another name", func() {
			if err := srv.Add(tool("p", reply("p"))); err != nil {
				t.Fatal(err)
			}
		}},
		{"RemoveVersion of t 1", func() { srv.RemoveVersion("t", "1") }},
		{"Refresh", srv.Refresh},
		{"o replaced", func() {
			if err := srv.Add(tool("o", reply("o2"))); err != nil {
				t.Fatal(err)
			}
		}},
		{"a failed Transform", func() {
			if err := srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
				if tl.Name == "p" {
					return nil, errAtk46
				}
				c := *tl
				return &c, nil
			}); err == nil {
				t.Fatal("the Transform succeeded")
			}
		}},
	}
	for _, s := range steps {
		s.do()
		if n := count(); n != 2 {
			t.Errorf("after %s: reported %d times in all, want 2:\n%s", s.what, n, logs.String())
		}
		if got := text("t"); got != "t2" {
			t.Errorf("after %s: t = %q, want t2", s.what, got)
		}
	}
}

// atk46TaskProvider provides one tool, its task tool.
type atk46TaskProvider struct{ t *mcpkit.Tool }

func (p atk46TaskProvider) ListTools(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Tool, error) {
	if after >= p.t.Name {
		return nil, nil
	}
	return []*mcpkit.Tool{p.t}, nil
}

func (p atk46TaskProvider) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if name != p.t.Name {
		return nil, nil
	}
	return p.t, nil
}

// TestAttack46ParkedTaskThenProvided parks a task on a registered tool,
// removes it, so that a provider's tool of the same name is served (on the
// server, and on a parent through a mount): the round after the input
// never runs on the provided tool.
func TestAttack46ParkedTaskThenProvided(t *testing.T) {
	for _, mounted := range []bool{false, true} {
		t.Run(fmt.Sprint("mounted=", mounted), func(t *testing.T) {
			// The manager is the served server's: a mounted child's tools
			// make their tasks there.
			served, m := atk45bTasks(t)
			srv, name := served, "ask"
			if mounted {
				srv, name = mcpkit.NewServer(&mcp.Implementation{Name: "atk46-kid"}, nil), "kid_ask"
				if _, err := served.Mount("kid", srv); err != nil {
					t.Fatal(err)
				}
			}
			var oldRuns, newRuns atomic.Int64
			if err := srv.Add(atk45bAsker(m, "ask", "old", &oldRuns)); err != nil {
				t.Fatal(err)
			}
			srv.AddProvider(atk46TaskProvider{atk45bAsker(m, "ask", "provided", &newRuns)})
			url := mcpkittest.NewStatelessServer(t, served, &mcpkittest.Options{Tokens: atk45bTokens, Token: "alice"}).URL
			call := atk45bCaller(t, url)
			res := call("tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
			id, _ := res["taskId"].(string)
			if id == "" {
				t.Fatalf("tools/call: %v", res)
			}
			get := func() map[string]any { return call("tasks/get", map[string]any{"taskId": id}) }
			if got := atk45bAwait(t, get, "input_required"); got["status"] != "input_required" {
				t.Fatalf("ask: %v", got)
			}
			srv.Remove("ask")
			call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
			got := atk45bAwait(t, get, "")
			if got["status"] != "failed" {
				t.Errorf("the parked task after its tool gave way to a provided one: %v; want failed", got)
			}
			if n := newRuns.Load(); n != 0 {
				t.Errorf("the provided tool ran %d rounds of the old task", n)
			}
			// The name is served, by the provided tool: the failure above
			// was not for want of a tool.
			res = call("tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
			if id, _ := res["taskId"].(string); id == "" {
				t.Fatalf("tools/call after the Remove: %v", res)
			} else {
				get = func() map[string]any { return call("tasks/get", map[string]any{"taskId": id}) }
			}
			if got := atk45bAwait(t, get, "input_required"); got["status"] != "input_required" || newRuns.Load() != 1 {
				t.Errorf("a new task on %s after the Remove: %v, provided rounds %d; want the provided tool's", name, got, newRuns.Load())
			}
		})
	}
}
