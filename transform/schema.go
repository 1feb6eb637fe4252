package transform

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpkit/mcpkit"
)

type object = map[string]any

// A member is a subschema that applies to the same object as the root
// schema: the root itself, and those reached from it through allOf, anyOf,
// oneOf, not, if, then, else, dependentSchemas and (draft-07)
// dependencies. Property names mean the call's arguments in all of them.
type member struct {
	s    object
	path string // its JSON Pointer, for messages
	// always is set for the root and what allOf reaches from it: their
	// required lists and defaults hold for every call, where those of the
	// others hold only when their condition does.
	always bool
}

// members returns the members of root, root first, in a fixed order.
func members(root object) []member {
	var ms []member
	var visit func(s object, path string, always bool)
	visit = func(s object, path string, always bool) {
		ms = append(ms, member{s: s, path: path, always: always})
		for _, kw := range [...]string{"allOf", "anyOf", "oneOf"} {
			list, _ := s[kw].([]any)
			for i, v := range list {
				if sub, ok := v.(object); ok {
					visit(sub, path+"/"+kw+"/"+strconv.Itoa(i), always && kw == "allOf")
				}
			}
		}
		for _, kw := range [...]string{"not", "if", "then", "else"} {
			if sub, ok := s[kw].(object); ok {
				visit(sub, path+"/"+kw, false)
			}
		}
		for _, kw := range [...]string{"dependentSchemas", "dependencies"} {
			m, _ := s[kw].(object)
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if sub, ok := m[k].(object); ok {
					visit(sub, path+"/"+kw+"/"+escapePointer(k), false)
				}
			}
		}
	}
	visit(root, "", true)
	return ms
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// where names a member in messages.
func where(m member) string {
	if m.path == "" {
		return "the root"
	}
	return m.path
}

// validArgName reports whether name may be given to an argument: 1 to 64
// characters of those a tool name may have (A-Z, a-z, 0-9, '_', '-', '.'),
// which every major model provider accepts for the properties of a tool's
// input.
func validArgName(name string) bool {
	return len(name) <= 64 && mcpkit.ValidateToolName(name) == nil
}

// A specError is an error of [rewrite], which [Tool] reports as
// "<sentinel>: tool <name>: <msg>".
type specError struct {
	sentinel error
	msg      string
}

func (e *specError) Error() string { return e.sentinel.Error() + ": " + e.msg }

func fail(sentinel error, format string, a ...any) error {
	return &specError{sentinel: sentinel, msg: fmt.Sprintf(format, a...)}
}

// rewritten is what rewrite did to a schema, for the derived handler.
type rewritten struct {
	renames     map[string]string // parent name -> new name, for the renamed arguments
	visible     []string          // the advertised names of the arguments that stay visible
	hidden      []hidden          // sorted by name
	newDefaults bool              // the spec set a Default
}

// hidden is a hidden argument and where its value comes from.
type hidden struct {
	name     string
	value    []byte // Value, marshalled; or nil
	fn       func(context.Context, *mcpkit.Request) (any, error)
	def      []byte // the parent's default, or nil
	required bool   // the parent requires it
}

// maps reports whether calls must be mapped onto the parent's names.
func (rw *rewritten) maps() bool { return len(rw.renames) > 0 || len(rw.hidden) > 0 }

