package defdiff

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// A Kind names what a [Change] did to a definition.
type Kind string

// The kinds of change. Whether one is breaking depends on where it is: a
// narrowing breaks callers when it is in the input schema, and consumers of
// results when it is in the output schema.
const (
	ToolAdded           Kind = "tool-added"
	ToolRemoved         Kind = "tool-removed"
	ToolRenamed         Kind = "tool-renamed"
	MetadataChanged     Kind = "metadata-changed"
	HintChanged         Kind = "hint-changed"
	PropertyAdded       Kind = "property-added"
	PropertyRemoved     Kind = "property-removed"
	RequiredAdded       Kind = "required-added"
	RequiredRemoved     Kind = "required-removed"
	TypeNarrowed        Kind = "type-narrowed"
	TypeWidened         Kind = "type-widened"
	TypeChanged         Kind = "type-changed"
	EnumNarrowed        Kind = "enum-narrowed"
	EnumWidened         Kind = "enum-widened"
	EnumChanged         Kind = "enum-changed"
	ConstraintTightened Kind = "constraint-tightened"
	ConstraintLoosened  Kind = "constraint-loosened"
	ConstraintChanged   Kind = "constraint-changed"
	DefaultChanged      Kind = "default-changed"
	SchemaAdded         Kind = "schema-added"
	SchemaRemoved       Kind = "schema-removed"
	Equivalent          Kind = "equivalent"
	Unclassified        Kind = "unclassified"
)

// A Change is one difference between two tool definitions.
type Change struct {
	// Path is the JSON Pointer (RFC 6901) of the changed value in the
	// definitions, such as "/inputSchema/properties/city/type"; "" is the
	// whole definition.
	Path string

	Kind     Kind
	Breaking bool

	// Old and New are the canonical JSON text of the value at Path before
	// and after; "" when there was none.
	Old, New string

	// Description says what changed, and for a breaking change why it
	// breaks, in a line.
	Description string
}

// Compare returns the differences between two tool definitions, as JSON
// text; a nil old is a tool added, a nil new a tool removed. Changes are
// listed in the order of their paths' keys; definitions with the same
// canonical form (see [Definition]) have none, and definitions that differ
// in it have at least one. Compare never panics: what it cannot read or
// reason about is one Unclassified change, which is breaking.
func Compare(old, new []byte) []Change {
	switch {
	case old == nil && new == nil:
		return nil
	case old == nil:
		return []Change{{Kind: ToolAdded, Description: fmt.Sprintf("tool %s added", nameOf(new))}}
	case new == nil:
		return []Change{{Kind: ToolRemoved, Breaking: true, Description: fmt.Sprintf("tool %s removed: calls to it fail", nameOf(old))}}
	}
	o, err := decodeDefinition(old)
	if err != nil {
		return []Change{{Kind: Unclassified, Breaking: true, Description: "cannot read the old definition: " + err.Error()}}
	}
	n, err := decodeDefinition(new)
	if err != nil {
		return []Change{{Kind: Unclassified, Breaking: true, Description: "cannot read the new definition: " + err.Error()}}
	}
	var d differ
	d.tool(o, n)
	if len(d.changes) == 0 && !reflect.DeepEqual(o, n) {
		// Every branch of the differ reports what it finds; this is a net
		// for the one that does not.
		d.add("", Unclassified, true, o, n, "the definition changed in a way that is not classified; counted as breaking")
	}
	return d.changes
}

// nameOf returns the quoted name of the tool whose definition is def.
func nameOf(def []byte) string {
	m, err := decodeDefinition(def)
	if err != nil {
		return "(unreadable)"
	}
	name, _ := m["name"].(string)
	return fmt.Sprintf("%q", name)
}

// A polarity says who must accept a schema's values: the server accepts
// what clients send (input), clients accept what the server returns
// (output). Narrowing an input schema breaks callers; widening an output
// schema breaks consumers.
type polarity bool

