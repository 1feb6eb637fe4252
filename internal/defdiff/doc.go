// Package defdiff provides the canonical form of MCP tool definitions and
// the classification of the differences between two of them, for
// mcpkittest's fingerprints and lockfiles.
//
//	canon, err := defdiff.Definition(defJSON) // defJSON: json.Marshal(&tool)
//	fp := defdiff.Fingerprint(canon)           // "sha256:..."
//	for _, c := range defdiff.Compare(oldJSON, newJSON) {
//		fmt.Println(c.Path, c.Kind, c.Breaking, c.Description)
//	}
//
// # Canonical form
//
// A definition is JSON text; its canonical form is compact JSON with object
// keys sorted, numbers written one way per value (1, 1.0 and 1e0 are all 1;
// digits are never rounded), and the tool's annotations without the hints
// that equal the protocol's defaults. Nothing else is normalized: arrays
// keep their order (a reordered "required" is a different definition, which
// [Compare] reports as [Equivalent]) and strings their text.
//
// # Breaking changes
//
// [Compare] walks both definitions and reports every difference as a
// [Change] at a JSON Pointer. A change is breaking when a client that worked
// with the old definition may fail with the new one:
//
//   - the tool is removed or renamed;
//   - in the input schema, which the server applies to what clients send,
//     any narrowing: a removed or newly required argument, a narrower type
//     or enum, a tighter bound, an added pattern or format, additional
//     properties refused, a changed or removed default (the server fills
//     it in for callers that leave the argument out);
//   - in the output schema, which clients apply to what the server sends,
//     any widening, and removed properties: a wider type or enum, a looser
//     bound, a property no longer required, the output schema removed;
//   - a hint that promises less than before: readOnlyHint true to false,
//     destructiveHint false to true, idempotentHint true to false,
//     openWorldHint false to true (clients may have granted permissions on
//     the old promise);
//   - anything Compare cannot reason about: a changed $ref, oneOf, if/then/
//     else, a list of subschemas that changed length, a changed pattern or
//     multipleOf, an unknown keyword; it is reported as [Unclassified].
//
// Everything else is compatible: new optional arguments, wider input types
// and enums, looser input bounds, narrower outputs, new output properties,
// changes to titles, descriptions, examples, icons and _meta, and hints
// that promise more. A compatible change is still a change: a lockfile
// wants a new version for it.
//
// Schemas are compared keyword by keyword, recursing into properties,
// items, additionalProperties, allOf/anyOf/prefixItems of the same length,
// $defs and the like; "not" flips the direction. $refs are never followed,
// so recursive schemas cannot loop.
package defdiff
