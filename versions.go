package mcpkit

import (
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Keys of the _meta objects that carry tool versions.
const (
	// MetaKeyVersion, in a listed tool's _meta, is the version it is served
	// at. In a tools/call request's _meta, a string under this key pins the
	// call to that version of the tool: it runs that version's chain,
	// validated against that version's own schemas. A pinned version that
	// is not served (never registered, removed, disabled, or hidden from
	// the caller) is answered exactly like an unknown tool.
	MetaKeyVersion = "io.github.mcpkit/version"

	// MetaKeyVersions, in a listed tool's _meta, lists every version of the
	// tool that can be pinned, highest first.
	MetaKeyVersions = "io.github.mcpkit/versions"
)

// versionList returns the versions of ds, a name's enabled tools sorted
// highest first, or nil when none has a version: a name without versions
// lists no version _meta.
func versionList(ds []*Tool) []string {
	if ds[0].Version == "" {
		return nil // the highest is unversioned, so every one is
	}
	vs := make([]string, 0, len(ds))
	for _, d := range ds {
		if d.Version != "" {
			vs = append(vs, d.Version)
		}
	}
	return vs
}

// withVersionMeta returns a copy of d whose _meta also says its version and
// the versions of its name. d's own _meta is not modified.
func withVersionMeta(d *Tool, listed []string) *Tool {
	t := *d
	t.Meta = maps.Clone(d.Meta)
	if t.Meta == nil {
		t.Meta = mcp.Meta{}
	}
	if d.Version != "" {
		t.Meta[MetaKeyVersion] = d.Version
	}
	t.Meta[MetaKeyVersions] = listed
	return &t
}