const (
	input  polarity = false
	output polarity = true
)

// An effect is what a change does to the set of values a schema accepts.
type effect int

const (
	narrows effect = iota // fewer values
	widens                // more values
	breaks                // other values, or cannot tell
)

// breaking reports whether a change with effect e breaks the side p.
func (p polarity) breaking(e effect) bool {
	switch e {
	case breaks:
		return true
	case narrows:
		return p == input
	case widens:
		return p == output
	}
	return false
}

// missing stands for a key that an object does not have.
type missing struct{}

func get(m map[string]any, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return missing{}
}

func isMissing(v any) bool {
	_, ok := v.(missing)
	return ok
}

// differ collects the changes between two decoded definitions.
type differ struct {
	changes []Change
}

func (d *differ) add(path string, kind Kind, breaking bool, old, new any, format string, args ...any) {
	d.changes = append(d.changes, Change{
		Path:        path,
		Kind:        kind,
		Breaking:    breaking,
		Old:         text(old),
		New:         text(new),
		Description: fmt.Sprintf(format, args...),
	})
}

// unknown reports a change to k that the differ does not reason about.
func (d *differ) unknown(path, k string, old, new any) {
	d.add(path, Unclassified, true, old, new, "%s %s: cannot tell whether that is compatible, so it counts as breaking", k, verb(old, new))
}

// tool compares two normalized definitions.
func (d *differ) tool(o, n map[string]any) {
	for _, k := range keys(o, n) {
		ov, nv := get(o, k), get(n, k)
		if reflect.DeepEqual(ov, nv) {
			continue
		}
		p := join("", k)
		before := len(d.changes)
		switch k {
		case "name":
			d.add(p, ToolRenamed, true, ov, nv, "tool renamed from %s to %s: calls by the old name fail", short(ov), short(nv))
		case "title", "description", "icons":
			d.add(p, MetadataChanged, false, ov, nv, "%s %s", k, verb(ov, nv))
		case "_meta":
			d.meta(p, ov, nv)
		case "annotations":
			d.annotations(p, ov, nv)
		case "inputSchema":
			d.schema(p, ov, nv, input)
		case "outputSchema":
			switch {
			case isMissing(ov):
				d.add(p, SchemaAdded, false, ov, nv, "output schema added")
			case isMissing(nv):
				d.add(p, SchemaRemoved, true, ov, nv, "output schema removed: clients can no longer rely on the shape of structured results")
			default:
				d.schema(p, ov, nv, output)
			}
		default:
			d.unknown(p, k, ov, nv)
		}
		d.equivalent(before, p, k, ov, nv)
	}
}

// equivalent reports the values ov and nv of k at p, which differ, as
// equivalent if nothing was reported since the change numbered before:
// they are written differently and mean the same, such as an empty
// "properties" object and none. It is for the comparisons that report
// changes per member of an object, which find none between {} and nothing.
func (d *differ) equivalent(before int, p, k string, ov, nv any) {
	if len(d.changes) == before {
		d.add(p, Equivalent, false, ov, nv, "%s written differently, the same meaning", k)
	}
}

// meta compares _meta objects key by key. What a key means is up to its
// owner, so no change there is breaking; every change counts as one all
// the same, since clients see _meta.
func (d *differ) meta(p string, ov, nv any) {
	om, ok1 := object(ov)
	nm, ok2 := object(nv)
	if !ok1 || !ok2 {
		d.add(p, MetadataChanged, false, ov, nv, "_meta %s", verb(ov, nv))
		return
	}
	for _, k := range keys(om, nm) {
		if v, w := get(om, k), get(nm, k); !reflect.DeepEqual(v, w) {
			d.add(join(p, k), MetadataChanged, false, v, w, "_meta %q %s", k, verb(v, w))
		}
	}
}

