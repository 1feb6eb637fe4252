package mcpkit_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// The probes of this file attack the registry as session 46 left it after
// round one: one record per name (registered versions, served group,
// chains), compaction that shares clean chunks, and a change log that keeps
// a single name inline.

// atk46bRename is a catalog transform that serves the tools named in m
// under the name m gives, and the others as they are.
func atk46bRename(m map[string]string) mcpkit.CatalogTransform {
	return func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		to, ok := m[t.Name]
		if !ok {
			return t, nil
		}
		c := t.Clone()
		c.Name = to
		return c, nil
	}
}

// atk46bVersioned returns a tool named name, version ver, replying text.
func atk46bVersioned(name, ver, text string) *mcpkit.Tool {
	t := tool(name, reply(text))
	t.Version = ver
	return t
}

// atk46bGone reports whether got, what atk45bText gave, is a refusal.
func atk46bGone(got string) bool {
	return strings.HasPrefix(got, "error") || strings.Contains(strings.ToLower(got), "unknown") || strings.Contains(got, "not found")
}

// atk46bListed returns the names of cs's tools/list.
func atk46bListed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	return listAll(t, cs)
}

// atk46bVersionsListed returns the versions the tools/list entry of name
// names in its _meta, joined by commas, or "absent".
func atk46bVersionsListed(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != name {
			continue
		}
		vs, _ := tl.Meta[mcpkit.MetaKeyVersions].([]any)
		var out []string
		for _, v := range vs {
			out = append(out, fmt.Sprint(v))
		}
		return strings.Join(out, ",")
	}
	return "absent"
}

// TestAttack46bRenamesOntoOneName: two registered tools renamed onto one
// served name with different versions, and a third registered directly
// under that name, are served as one name of three versions; removing
// them one by one (Remove of the direct one, RemoveVersion and Remove of
// the renamed ones) serves the next highest, never a stale chain, and the
// name is unknown once all are gone. Added again, with a Use in between,
// they run the new middleware: nothing of the old records survives.
func TestAttack46bRenamesOntoOneName(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-onto"}, nil)
			srv.Use(atk46Tag("s"))
			if err := srv.Transform(atk46bRename(map[string]string{"a": "x", "b": "x"})); err != nil {
				t.Fatal(err)
			}
			add := func(ts ...*mcpkit.Tool) {
				t.Helper()
				if err := srv.Add(ts...); err != nil {
					t.Fatal(err)
				}
			}
			add(atk46bVersioned("a", "1", "a1"), atk46bVersioned("b", "2", "b2"), atk46bVersioned("x", "3", "x3"))
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			if got := atk46bListed(t, ts.Session); !slices.Equal(got, []string{"x"}) {
				t.Fatalf("listed %v, want [x]", got)
			}
			expect := func(when, want string) {
				t.Helper()
				got := text("x")
				if want == "" {
					if !atk46bGone(got) {
						t.Errorf("%s: x = %q, want it unknown", when, got)
					}
					return
				}
				if got != want {
					t.Errorf("%s: x = %q, want %q", when, got, want)
				}
			}
			expect("at first", "x3+s")
			versions := func(when, want string) {
				t.Helper()
				if got := atk46bVersionsListed(t, ts.Session, "x"); got != want {
					t.Errorf("%s: x lists versions %q, want %q", when, got, want)
				}
			}
			versions("at first", "3,2,1")
			if got := text("a"); !atk46bGone(got) {
				t.Errorf("a is called by its registered name: %q", got)
			}
			// A collision: another version 2 renamed onto x is refused, and
			// leaves everything served as it was.
			if err := srv.Add(atk46bVersioned("a", "2", "a2")); err == nil {
				t.Error("a version 2, renamed onto x version 2 of b, was accepted")
			}
			expect("after the refused collision", "x3+s")
			srv.Remove("x")
			expect("after Remove(x)", "b2+s")
			versions("after Remove(x)", "2,1")
			pinned := func(when, pin, want string) {
				t.Helper()
				got, err := callText(t, ts.Session, "x", pin, nil)
				if want == "" {
					if err == nil {
						t.Errorf("%s: x pinned to %s = %q, want an error", when, pin, got)
					}
					return
				}
				if err != nil || got != want {
					t.Errorf("%s: x pinned to %s = %q, %v; want %q", when, pin, got, err, want)
				}
			}
			pinned("after Remove(x)", "1", "a1+s")
			pinned("after Remove(x)", "3", "")
			srv.Use(atk46Tag("u"))
			expect("after Use", "b2+u+s")
			if !srv.RemoveVersion("b", "2") {
				t.Fatal("RemoveVersion(b, 2) = false")
			}
			expect("after RemoveVersion(b, 2)", "a1+u+s")
			versions("after RemoveVersion(b, 2)", "1")
			pinned("after RemoveVersion(b, 2)", "2", "")
			pinned("after RemoveVersion(b, 2)", "1", "a1+u+s")
			if srv.RemoveVersion("x", "1") {
				t.Error("RemoveVersion(x, 1) removed a, registered as a")
			}
			g := srv.Generation()
			srv.Remove("a")
			expect("after Remove(a)", "")
			if got, _, ok := srv.ChangedSince(g); !ok || !slices.Equal(got, []string{"x"}) {
				t.Errorf("ChangedSince after Remove(a) = %v, %v; want [x] (the served name)", got, ok)
			}
			if got := atk46bListed(t, ts.Session); len(got) != 0 {
				t.Errorf("listed %v after everything was removed", got)
			}
			srv.Use(atk46Tag("w"))
			add(atk46bVersioned("b", "2", "b2"))
			expect("b added again", "b2+w+u+s")
			add(atk46bVersioned("x", "3", "x3"), atk46bVersioned("a", "1", "a1"))
			expect("x added again", "x3+w+u+s")
			srv.Remove("x", "b")
			expect("x and b removed again", "a1+w+u+s")
			versions("x and b removed again", "1")
			pinned("x and b removed again", "3", "")
			pinned("x and b removed again", "1", "a1+w+u+s")
		})
	}
}

