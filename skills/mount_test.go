package skills_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/skills"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestServeMounted serves the test skills on a child server mounted into a
// parent under "team", the parent answering for them through
// ServeOptions.Mounts, and checks through clients of each era: the
// parent's skills/list has the child's entries under skill://team/...,
// every file reads back through the mount with its digest and size,
// skills/get answers them; a skill the child hides from a caller is, at
// the parent, absent and -32602 like a URI never served.
func TestServeMounted(t *testing.T) {
	set := mustLoad(t, embeddedSkills(t), nil)
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child", Version: "1"}, nil)
	if err := skills.Serve(child, set, nil); err != nil {
		t.Fatal(err)
	}
	staff := func(_ context.Context, c mcpkit.Caller) bool {
		_, ok := c.ClientCapabilities().Extensions["example.com/staff"]
		return ok
	}
	visibility.New(visibility.Require(func(r *mcpkit.Resource) bool { return r.HasTag(skills.TagPrefix + "pdf-forms") }, staff)).Attach(child)
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent", Version: "1"}, nil)
	if _, err := parent.Mount("team", child); err != nil {
		t.Fatal(err)
	}
	if err := skills.Serve(parent, nil, &skills.ServeOptions{Mounts: map[string]*skills.Set{"team": set}, PageSize: 2}); err != nil {
		t.Fatal(err)
	}
	under := func(uri string) string { return "skill://team/" + strings.TrimPrefix(uri, "skill://") }
	staffCaps := &mcp.ClientCapabilities{}
	staffCaps.AddExtension("example.com/staff", nil)
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			ctx := t.Context()
			member := era.Connect(t, parent, skillsClient(t, staffCaps)).Session
			if _, ok := member.InitializeResult().Capabilities.Extensions[skills.ExtensionID]; !ok {
				t.Error("the parent does not declare the extension")
			}
			entries, _ := listAll(t, member)
			var want []skills.Entry
			for _, k := range set.Skills() {
				want = append(want, k.Entry().MapURIs(under))
			}
			if !slices.EqualFunc(entries, want, func(a, b skills.Entry) bool {
				return a.URI == b.URI && len(a.Resources.Files) == len(b.Resources.Files)
			}) {
				t.Fatalf("member's skills/list: %+v\nwant %+v", entries, want)
			}
			for _, e := range entries {
				got, err := getSkill(member, ctx, e.URI)
				if err != nil || got.Skill.URI != e.URI {
					t.Errorf("skills/get %s = %+v, %v", e.URI, got, err)
				}
				readChecked(t, member, e)
			}

			guest := era.Connect(t, parent, skillsClient(t, nil)).Session
			entries, _ = listAll(t, guest)
			var uris []string
			for _, e := range entries {
				uris = append(uris, e.URI)
			}
			if want := []string{"skill://team/acme/billing/refunds/SKILL.md", "skill://team/git-workflow/SKILL.md"}; !slices.Equal(uris, want) {
				t.Errorf("guest's skills/list = %q; want %q", uris, want)
			}
			_, hidden := getSkill(guest, ctx, "skill://team/pdf-forms/SKILL.md")
			_, unknown := getSkill(guest, ctx, "skill://team/nope/SKILL.md")
			if !isInvalidParams(hidden) || !isInvalidParams(unknown) {
				t.Errorf("guest's skills/get of a hidden skill: %v; of an unknown one: %v; want -32602 for both", hidden, unknown)
			}
		})
	}
	if err := skills.Serve(parent, nil, nil); err == nil {
		t.Error("Serve with no set and no mounts: no error")
	}
}