// rewrite applies args to root, a copy that the caller owns, in place.
func rewrite(root object, args map[string]Arg) (*rewritten, error) {
	rw := &rewritten{renames: map[string]string{}}
	ms := members(root)
	// The arguments are the names the members describe; the schema may
	// speak of other names too (required, dependencies), which a rename
	// must not take.
	known, mentioned := map[string]bool{}, map[string]bool{}
	for _, m := range ms {
		props, _ := m.s["properties"].(object)
		for k := range props {
			known[k], mentioned[k] = true, true
		}
		list, _ := m.s["required"].([]any)
		for _, kw := range [...]string{"dependentRequired", "dependentSchemas", "dependencies"} {
			obj, _ := m.s[kw].(object)
			for k, v := range obj {
				mentioned[k] = true
				deps, _ := v.([]any)
				list = append(slices.Clip(list), deps...)
			}
		}
		for _, v := range list {
			if name, ok := v.(string); ok {
				mentioned[name] = true
			}
		}
	}

	hide := map[string]bool{}
	optional := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		a := args[name]
		if !known[name] {
			return nil, fail(ErrUnknownArgument, "%q", name)
		}
		if err := checkArg(name, a); err != nil {
			return nil, err
		}
		switch {
		case a.Hide:
			hide[name] = true
		case a.Name != "" && a.Name != name:
			rw.renames[name] = a.Name
		}
		if a.Required == Optional {
			optional[name] = true
		}
		if a.Default != nil {
			rw.newDefaults = true
		}
	}

	// Every name keeps one meaning.
	owner := map[string]string{} // advertised name -> parent name
	for _, name := range slices.Sorted(maps.Keys(mentioned)) {
		if hide[name] {
			continue
		}
		adv := name
		if n, ok := rw.renames[name]; ok {
			adv = n
		}
		if prev, dup := owner[adv]; dup {
			return nil, fail(ErrDuplicateArgument, "arguments %q and %q would both be called %q", prev, name, adv)
		}
		owner[adv] = name
		if known[name] {
			rw.visible = append(rw.visible, adv)
		}
	}

	if len(rw.renames) > 0 || len(hide) > 0 || len(optional) > 0 {
		if err := checkRefs(root, ms); err != nil {
			return nil, err
		}
	}
	if err := checkRenames(ms, rw.renames); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(hide)) {
		h, err := hideArg(ms, name, args[name])
		if err != nil {
			return nil, err
		}
		rw.hidden = append(rw.hidden, h)
	}
	for _, name := range slices.Sorted(maps.Keys(optional)) {
		if requiredAlways(ms, name) && args[name].Default == nil && defaultOf(ms, name) == nil {
			return nil, fail(ErrMissingValue, "argument %q is required and has no default: give it a Default to make it optional", name)
		}
	}

	// The checks passed: change the schema.
	for _, m := range ms {
		if props, ok := m.s["properties"].(object); ok && m.always {
			for name := range hide {
				delete(props, name)
			}
		}
		for _, kw := range [...]string{"properties", "dependentSchemas", "dependencies", "dependentRequired"} {
			if obj, ok := m.s[kw].(object); ok {
				renameKeys(obj, rw.renames)
			}
		}
		for _, kw := range [...]string{"dependentRequired", "dependencies"} {
			obj, _ := m.s[kw].(object)
			for k, v := range obj {
				if list, ok := v.([]any); ok {
					obj[k] = renameList(list, rw.renames, nil)
				}
			}
		}
		if list, ok := m.s["required"].([]any); ok {
			var drop map[string]bool
			if m.always {
				drop = hide
				if len(optional) > 0 {
					drop = maps.Clone(hide)
					maps.Copy(drop, optional)
				}
			}
			if list = renameList(list, rw.renames, drop); len(list) == 0 {
				delete(m.s, "required")
			} else {
				m.s["required"] = list
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		a := args[name]
		if a.Hide {
			continue
		}
		adv := name
		if n, ok := rw.renames[name]; ok {
			adv = n
		}
		if err := annotate(ms, adv, a); err != nil {
			return nil, fail(ErrInvalidSpec, "argument %q: %v", name, err)
		}
		if a.Required == Required {
			list, _ := root["required"].([]any)
			if !slices.Contains(list, any(adv)) {
				root["required"] = append(list, adv)
			}
		}
	}
	return rw, nil
}

// checkArg reports an Arg that contradicts itself.
func checkArg(name string, a Arg) error {
	invalid := func(why string) error { return fail(ErrInvalidSpec, "argument %q: %s", name, why) }
	if a.Hide {
		if a.Name != "" || a.Description != "" || a.Default != nil || a.Examples != nil || a.Required != KeepRequiredness {
			return invalid("a hidden argument takes only Value or ValueFunc")
		}
		if a.Value != nil && a.ValueFunc != nil {
			return invalid("Value and ValueFunc are both set")
		}
		return nil
	}
	if a.Value != nil || a.ValueFunc != nil {
		return invalid("Value and ValueFunc are for hidden arguments")
	}
	if a.Required < KeepRequiredness || a.Required > Optional {
		return invalid(fmt.Sprintf("unknown Requiredness %d", a.Required))
	}
	if a.Required == Required && a.Default != nil {
		return invalid("a Required argument has no use for a Default")
	}
	if a.Name != "" && !validArgName(a.Name) {
		return fail(ErrInvalidName, "argument %q: new name %q: want 1 to 64 of A-Z a-z 0-9 _ - .", name, a.Name)
	}
	return nil
}

// checkRefs refuses a schema whose references could reach the members:
// the rewrite cannot follow them there (the target may be shared) and must
// not leave them pointing at names that have changed.
func checkRefs(root object, ms []member) error {
	anchors := map[string]bool{}
	hasID := false
	for _, m := range ms {
		for _, kw := range [...]string{"$ref", "$dynamicRef", "$recursiveRef"} {
			if _, ok := m.s[kw]; ok {
				return fail(ErrUnsupportedSchema, "%s at %s: the arguments it brings in cannot be rewritten", kw, where(m))
			}
		}
		for _, kw := range [...]string{"$anchor", "$dynamicAnchor"} {
			if a, ok := m.s[kw].(string); ok {
				anchors[a] = true
			}
		}
		if _, ok := m.s["$id"]; ok {
			hasID = true
		}
	}
	var err error
	walkRefs(root, "", func(ptr, kw, ref string) {
		if err == nil && (kw == "$recursiveRef" || refersToMember(ref, anchors, hasID)) {
			err = fail(ErrUnsupportedSchema, "%s %q at %s refers to the arguments' own schema", kw, ref, ptr)
		}
	})
	return err
}

// dataKeywords hold JSON values, not schemas: a "$ref" inside one is data.
var dataKeywords = map[string]bool{"const": true, "default": true, "enum": true, "examples": true}

// nameKeywords hold objects whose keys are names (of properties, patterns,
// definitions), not keywords, and whose values are schemas.
var nameKeywords = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
	"dependentSchemas": true, "dependencies": true,
}

