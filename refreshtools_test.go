package mcpkit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/transform"
)

// askLog is a Visibility that disables the tools whose lineage has a name
// in off, and records the served names of the tools it is asked about.
type askLog struct {
	mu    sync.Mutex
	off   map[string]bool
	asked []string
}

func (v *askLog) Enabled(t *mcpkit.Tool) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.asked = append(v.asked, t.Name)
	for o := range t.Lineage() {
		if v.off[o.Name] {
			return false
		}
	}
	return true
}
func (v *askLog) PerRequest() bool                                          { return false }
func (v *askLog) Allowed(context.Context, *mcpkit.Tool, mcpkit.Caller) bool { return true }

// take returns the names asked about since the last take, sorted.
func (v *askLog) take() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := slices.Sorted(slices.Values(v.asked))
	v.asked = nil
	return out
}

func (v *askLog) set(name string, off bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.off[name] = off
}

// TestRefreshToolsAsksNamedToolsOnly checks that RefreshTools asks the
// Visibility about the tools whose lineage has one of the names, and about
// no other: the named tool, its alias and a tool derived from it, under the
// names a namespace serves them, among 1,000 others. Refresh asks about
// every tool. Counting the questions, rather than timing them, shows the
// work is in proportion to the change.
func TestRefreshToolsAsksNamedToolsOnly(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "refresh"}, nil)
	batch := make([]*mcpkit.Tool, 0, 1003)
	for i := range 1000 {
		batch = append(batch, benchTool(i))
	}
	target := benchTool(5000)
	target.Name = "target"
	alias, err := transform.Alias(target, "old_target", nil)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := transform.Tool(target, transform.Spec{Name: "target_lite"})
	if err != nil {
		t.Fatal(err)
	}
	batch = append(batch, target, alias, derived)
	if err := srv.Add(batch...); err != nil {
		t.Fatal(err)
	}
	if err := srv.Transform(transform.Namespace("ns", ".")); err != nil {
		t.Fatal(err)
	}
	v := &askLog{off: map[string]bool{}}
	srv.SetVisibility(v)
	if got := len(v.take()); got != 1003 {
		t.Fatalf("SetVisibility asked about %d tools, want 1003", got)
	}

	lineage := []string{"ns.old_target", "ns.target", "ns.target_lite"}
	for _, step := range []struct {
		off    bool
		served []string
	}{
		{true, nil},
		{false, lineage},
	} {
		v.set("target", step.off)
		srv.RefreshTools("target")
		if got := v.take(); !slices.Equal(got, lineage) {
			t.Errorf("RefreshTools(target) asked about %v, want %v", got, lineage)
		}
		for _, name := range lineage {
			_, ok := srv.Lookup(name)
			if want := slices.Contains(step.served, name); ok != want {
				t.Errorf("off=%v: %s served: %v, want %v", step.off, name, ok, want)
			}
		}
		if _, ok := srv.Lookup("ns.tool_000005"); !ok {
			t.Errorf("off=%v: ns.tool_000005 is no longer served", step.off)
		}
	}

	// A name along the lineage of the alias alone selects the alias alone.
	srv.RefreshTools("old_target")
	if got := v.take(); !slices.Equal(got, []string{"ns.old_target"}) {
		t.Errorf("RefreshTools(old_target) asked about %v, want [ns.old_target]", got)
	}
	// A name nothing has selects nothing; a removed tool is forgotten.
	srv.RefreshTools("nothing")
	srv.Remove("target_lite")
	srv.RefreshTools("target")
	if got, want := v.take(), []string{"ns.old_target", "ns.target"}; !slices.Equal(got, want) {
		t.Errorf("after Remove(target_lite): asked about %v, want %v", got, want)
	}

	srv.Refresh()
	if got := len(v.take()); got != 1002 {
		t.Errorf("Refresh asked about %d tools, want 1002", got)
	}
}

// TestRefreshToolsAfterTransform checks that the index of names along the
// lineages follows a change of the catalog transforms: a transform that
// renames tools later still has them found by their registered names and
// by their new ones.
func TestRefreshToolsAfterTransform(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "refresh"}, nil)
	if err := srv.Add(benchTool(1), benchTool(2)); err != nil {
		t.Fatal(err)
	}
	v := &askLog{off: map[string]bool{}}
	srv.SetVisibility(v)
	if err := srv.Transform(transform.Namespace("a", ".")); err != nil {
		t.Fatal(err)
	}
	v.take()
	for _, name := range []string{"tool_000001", "a.tool_000001"} {
		srv.RefreshTools(name)
		if got := v.take(); !slices.Equal(got, []string{"a.tool_000001"}) {
			t.Errorf("RefreshTools(%s) asked about %v, want [a.tool_000001]", name, got)
		}
	}
	v.set("a.tool_000002", true)
	srv.RefreshTools("a.tool_000002")
	if got := fmt.Sprint(names(srv.Tools())); got != "[a.tool_000001]" {
		t.Errorf("served %s, want [a.tool_000001]", got)
	}
}

func names(ts []*mcpkit.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}
