package transform

import (
	"fmt"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/version"
)

// Namespace returns a catalog transform that serves every tool it is given
// under prefix+sep+name: with Namespace("gh", "_"), "search" is listed and
// called as "gh_search", and a call to "gh_search" reaches the handler of
// "search". Give it to [mcpkit.Server.Transform], alone for the whole
// catalog or within [Select] for some tools.
//
// The new names must be valid tool names (1 to 128 of A-Z a-z 0-9 _ - .):
// Namespace panics if prefix+sep has another character, and the Server
// refuses a tool whose namespaced name is too long.
func Namespace(prefix, sep string) mcpkit.CatalogTransform {
	if err := mcpkit.ValidateToolName(prefix + sep); err != nil {
		panic(fmt.Sprintf("transform: Namespace(%q, %q): %v", prefix, sep, err))
	}
	return func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		t2 := t.Clone()
		t2.Name = prefix + sep + t.Name
		return t2, nil
	}
}

// Versions returns a catalog transform that keeps the tool versions v with
// gte <= v < lt and leaves the others out; an empty bound is no bound.
// Versions are ordered as [mcpkit.Tool.Version] documents ("1.10" > "1.9",
// "2.0.0-rc.1" < "2.0.0"), and versions that rank alike ("2" and "2.0")
// are alike at a bound.
//
// Unversioned tools are always kept: a range selects among the versions of
// a versioned API, and a tool without versions is not one.
func Versions(gte, lt string) mcpkit.CatalogTransform {
	return func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		if t.Version == "" {
			return t, nil
		}
		if gte != "" && version.Rank(t.Version, gte) < 0 {
			return nil, nil
		}
		if lt != "" && version.Rank(t.Version, lt) >= 0 {
			return nil, nil
		}
		return t, nil
	}
}

// Select returns a catalog transform that applies tr to the tools match
// selects and passes the others through unchanged. match is given the tool
// as the transforms before this one made it; [mcpkit.Named],
// [mcpkit.Tagged] and [mcpkit.Not] make common ones. Select panics if
// match or tr is nil.
func Select(match func(*mcpkit.Tool) bool, tr mcpkit.CatalogTransform) mcpkit.CatalogTransform {
	if match == nil || tr == nil {
		panic("transform: Select: nil match or transform")
	}
	return func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		if !match(t) {
			return t, nil
		}
		return tr(t)
	}
}