// safeHint is the value of each hint that promises the most: a change
// away from it tells clients the tool may do more than they were told, and
// clients may have granted it permissions on the old promise.
var safeHint = map[string]struct {
	value bool
	risk  string
}{
	"readOnlyHint":    {true, "the tool may now modify its environment"},
	"destructiveHint": {false, "the tool may now make destructive updates"},
	"idempotentHint":  {true, "repeated calls may now have additional effects"},
	"openWorldHint":   {false, "the tool may now interact with external entities"},
}

// annotations compares normalized annotations hint by hint.
func (d *differ) annotations(p string, ov, nv any) {
	om, ok1 := object(ov)
	nm, ok2 := object(nv)
	if !ok1 || !ok2 {
		d.unknown(p, "annotations", ov, nv)
		return
	}
	for _, k := range keys(om, nm) {
		v, w := get(om, k), get(nm, k)
		if reflect.DeepEqual(v, w) {
			continue
		}
		kp := join(p, k)
		safe, isHint := safeHint[k]
		switch {
		case k == "title":
			d.add(kp, MetadataChanged, false, v, w, "annotations title %s", verb(v, w))
		case isHint:
			was, ok1 := hint(om, k)
			is, ok2 := hint(nm, k)
			if !ok1 || !ok2 {
				d.unknown(kp, k, v, w)
				continue
			}
			if was == safe.value && is != safe.value {
				d.add(kp, HintChanged, true, v, w, "%s changed from %t to %t: %s", k, was, is, safe.risk)
			} else {
				d.add(kp, HintChanged, false, v, w, "%s changed from %t to %t", k, was, is)
			}
		default:
			d.unknown(kp, k, v, w)
		}
	}
}

// schema compares two JSON Schemas at p.
func (d *differ) schema(p string, o, n any, pol polarity) {
	if reflect.DeepEqual(o, n) {
		return
	}
	ob, oBool := o.(bool)
	nb, nBool := n.(bool)
	om, oObj := o.(map[string]any)
	nm, nObj := n.(map[string]any)
	switch {
	case !oBool && !oObj || !nBool && !nObj:
		d.unknown(p, "schema", o, n)
		return
	case oBool && !ob:
		d.add(p, ConstraintLoosened, pol.breaking(widens), o, n, "the schema accepted no value (false) and now accepts some")
		return
	case nBool && !nb:
		d.add(p, ConstraintTightened, pol.breaking(narrows), o, n, "the schema now accepts no value (false)")
		return
	}
	// What is left of booleans is true, which is the empty schema.
	if oBool {
		om = map[string]any{}
	}
	if nBool {
		nm = map[string]any{}
	}
	if len(om) == 0 && len(nm) == 0 {
		d.add(p, Equivalent, false, o, n, "written differently, accepts the same values")
		return
	}
	for _, k := range keys(om, nm) {
		ov, nv := get(om, k), get(nm, k)
		if reflect.DeepEqual(ov, nv) {
			continue
		}
		if !d.keyword(p, k, ov, nv, om, nm, pol) {
			d.unknown(join(p, k), k, ov, nv)
		}
	}
}

// Keywords that bound a number, a length or a count from below or above.
var (
	lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
	upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)

