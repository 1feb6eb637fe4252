package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// layerLog records the layers a call passes through, in order.
type layerLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *layerLog) layer(name string) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			l.mu.Lock()
			l.seen = append(l.seen, name)
			l.mu.Unlock()
			return next.ServeTool(ctx, req)
		})
	}
}

func (l *layerLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.seen
	l.seen = nil
	return s
}

// mountedPair is a parent server that registers ping and mounts, under
// "docs", a child that registers search (arguments validated, with a
// middleware of its own), secret (for admins, by the child's rule), drop
// (disabled by the parent's rule, which names the child's tool) and off
// (disabled by the child's rule). Each server has a layer of its own in
// its server-wide chain.
func mountedPair(t *testing.T, log *layerLog) (parent, child *mcpkit.Server) {
	t.Helper()
	child = mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	child.Use(log.layer("child"))
	search := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "search", Description: "Search the docs.", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)},
		Middleware: []mcpkit.Middleware{log.layer("tool")},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			log.mu.Lock()
			log.seen = append(log.seen, "handler")
			log.mu.Unlock()
			var in struct{ Q string }
			if err := json.Unmarshal(req.Arguments, &in); err != nil {
				return nil, err
			}
			return textResult(fmt.Sprintf("%s: %s (%s)", req.Tool.Name, in.Q, req.Tool.ID())), nil
		}),
	}
	secret := okTool("secret")
	secret.Tags = []string{"secret"}
	for _, tl := range []*mcpkit.Tool{search, secret, okTool("drop"), okTool("off")} {
		if err := child.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	visibility.New(
		visibility.Require(mcpkit.Tagged("secret"), visibility.Scopes("admin")),
		visibility.Disable(mcpkit.Named("off")),
	).Attach(child)

	parent = mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	parent.Use(log.layer("parent"))
	if err := parent.Add(okTool("ping")); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Disable(mcpkit.Named("drop"))).Attach(parent)
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	return parent, child
}

// eras are the harness's HTTP servers of both protocol eras.
var eras = []struct {
	name    string
	connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
}{
	{"2025-11-25", mcpkittest.NewServer},
	{"2026-07-28", mcpkittest.NewStatelessServer},
}

// Through real clients of both eras over HTTP: the child's tools are
// listed under the namespace and callable; the parent's middleware runs
// outside the child's, which runs outside the tool's own; the child
// validates the arguments; tools hidden by either server's visibility, or
// never registered, get the unknown-tool answer.
func TestMount(t *testing.T) {
	for _, era := range eras {
		for _, token := range []string{"user", "admin"} {
			t.Run(era.name+"/"+token, func(t *testing.T) {
				log := &layerLog{}
				parent, _ := mountedPair(t, log)
				cs := era.connect(t, parent, &mcpkittest.Options{Tokens: identityTokens, Token: token}).Session

				want := []string{"docs_search", "ping"}
				if token == "admin" {
					want = []string{"docs_search", "docs_secret", "ping"}
				}
				if got := listAll(t, cs); !slices.Equal(got, want) {
					t.Errorf("tools/list = %v, want %v", got, want)
				}

				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "docs_search", Arguments: map[string]any{"q": "mount"}})
				if err != nil || res.IsError || onlyText(res) != "docs_search: mount (search)" {
					t.Fatalf("docs_search: %v, %v", res, err)
				}
				if got, want := log.take(), []string{"parent", "child", "tool", "handler"}; !slices.Equal(got, want) {
					t.Errorf("layers = %v, want %v (the parent's outermost)", got, want)
				}

				res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "docs_search", Arguments: map[string]any{"q": 7}})
				if err != nil || !res.IsError || !strings.Contains(onlyText(res), "q") {
					t.Errorf("docs_search with q=7: %v, %v; want the child's validation error naming q", res, err)
				}
				if got, want := log.take(), []string{"parent", "child", "tool"}; !slices.Equal(got, want) {
					t.Errorf("layers of an invalid call = %v, want %v (validated once, by the child, inside its chain)", got, want)
				}

				hidden := []string{"docs_drop", "docs_off", "docs_", "docs_nothing", "docs", "search", "drop"}
				if token == "user" {
					hidden = append(hidden, "docs_secret")
				} else if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "docs_secret"}); err != nil || onlyText(res) != "secret" {
					t.Errorf("admin calls docs_secret: %v, %v", res, err)
				}
				for _, name := range hidden {
					if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name}); !isUnknown(err, name) {
						t.Errorf("call %s: %v; want the unknown-tool answer", name, err)
					}
				}
			})
		}
	}
}

