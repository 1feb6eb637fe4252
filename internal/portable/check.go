package portable

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// A Problem is one place where a schema breaks a profile's rules.
type Problem struct {
	// Pointer is the JSON Pointer of the schema at fault ("" for the
	// root).
	Pointer string
	// Rule says what the profile requires there.
	Rule string
}

// Check reports where schema, a tool's input schema as JSON, breaks the
// rules of profile p: what the provider would refuse. It returns nil for a
// schema p accepts. Problems are in the order of the schema's text.
func Check(schema []byte, p Profile) []Problem {
	v, err := decode(schema)
	if err != nil {
		return []Problem{{Rule: "not JSON: " + err.Error()}}
	}
	return check(v, rulesFor(p))
}

// position is where a schema sits, for the rules that depend on it.
type position int

const (
	atRoot position = iota
	atProperty
	atItems
	atBranch
	atDef
)

type checker struct {
	r     *rules
	root  *object
	probs []Problem

	props, enums, chars int // OpenAI's counts
}

func check(v any, r *rules) []Problem {
	c := &checker{r: r}
	c.root, _ = v.(*object)
	c.schema(v, "", atRoot, 0)
	if r.limits {
		if c.props > maxProperties {
			c.add("", "%d object properties in all; OpenAI allows %d", c.props, maxProperties)
		}
		if c.enums > maxEnumValues {
			c.add("", "%d enum values in all; OpenAI allows %d", c.enums, maxEnumValues)
		}
		if c.chars > maxStringTotal {
			c.add("", "%d characters of property names, definition names and enum values; OpenAI allows %d", c.chars, maxStringTotal)
		}
	}
	return c.probs
}

func (c *checker) add(ptr, format string, a ...any) {
	c.probs = append(c.probs, Problem{Pointer: ptr, Rule: fmt.Sprintf(format, a...)})
}

// schema checks the schema v at ptr. nesting counts the objects that
// enclose it.
func (c *checker) schema(v any, ptr string, pos position, nesting int) {
	s, ok := v.(*object)
	if !ok {
		c.add(ptr, "a schema must be a JSON object; %s takes no %s schema here", c.r.profile, jsonKind(v))
		return
	}
	if pos == atRoot {
		t, _ := s.get("type")
		name, _ := t.(string)
		if c.r.profile == Gemini {
			name = strings.ToLower(name)
		}
		if name != "object" {
			c.add(ptr, `the root must have "type": "object"`)
		}
	}

	if _, ok := s.get("anyOf"); ok {
		c.anyOf(s, ptr, pos, nesting)
		return
	}
	if ref, ok := s.get("$ref"); ok {
		c.ref(s, ref, ptr, pos)
		return
	}

	types, typed := c.types(s, ptr)
	if !typed && c.r.typeRequired {
		c.add(ptr, "no type: %s needs one on every schema without anyOf", c.r.profile)
	}
	if slices.Contains(types, "object") {
		nesting++
		if c.r.limits && nesting > maxNesting {
			c.add(ptr, "%d levels of nested objects; OpenAI allows %d", nesting, maxNesting)
		}
	}

	for i, kw := range s.keys {
		val := s.vals[i]
		at := ptr + "/" + escapeToken(kw)
		switch kw {
		case "type":
			continue
		case "$defs":
			if pos != atRoot || !c.r.refs {
				c.add(at, "%s takes no $defs", c.profileHere(pos))
				continue
			}
			defs, ok := val.(*object)
			if !ok {
				c.add(at, "$defs must be an object")
				continue
			}
			for j, name := range defs.keys {
				c.chars += utf8.RuneCountInString(name)
				c.schema(defs.vals[j], at+"/"+escapeToken(name), atDef, 0)
			}
			continue
		}
		if !c.keywordOK(kw, types, typed) {
			c.add(at, "%s", c.keywordRule(kw, types))
			continue
		}
		c.value(s, kw, val, at, types, pos, nesting)
	}

	if slices.Contains(types, "array") {
		if _, ok := s.get("items"); !ok {
			c.add(ptr, "an array must say what its items are (items); %s refuses one without", c.r.profile)
		}
	}
	if slices.Contains(types, "object") {
		c.object(s, ptr, pos)
	}
}

func (c *checker) profileHere(pos position) string {
	if pos == atRoot {
		return c.r.profile.String()
	}
	return c.r.profile.String() + " (below the root)"
}

