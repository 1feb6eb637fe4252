package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/skills"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestProbe37bHiddenSkillThroughMount: skills served by a child that
// hides one by its tag, mounted under "docs": at the parent, the hidden
// skill's SKILL.md and its other files read as URIs never served, and
// resources/list shows the visible skill alone.
func TestProbe37bHiddenSkillThroughMount(t *testing.T) {
	fsys := fstest.MapFS{
		"open/SKILL.md":       {Data: []byte("---\nname: open\ndescription: For all.\n---\nHello.\n")},
		"internal/SKILL.md":   {Data: []byte("---\nname: internal\ndescription: Staff only.\n---\nSee keys.txt.\n")},
		"internal/keys.txt":   {Data: []byte("hunter2\n")},
		"internal/a/SKILL.md": {Data: []byte("---\nname: a\ndescription: Nested.\n---\nNested.\n")},
	}
	set, err := skills.FromFS(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := skills.Serve(child, set, nil); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Require(func(r *mcpkit.Resource) bool { return r.HasTag(skills.TagPrefix + "internal") }, visibility.Scopes("staff"))).Attach(child)
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, parent, nil).Session
			ctx := context.Background()
			var listed []string
			for r, err := range cs.Resources(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, r.URI)
			}
			if len(listed) != 1 || listed[0] != "skill://docs/open/SKILL.md" {
				t.Errorf("listed %q", listed)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://docs/open/SKILL.md"}); err != nil {
				t.Errorf("the open skill: %v", err)
			}
			for _, uri := range []string{"skill://docs/internal/SKILL.md", "skill://docs/internal/keys.txt", "skill://docs/internal/a/SKILL.md"} {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				var wire *jsonrpc.Error
				if !errors.As(err, &wire) {
					t.Errorf("%s: %v", uri, err)
					continue
				}
				want, _ := json.Marshal(map[string]string{"uri": uri})
				if wire.Code != -32602 || wire.Message != "Resource not found" || string(wire.Data) != string(want) {
					t.Errorf("%s: %d %q %s", uri, wire.Code, wire.Message, wire.Data)
				}
			}
		})
	}
}
