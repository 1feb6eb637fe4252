package defdiff

// hintDefaults are the values that the protocol gives the hints of a tool's
// annotations when the definition leaves them out.
var hintDefaults = map[string]bool{
	"destructiveHint": true,
	"idempotentHint":  false,
	"openWorldHint":   true,
	"readOnlyHint":    false,
}

// normalizeAnnotations removes from the decoded definition def the hints
// that are spelled at their defaults, and the annotations themselves when
// nothing is left of them (or they are null), so that a definition reads
// the same whether its annotations were marshalled with or without their
// false hints (the SDK's MCPGODEBUG=hintomitempty=1 omits them) and
// whether a tool without hints has an empty annotations object or none.
func normalizeAnnotations(def map[string]any) {
	v, ok := def["annotations"]
	if !ok {
		return
	}
	if v == nil {
		delete(def, "annotations")
		return
	}
	a, ok := v.(map[string]any)
	if !ok {
		return // not an object: compared as written
	}
	for k, d := range hintDefaults {
		if b, ok := a[k].(bool); ok && b == d {
			delete(a, k)
		}
	}
	if len(a) == 0 {
		delete(def, "annotations")
	}
}

// hint returns the value of the hint k in the normalized annotations a,
// its default when a does not have it, and false when a has it but not as
// a boolean.
func hint(a map[string]any, k string) (value, ok bool) {
	v, has := a[k]
	if !has {
		return hintDefaults[k], true
	}
	b, ok := v.(bool)
	return b, ok
}