// TestAttack46bRenameOntoRegisteredName: transforms that swap two names
// (a served as b, b as a) keep each record whole while the other side
// changes: Remove of one serves the other under the swapped name alone.
func TestAttack46bRenameOntoRegisteredName(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-swap"}, &mcpkit.ServerOptions{ReplaceDuplicates: true})
			if err := srv.Transform(atk46bRename(map[string]string{"a": "b", "b": "a"})); err != nil {
				t.Fatal(err)
			}
			if err := srv.Add(tool("a", reply("A")), tool("b", reply("B"))); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			if got, want := text("a")+" "+text("b"), "B A"; got != want {
				t.Fatalf("a b = %q, want %q", got, want)
			}
			srv.Remove("a")
			if got := text("a"); got != "B" {
				t.Errorf("a after Remove(a) = %q, want B (b served as a)", got)
			}
			if got := text("b"); !atk46bGone(got) {
				t.Errorf("b after Remove(a) = %q, want unknown", got)
			}
			srv.Use(atk46Tag("u"))
			if err := srv.Add(tool("a", reply("A2"))); err != nil {
				t.Fatal(err)
			}
			if got, want := text("a")+" "+text("b"), "B+u A2+u"; got != want {
				t.Errorf("after a added again = %q, want %q", got, want)
			}
			// Replacing b (served as a) with ReplaceDuplicates.
			if err := srv.Add(tool("b", reply("B2"))); err != nil {
				t.Fatal(err)
			}
			if got, want := text("a")+" "+text("b"), "B2+u A2+u"; got != want {
				t.Errorf("after b replaced = %q, want %q", got, want)
			}
			srv.Remove("b")
			if got := text("a"); !atk46bGone(got) {
				t.Errorf("a after Remove(b) = %q, want unknown", got)
			}
			if got := listAll(t, ts.Session); !slices.Equal(got, []string{"b"}) {
				t.Errorf("listed %v, want [b]", got)
			}
		})
	}
}

// TestAttack46bVisibilityOnRenamed: a renamed tool disabled by the
// Visibility (a rule naming its served name), one of the two registered
// tools served under that name removed while disabled, then enabled
// again: the other is served, with its chain, and the moot layer of its
// chain is reported once only; RefreshTools by the registered name and by
// the served name both reach it.
func TestAttack46bVisibilityOnRenamed(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			var logs bytes.Buffer
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-vis"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			srv.Use(middleware.Timeout(30*time.Second, nil), atk46Tag("s"))
			srv.Use(mcpkit.ForTools(mcpkit.Named("x"), middleware.Timeout(5*time.Minute, nil)))
			if err := srv.Transform(atk46bRename(map[string]string{"a": "x", "b": "x"})); err != nil {
				t.Fatal(err)
			}
			if err := srv.Add(atk46bVersioned("a", "1", "a1"), atk46bVersioned("b", "2", "b2")); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			moot := func() int { return strings.Count(logs.String(), "can never take effect") }
			if got := text("x"); got != "b2+s" {
				t.Fatalf("x = %q", got)
			}
			if n := moot(); n != 2 {
				t.Fatalf("moot layer reported %d times for x's two versions, want 2:\n%s", n, logs.String())
			}
			rules := visibility.New()
			rules.Attach(srv)
			off := visibility.DisableNames("x")
			rules.Add(off)
			if got := text("x"); !atk46bGone(got) {
				t.Errorf("x disabled = %q", got)
			}
			if !srv.RemoveVersion("b", "2") {
				t.Fatal("RemoveVersion(b, 2)")
			}
			rules.Remove(off)
			if got := text("x"); got != "a1+s" {
				t.Errorf("x enabled again after b's removal = %q, want a1+s", got)
			}
			if n := moot(); n != 2 {
				t.Errorf("moot layer reported %d times in all, want 2 (a's chain was kept):\n%s", n, logs.String())
			}
			// By the registered name: a Visibility of its own, toggled.
			tog := &atk46Toggle{}
			srv.SetVisibility(tog)
			tog.set("x", true)
			srv.RefreshTools("a")
			if got := text("x"); !atk46bGone(got) {
				t.Errorf("x after RefreshTools(a) disabling it = %q", got)
			}
			tog.set("x", false)
			srv.RefreshTools("x")
			if got := text("x"); got != "a1+s" {
				t.Errorf("x after RefreshTools(x) enabling it = %q", got)
			}
			srv.Remove("a")
			if got := text("x"); !atk46bGone(got) {
				t.Errorf("x after Remove(a) = %q", got)
			}
			if err := srv.Add(atk46bVersioned("a", "1", "a1")); err != nil {
				t.Fatal(err)
			}
			if got := text("x"); got != "a1+s" {
				t.Errorf("x after a added again = %q", got)
			}
			if n := moot(); n != 3 {
				t.Errorf("moot layer reported %d times in all, want 3 (a fresh chain once):\n%s", n, logs.String())
			}
		})
	}
}