// keyword compares the values ov and nv of the keyword k of the schemas om
// and nm at p, and reports whether it could; if not, the caller reports
// the change as Unclassified.
func (d *differ) keyword(p, k string, ov, nv any, om, nm map[string]any, pol polarity) bool {
	kp := join(p, k)
	switch k {
	case "title", "description", "examples", "$comment", "deprecated", "readOnly", "writeOnly":
		d.add(kp, MetadataChanged, false, ov, nv, "%s %s", k, verb(ov, nv))
		return true
	case "default":
		d.defaultValue(kp, ov, nv, pol)
		return true
	case "type":
		return d.types(kp, ov, nv, pol)
	case "enum", "const":
		return d.enum(kp, k, ov, nv, pol)
	case "pattern", "format", "multipleOf":
		d.constraint(kp, k, ov, nv, pol)
		return true
	case "uniqueItems":
		return d.uniqueItems(kp, ov, nv, pol)
	case "required":
		return d.required(p, kp, ov, nv, om, nm, pol)
	case "properties":
		return d.properties(p, kp, ov, nv, nm, pol)
	case "additionalProperties", "unevaluatedProperties", "items", "additionalItems", "unevaluatedItems", "propertyNames":
		// Leaving these out is the schema true.
		d.schema(kp, orTrue(ov), orTrue(nv), pol)
		return true
	case "contains":
		d.optionalSchema(kp, k, ov, nv, pol)
		return true
	case "not":
		// A value passes "not" when it fails the subschema: what narrows
		// the subschema widens the schema.
		d.optionalSchema(kp, k, ov, nv, !pol)
		return true
	case "allOf", "anyOf", "prefixItems":
		// Element by element, when the list keeps its length: narrowing
		// one element narrows the whole for all three.
		return d.schemaList(kp, ov, nv, pol)
	case "$defs", "definitions", "patternProperties", "dependentSchemas":
		return d.schemaMap(kp, k, ov, nv, pol)
	case "$ref":
		d.add(kp, Unclassified, true, ov, nv, "$ref %s: the schemas it names are not compared, so it counts as breaking", verb(ov, nv))
		return true
	}
	switch {
	case slices.Contains(lowerBounds, k):
		return d.bound(kp, k, ov, nv, pol, true)
	case slices.Contains(upperBounds, k):
		return d.bound(kp, k, ov, nv, pol, false)
	}
	return false
}

// defaultValue compares two defaults. The server fills in an input
// default for callers that leave the argument out, so changing or removing
// one changes what such calls do; an output default only documents.
func (d *differ) defaultValue(kp string, ov, nv any, pol polarity) {
	switch {
	case isMissing(ov):
		d.add(kp, DefaultChanged, false, ov, nv, "default %s added", short(nv))
	case pol == output:
		d.add(kp, DefaultChanged, false, ov, nv, "default %s", verb(ov, nv))
	case isMissing(nv):
		d.add(kp, DefaultChanged, true, ov, nv, "default %s removed: calls that leave the value out no longer get it", short(ov))
	default:
		d.add(kp, DefaultChanged, true, ov, nv, "default changed from %s to %s: calls that leave the value out get another one", short(ov), short(nv))
	}
}

// jsonTypes are the types of JSON Schema; "integer" is a subset of
// "number".
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// typeSet returns the types that a "type" keyword's value v allows: all of
// them when v is missing.
func typeSet(v any) (map[string]bool, bool) {
	set := map[string]bool{}
	var names []any
	switch v := v.(type) {
	case missing:
		for _, t := range jsonTypes {
			set[t] = true
		}
		return set, true
	case string:
		names = []any{v}
	case []any:
		names = v
	default:
		return nil, false
	}
	for _, x := range names {
		t, ok := x.(string)
		if !ok || !slices.Contains(jsonTypes, t) {
			return nil, false
		}
		set[t] = true
	}
	return set, true
}

// within reports whether every value of a type in a is of a type in b.
func within(a, b map[string]bool) bool {
	for t := range a {
		if !b[t] && !(t == "integer" && b["number"]) {
			return false
		}
	}
	return true
}

func (d *differ) types(kp string, ov, nv any, pol polarity) bool {
	o, ok1 := typeSet(ov)
	n, ok2 := typeSet(nv)
	if !ok1 || !ok2 {
		return false
	}
	from, to := typeText(ov), typeText(nv)
	switch oldIn, newIn := within(o, n), within(n, o); {
	case oldIn && newIn:
		d.add(kp, Equivalent, false, ov, nv, "type written differently (%s, now %s), the same types", from, to)
	case newIn:
		d.add(kp, TypeNarrowed, pol.breaking(narrows), ov, nv, "type narrowed from %s to %s", from, to)
	case oldIn:
		d.add(kp, TypeWidened, pol.breaking(widens), ov, nv, "type widened from %s to %s", from, to)
	default:
		d.add(kp, TypeChanged, true, ov, nv, "type changed from %s to %s", from, to)
	}
	return true
}

