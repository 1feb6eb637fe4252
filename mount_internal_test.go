package mcpkit

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A mount returns the same *Tool for the same tool, listed or looked up,
// so that the parent builds its chain once; a change of the child makes
// it anew, with the child's new chain.
func TestMountKeepsItsTools(t *testing.T) {
	_, parent := mountBenchServers(t)
	ctx := context.Background()
	c := &Request{Call: &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "m_t"}}}
	lookup := func() *Tool {
		st := parent.state.Load()
		es, _ := st.sources[0].offer(ctx, st, c, "m_t", false)
		if len(es) != 1 {
			t.Fatalf("the mount offers %d versions of m_t, want 1", len(es))
		}
		return es[0].tool
	}
	first, again := lookup(), lookup()
	st := parent.state.Load()
	listed := st.sources[0].page(ctx, st, &ListRequest{}, shelfTools, "", 0).items
	if first == nil || first != again || len(listed) != 1 || listed[0].def != first {
		t.Fatalf("lookups %p, %p and list %v: want one *Tool", first, again, listed)
	}
	if first.Name != "m_t" || first.ID() != (ToolID{Name: "t"}) || first.Validation != NoValidation || first.Middleware != nil {
		t.Errorf("mounted tool %q, identity %v, validation %v, %d middleware", first.Name, first.ID(), first.Validation, len(first.Middleware))
	}
	st.sources[0].(*mountView).m.child.Use(func(next Handler) Handler { return next })
	if after := lookup(); after == first {
		t.Error("after the child's Use, the mount still serves the tool with the old chain")
	}
}

// prefixURI inserts the namespace after the scheme's "://", or refuses.
func TestPrefixURI(t *testing.T) {
	for _, tc := range []struct{ uri, want string }{
		{"file:///readme", "file://docs//readme"},
		{"notes://{id}", "notes://docs/{id}"},
		{"ui://weather/view.html", "ui://docs/weather/view.html"},
		{"a+b.c-d://x://y", "a+b.c-d://docs/x://y"},
		{"urn:isbn:1", ""},
		{"{scheme}://x", ""},
		{"x{s}://x", ""},
		{"1a://x", ""},
		{"://x", ""},
	} {
		got, ok := prefixURI("docs", tc.uri)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("prefixURI(%q) = %q, %v; want %q", tc.uri, got, ok, tc.want)
		}
		if ok {
			if back, ok := unprefixURI("docs", got); !ok || back != tc.uri {
				t.Errorf("unprefixURI(%q) = %q, %v; want %q", got, back, ok, tc.uri)
			}
		}
	}
	for _, uri := range []string{"file:///readme", "file://doc/x", "file://docsx/y", "urn:docs/x"} {
		if got, ok := unprefixURI("docs", uri); ok {
			t.Errorf("unprefixURI(%q) = %q: not a URI the mount serves", uri, got)
		}
	}
}

// FuzzPrefixURI checks what paging mounted URIs rests on: prefixURI keeps
// the order of URIs, unprefixURI undoes it, and uriAfter maps any cursor
// to the child's, so that a mounted URI is after a cursor exactly when
// the child's URI is after the child's cursor.
func FuzzPrefixURI(f *testing.F) {
	for _, s := range [][2]string{
		{"file:///a", "file://ns/"}, {"a://x", "a://ns0"}, {"b://y", "a://z"}, {"file://q", "file:/"},
		{"zz://9", "y://"}, {"a://1", "a://l"}, {"a://", "a:/0"}, {"x+y://ns/z", "x+y://ns//"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, uri, after string) {
		const ns = "ns"
		p, ok := prefixURI(ns, uri)
		if !ok {
			return
		}
		if back, ok := unprefixURI(ns, p); !ok || back != uri {
			t.Fatalf("unprefixURI(prefixURI(%q)) = %q, %v", uri, back, ok)
		}
		if q, ok := prefixURI(ns, after); ok && (uri < after) != (p < q) {
			t.Fatalf("order of %q and %q not kept: %q, %q", uri, after, p, q)
		}
		if (p > after) != (uri > uriAfter(ns, after)) {
			t.Fatalf("uriAfter(%q) = %q: %q (as %q) is on the wrong side", after, uriAfter(ns, after), uri, p)
		}
	})
}
