package mcpkittest

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/defdiff"
)

// Fingerprint returns a fingerprint of the definition that clients see of
// a tool, of the form "sha256:<64 hex digits>". Two definitions have the
// same fingerprint when they marshal to the same JSON value once
// canonicalized: object keys sorted, numbers written one way (1, 1.0 and
// 1e0 are the same number), insignificant whitespace dropped, and the hints
// of the annotations that equal the protocol's defaults left out (so a
// definition without annotations and one with readOnlyHint: false match,
// whether or not the SDK omits false hints). The schemas may be any value
// that marshals to JSON: a *jsonschema.Schema, a map, a json.RawMessage.
//
// The fingerprint covers everything a tools/list answer carries for the
// tool: name, title, description, input and output schemas, annotations,
// icons and _meta. Icons and _meta are in, because clients show or act on
// them (a changed icon URL or UI resource in _meta is as much a silent
// change as a changed description), and a client that pins a definition
// pins all of it. Array order counts: "required": ["a", "b"] and ["b", "a"]
// have different fingerprints, which [Compare] reports as equivalent.
//
// Fingerprint returns "" for a nil def or one that does not marshal to a
// JSON object.
func Fingerprint(def *mcp.Tool) string {
	canon, err := canonical(def)
	if err != nil {
		return ""
	}
	return defdiff.Fingerprint(canon)
}

// canonical returns the canonical JSON of def.
func canonical(def *mcp.Tool) ([]byte, error) {
	if def == nil {
		return nil, fmt.Errorf("mcpkittest: nil tool definition")
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return nil, fmt.Errorf("mcpkittest: tool %q: %w", def.Name, err)
	}
	return defdiff.Definition(raw)
}

// A ChangeKind names what a [Change] did to a tool definition. Whether it
// is breaking depends on where it happened: see [Compare].
type ChangeKind string

// The kinds of change that [Compare] reports.
const (
	ToolAdded   ChangeKind = "tool-added"   // a tool that was not there (old is nil)
	ToolRemoved ChangeKind = "tool-removed" // a tool that is gone (new is nil)
	ToolRenamed ChangeKind = "tool-renamed" // the name changed

	// MetadataChanged: a title, a description, icons, _meta, or an
	// annotation of a schema (examples, deprecated, $comment, ...).
	MetadataChanged ChangeKind = "metadata-changed"
	// HintChanged: readOnlyHint, destructiveHint, idempotentHint or
	// openWorldHint.
	HintChanged ChangeKind = "hint-changed"

	PropertyAdded   ChangeKind = "property-added"   // a new argument, or a new property of a nested object or of the output
	PropertyRemoved ChangeKind = "property-removed" // an argument or a property removed
	RequiredAdded   ChangeKind = "required-added"   // an existing property became required
	RequiredRemoved ChangeKind = "required-removed" // a required property became optional

	TypeNarrowed ChangeKind = "type-narrowed" // fewer types: ["string", "null"] to "string", "number" to "integer"
	TypeWidened  ChangeKind = "type-widened"  // more types
	TypeChanged  ChangeKind = "type-changed"  // some types gone, others new

	EnumNarrowed ChangeKind = "enum-narrowed" // enum or const values removed, or an enum added
	EnumWidened  ChangeKind = "enum-widened"  // values added, or the enum removed
	EnumChanged  ChangeKind = "enum-changed"  // some values gone, others new

	// ConstraintTightened: a minimum raised, a maxLength lowered, a
	// pattern or format added, additionalProperties made false, ...
	ConstraintTightened ChangeKind = "constraint-tightened"
	// ConstraintLoosened is the reverse.
	ConstraintLoosened ChangeKind = "constraint-loosened"
	// ConstraintChanged: a pattern, format or multipleOf replaced by
	// another, which may accept other values.
	ConstraintChanged ChangeKind = "constraint-changed"

	DefaultChanged ChangeKind = "default-changed" // a default added, changed or removed
	SchemaAdded    ChangeKind = "schema-added"    // an output schema, or a $defs entry
	SchemaRemoved  ChangeKind = "schema-removed"  // the output schema

	// Equivalent: written differently, the same meaning ("required" in
	// another order, "type": ["number", "integer"] for "number").
	Equivalent ChangeKind = "equivalent"
	// Unclassified: a difference that Compare cannot reason about, such as a
	// changed $ref, oneOf or if/then/else. It is always breaking.
	Unclassified ChangeKind = "unclassified"
)