// A listening client of the parent, of either era, hears of a tool added
// to the child, removed from it, hidden by the child's visibility, and of
// the unmount; each time the parent's list has changed accordingly.
func TestMountListChanged(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := child.Add(okTool("a")); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if err := parent.Add(okTool("ping")); err != nil {
		t.Fatal(err)
	}
	unmount, err := parent.Mount("kid", child)
	if err != nil {
		t.Fatal(err)
	}
	stateless := httptest.NewServer(parent.HTTPHandler(nil))
	t.Cleanup(stateless.Close)
	sessions := httptest.NewServer(parent.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
	t.Cleanup(sessions.Close)
	listeners := map[string]*listener{
		"2026-07-28": listen(t, stateless.URL, "2026-07-28"),
		"2025-11-25": listen(t, sessions.URL, "2025-11-25"),
	}
	expect := func(what, want string) {
		t.Helper()
		for era, l := range listeners {
			l.wait(t, era+": "+what)
			if got := strings.Join(l.names(t), ","); got != want {
				t.Errorf("%s: after %s, tools/list = %s, want %s", era, what, got, want)
			}
		}
	}

	if err := child.Add(okTool("b")); err != nil {
		t.Fatal(err)
	}
	expect("child.Add(b)", "kid_a,kid_b,ping")
	res, err := listeners["2026-07-28"].cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "kid_b"})
	if err != nil || onlyText(res) != "b" {
		t.Errorf("kid_b after it was added: %v, %v", res, err)
	}

	child.Remove("a")
	expect("child.Remove(a)", "kid_b,ping")

	visibility.New(visibility.Disable(mcpkit.Named("b"))).Attach(child)
	expect("the child's visibility hid b", "ping")

	child.SetVisibility(nil)
	expect("the child's visibility was dropped", "kid_b,ping")

	unmount()
	expect("unmount", "ping")
	unmount() // a second call does nothing
	if err := child.Add(okTool("c")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listeners["2026-07-28"].names(t), ","); got != "ping" {
		t.Errorf("after unmount, a change of the child shows in the parent: %s", got)
	}
}

// One child mounted under two namespaces serves each tool under both
// names, with one identity; unmounting one leaves the other.
func TestMountTwice(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := child.Add(okTool("x")); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	unmountA, err := parent.Mount("a", child)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("b", child); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("b", mcpkit.NewServer(&mcp.Implementation{Name: "other"}, nil)); err == nil || !strings.Contains(err.Error(), `already mounted under "b"`) {
		t.Errorf("a second server under b: %v", err)
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := era.connect(t, parent, nil).Session
			if got := listAll(t, cs); !slices.Equal(got, []string{"a_x", "b_x"}) {
				t.Errorf("tools/list = %v, want [a_x b_x]", got)
			}
			for _, name := range []string{"a_x", "b_x"} {
				if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name}); err != nil || onlyText(res) != "x" {
					t.Errorf("%s: %v, %v", name, res, err)
				}
			}
		})
	}
	unmountA()
	cs := mcpkittest.NewStatelessServer(t, parent, nil).Session
	if got := listAll(t, cs); !slices.Equal(got, []string{"b_x"}) {
		t.Errorf("after unmounting a, tools/list = %v, want [b_x]", got)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "a_x"}); !isUnknown(err, "a_x") {
		t.Errorf("a_x after unmount: %v", err)
	}
	if _, err := parent.Mount("a", child); err != nil {
		t.Errorf("mounting again under a freed namespace: %v", err)
	}
}