// TestAttack46bFailedTransformThenRemove: a Transform that fails on one
// tool, after renamed tools exist and run chains, loses nothing: calls run
// their old chains under the old names; a later Transform and Use work,
// and Remove after them leaves the others served.
func TestAttack46bFailedTransformThenRemove(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-fail"}, nil)
			srv.Use(atk46Tag("s"))
			if err := srv.Transform(atk46bRename(map[string]string{"a": "x"})); err != nil {
				t.Fatal(err)
			}
			if err := srv.Add(tool("a", reply("a")), tool("b", reply("b")), tool("c", reply("c"))); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			check := func(when string, want map[string]string) {
				t.Helper()
				for name, w := range want {
					got := text(name)
					if w == "" {
						if !atk46bGone(got) {
							t.Errorf("%s: %s = %q, want unknown", when, name, got)
						}
					} else if got != w {
						t.Errorf("%s: %s = %q, want %q", when, name, got, w)
					}
				}
			}
			check("at first", map[string]string{"x": "a+s", "b": "b+s", "c": "c+s", "a": ""})
			fail := func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
				if tl.Name == "c" {
					return nil, errAtk46
				}
				return tl, nil
			}
			if err := srv.Transform(atk46bRename(map[string]string{"b": "y"}), fail); err == nil {
				t.Fatal("the failing Transform succeeded")
			}
			check("after the failed Transform", map[string]string{"x": "a+s", "b": "b+s", "c": "c+s", "y": ""})
			srv.Use(atk46Tag("u"))
			check("after Use", map[string]string{"x": "a+u+s", "b": "b+u+s", "c": "c+u+s"})
			if err := srv.Transform(transform.Select(mcpkit.Named("x", "b"), transform.Namespace("n", "_"))); err != nil {
				t.Fatal(err)
			}
			check("after Namespace", map[string]string{"n_x": "a+u+s", "n_b": "b+u+s", "c": "c+u+s", "x": "", "b": ""})
			srv.Remove("a")
			check("after Remove(a)", map[string]string{"n_x": "", "n_b": "b+u+s", "c": "c+u+s"})
			if got := listAll(t, ts.Session); !slices.Equal(got, []string{"c", "n_b"}) {
				t.Errorf("listed %v, want [c n_b]", got)
			}
			if err := srv.Add(tool("a", reply("a2"))); err != nil {
				t.Fatal(err)
			}
			check("a added again", map[string]string{"n_x": "a2+u+s"})
		})
	}
}

// TestAttack46bMountRenamedThenRemove: a child that renames its tools,
// mounted in a parent: the parent serves the renamed names under the
// namespace; Remove in the child takes the tool out of the parent, and the
// other tool served under the same name in the child is served instead.
func TestAttack46bMountRenamedThenRemove(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-child"}, nil)
			if err := child.Transform(atk46bRename(map[string]string{"a": "x", "b": "x"})); err != nil {
				t.Fatal(err)
			}
			if err := child.Add(atk46bVersioned("a", "1", "a1"), atk46bVersioned("b", "2", "b2"), tool("k", reply("k"))); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-parent"}, nil)
			if _, err := parent.Mount("c", child); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, parent, nil)
			text := atk45bText(t, ts)
			if got := listAll(t, ts.Session); !slices.Equal(got, []string{"c_k", "c_x"}) {
				t.Fatalf("parent lists %v, want [c_k c_x]", got)
			}
			if got := text("c_x"); got != "b2" {
				t.Errorf("c_x = %q, want b2", got)
			}
			child.Remove("b")
			if got := text("c_x"); got != "a1" {
				t.Errorf("c_x after the child removed b = %q, want a1", got)
			}
			child.Remove("a")
			if got := text("c_x"); !atk46bGone(got) {
				t.Errorf("c_x after the child removed a = %q, want unknown", got)
			}
			if got := listAll(t, ts.Session); !slices.Equal(got, []string{"c_k"}) {
				t.Errorf("parent lists %v, want [c_k]", got)
			}
			child.Use(atk46Tag("u"))
			if err := child.Add(atk46bVersioned("a", "1", "a1")); err != nil {
				t.Fatal(err)
			}
			if got := text("c_x"); got != "a1+u" {
				t.Errorf("c_x after the child added a again = %q, want a1+u", got)
			}
		})
	}
}