// types returns the type names s declares, and whether it declares any.
// It reports a "type" the profile does not take.
func (c *checker) types(s *object, ptr string) ([]string, bool) {
	t, ok := s.get("type")
	if !ok {
		return nil, false
	}
	at := ptr + "/type"
	var names []string
	switch t := t.(type) {
	case string:
		names = []string{t}
	case []any:
		if !c.r.typeArrays {
			c.add(at, `"type" is a list; %s takes one type name%s`, c.r.profile, c.nullHint())
		} else if len(t) == 0 {
			c.add(at, `"type" is an empty list`)
		}
		for _, x := range t {
			n, ok := x.(string)
			if !ok {
				c.add(at, `"type" holds %s, not a type name`, jsonKind(x))
				continue
			}
			if slices.Contains(names, n) {
				c.add(at, `"type" names %q twice`, n)
			}
			names = append(names, n)
		}
	default:
		c.add(at, `"type" must be a type name`)
		return nil, true
	}
	for i, n := range names {
		name := n
		if c.r.profile == Gemini {
			name = strings.ToLower(n) // Gemini's enum is STRING, NUMBER, ...
		}
		switch name {
		case "string", "number", "integer", "boolean", "array", "object", "null":
			names[i] = name
		default:
			c.add(at, "%q is not a type %s knows", n, c.r.profile)
		}
	}
	return names, true
}

func (c *checker) nullHint() string {
	switch c.r.null {
	case nullKeyword:
		return " (nullable: true admits null)"
	case nullAnyOf:
		return ` (anyOf with {"type": "null"} admits null)`
	}
	return ""
}

// keywordOK reports whether kw may be written on a schema of the given
// types (of any type, when untyped).
func (c *checker) keywordOK(kw string, types []string, typed bool) bool {
	if c.r.common[kw] {
		return true
	}
	if !typed {
		for _, set := range c.r.byType {
			if set[kw] {
				return true
			}
		}
		return false
	}
	for _, t := range types {
		if c.r.byType[t][kw] {
			return true
		}
	}
	return false
}

func (c *checker) keywordRule(kw string, types []string) string {
	var on []string
	for _, t := range slices.Sorted(maps.Keys(c.r.byType)) {
		if c.r.byType[t][kw] {
			on = append(on, t)
		}
	}
	if len(on) == 0 {
		return fmt.Sprintf("%s does not take %q", c.r.profile, kw)
	}
	return fmt.Sprintf("%s takes %q only on %s, not on %s", c.r.profile, kw, strings.Join(on, ", "), strings.Join(types, ", "))
}

