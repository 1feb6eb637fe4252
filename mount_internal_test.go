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