// Pages of 4 across registered tools of the parent, sorting before,
// among and after the mounted ones, and the 23 tools of a child of which
// one is hidden from the caller: every tool once, in order, on both eras.
func TestMountPaging(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	var want []string
	for i := range 23 {
		tl := okTool(fmt.Sprintf("t%02d", i))
		if i == 11 {
			tl.Tags = []string{"secret"}
		} else {
			want = append(want, "m_"+tl.Name)
		}
		if err := child.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	visibility.New(visibility.Require(mcpkit.Tagged("secret"), visibility.Scopes("admin"))).Attach(child)
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 4}})
	for _, name := range []string{"a", "l", "m", "m_", "m_t05x", "ma", "n", "z"} {
		if err := parent.Add(okTool(name)); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	slices.Sort(want)
	if _, err := parent.Mount("m", child); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := era.connect(t, parent, &mcpkittest.Options{Tokens: identityTokens, Token: "user"}).Session
			if got := listAll(t, cs); !slices.Equal(got, want) {
				t.Errorf("tools/list =\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// A server mounted in a server mounted in a third: names nest, calls
// reach the innermost tool, and its changes reach the outermost.
func TestMountNested(t *testing.T) {
	inner := mcpkit.NewServer(&mcp.Implementation{Name: "inner"}, nil)
	if err := inner.Add(okTool("x")); err != nil {
		t.Fatal(err)
	}
	middle := mcpkit.NewServer(&mcp.Implementation{Name: "middle"}, nil)
	if _, err := middle.Mount("in", inner); err != nil {
		t.Fatal(err)
	}
	outer := mcpkit.NewServer(&mcp.Implementation{Name: "outer"}, nil)
	if _, err := outer.Mount("mid", middle); err != nil {
		t.Fatal(err)
	}
	sessions := httptest.NewServer(outer.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
	t.Cleanup(sessions.Close)
	l := listen(t, sessions.URL, "2025-11-25")
	if got := strings.Join(l.names(t), ","); got != "mid_in_x" {
		t.Errorf("tools/list = %s, want mid_in_x", got)
	}
	if err := inner.Add(okTool("y")); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "a tool added two mounts down")
	if got := strings.Join(l.names(t), ","); got != "mid_in_x,mid_in_y" {
		t.Errorf("tools/list = %s, want mid_in_x,mid_in_y", got)
	}
	if res, err := l.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mid_in_y"}); err != nil || onlyText(res) != "y" {
		t.Errorf("mid_in_y: %v, %v", res, err)
	}
}

// Mount refuses, with errors that say why, what would not work: a bad or
// taken namespace, a nil server, a server mounted into itself, and
// cycles of any length (which would otherwise never end a lookup).
func TestMountErrors(t *testing.T) {
	srv := func(name string) *mcpkit.Server { return mcpkit.NewServer(&mcp.Implementation{Name: name}, nil) }
	a, b, c := srv("a"), srv("b"), srv("c")
	for _, ns := range []string{"", "a b", "docs/", strings.Repeat("n", 127), strings.Repeat("n", 1<<20)} {
		_, err := a.Mount(ns, b)
		if !errors.Is(err, mcpkit.ErrInvalidToolName) || len(err.Error()) > 300 {
			t.Errorf("Mount(%.20q...): %.300v; want ErrInvalidToolName, clipped", ns, err)
		}
	}
	if _, err := a.Mount(strings.Repeat("n", 126), b); err != nil {
		t.Errorf("a namespace of 126 characters: %v", err)
	}
	if _, err := a.Mount("x", nil); err == nil || err.Error() != "mcpkit: Mount: nil server" {
		t.Errorf("Mount(nil) = %v", err)
	}
	if _, err := a.Mount("self", a); !errors.Is(err, mcpkit.ErrMountCycle) {
		t.Errorf("a into a: %v, want ErrMountCycle", err)
	}
	if _, err := b.Mount("c", c); err != nil { // c in b
		t.Fatal(err)
	}
	if _, err := a.Mount("b", b); err != nil { // b in a
		t.Fatal(err)
	}
	if _, err := c.Mount("a", a); !errors.Is(err, mcpkit.ErrMountCycle) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("a into c, inside b, inside a: %v, want ErrMountCycle", err)
	}
	if _, err := b.Mount("a", a); !errors.Is(err, mcpkit.ErrMountCycle) {
		t.Errorf("a into b, inside a: %v, want ErrMountCycle", err)
	}
	// What was refused changed nothing: c still changes, and a still lists.
	if err := c.Add(okTool("t")); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, a, nil).Session
	if got := listAll(t, cs); !slices.Equal(got, []string{"b_c_t"}) {
		t.Errorf("tools/list = %v, want [b_c_t]", got)
	}
}