// TestAttack46bCompactionUnderLoad: a registry of 1,000 tools, from which
// 300 (in random order, not adjacent names alone) are removed one at a
// time while clients page tools/list and call tools concurrently. Each
// page walk is sorted with no name twice; every call answers with its own
// name or as unknown; a cursor taken before the removals, followed after,
// gives every tool after it that remains, once, in order; and
// ChangedSince names exactly the removed ones.
func TestAttack46bCompactionUnderLoad(t *testing.T) {
	const total, removeN = 1000, 300
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-compact"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 97}})
	all := make([]*mcpkit.Tool, total)
	for i := range all {
		all[i] = tool(atk45bName(i), reply(atk45bName(i)))
	}
	if err := srv.Add(all...); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	cs := ts.Session
	first, cursor := atk45bPage(t, cs, "")
	if len(first) != 97 || cursor == "" {
		t.Fatalf("first page: %d tools, cursor %q", len(first), cursor)
	}
	gen := srv.Generation()
	rng := rand.New(rand.NewPCG(46, 2))
	order := rng.Perm(total)[:removeN]
	removed := map[string]bool{}
	var removedNames []string
	for _, i := range order {
		removed[atk45bName(i)] = true
		removedNames = append(removedNames, atk45bName(i))
	}
	slices.Sort(removedNames)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	// pages and calls count the readers' progress: the removals wait for
	// some between batches, so that they overlap (no clock involved).
	var pages, calls atomic.Int64
	errs := make(chan string, 64)
	report := func(s string) {
		select {
		case errs <- s:
		default:
		}
	}
	for w := range 2 {
		wg.Add(2)
		go func() { // pages the whole list, over and over
			defer wg.Done()
			for ctx.Err() == nil {
				var got []string
				cur := ""
				for {
					res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cur})
					if err != nil {
						if ctx.Err() == nil {
							report(fmt.Sprintf("lister %d: %v", w, err))
						}
						return
					}
					pages.Add(1)
					for _, tl := range res.Tools {
						got = append(got, tl.Name)
					}
					if cur = res.NextCursor; cur == "" {
						break
					}
				}
				if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
					report(fmt.Sprintf("lister %d: a walk is not sorted or names one twice", w))
				}
				if len(got) < total-removeN || len(got) > total {
					report(fmt.Sprintf("lister %d: a walk of %d tools", w, len(got)))
				}
			}
		}()
		go func() { // calls random tools
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for ctx.Err() == nil {
				name := atk45bName(r.IntN(total))
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
				calls.Add(1)
				if err != nil {
					if ctx.Err() == nil && !removed[name] {
						report(fmt.Sprintf("caller: %s: %v", name, err))
					}
					continue
				}
				if got := onlyText(res); res.IsError {
					if !removed[name] {
						report(fmt.Sprintf("caller: %s, never removed, refused: %s", name, got))
					}
				} else if got != name {
					report(fmt.Sprintf("caller: %s answered %q", name, got))
				}
			}
		}()
	}
	for j, i := range order {
		if j%20 == 0 {
			p, c := pages.Load(), calls.Load()
			for (pages.Load() < p+2 || calls.Load() < c+2) && len(errs) == 0 {
				runtime.Gosched()
			}
		}
		srv.Remove(atk45bName(i))
	}
	cancel()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	var rest []string
	for cur := cursor; cur != ""; {
		var page []string
		page, cur = atk45bPage(t, cs, cur)
		rest = append(rest, page...)
	}
	var want []string
	for i := 97; i < total; i++ {
		if !removed[atk45bName(i)] {
			want = append(want, atk45bName(i))
		}
	}
	if !slices.Equal(rest, want) {
		t.Errorf("the cursor from before: %d tools after it, want %d", len(rest), len(want))
	}
	names, now, ok := srv.ChangedSince(gen)
	if !ok || now != srv.Generation() || !slices.Equal(names, removedNames) {
		t.Errorf("ChangedSince: %d names, ok %v; want the %d removed", len(names), ok, len(removedNames))
	}
	for i := range total {
		if _, ok := srv.Lookup(atk45bName(i)); ok == removed[atk45bName(i)] {
			t.Errorf("Lookup(%s) = %v", atk45bName(i), ok)
		}
	}
}

// TestAttack46bChangedSinceModel checks ChangedSince against a model of
// the log across hundreds of changes of one name and of several (Add of a
// batch, Remove of a batch): from every generation reached, the names
// are those changed since, sorted, none twice; ok is false only for a
// generation before the last 4,096 names changed, or past now.
func TestAttack46bChangedSinceModel(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-log"}, nil)
	rng := rand.New(rand.NewPCG(46, 4))
	type step struct {
		gen   uint64
		names []string
	}
	var steps []step // each change's generation and the names it changed
	start := srv.Generation()
	present := map[string]bool{}
	name := func(i int) string { return fmt.Sprintf("n%03d", i) }
	// A reader asks while the changes are made (run with -race): each
	// answer is sorted, names none twice, and now never goes back.
	done := make(chan struct{})
	readerErr := make(chan string, 1)
	go func() {
		defer close(readerErr)
		last := uint64(0)
		for {
			select {
			case <-done:
				return
			default:
			}
			names, now, ok := srv.ChangedSince(start)
			if now < last {
				readerErr <- fmt.Sprintf("now went back: %d after %d", now, last)
				return
			}
			last = now
			if ok && (!slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names)) {
				readerErr <- fmt.Sprintf("an answer of %d names is not sorted or names one twice", len(names))
				return
			}
		}
	}()
	for range 1500 {
		k := 1
		if rng.IntN(4) == 0 {
			k = 2 + rng.IntN(40)
		}
		var batch []string
		seen := map[string]bool{}
		for len(batch) < k {
			n := name(rng.IntN(300))
			if !seen[n] {
				seen[n] = true
				batch = append(batch, n)
			}
		}
		// A batch is all added or all removed: those of its names in the
		// state it wants are left out, as they change nothing.
		adding := rng.IntN(2) == 0
		var changed []string
		for _, n := range batch {
			if present[n] != adding {
				changed = append(changed, n)
			}
		}
		if len(changed) == 0 {
			continue
		}
		if adding {
			var ts []*mcpkit.Tool
			for _, n := range changed {
				ts = append(ts, tool(n, reply(n)))
				present[n] = true
			}
			if err := srv.Add(ts...); err != nil {
				t.Fatal(err)
			}
		} else {
			srv.Remove(changed...)
			for _, n := range changed {
				present[n] = false
			}
		}
		slices.Sort(changed)
		steps = append(steps, step{srv.Generation(), changed})
	}
	close(done)
	if e := <-readerErr; e != "" {
		t.Error(e)
	}
	now := srv.Generation()
	// The oldest generation the model answers for: past it the names kept
	// exceed 4,096.
	kept, floor := 0, start
	for i := len(steps) - 1; i >= 0; i-- {
		if kept+len(steps[i].names) > 4096 {
			floor = steps[i].gen
			break
		}
		kept += len(steps[i].names)
	}
	if floor == start {
		t.Fatalf("the log never dropped a change: %d changes", len(steps))
	}
	for g := start; g <= now+1; g++ {
		got, gnow, ok := srv.ChangedSince(g)
		wantOK := g >= floor && g <= now
		if ok != wantOK {
			t.Fatalf("ChangedSince(%d): ok %v, want %v (floor %d, now %d)", g, ok, wantOK, floor, now)
		}
		if gnow != now {
			t.Fatalf("ChangedSince(%d): now %d, want %d", g, gnow, now)
		}
		if !ok {
			continue
		}
		set := map[string]bool{}
		for _, s := range steps {
			if s.gen > g {
				for _, n := range s.names {
					set[n] = true
				}
			}
		}
		want := slices.Sorted(func(yield func(string) bool) {
			for n := range set {
				if !yield(n) {
					return
				}
			}
		})
		if !slices.Equal(got, want) {
			t.Fatalf("ChangedSince(%d) = %d names %v, want %d %v", g, len(got), got, len(want), want)
		}
	}
}