// walkRefs calls f for every reference in the schema s, at pointer ptr.
func walkRefs(s any, ptr string, f func(ptr, kw, ref string)) {
	switch s := s.(type) {
	case object:
		for _, k := range slices.Sorted(maps.Keys(s)) {
			v, at := s[k], ptr+"/"+escapePointer(k)
			switch obj, isObj := v.(object); {
			case k == "$ref" || k == "$dynamicRef" || k == "$recursiveRef":
				if ref, ok := v.(string); ok {
					f(ptr, k, ref)
				}
			case dataKeywords[k]:
			case nameKeywords[k] && isObj:
				for _, name := range slices.Sorted(maps.Keys(obj)) {
					walkRefs(obj[name], at+"/"+escapePointer(name), f)
				}
			default:
				walkRefs(v, at, f)
			}
		}
	case []any:
		for i, v := range s {
			walkRefs(v, ptr+"/"+strconv.Itoa(i), f)
		}
	}
}

// refersToMember reports whether ref may point at the root schema or one
// of its members. anchors are the anchors the members declare, and hasID
// says whether one of them has an $id (and so can be named by URI).
func refersToMember(ref string, anchors map[string]bool, hasID bool) bool {
	frag, isFrag := strings.CutPrefix(ref, "#")
	if !isFrag {
		return ref == "" || hasID // a URI: the root's own, or another document
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return true
	}
	if frag == "" {
		return true
	}
	rest, isPointer := strings.CutPrefix(frag, "/")
	if !isPointer {
		return anchors[frag]
	}
	segs := strings.Split(rest, "/")
	for i := 0; i < len(segs); {
		switch strings.ReplaceAll(strings.ReplaceAll(segs[i], "~1", "/"), "~0", "~") {
		case "allOf", "anyOf", "oneOf", "dependentSchemas", "dependencies":
			i += 2
		case "not", "if", "then", "else":
			i++
		default:
			return false // it descends to a property, an item, a $defs entry...
		}
	}
	return true
}

// checkRenames refuses renames that would change what the schema says of
// the names themselves.
func checkRenames(ms []member, renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	for _, m := range ms {
		if _, ok := m.s["propertyNames"]; ok {
			return fail(ErrUnsupportedSchema, "propertyNames at %s constrains the argument names", where(m))
		}
		pp, _ := m.s["patternProperties"].(object)
		for _, p := range slices.Sorted(maps.Keys(pp)) {
			re, err := regexp.Compile(p)
			if err != nil {
				return fail(ErrUnsupportedSchema, "patternProperties at %s: %q is not a regular expression", where(m), p)
			}
			for _, old := range slices.Sorted(maps.Keys(renames)) {
				if n := renames[old]; re.MatchString(old) != re.MatchString(n) {
					return fail(ErrUnsupportedSchema, "patternProperties at %s: %q matches only one of %q and %q", where(m), p, old, n)
				}
			}
		}
	}
	return nil
}