func typeText(v any) string {
	if isMissing(v) {
		return "any"
	}
	return short(v)
}

// valueSet returns the values that enum or const allows, as canonical
// JSON, or nil when v is missing (any value).
func valueSet(k string, v any) (map[string]bool, bool) {
	if isMissing(v) {
		return nil, true
	}
	values := []any{v}
	if k == "enum" {
		list, ok := v.([]any)
		if !ok {
			return nil, false
		}
		values = list
	}
	set := make(map[string]bool, len(values))
	for _, x := range values {
		set[string(encode(x))] = true
	}
	return set, true
}

func (d *differ) enum(kp, k string, ov, nv any, pol polarity) bool {
	o, ok1 := valueSet(k, ov)
	n, ok2 := valueSet(k, nv)
	if !ok1 || !ok2 {
		return false
	}
	switch {
	case o == nil:
		d.add(kp, EnumNarrowed, pol.breaking(narrows), ov, nv, "%s %s added: no other value is accepted", k, short(nv))
		return true
	case n == nil:
		d.add(kp, EnumWidened, pol.breaking(widens), ov, nv, "%s removed: any value is accepted", k)
		return true
	}
	removed, added := minus(o, n), minus(n, o)
	switch {
	case len(removed) == 0 && len(added) == 0:
		d.add(kp, Equivalent, false, ov, nv, "%s written differently, the same values", k)
	case len(added) == 0:
		d.add(kp, EnumNarrowed, pol.breaking(narrows), ov, nv, "%s narrowed: %s removed", k, list(removed))
	case len(removed) == 0:
		d.add(kp, EnumWidened, pol.breaking(widens), ov, nv, "%s widened: %s added", k, list(added))
	default:
		d.add(kp, EnumChanged, true, ov, nv, "%s changed: %s removed, %s added", k, list(removed), list(added))
	}
	return true
}