// TestAttack46bReplaceMovesServedName: with ReplaceDuplicates and a
// transform that renames by description, a replacement of a registered
// tool moves it from one served name to another: the old name is unknown
// at once, the new one runs the new handler, and a second replacement
// moves it back; a replacement whose new served name is taken by another
// tool is refused and leaves the old one served.
func TestAttack46bReplaceMovesServedName(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-move"}, &mcpkit.ServerOptions{ReplaceDuplicates: true})
			srv.Use(atk46Tag("s"))
			if err := srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
				if tl.Description == "" {
					return tl, nil
				}
				c := tl.Clone()
				c.Name = tl.Description
				return c, nil
			}); err != nil {
				t.Fatal(err)
			}
			described := func(name, desc, text string) *mcpkit.Tool {
				tl := tool(name, reply(text))
				tl.Description = desc
				return tl
			}
			if err := srv.Add(described("a", "x", "one"), tool("k", reply("k"))); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			if got := text("x"); got != "one+s" {
				t.Fatalf("x = %q", got)
			}
			if err := srv.Add(described("a", "y", "two")); err != nil {
				t.Fatal(err)
			}
			if got := text("x"); !atk46bGone(got) {
				t.Errorf("x after a moved to y = %q, want unknown", got)
			}
			if got := text("y"); got != "two+s" {
				t.Errorf("y = %q, want two+s", got)
			}
			if err := srv.Add(described("a", "k", "three")); err == nil {
				t.Error("a replacement served as k, taken by k, was accepted")
			}
			if got := text("y") + " " + text("k"); got != "two+s k+s" {
				t.Errorf("after the refused replacement: y k = %q", got)
			}
			srv.Use(atk46Tag("u"))
			if err := srv.Add(described("a", "x", "four")); err != nil {
				t.Fatal(err)
			}
			if got := text("x") + " " + text("y"); !strings.HasPrefix(got, "four+u+s ") || !atk46bGone(text("y")) {
				t.Errorf("after a moved back to x: x y = %q", got)
			}
			if got := listAll(t, ts.Session); !slices.Equal(got, []string{"k", "x"}) {
				t.Errorf("listed %v, want [k x]", got)
			}
		})
	}
}

// TestAttack46bChangedSinceBigBatch: a batch of exactly 4,096 names is
// kept whole (ok, every name, once, sorted); the next change of one name
// drops it (ok false from before it); a batch of 4,097 names empties the
// log, and the generation it makes answers ok with nothing.
func TestAttack46bChangedSinceBigBatch(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-big"}, nil)
	batch := func(prefix string, n int) ([]*mcpkit.Tool, []string) {
		ts := make([]*mcpkit.Tool, n)
		names := make([]string, n)
		for i := range ts {
			names[i] = fmt.Sprintf("%s%05d", prefix, n-1-i) // given in reverse order
			ts[i] = tool(names[i], reply(names[i]))
		}
		slices.Sort(names)
		return ts, names
	}
	g0 := srv.Generation()
	ts, want := batch("a", 4096)
	if err := srv.Add(ts...); err != nil {
		t.Fatal(err)
	}
	got, now, ok := srv.ChangedSince(g0)
	if !ok || now != srv.Generation() || !slices.Equal(got, want) {
		t.Fatalf("after 4,096 names: %d names, ok %v", len(got), ok)
	}
	g1 := srv.Generation()
	srv.Remove("a00007")
	if _, _, ok := srv.ChangedSince(g0); ok {
		t.Error("ChangedSince from before 4,097 names changed: ok")
	}
	if got, _, ok := srv.ChangedSince(g1); !ok || !slices.Equal(got, []string{"a00007"}) {
		t.Errorf("ChangedSince after the batch: %v, %v", got, ok)
	}
	g2 := srv.Generation()
	ts, _ = batch("b", 4097)
	if err := srv.Add(ts...); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := srv.ChangedSince(g2); ok {
		t.Error("ChangedSince across a batch of 4,097: ok")
	}
	g3 := srv.Generation()
	if got, _, ok := srv.ChangedSince(g3); !ok || len(got) != 0 {
		t.Errorf("ChangedSince(now) after the big batch: %v, %v", got, ok)
	}
	srv.Remove("b00001", "a00001")
	if got, _, ok := srv.ChangedSince(g3); !ok || !slices.Equal(got, []string{"a00001", "b00001"}) {
		t.Errorf("ChangedSince after the big batch: %v, %v", got, ok)
	}
}