// hideArg checks that the argument name can be hidden and returns where
// its value will come from.
func hideArg(ms []member, name string, a Arg) (hidden, error) {
	h := hidden{name: name, required: requiredAlways(ms, name)}
	unsupported := func(m member, why string) error {
		return fail(ErrUnsupportedSchema, "hiding argument %q: %s at %s", name, why, where(m))
	}
	for _, m := range ms {
		for _, kw := range [...]string{"minProperties", "maxProperties"} {
			if _, ok := m.s[kw]; ok {
				return h, unsupported(m, kw+" would count it")
			}
		}
		if !m.always {
			if props, _ := m.s["properties"].(object); props[name] != nil {
				return h, unsupported(m, "a conditional subschema describes it")
			}
			if list, _ := m.s["required"].([]any); slices.Contains(list, any(name)) {
				return h, unsupported(m, "a conditional subschema requires it")
			}
		}
		for _, kw := range [...]string{"dependentRequired", "dependentSchemas", "dependencies"} {
			obj, _ := m.s[kw].(object)
			if _, ok := obj[name]; ok {
				return h, unsupported(m, kw+" depends on it")
			}
			for _, v := range obj {
				if list, ok := v.([]any); ok && slices.Contains(list, any(name)) {
					return h, unsupported(m, kw+" requires it")
				}
			}
		}
	}
	if d := defaultOf(ms, name); d != nil {
		h.def, _ = json.Marshal(d) // decoded JSON marshals
	}
	switch {
	case a.Value != nil:
		v, err := json.Marshal(a.Value)
		if err != nil {
			return h, fail(ErrInvalidSpec, "argument %q: Value: %v", name, err)
		}
		h.value = v
	case a.ValueFunc != nil:
		h.fn = a.ValueFunc
	case h.def != nil:
		h.value = h.def
	case h.required:
		return h, fail(ErrMissingValue, "argument %q is required: a hidden one needs a Value, a ValueFunc or a default", name)
	}
	return h, nil
}

// requiredAlways reports whether every call must carry name.
func requiredAlways(ms []member, name string) bool {
	for _, m := range ms {
		if list, _ := m.s["required"].([]any); m.always && slices.Contains(list, any(name)) {
			return true
		}
	}
	return false
}

// defaultOf returns the default that validation gives name, or nil: the
// first one among the members that always apply.
func defaultOf(ms []member, name string) any {
	for _, m := range ms {
		props, _ := m.s["properties"].(object)
		if p, ok := props[name].(object); ok && m.always {
			if d, ok := p["default"]; ok {
				return d
			}
		}
	}
	return nil
}

// renameKeys renames the keys of obj, all at once so that a swap works.
func renameKeys(obj object, renames map[string]string) {
	moved := map[string]any{}
	for old, n := range renames {
		if v, ok := obj[old]; ok {
			moved[n] = v
			delete(obj, old)
		}
	}
	maps.Copy(obj, moved)
}

// renameList renames the names in list and drops those in drop.
func renameList(list []any, renames map[string]string, drop map[string]bool) []any {
	out := list[:0]
	for _, v := range list {
		if s, ok := v.(string); ok {
			if drop[s] {
				continue
			}
			if n, ok := renames[s]; ok {
				v = n
			}
		}
		out = append(out, v)
	}
	return out
}

// annotate sets a's description, default and examples on every member's
// schema of the argument adv.
func annotate(ms []member, adv string, a Arg) error {
	set := map[string]any{}
	if a.Description != "" {
		set["description"] = a.Description
	}
	if a.Default != nil {
		c, err := deepCopy(a.Default)
		if err != nil {
			return fmt.Errorf("default: %v", err)
		}
		set["default"] = c
	}
	if a.Examples != nil {
		c, err := deepCopy(a.Examples)
		if err != nil {
			return fmt.Errorf("examples: %v", err)
		}
		set["examples"] = c
	}
	if len(set) == 0 {
		return nil
	}
	for _, m := range ms {
		props, _ := m.s["properties"].(object)
		switch p := props[adv].(type) {
		case object:
			for k, v := range set {
				p[k] = cloneJSON(v)
			}
		case bool:
			if p { // true admits anything, as {} does
				o := object{}
				for k, v := range set {
					o[k] = cloneJSON(v)
				}
				props[adv] = o
			}
		}
	}
	return nil
}

// cloneJSON copies a decoded JSON value, so that no two places of a schema
// share a map or a slice.
func cloneJSON(v any) any {
	switch v := v.(type) {
	case object:
		c := make(object, len(v))
		for k, x := range v {
			c[k] = cloneJSON(x)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = cloneJSON(x)
		}
		return c
	}
	return v
}

// checkDefaults reports a default in the derived schema that its schema
// does not admit, unless the parent's schema already had such a default:
// that is the parent's business, and Server.Add does not refuse it.
func checkDefaults(parentJSON []byte, derived object) error {
	if resolveDefaults(parentJSON) != nil {
		return nil
	}
	data, err := json.Marshal(derived)
	if err != nil {
		return err
	}
	if err := resolveDefaults(data); err != nil {
		return fmt.Errorf("a default does not match its schema: %v", err)
	}
	return nil
}

func resolveDefaults(data []byte) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	_, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	return err
}