// RemoveProvider takes a provider's tools out, once, and refuses what it
// cannot tell apart.
func TestRemoveProvider(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "p"}, nil)
	p := &oneTool{okTool("given")}
	srv.AddProvider(p)
	cs := mcpkittest.NewStatelessServer(t, srv, nil).Session
	if got := listAll(t, cs); !slices.Equal(got, []string{"given"}) {
		t.Fatalf("tools/list = %v", got)
	}
	gen := srv.Generation()
	if srv.RemoveProvider(&oneTool{okTool("given")}) {
		t.Error("RemoveProvider removed a provider it was not given")
	}
	if !srv.RemoveProvider(p) {
		t.Fatal("RemoveProvider(p) = false")
	}
	if srv.Generation() == gen {
		t.Error("the generation did not move on")
	}
	if srv.RemoveProvider(p) {
		t.Error("RemoveProvider(p) twice = true")
	}
	if srv.RemoveProvider(nil) || srv.RemoveProvider(funcProvider(nil)) {
		t.Error("RemoveProvider of nil or of an incomparable provider = true")
	}
	if got := listAll(t, cs); len(got) != 0 {
		t.Errorf("tools/list after RemoveProvider = %v", got)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "given"}); !isUnknown(err, "given") {
		t.Errorf("call after RemoveProvider: %v", err)
	}
}

// funcProvider is a Provider of a type that == cannot compare.
type funcProvider func()

func (funcProvider) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (funcProvider) LookupTool(context.Context, mcpkit.Caller, string) (*mcpkit.Tool, error) {
	return nil, nil
}

// Two servers mounted into each other at once: one mount succeeds, the
// other is refused as a cycle, and neither hangs.
func TestMountEachOtherAtOnce(t *testing.T) {
	for range 20 {
		a := mcpkit.NewServer(&mcp.Implementation{Name: "a"}, nil)
		b := mcpkit.NewServer(&mcp.Implementation{Name: "b"}, nil)
		errs := make(chan error, 2)
		go func() { _, err := a.Mount("b", b); errs <- err }()
		go func() { _, err := b.Mount("a", a); errs <- err }()
		e1, e2 := <-errs, <-errs
		if (e1 == nil) == (e2 == nil) || !errors.Is(errors.Join(e1, e2), mcpkit.ErrMountCycle) {
			t.Fatalf("mounting each other at once: %v and %v; want one success and one ErrMountCycle", e1, e2)
		}
	}
}

// Calls and lists through the parent while the child changes, is mounted
// and unmounted: every answer is a tool's or the unknown-tool answer, and
// nothing races (go test -race).
func TestMountWhileChanging(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := child.Add(okTool("stay")); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, parent, nil).Session
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 50 {
			name := fmt.Sprintf("t%d", i%5)
			if err := child.Add(okTool(name)); err != nil {
				t.Error(err)
				return
			}
			child.Use(func(next mcpkit.Handler) mcpkit.Handler { return next })
			child.Remove(name)
			unmount, err := parent.Mount("d", child)
			if err != nil {
				t.Error(err)
				return
			}
			unmount()
		}
		close(done)
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "c_stay"}); err != nil || onlyText(res) != "stay" {
			t.Fatalf("c_stay while the child changes: %v, %v", res, err)
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "c_t1"}); err != nil && !isUnknown(err, "c_t1") {
			t.Fatalf("c_t1 while it comes and goes: %v", err)
		}
		names := listAll(t, cs)
		if !slices.Contains(names, "c_stay") {
			t.Fatalf("tools/list while the child changes: %v", names)
		}
	}
	wg.Wait()
}

// A call of a mounted tool may pin a version of the child's tool, as a
// call of the child's own name may; a version the child does not have is
// unknown.
func TestMountVersionPin(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	for _, v := range []string{"1", "2"} {
		tl := okTool("v")
		tl.Version = v
		tl.Handler = reply("version " + v)
		if err := child.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, parent, nil).Session
	for pin, want := range map[string]string{"": "version 2", "1": "version 1", "2": "version 2"} {
		params := &mcp.CallToolParams{Name: "c_v"}
		if pin != "" {
			params.Meta = mcp.Meta{mcpkit.MetaKeyVersion: pin}
		}
		if res, err := cs.CallTool(t.Context(), params); err != nil || onlyText(res) != want {
			t.Errorf("c_v pinned to %q: %v, %v; want %q", pin, res, err, want)
		}
	}
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "c_v", Meta: mcp.Meta{mcpkit.MetaKeyVersion: "3"}})
	if !isUnknown(err, "c_v") {
		t.Errorf("c_v pinned to 3: %v; want the unknown-tool answer", err)
	}
}