// TestAttack46bRuleByRegisteredName: rules of package visibility that
// name the registered names of tools renamed onto one served name (they
// select by lineage) disable each alone: x serves the other; a Remove
// while its rule holds, then the rule's removal, leave the record of x
// whole.
func TestAttack46bRuleByRegisteredName(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-rule"}, nil)
			if err := srv.Transform(atk46bRename(map[string]string{"a": "x", "b": "x"})); err != nil {
				t.Fatal(err)
			}
			if err := srv.Add(atk46bVersioned("a", "1", "a1"), atk46bVersioned("b", "2", "b2")); err != nil {
				t.Fatal(err)
			}
			rules := visibility.New()
			rules.Attach(srv)
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			offB := visibility.DisableNames("b")
			rules.Add(offB)
			if got := text("x"); got != "a1" {
				t.Errorf("x with b disabled = %q, want a1", got)
			}
			if got := atk46bVersionsListed(t, ts.Session, "x"); got != "1" {
				t.Errorf("x with b disabled lists versions %q, want 1", got)
			}
			offA := visibility.DisableNames("a")
			rules.Add(offA)
			if got := text("x"); !atk46bGone(got) {
				t.Errorf("x with a and b disabled = %q", got)
			}
			srv.Remove("b")
			rules.Remove(offB)
			if got := text("x"); !atk46bGone(got) {
				t.Errorf("x with a disabled, b removed = %q", got)
			}
			rules.Remove(offA)
			if got := text("x"); got != "a1" {
				t.Errorf("x with a enabled again = %q, want a1", got)
			}
			if err := srv.Add(atk46bVersioned("b", "2", "b2")); err != nil {
				t.Fatal(err)
			}
			if got := text("x"); got != "b2" {
				t.Errorf("x with b added again = %q, want b2", got)
			}
			if got := atk46bVersionsListed(t, ts.Session, "x"); got != "2,1" {
				t.Errorf("x with b added again lists versions %q, want 2,1", got)
			}
		})
	}
}

// TestAttack46bChurnRenamedWhileCalling changes a server whose transforms
// rename tools onto shared names (Add, Remove, RemoveVersion, Visibility,
// Use, Transform, some failing) while clients call and list (run with
// -race): each call answers with the text of a tool served under the name
// called, with server tags, or as unknown; lists are sorted without a
// name twice. At the end, after every tool is removed and added again,
// each name serves what was added last.
func TestAttack46bChurnRenamedWhileCalling(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-churn"}, &mcpkit.ServerOptions{ReplaceDuplicates: true})
	tog := &atk46Toggle{}
	srv.SetVisibility(tog)
	if err := srv.Transform(atk46bRename(map[string]string{"a": "x", "b": "x", "c": "y"})); err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c", "x", "y"}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	cs := ts.Session
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var progress atomic.Int64
	errs := make(chan string, 16)
	report := func(s string) {
		select {
		case errs <- s:
		default:
		}
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for ctx.Err() == nil {
				name := []string{"x", "y", "a", "b", "c"}[r.IntN(5)]
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
				progress.Add(1)
				if err != nil {
					if ctx.Err() == nil && !strings.Contains(err.Error(), "unknown tool") {
						report(fmt.Sprintf("call %s: %v", name, err))
					}
					continue
				}
				got := onlyText(res)
				if res.IsError {
					continue
				}
				// The text is the registered name and version, then tags.
				base, _, _ := strings.Cut(got, "+")
				reg, _, _ := strings.Cut(base, "@")
				if served := map[string]string{"a": "x", "b": "x", "c": "y"}[reg]; served != name && !(served == "" && reg == name) {
					report(fmt.Sprintf("call %s answered %q", name, got))
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			got, err := listAllCtx(ctx, cs)
			progress.Add(1)
			if err != nil {
				if ctx.Err() == nil {
					report(fmt.Sprintf("list: %v", err))
				}
				return
			}
			if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				report(fmt.Sprintf("list %v", got))
			}
		}
	}()
	rng := rand.New(rand.NewPCG(46, 8))
	mk := func(n, v string) *mcpkit.Tool { return atk46bVersioned(n, v, n+"@"+v) }
	for step := range 300 {
		if step%10 == 0 {
			p := progress.Load()
			for progress.Load() < p+3 && len(errs) == 0 {
				runtime.Gosched()
			}
		}
		n, v := names[rng.IntN(len(names))], []string{"", "1", "2"}[rng.IntN(3)]
		switch rng.IntN(8) {
		case 0, 1, 2:
			_ = srv.Add(mk(n, v)) // collisions are refused
		case 3:
			srv.Remove(n)
		case 4:
			srv.RemoveVersion(n, v)
		case 5:
			tog.set(n, rng.IntN(2) == 0)
			srv.RefreshTools(n)
		case 6:
			if step%50 == 6 {
				srv.Use(atk46Tag(fmt.Sprint(step)))
			}
		case 7:
			_ = srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
				if tl.Name == n && tl.Version == "2" {
					return nil, errAtk46 // fails when such a tool is registered
				}
				return tl, nil
			})
		}
	}
	cancel()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	srv.Remove(names...)
	for _, n := range names {
		tog.set(n, false)
	}
	srv.Refresh()
	if got := listAll(t, cs); len(got) != 0 {
		t.Errorf("listed %v after removing everything", got)
	}
	if err := srv.Add(mk("a", "1"), mk("c", "")); err != nil {
		t.Fatal(err)
	}
	text := atk45bText(t, ts)
	if got := text("x"); !strings.HasPrefix(got, "a@1") {
		t.Errorf("x = %q, want a@1 and tags", got)
	}
	if got := text("y"); !strings.HasPrefix(got, "c@") {
		t.Errorf("y = %q, want c@ and tags", got)
	}
}