// A Change is one difference between two tool definitions.
type Change struct {
	// Path is the JSON Pointer (RFC 6901) of the changed value in the
	// definition as clients see it, such as
	// "/inputSchema/properties/city/type"; "" is the whole tool.
	Path string

	// Kind says what kind of change it is.
	Kind ChangeKind

	// Breaking reports whether a client that worked with the old
	// definition may fail with the new one.
	Breaking bool

	// Old and New are the canonical JSON of the value at Path before and
	// after the change; "" when there was none.
	Old, New string

	// Description says in a line what changed and, for a breaking change,
	// why it breaks: `argument "city" removed`, `minimum raised from 1 to
	// 5`.
	Description string
}

// String returns the change as one line: its path, its description, and
// whether it breaks.
func (c Change) String() string {
	path := c.Path
	if path == "" {
		path = "/"
	}
	if c.Breaking {
		return path + ": " + c.Description + " (breaking)"
	}
	return path + ": " + c.Description
}

// Compare returns the differences between the definitions old and new of a
// tool, as clients see them, each classified as breaking or compatible. A
// nil old means the tool is new (one compatible change, [ToolAdded]); a nil
// new means it is gone (one breaking change, [ToolRemoved]). Definitions
// with the same [Fingerprint] have no changes; definitions with different
// ones have at least one.
//
// A change is breaking when a client that worked with the old definition
// may fail with the new one. The input schema says what the server accepts,
// so narrowing it breaks callers: a removed or renamed argument (a rename
// shows as a removal and an addition), a new required argument or an
// optional one made required, a narrower type or enum, a tighter bound
// (minimum raised, maxLength lowered, additionalProperties made false, a
// pattern or format added), a changed or removed default (the server fills
// it in for callers that leave the argument out). The output schema says
// what clients receive, so widening it breaks consumers: a wider type or
// enum, a looser bound, a property no longer required; and so does a
// removed output property or output schema. Annotations break clients when
// they promise less than before (readOnlyHint true to false,
// destructiveHint false to true, idempotentHint true to false,
// openWorldHint false to true), since clients may grant a tool
// permissions on those promises. Differences Compare cannot reason about
// (a changed $ref, oneOf, if/then/else, a pattern replaced by another,
// allOf or anyOf growing or shrinking, unknown keywords) are [Unclassified] and
// breaking.
//
// Everything else is compatible: new optional arguments, wider input
// types and enums, looser input bounds, narrower outputs and new output
// properties, titles, descriptions, icons and _meta, hints that promise
// more. Compare recurses into nested properties, items,
// additionalProperties, $defs, allOf, anyOf and the like, but never
// follows a $ref, so recursive schemas cannot make it loop. It never
// panics; a definition that does not marshal to a JSON object gives one
// Unclassified change.
//
// Changes are listed in the order of their paths' keys.
func Compare(old, new *mcp.Tool) []Change {
	var o, n []byte
	if old != nil {
		c, err := canonical(old)
		if err != nil {
			return []Change{{Kind: Unclassified, Breaking: true, Description: "old definition: " + err.Error()}}
		}
		o = c
	}
	if new != nil {
		c, err := canonical(new)
		if err != nil {
			return []Change{{Kind: Unclassified, Breaking: true, Description: "new definition: " + err.Error()}}
		}
		n = c
	}
	return changes(defdiff.Compare(o, n))
}

// changes converts defdiff's changes.
func changes(cs []defdiff.Change) []Change {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Change, len(cs))
	for i, c := range cs {
		out[i] = Change{Path: c.Path, Kind: ChangeKind(c.Kind), Breaking: c.Breaking, Old: c.Old, New: c.New, Description: c.Description}
	}
	return out
}