// value checks the value of the keyword kw, which the profile allows.
func (c *checker) value(s *object, kw string, v any, at string, types []string, pos position, nesting int) {
	switch kw {
	case "title", "description", "pattern":
		if _, ok := v.(string); !ok {
			c.add(at, "%q must be a string", kw)
		}
	case "format":
		f, ok := v.(string)
		if !ok {
			c.add(at, "format must be a string")
			return
		}
		for _, t := range types {
			if t != "null" && !c.r.formatOK(t, f) {
				c.add(at, "format %q on %s: %s", f, t, c.formatRule(t))
				return
			}
		}
	case "nullable":
		if _, ok := v.(bool); !ok {
			c.add(at, "nullable must be true or false")
		}
	case "enum", "const":
		vals := []any{v}
		if kw == "enum" {
			a, ok := v.([]any)
			if !ok || len(a) == 0 {
				c.add(at, "enum must be a non-empty list")
				return
			}
			vals = a
		}
		c.enums += len(vals)
		n := 0
		for _, x := range vals {
			if s, ok := x.(string); ok {
				n += utf8.RuneCountInString(s)
			} else if c.r.enumStrings {
				c.add(at, "%s takes only strings in enum, not %s", c.r.profile, jsonKind(x))
				return
			}
		}
		c.chars += n
		if c.r.limits && len(vals) > maxBigEnum && n > maxBigEnumChars {
			c.add(at, "an enum of %d values with %d characters in all; OpenAI allows %d beyond %d values", len(vals), n, maxBigEnumChars, maxBigEnum)
		}
		if c.r.enumStrings && !slices.Equal(types, []string{"string"}) {
			c.add(at, `%s takes enum only with "type": "string"`, c.r.profile)
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		if _, ok := v.(json.Number); !ok {
			c.add(at, "%s must be a number", kw)
		}
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		if n, ok := v.(json.Number); !ok || !isInteger(n) || strings.HasPrefix(string(n), "-") {
			c.add(at, "%s must be a non-negative integer", kw)
		}
	case "items":
		c.schema(v, at, atItems, nesting)
	case "properties":
		props, ok := v.(*object)
		if !ok {
			c.add(at, "properties must be an object")
			return
		}
		for i, name := range props.keys {
			c.props++
			c.chars += utf8.RuneCountInString(name)
			c.schema(props.vals[i], at+"/"+escapeToken(name), atProperty, nesting)
		}
	case "required":
		list, ok := v.([]any)
		if !ok {
			c.add(at, "required must be a list of names")
			return
		}
		for _, x := range list {
			if _, ok := x.(string); !ok {
				c.add(at, "required must be a list of names")
				return
			}
		}
	case "additionalProperties":
		if v != false {
			c.add(at, "%s takes additionalProperties only as false", c.r.profile)
		}
	case "propertyOrdering":
		if _, ok := v.([]any); !ok {
			c.add(at, "propertyOrdering must be a list of names")
		}
	}
}

func (c *checker) formatRule(t string) string {
	allowed := slices.Sorted(maps.Keys(c.r.formats[t]))
	if len(allowed) == 0 {
		return fmt.Sprintf("%s takes no format on %s", c.r.profile, t)
	}
	return fmt.Sprintf("%s takes only %s", c.r.profile, strings.Join(allowed, ", "))
}

// object checks what an object schema s must have as a whole.
func (c *checker) object(s *object, ptr string, pos position) {
	props, _ := s.get("properties")
	p, _ := props.(*object)
	if c.r.nonEmptyObjects && pos != atRoot && (p == nil || p.len() == 0) {
		c.add(ptr, "an object below the root must have properties; %s refuses an empty one", c.r.profile)
	}
	if pos == atRoot && c.r.rootNames != nil && p != nil {
		for _, name := range p.keys {
			if !c.r.rootNames.MatchString(name) {
				c.add(ptr+"/properties/"+escapeToken(name), "argument name %q: %s takes a letter or _ then letters, digits and _, at most 64", name, c.r.profile)
			}
		}
	}
	reqv, _ := s.get("required")
	req, _ := reqv.([]any)
	if c.r.requiredDefined {
		for _, x := range req {
			if name, ok := x.(string); ok && (p == nil || p.index(name) < 0) {
				c.add(ptr+"/required", "required names %q, which is not among the properties", name)
			}
		}
	}
	if c.r.closed {
		if ap, ok := s.get("additionalProperties"); !ok || ap != false {
			c.add(ptr, "every object must have additionalProperties: false in %s", c.r.profile)
		}
		if p != nil {
			var missing []string
			for _, name := range p.keys {
				if !slices.Contains(req, any(name)) {
					missing = append(missing, name)
				}
			}
			if len(missing) > 0 {
				c.add(ptr, "every property must be required in %s (a nullable type stands for an optional one); not required: %s", c.r.profile, strings.Join(missing, ", "))
			}
		}
	}
}

// anyOf checks a schema with anyOf.
func (c *checker) anyOf(s *object, ptr string, pos position, nesting int) {
	at := ptr + "/anyOf"
	switch {
	case pos == atRoot:
		c.add(at, "the root must be an object schema, not anyOf")
	case pos == atItems && !c.r.anyOfInItems:
		c.add(at, "%s refuses anyOf directly inside items", c.r.profile)
	}
	for _, kw := range s.keys {
		if kw == "anyOf" {
			continue
		}
		if c.r.anyOfAlone || (kw != "title" && kw != "description") {
			c.add(ptr+"/"+escapeToken(kw), "%s takes no %q next to anyOf", c.r.profile, kw)
		}
	}
	v, _ := s.get("anyOf")
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		c.add(at, "anyOf must be a non-empty list of schemas")
		return
	}
	for i, b := range list {
		c.schema(b, fmt.Sprintf("%s/%d", at, i), atBranch, nesting)
	}
}

// ref checks a schema with $ref.
func (c *checker) ref(s *object, ref any, ptr string, pos position) {
	at := ptr + "/$ref"
	if !c.r.refs {
		c.add(at, "%s takes no $ref", c.r.profile)
		return
	}
	for _, kw := range s.keys {
		if kw != "$ref" && kw != "title" && kw != "description" {
			c.add(ptr+"/"+escapeToken(kw), "%s takes no %q next to $ref", c.r.profile, kw)
		}
	}
	target, _ := ref.(string)
	if target == "#" {
		return
	}
	name, ok := strings.CutPrefix(target, "#/$defs/")
	if ok {
		// A fragment is percent-encoded, then a JSON Pointer (RFC 6901,
		// section 6).
		var err error
		name, err = url.PathUnescape(name)
		ok = err == nil
	}
	if ok && !strings.Contains(name, "/") && c.root != nil {
		if defs, _ := c.root.get("$defs"); defs != nil {
			if d, ok := defs.(*object); ok && d.index(unescapeToken(name)) >= 0 {
				return
			}
		}
	}
	c.add(at, `$ref %v must be "#" or "#/$defs/<name>" naming a definition`, ref)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}