// minus returns the members of a that are not in b, sorted.
func minus(a, b map[string]bool) []string {
	var out []string
	for x := range a {
		if !b[x] {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// list joins canonical JSON values for a description, clipped.
func list(values []string) string {
	return Clip(strings.Join(values, ", "), maxQuote)
}

// bound compares a lower (lower) or upper bound.
func (d *differ) bound(kp, k string, ov, nv any, pol polarity, lower bool) bool {
	switch {
	case isMissing(ov):
		if !isNumber(nv) {
			return false
		}
		d.add(kp, ConstraintTightened, pol.breaking(narrows), ov, nv, "%s %s added", k, short(nv))
	case isMissing(nv):
		if !isNumber(ov) {
			return false
		}
		d.add(kp, ConstraintLoosened, pol.breaking(widens), ov, nv, "%s %s removed", k, short(ov))
	default:
		c, ok := compareNumbers(ov, nv)
		if !ok || c == 0 {
			return false
		}
		dir := "raised"
		if c > 0 {
			dir = "lowered"
		}
		if (c < 0) == lower {
			d.add(kp, ConstraintTightened, pol.breaking(narrows), ov, nv, "%s %s from %s to %s", k, dir, short(ov), short(nv))
		} else {
			d.add(kp, ConstraintLoosened, pol.breaking(widens), ov, nv, "%s %s from %s to %s", k, dir, short(ov), short(nv))
		}
	}
	return true
}

// constraint compares a keyword whose values cannot be ordered, such as a
// pattern: adding one narrows, removing one widens, changing one may do
// both.
func (d *differ) constraint(kp, k string, ov, nv any, pol polarity) {
	switch {
	case isMissing(ov):
		d.add(kp, ConstraintTightened, pol.breaking(narrows), ov, nv, "%s %s added", k, short(nv))
	case isMissing(nv):
		d.add(kp, ConstraintLoosened, pol.breaking(widens), ov, nv, "%s %s removed", k, short(ov))
	default:
		d.add(kp, ConstraintChanged, true, ov, nv, "%s changed from %s to %s: cannot tell which values it still accepts, so it counts as breaking", k, short(ov), short(nv))
	}
}

func (d *differ) uniqueItems(kp string, ov, nv any, pol polarity) bool {
	flag := func(v any) (bool, bool) {
		if isMissing(v) {
			return false, true
		}
		b, ok := v.(bool)
		return b, ok
	}
	was, ok1 := flag(ov)
	is, ok2 := flag(nv)
	switch {
	case !ok1 || !ok2:
		return false
	case was == is:
		d.add(kp, Equivalent, false, ov, nv, "uniqueItems %s, which changes nothing", verb(ov, nv))
	case is:
		d.add(kp, ConstraintTightened, pol.breaking(narrows), ov, nv, "uniqueItems added: items must now be unique")
	default:
		d.add(kp, ConstraintLoosened, pol.breaking(widens), ov, nv, "uniqueItems removed: items may now repeat")
	}
	return true
}

// noun names the properties of the schema at p: the input schema's own
// are the tool's arguments.
func noun(p string, pol polarity) string {
	if p == "/inputSchema" && pol == input {
		return "argument"
	}
	return "property"
}

// required compares the required lists of om and nm (at p). A property
// added or removed together with its requirement is reported once, by
// properties.
func (d *differ) required(p, kp string, ov, nv any, om, nm map[string]any, pol polarity) bool {
	o, ok1 := stringSet(ov)
	n, ok2 := stringSet(nv)
	if !ok1 || !ok2 {
		return false
	}
	oProps, _ := om["properties"].(map[string]any)
	nProps, _ := nm["properties"].(map[string]any)
	what := noun(p, pol)
	added, removed := minus(n, o), minus(o, n)
	for _, name := range added {
		if !hasKey(oProps, name) && hasKey(nProps, name) {
			continue
		}
		d.add(kp, RequiredAdded, pol.breaking(narrows), ov, nv, "%s %q is now required", what, name)
	}
	for _, name := range removed {
		if !hasKey(nProps, name) && hasKey(oProps, name) {
			continue
		}
		if pol == input {
			d.add(kp, RequiredRemoved, false, ov, nv, "%s %q is now optional", what, name)
		} else {
			d.add(kp, RequiredRemoved, pol.breaking(widens), ov, nv, "%s %q is no longer required: it may be absent", what, name)
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		d.add(kp, Equivalent, false, ov, nv, "required written differently, the same names")
	}
	return true
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// stringSet returns the strings of the JSON array v, empty when v is
// missing.
func stringSet(v any) (map[string]bool, bool) {
	set := map[string]bool{}
	if isMissing(v) {
		return set, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		set[s] = true
	}
	return set, true
}

// properties compares the properties of two object schemas (at p). A
// removed property breaks both sides: callers that send it are refused or
// ignored, consumers that read it find nothing. A new property breaks
// callers only when it is required.
func (d *differ) properties(p, kp string, ov, nv any, nm map[string]any, pol polarity) bool {
	o, ok1 := object(ov)
	n, ok2 := object(nv)
	if !ok1 || !ok2 {
		return false
	}
	req, _ := stringSet(get(nm, "required"))
	what := noun(p, pol)
	defer d.equivalent(len(d.changes), kp, "properties", ov, nv)
	for _, name := range keys(o, n) {
		pp := join(kp, name)
		v, w := get(o, name), get(n, name)
		switch {
		case isMissing(w):
			d.add(pp, PropertyRemoved, true, v, w, "%s %q removed", what, name)
		case isMissing(v) && req[name]:
			d.add(pp, PropertyAdded, pol.breaking(narrows), v, w, "new required %s %q", what, name)
		case isMissing(v):
			d.add(pp, PropertyAdded, false, v, w, "new optional %s %q", what, name)
		default:
			d.schema(pp, v, w, pol)
		}
	}
	return true
}

// optionalSchema compares a subschema whose absence is not the schema
// true: adding one narrows, removing one widens.
func (d *differ) optionalSchema(kp, k string, ov, nv any, pol polarity) {
	switch {
	case isMissing(ov):
		d.add(kp, ConstraintTightened, pol.breaking(narrows), ov, nv, "%s added", k)
	case isMissing(nv):
		d.add(kp, ConstraintLoosened, pol.breaking(widens), ov, nv, "%s removed", k)
	default:
		d.schema(kp, ov, nv, pol)
	}
}

// schemaList compares two lists of schemas of the same length element by
// element; other lists it leaves to the caller.
func (d *differ) schemaList(kp string, ov, nv any, pol polarity) bool {
	o, ok1 := ov.([]any)
	n, ok2 := nv.([]any)
	if !ok1 || !ok2 || len(o) != len(n) {
		return false
	}
	for i := range o {
		d.schema(fmt.Sprintf("%s/%d", kp, i), o[i], n[i], pol)
	}
	return true
}

// schemaMap compares two objects of named subschemas. A new definition in
// $defs is unused until a $ref names it; a removed one may leave a $ref
// dangling. A new pattern or dependent schema narrows; a removed one
// widens.
func (d *differ) schemaMap(kp, k string, ov, nv any, pol polarity) bool {
	o, ok1 := object(ov)
	n, ok2 := object(nv)
	if !ok1 || !ok2 {
		return false
	}
	defs := k == "$defs" || k == "definitions"
	defer d.equivalent(len(d.changes), kp, k, ov, nv)
	for _, name := range keys(o, n) {
		pp := join(kp, name)
		v, w := get(o, name), get(n, name)
		switch {
		case isMissing(v) && defs:
			d.add(pp, SchemaAdded, false, v, w, "%s %q added", k, name)
		case isMissing(w) && defs:
			d.add(pp, Unclassified, true, v, w, "%s %q removed: a $ref to it would no longer resolve, so it counts as breaking", k, name)
		case isMissing(v) || isMissing(w):
			d.optionalSchema(pp, fmt.Sprintf("%s %q", k, name), v, w, pol)
		default:
			d.schema(pp, v, w, pol)
		}
	}
	return true
}

func orTrue(v any) any {
	if isMissing(v) {
		return true
	}
	return v
}

// object returns v as an object; a missing v is an empty one.
func object(v any) (map[string]any, bool) {
	if isMissing(v) {
		return map[string]any{}, true
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// keys returns the keys of a and b, sorted.
func keys(a, b map[string]any) []string {
	ks := make([]string, 0, len(a)+len(b))
	for k := range a {
		ks = append(ks, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// join appends the token k to the JSON Pointer p.
func join(p, k string) string {
	return p + "/" + pointerEscaper.Replace(k)
}

// verb says what happened to a value: added, removed or changed.
func verb(old, new any) string {
	switch {
	case isMissing(old):
		return "added"
	case isMissing(new):
		return "removed"
	}
	return "changed"
}

// text returns the canonical JSON of v, or "" when v is missing.
func text(v any) string {
	if isMissing(v) {
		return ""
	}
	return string(encode(v))
}

// short returns text(v) clipped for a description.
func short(v any) string { return Clip(text(v), maxQuote) }

// maxQuote bounds the values quoted in descriptions.
const maxQuote = 120

// Clip returns s, or its first limit bytes (cut at a character boundary)
// followed by "..." when it is longer: definitions may hold values of any
// size, and messages that quote them stay short.
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = s[:limit]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}
