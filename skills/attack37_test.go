package skills_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/skills"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestAttack37NestedHiddenSkillInManifest hides only the nested skill
// (pdf-forms/fill-form) by its own tag: skills/get of the visible skill
// around it must not advertise the hidden skill's files (URIs, sizes,
// digests) to a caller who cannot read them.
func TestAttack37NestedHiddenSkillInManifest(t *testing.T) {
	set := mustLoad(t, embeddedSkills(t), nil)
	inner, ok := set.Get("skill://pdf-forms/fill-form/SKILL.md")
	if !ok {
		t.Fatal("no nested skill")
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "skills", Version: "1"}, nil)
	if err := skills.Serve(srv, set, nil); err != nil {
		t.Fatal(err)
	}
	never := func(context.Context, mcpkit.Caller) bool { return false }
	visibility.New(visibility.Require(func(r *mcpkit.Resource) bool { return r.HasTag(skills.TagPrefix + inner.Name()) }, never)).Attach(srv)
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			guest := era.Connect(t, srv, skillsClient(t, nil)).Session
			if _, err := getSkill(guest, t.Context(), inner.URI()); !isInvalidParams(err) {
				t.Fatalf("skills/get of the hidden nested skill: %v; want -32602", err)
			}
			if _, err := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: inner.URI()}); !isInvalidParams(err) {
				t.Fatalf("read of the hidden nested SKILL.md: %v; want -32602", err)
			}
			outer, err := getSkill(guest, t.Context(), "skill://pdf-forms/SKILL.md")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range outer.Skill.Resources.Files {
				if strings.HasPrefix(f.URI, "skill://pdf-forms/fill-form/") {
					t.Errorf("skills/get of pdf-forms advertises %s (size %d, digest %s) of the hidden nested skill", f.URI, f.Size, f.Digest)
				}
			}
			for _, e := range mustList(t, guest) {
				for _, f := range e.Resources.Files {
					if strings.HasPrefix(f.URI, "skill://pdf-forms/fill-form/") {
						t.Errorf("skills/list advertises %s of the hidden nested skill", f.URI)
					}
				}
			}
		})
	}
}

func mustList(t *testing.T, cs *mcp.ClientSession) []skills.Entry {
	entries, _ := listAll(t, cs)
	return entries
}