// listAllCtx lists every tool of cs, following cursors, under ctx.
func listAllCtx(ctx context.Context, cs *mcp.ClientSession) ([]string, error) {
	var names []string
	for cur := ""; ; {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cur})
		if err != nil {
			return nil, err
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if cur = res.NextCursor; cur == "" {
			return names, nil
		}
	}
}

// TestAttack46bMootOnceAcrossReplace: of two tools renamed onto one name,
// each with a layer that can never take effect, replacing one reports its
// new chain once, and the other's chain, kept, is not reported again; a
// failed Transform reports nothing; a successful one builds every chain
// again (each reported once more).
func TestAttack46bMootOnceAcrossReplace(t *testing.T) {
	var logs bytes.Buffer
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-moot"}, &mcpkit.ServerOptions{ReplaceDuplicates: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv.Use(middleware.Timeout(30*time.Second, nil))
	srv.Use(mcpkit.ForTools(mcpkit.Named("x"), middleware.Timeout(5*time.Minute, nil)))
	if err := srv.Transform(atk46bRename(map[string]string{"a": "x", "b": "x"})); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(atk46bVersioned("a", "1", "a1"), atk46bVersioned("b", "2", "b2")); err != nil {
		t.Fatal(err)
	}
	text := atk45bText(t, mcpkittest.NewInMemoryServer(t, srv, nil))
	count := func() int { return strings.Count(logs.String(), "can never take effect") }
	step := func(what string, want int, wantX string) {
		t.Helper()
		if n := count(); n != want {
			t.Errorf("after %s: reported %d times in all, want %d:\n%s", what, n, want, logs.String())
		}
		if got := text("x"); got != wantX {
			t.Errorf("after %s: x = %q, want %q", what, got, wantX)
		}
	}
	step("Add", 2, "b2")
	if err := srv.Add(atk46bVersioned("a", "1", "a1new")); err != nil {
		t.Fatal(err)
	}
	step("a replaced", 3, "b2")
	if err := srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) { return nil, errAtk46 }); err == nil {
		t.Fatal("the failing Transform succeeded")
	}
	step("a failed Transform", 3, "b2")
	srv.RemoveVersion("b", "2")
	step("b removed", 3, "a1new")
	if err := srv.Transform(transform.Versions("", "")); err != nil {
		t.Fatal(err)
	}
	step("a Transform", 4, "a1new")
}

// TestAttack46bRenamedOverMounted: a registered tool renamed onto the name
// a mounted server's tool is served under wins over it while registered;
// removed, the mounted tool is served again; added again, it wins again.
func TestAttack46bRenamedOverMounted(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-child"}, nil)
			if err := child.Add(tool("k", reply("mounted"))); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-parent"}, nil)
			if _, err := parent.Mount("c", child); err != nil {
				t.Fatal(err)
			}
			if err := parent.Transform(atk46bRename(map[string]string{"a": "c_k"})); err != nil {
				t.Fatal(err)
			}
			if err := parent.Add(tool("a", reply("registered"))); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, parent, nil)
			text := atk45bText(t, ts)
			if got := text("c_k"); got != "registered" {
				t.Errorf("c_k = %q, want registered", got)
			}
			parent.Remove("a")
			if got := text("c_k"); got != "mounted" {
				t.Errorf("c_k after Remove(a) = %q, want mounted", got)
			}
			if got := listAll(t, ts.Session); !slices.Equal(got, []string{"c_k"}) {
				t.Errorf("listed %v, want [c_k]", got)
			}
			if err := parent.Add(tool("a", reply("registered2"))); err != nil {
				t.Fatal(err)
			}
			if got := text("c_k"); got != "registered2" {
				t.Errorf("c_k after a added again = %q, want registered2", got)
			}
			child.Remove("k")
			parent.Remove("a")
			if got := text("c_k"); !atk46bGone(got) {
				t.Errorf("c_k after both removed = %q", got)
			}
		})
	}
}

// TestAttack46bAgainstModel runs random changes on a server whose
// transform renames tools onto shared names, and after each compares what
// a client lists (names, and the versions each lists in _meta) and what
// each name answers, unpinned and pinned to each version, with a model:
// registered tools by name and version, renamed, less the served names a
// Visibility disables, the highest version served.
func TestAttack46bAgainstModel(t *testing.T) {
	for seed := range uint64(atk46bModelSeeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { atk46bAgainstModel(t, seed) })
	}
}

// atk46bModelSeeds is how many runs TestAttack46bAgainstModel makes.
var atk46bModelSeeds = 3

