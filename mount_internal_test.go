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
	m := parent.state.Load().providers[0].(*mount)
	ctx := context.Background()
	c := &Request{Call: &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "m_t"}}}
	first, _ := m.LookupTool(ctx, c, "m_t")
	again, _ := m.LookupTool(ctx, c, "m_t")
	listed, _ := m.ListTools(ctx, &ListRequest{}, "", 0)
	if first == nil || first != again || len(listed) != 1 || listed[0] != first {
		t.Fatalf("lookups %p, %p and list %v: want one *Tool", first, again, listed)
	}
	if first.Name != "m_t" || first.ID() != (ToolID{Name: "t"}) || first.Validation != NoValidation || first.Middleware != nil {
		t.Errorf("mounted tool %q, identity %v, validation %v, %d middleware", first.Name, first.ID(), first.Validation, len(first.Middleware))
	}
	m.child.Use(func(next Handler) Handler { return next })
	after, _ := m.LookupTool(ctx, c, "m_t")
	if after == first {
		t.Error("after the child's Use, the mount still serves the tool with the old chain")
	}
}
