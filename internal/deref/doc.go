// Package deref provides the rewriting of JSON Schemas into equivalent
// schemas without references, for MCP clients that reject $ref and $defs
// in tool schemas.
//
// [Dereference] takes a schema as JSON and returns one that accepts and
// rejects the same instances, with every local reference (a $ref that names
// a schema in the same document) replaced by the schema it names:
//
//	out, err := deref.Dereference(schema, nil)
//	if errors.Is(err, deref.ErrUnsupported) {
//		out = schema // valid, but not safe to rewrite: advertise it as is
//	}
//
// It is meant to run once per schema (when a tool is registered or
// changes), not per request.
//
// # References
//
// A local $ref is a JSON Pointer fragment ("#/$defs/Item", "#/definitions/a~1b",
// "#/properties/x", "#" for the root; percent-encoded as in URIs), an anchor
// fragment ("#name", from $anchor or $dynamicAnchor, or from "$id": "#name"
// before 2019-09), or a URI that resolves to the $id of the root or of a
// subschema, against the base URI in effect where the $ref is written. A
// fragment in a subschema with an $id is resolved in that subschema's
// resource. Any other reference is remote: it is never fetched and stays
// as written. A local $ref that names nothing, or names something that is
// not a schema, is an [ErrUnresolved] error. An empty $ref is ignored, as
// jsonschema-go (which validates mcpkit's tools) ignores it.
//
// Only keyword positions count: a property named "$ref" or "$defs" in
// properties is a property, and objects with a "$ref" key in enum, const,
// default, examples or unknown keywords (x-...) are data, copied unchanged
// like every keyword the package does not know.
//
// # Siblings of $ref
//
// Since draft 2019-09 a $ref may have sibling keywords, and both apply.
// When the named schema's keywords can join the siblings without changing
// what either means, they are merged into one object: shared keywords must
// be equal, except annotations (title, description, default, examples,
// $comment, deprecated, readOnly, writeOnly), where the sibling, the outer
// schema, wins; a keyword whose meaning depends on its neighbours
// (additionalProperties and properties or patternProperties, items and
// prefixItems, additionalItems and items, min/maxContains and contains,
// then/else and if) must not gain neighbours from the other side; the named
// schema must not have unevaluatedProperties, unevaluatedItems, $id or a
// different $schema. Otherwise the $ref becomes "allOf": [named schema] in
// the same object (appended to an allOf already there). That form, rather
// than {"allOf": [named, siblings]}, keeps the siblings' annotations outer
// and keeps unevaluatedProperties and unevaluatedItems among the siblings
// seeing the named schema's evaluations, as they did through the $ref.
//
// Draft-07 and older (by the root's $schema) ignore the siblings of a $ref;
// only their annotations are kept, and the root's $schema and $id.
//
// The root may be a $ref: the result's root is then the named schema merged
// with the root's other keywords by the same rules, even when the named
// schema is kept as a definition, so that an input schema keeps its
// "type": "object" at the root.
//
// # Recursion and size
//
// A schema on a cycle of references (a tree, a linked list, mutual
// recursion, a "#" self-reference) cannot be inlined. Those schemas, and
// only those, stay in definitions, written once, with every $ref to them
// rewritten to "#/$defs/name": a definition of the root keeps its container
// and name; any other schema (say "#/properties/a") gets a new entry in
// $defs (definitions before 2019-09) named after its last pointer token,
// and a $ref to that entry takes its place. The root stays the root, and
// "#" keeps naming it. Everything else is inlined, and definitions the
// output does not use are dropped.
//
// Inlining a schema shared by several references copies it, and copies of
// copies grow exponentially (a definition using another twice, which uses a
// third twice, and so on). Before writing anything, Dereference computes
// the size of the result; while it exceeds [Options.MaxNodes], it also
// keeps, as definitions, the shared schemas whose copies cost most. The
// result is still free of references wherever the bound allows.
//
// # Identifiers
//
// A subschema's $id changes the base URI of the references inside it.
// Inlined copies keep their $id; Dereference checks that every reference
// left in the output, and every relative $id, resolves to the same URI
// where it is written as where the input had it, and that no $id is written
// twice (shared schemas with an $id are kept as definitions for that). When
// that cannot be ensured, for instance a kept schema referenced from inside
// another resource while the root has no absolute $id, it returns
// [ErrUnsupported] rather than a schema that might mean something else.
// $dynamicRef and $recursiveRef, whose targets depend on the path taken at
// validation time, are [ErrUnsupported] too.
//
// # Output
//
// The output is compact JSON, deterministic: the same input gives the same
// bytes. Objects keep the input's key order (the root's definitions come
// last); numbers keep their literal text; strings are re-encoded, so
// escapes may differ, and <, > and & are not escaped. Anchors are dropped
// from inlined copies, where they would repeat and no $ref uses them.
package deref
