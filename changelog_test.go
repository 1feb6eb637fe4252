package mcpkit_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/visibility"
)

func logTool(name, version string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool:    mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		Version: version,
		Handler: reply(name),
	}
}

// TestChangedSince makes changes of each kind and checks the names
// ChangedSince reports for each, and that the generation it answers for
// is the server's.
func TestChangedSince(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "log"}, nil)
	rules := visibility.New()
	rules.Attach(srv)
	if err := srv.Add(logTool("a", "1"), logTool("b", "1"), logTool("c", "")); err != nil {
		t.Fatal(err)
	}
	hide := visibility.DisableNames("b")
	steps := []struct {
		name   string
		change func()
		want   []string
	}{
		{"Add", func() { must(t, srv.Add(logTool("d", ""))) }, []string{"d"}},
		{"Add a version", func() { must(t, srv.Add(logTool("a", "2"))) }, []string{"a"}},
		{"RemoveVersion", func() { srv.RemoveVersion("a", "1") }, []string{"a"}},
		{"Remove", func() { srv.Remove("c", "never") }, []string{"c"}},
		{"Remove nothing", func() { srv.Remove("never") }, nil},
		{"DisableNames", func() { rules.Add(hide) }, []string{"b"}},
		{"enable again", func() { rules.Remove(hide) }, []string{"b"}},
		{"Disable by match", func() { rules.Add(visibility.Disable(func(t *mcpkit.Tool) bool { return t.Name == "d" })) }, []string{"d"}},
		{"ProviderChanged", func() { srv.ProviderChanged("") }, nil},
		{"Add two", func() { must(t, srv.Add(logTool("f", ""), logTool("e", ""))) }, []string{"e", "f"}},
		{"Remove two", func() { srv.Remove("f", "e") }, []string{"e", "f"}},
	}
	for _, step := range steps {
		before := srv.Generation()
		step.change()
		got, now, ok := srv.ChangedSince(before)
		if !ok || now != srv.Generation() || !slices.Equal(got, step.want) {
			t.Errorf("%s: ChangedSince = %v, %d, %v; want %v, %d, true", step.name, got, now, ok, step.want, srv.Generation())
		}
		if again, _, _ := srv.ChangedSince(now); len(again) != 0 {
			t.Errorf("%s: ChangedSince(now) = %v; want none", step.name, again)
		}
	}
	got, _, ok := srv.ChangedSince(0)
	if want := []string{"a", "b", "c", "d", "e", "f"}; !ok || !slices.Equal(got, want) {
		t.Errorf("ChangedSince(0) = %v, %v; want %v, true: every change once, sorted", got, ok, want)
	}
	if _, _, ok := srv.ChangedSince(srv.Generation() + 1); ok {
		t.Error("ChangedSince of a generation not reached: ok")
	}
	if tool, ok := srv.Lookup("a"); !ok || tool.Version != "2" {
		t.Errorf("Lookup(a) = %v, %v; want version 2", tool, ok)
	}
	if _, ok := srv.Lookup("b"); !ok {
		t.Error("Lookup(b): not found after it was enabled again")
	}
	if _, ok := srv.Lookup("d"); ok {
		t.Error("Lookup(d): found, though disabled")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestChangedSinceUnknown checks that ChangedSince says it does not know
// once the log no longer reaches back (more than 4,096 names changed
// since), and after one change of more names than that.
func TestChangedSinceUnknown(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "log"}, nil)
	start := srv.Generation()
	var recent uint64
	for i := range 4100 {
		if i == 4000 {
			recent = srv.Generation()
		}
		must(t, srv.Add(logTool(fmt.Sprintf("t%04d", i), "")))
	}
	if _, _, ok := srv.ChangedSince(start); ok {
		t.Error("ChangedSince after 4,100 changed names: ok; want not known")
	}
	if names, _, ok := srv.ChangedSince(recent); !ok || len(names) != 100 {
		t.Errorf("ChangedSince of the last 100 changes = %d names, %v; want 100, true", len(names), ok)
	}

	batch := make([]*mcpkit.Tool, 4097)
	for i := range batch {
		batch[i] = logTool(fmt.Sprintf("u%04d", i), "")
	}
	before := srv.Generation()
	must(t, srv.Add(batch...))
	if _, _, ok := srv.ChangedSince(before); ok {
		t.Error("ChangedSince across one change of 4,097 names: ok; want not known")
	}
	after := srv.Generation()
	must(t, srv.Add(logTool("late", "")))
	if names, _, ok := srv.ChangedSince(after); !ok || !slices.Equal(names, []string{"late"}) {
		t.Errorf("ChangedSince after the large change = %v, %v; want [late], true", names, ok)
	}
}

// TestChangedSinceTransform checks that a transform reports the names it
// changes, or that it does not know.
func TestChangedSinceTransform(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "log"}, nil)
	must(t, srv.Add(logTool("a", ""), logTool("b", "")))
	before := srv.Generation()
	must(t, srv.Transform(func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		if t.Name != "a" {
			return t, nil
		}
		t2 := t.Clone()
		t2.Name = "a2"
		return t2, nil
	}))
	// A transform builds every chain again: b may be reported too.
	names, _, ok := srv.ChangedSince(before)
	if ok && (!slices.IsSorted(names) || !slices.Contains(names, "a") || !slices.Contains(names, "a2")) {
		t.Errorf("ChangedSince after a rename = %v; want a and a2 among them, sorted", names)
	}
}