// atk46bAgainstModel is one run of TestAttack46bAgainstModel.
func atk46bAgainstModel(t *testing.T, seed uint64) {
	rename := map[string]string{"a": "x", "b": "x", "c": "y", "y": "c"}
	servedAs := func(n string) string {
		if to, ok := rename[n]; ok {
			return to
		}
		return n
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-model"}, &mcpkit.ServerOptions{ReplaceDuplicates: true})
	tog := &atk46Toggle{}
	srv.SetVisibility(tog)
	if err := srv.Transform(atk46bRename(rename)); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	// A parent mounts the server: it serves the same under m_.
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "atk46b-model-parent"}, nil)
	if _, err := parent.Mount("m", srv); err != nil {
		t.Fatal(err)
	}
	pts := mcpkittest.NewInMemoryServer(t, parent, nil)
	names := []string{"a", "b", "c", "x", "y"}
	vers := []string{"1", "2", "3"}
	reg := map[[2]string]string{} // registered: text by name and version
	off := map[string]bool{}      // served names disabled
	tags := ""                    // the tags the Use calls add, innermost first
	rng := rand.New(rand.NewPCG(46, 10+seed))
	for step := range 250 {
		n, v := names[rng.IntN(len(names))], vers[rng.IntN(len(vers))]
		var what string
		switch rng.IntN(9) {
		case 7:
			what = "Transform"
			if err := srv.Transform(transform.Versions("", "")); err != nil { // every tool as it is
				t.Fatal(err)
			}
		case 8:
			if len(reg) == 0 {
				continue // it would succeed, and refuse every Add after
			}
			what = "failing Transform"
			if err := srv.Transform(func(*mcpkit.Tool) (*mcpkit.Tool, error) { return nil, errAtk46 }); err == nil {
				t.Fatalf("step %d: a Transform failing on every tool succeeded", step)
			}
		case 0, 1, 2:
			text := fmt.Sprintf("%s@%s#%d", n, v, step)
			what = "Add " + text
			taken := false
			for k := range reg {
				if k[1] == v && k[0] != n && servedAs(k[0]) == servedAs(n) {
					taken = true
				}
			}
			err := srv.Add(atk46bVersioned(n, v, text))
			if (err != nil) != taken {
				t.Fatalf("step %d: %s: error %v, want one: %v", step, what, err, taken)
			}
			if !taken {
				reg[[2]string{n, v}] = text
			}
		case 3:
			what = "Remove " + n
			srv.Remove(n)
			for k := range reg {
				if k[0] == n {
					delete(reg, k)
				}
			}
		case 4:
			what = "RemoveVersion " + n + "@" + v
			_, had := reg[[2]string{n, v}]
			if got := srv.RemoveVersion(n, v); got != had {
				t.Fatalf("step %d: %s = %v, want %v", step, what, got, had)
			}
			delete(reg, [2]string{n, v})
		case 5:
			s := servedAs(names[rng.IntN(len(names))])
			off[s] = !off[s]
			what = fmt.Sprintf("%s off %v", s, off[s])
			tog.set(s, off[s])
			if rng.IntN(2) == 0 {
				srv.RefreshTools(s)
			} else {
				srv.Refresh()
			}
		case 6:
			if step%5 != 0 {
				continue
			}
			tag := fmt.Sprint(step)
			what = "Use " + tag
			srv.Use(atk46Tag(tag))
			tags = "+" + tag + tags
		}
		// The model: served name -> versions, highest first, and texts.
		model := map[string]map[string]string{}
		for k, text := range reg {
			s := servedAs(k[0])
			if off[s] {
				continue
			}
			if model[s] == nil {
				model[s] = map[string]string{}
			}
			model[s][k[1]] = text
		}
		wantNames := slices.Sorted(func(yield func(string) bool) {
			for s := range model {
				if !yield(s) {
					return
				}
			}
		})
		res, err := ts.Session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var gotNames []string
		for _, tl := range res.Tools {
			gotNames = append(gotNames, tl.Name)
			vs, _ := tl.Meta[mcpkit.MetaKeyVersions].([]any)
			var got []string
			for _, x := range vs {
				got = append(got, fmt.Sprint(x))
			}
			want := slices.Sorted(func(yield func(string) bool) {
				for v := range model[tl.Name] {
					if !yield(v) {
						return
					}
				}
			})
			slices.Reverse(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d (%s): %s lists versions %v, want %v", step, what, tl.Name, got, want)
			}
		}
		if !slices.Equal(gotNames, wantNames) {
			t.Fatalf("step %d (%s): listed %v, want %v", step, what, gotNames, wantNames)
		}
		var mounted []string
		for _, s := range wantNames {
			mounted = append(mounted, "m_"+s)
		}
		if got := listAll(t, pts.Session); !slices.Equal(got, mounted) {
			t.Fatalf("step %d (%s): the parent lists %v, want %v", step, what, got, mounted)
		}
		for _, s := range []string{"a", "b", "c", "x", "y"} {
			got, err := callText(t, ts.Session, s, "", nil)
			vs := model[s]
			if len(vs) == 0 {
				if err == nil {
					t.Fatalf("step %d (%s): %s answered %q, want unknown", step, what, s, got)
				}
				if got, err := callText(t, pts.Session, "m_"+s, "", nil); err == nil {
					t.Fatalf("step %d (%s): the parent's m_%s answered %q, want unknown", step, what, s, got)
				}
				continue
			}
			top := slices.Max(slices.Collect(maps.Keys(vs)))
			if err != nil || got != vs[top]+tags {
				t.Fatalf("step %d (%s): %s = %q, %v; want %q", step, what, s, got, err, vs[top]+tags)
			}
			if got, err := callText(t, pts.Session, "m_"+s, "", nil); err != nil || got != vs[top]+tags {
				t.Fatalf("step %d (%s): the parent's m_%s = %q, %v; want %q", step, what, s, got, err, vs[top]+tags)
			}
			for _, v := range vers {
				got, err := callText(t, ts.Session, s, v, nil)
				if text, ok := vs[v]; ok != (err == nil) || ok && got != text+tags {
					t.Fatalf("step %d (%s): %s pinned to %s = %q, %v; want %q, %v", step, what, s, v, got, err, text+tags, ok)
				}
			}
		}
	}
}
