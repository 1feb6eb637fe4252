package schema

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/spell"
)

// KnownValid reports whether data is a schema that [Compile] accepts,
// judged in one pass over its bytes, without decoding or compiling it. It
// is true only for a schema made of the keywords of 2020-12 that a tool's
// schema commonly uses (types, bounds, patterns, enumerations, properties
// and items, the applicators, $defs at the root and a $ref to one of them,
// "#/$defs/name", that does not make a schema apply itself to the same
// value), each with a value Compile accepts, and of annotations; it is
// false for anything else, such as another $ref, a $schema or a keyword it
// does not know. False says nothing of the schema: compile it to learn
// whether it is valid, and why not.
//
// It lets a registry refuse an invalid schema when a tool is added, and
// compile a valid one only when the tool is first called. seen, when not
// nil, remembers the regular expressions found valid, which the schemas
// of a generated catalog repeat.
func KnownValid(data []byte, seen *Patterns) bool {
	k := known{d: data, seen: seen}
	k.space()
	if !k.schema(0, place{}) {
		return false
	}
	k.space()
	return k.i == len(k.d) && k.refsResolve()
}

// place is where a schema sits: within which definition of the root's
// $defs ("" for none), and whether it applies to the same value as that
// definition (through allOf, not, then and the like), so that a $ref from
// it may close a cycle that Compile refuses.
type place struct {
	def     string
	inPlace bool
}

// refsResolve reports whether every $ref names a definition of the root's
// $defs, and no definition applies itself to the same value through them.
func (k *known) refsResolve() bool {
	for _, name := range k.refs {
		if !k.defs[name] {
			return false
		}
	}
	const (
		unseen = iota
		open
		done
	)
	state := make(map[string]int, len(k.edges))
	var cycle func(def string) bool
	cycle = func(def string) bool {
		switch state[def] {
		case open:
			return true
		case done:
			return false
		}
		state[def] = open
		for _, to := range k.edges[def] {
			if cycle(to) {
				return true
			}
		}
		state[def] = done
		return false
	}
	for def := range k.edges {
		if cycle(def) {
			return false
		}
	}
	return true
}

// Patterns is a set of regular expressions known to compile, as JSON
// string text, up to maxPatterns of them. It is safe for concurrent use;
// the zero value is empty.
type Patterns struct {
	mu    sync.Mutex
	valid map[string]struct{}
}

// maxPatterns bounds a Patterns: past it, it starts again empty.
const maxPatterns = 1024

func (p *Patterns) has(text []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.valid[string(text)]
	return ok
}

func (p *Patterns) add(text []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.valid == nil || len(p.valid) >= maxPatterns {
		p.valid = make(map[string]struct{})
	}
	p.valid[string(text)] = struct{}{}
}

// maxKnownDepth bounds the nesting KnownValid follows; a deeper schema is
// left to Compile.
const maxKnownDepth = 64

// known is the state of KnownValid's pass: the text and where it is.
type known struct {
	d    []byte
	i    int
	seen *Patterns

	rootDefs bool                // the root's $defs were read
	defs     map[string]bool     // the names of the root's $defs
	refs     []string            // the definitions $refs name
	edges    map[string][]string // the definitions each definition names in $refs in place
}

func (k *known) space() { k.i = skipSpace(k.d, k.i) }

// peek returns the byte at the current position, or 0 at the end.
func (k *known) peek() byte {
	if k.i < len(k.d) {
		return k.d[k.i]
	}
	return 0
}

// next steps over c, and the white space after it, if c is next.
func (k *known) next(c byte) bool {
	if k.peek() != c {
		return false
	}
	k.i++
	k.space()
	return true
}

// literal steps over the literal lit if it is next.
func (k *known) literal(lit string) bool {
	if len(k.d)-k.i < len(lit) || string(k.d[k.i:k.i+len(lit)]) != lit {
		return false
	}
	k.i += len(lit)
	return true
}

// str steps over the string that is next and returns its text between the
// quotes, and whether that text is the string (no escapes, valid UTF-8).
func (k *known) str() (text []byte, plain, ok bool) {
	if k.peek() != '"' {
		return nil, false, false
	}
	end, plain, _ := scanString(k.d, k.i)
	if end < 0 {
		return nil, false, false
	}
	text = k.d[k.i+1 : end-1]
	k.i = end
	return text, plain, true
}

// number steps over the number that is next, which must be within the
// range of a float64 (encoding/json refuses others), and returns its text
// and shape.
func (k *known) number() (text []byte, shape int, ok bool) {
	end, shape := scanNumber(k.d, k.i)
	if end < 0 {
		return nil, 0, false
	}
	text = k.d[k.i:end]
	if _, inRange := parseNumber(text, shape); !inRange {
		return nil, 0, false
	}
	k.i = end
	return text, shape, true
}

// value steps over any JSON value whose numbers are within the range of a
// float64, as an annotation, a default or an enumeration may have.
func (k *known) value(depth int) bool {
	if depth > maxKnownDepth {
		return false
	}
	switch c := k.peek(); {
	case c == '"':
		_, _, ok := k.str()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		_, _, ok := k.number()
		return ok
	case c == 't':
		return k.literal("true")
	case c == 'f':
		return k.literal("false")
	case c == 'n':
		return k.literal("null")
	case c == '[':
		k.i++
		k.space()
		if k.next(']') {
			return true
		}
		for {
			if !k.value(depth + 1) {
				return false
			}
			k.space()
			if k.next(']') {
				return true
			}
			if !k.next(',') {
				return false
			}
		}
	case c == '{':
		k.i++
		k.space()
		if k.next('}') {
			return true
		}
		for {
			if _, _, ok := k.str(); !ok {
				return false
			}
			k.space()
			if !k.next(':') || !k.value(depth+1) {
				return false
			}
			k.space()
			if k.next('}') {
				return true
			}
			if !k.next(',') {
				return false
			}
		}
	}
	return false
}

// schema steps over a schema at p: true, false, or an object of keywords
// KnownValid knows, each with a value Compile accepts.
func (k *known) schema(depth int, p place) bool {
	if depth > maxKnownDepth {
		return false
	}
	switch k.peek() {
	case 't':
		return k.literal("true")
	case 'f':
		return k.literal("false")
	case '{':
	default:
		return false
	}
	k.i++
	k.space()
	if k.next('}') {
		return true
	}
	for {
		kw, plain, ok := k.str()
		if !ok || !plain {
			return false
		}
		k.space()
		if !k.next(':') || !k.keyword(kw, depth, p) {
			return false
		}
		k.space()
		if k.next('}') {
			return true
		}
		if !k.next(',') {
			return false
		}
	}
}

// keyword steps over the value of the keyword kw of a schema at p.
func (k *known) keyword(kw []byte, depth int, p place) bool {
	below := place{def: p.def} // a subschema that applies to another value
	switch string(kw) {
	case "type":
		return k.types()
	case "title", "description", "format", "$comment", "contentEncoding", "contentMediaType":
		_, _, ok := k.str()
		return ok
	case "pattern":
		return k.pattern()
	case "default", "const":
		return k.value(depth + 1)
	case "enum", "examples":
		return k.peek() == '[' && k.value(depth+1)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		_, _, ok := k.number()
		return ok
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
		return k.integer()
	case "deprecated", "readOnly", "writeOnly", "uniqueItems":
		return k.literal("true") || k.literal("false")
	case "required":
		return k.strings()
	case "dependentRequired":
		return k.members(func(k *known) bool { return k.strings() })
	case "properties":
		return k.members(func(k *known) bool { return k.schema(depth+1, below) })
	case "dependentSchemas":
		return k.members(func(k *known) bool { return k.schema(depth+1, p) })
	case "$defs":
		return depth == 0 && k.definitions()
	case "$ref":
		return k.ref(p)
	case "patternProperties":
		return k.patternMembers(depth, below)
	case "items", "additionalProperties", "propertyNames", "contains", "contentSchema":
		return k.schema(depth+1, below)
	case "not", "if", "then", "else":
		return k.schema(depth+1, p)
	case "prefixItems":
		return k.schemas(depth, below)
	case "allOf", "anyOf", "oneOf":
		return k.schemas(depth, p)
	}
	if !annotation(kw) {
		return false
	}
	return k.value(depth + 1)
}

// definitions steps over the root's $defs, each a schema of its own
// place. The root has them once: encoding/json would keep the last of two.
func (k *known) definitions() bool {
	if k.rootDefs || !k.next('{') {
		return false
	}
	k.rootDefs = true
	if k.next('}') {
		return true
	}
	for {
		name, plain, ok := k.str()
		if !ok {
			return false
		}
		k.space()
		if !k.next(':') {
			return false
		}
		def := ""
		if plain && refName(name) {
			def = string(name)
			if k.defs == nil {
				k.defs = make(map[string]bool)
			}
			k.defs[def] = true
		}
		if !k.schema(1, place{def: def, inPlace: def != ""}) {
			return false
		}
		k.space()
		if k.next('}') {
			return true
		}
		if !k.next(',') {
			return false
		}
	}
}

// ref steps over the value of a $ref at p, which must be "#/$defs/name"
// (see refName). It notes the name, to be found among the root's $defs,
// and, when p is in place in a definition, the edge from that definition.
func (k *known) ref(p place) bool {
	text, plain, ok := k.str()
	name, cut := bytes.CutPrefix(text, []byte("#/$defs/"))
	if !ok || !plain || !cut || !refName(name) {
		return false
	}
	k.refs = append(k.refs, string(name))
	if p.def != "" && p.inPlace {
		if k.edges == nil {
			k.edges = make(map[string][]string)
		}
		k.edges[p.def] = append(k.edges[p.def], string(name))
	}
	return true
}

// refName reports whether name, a definition's, is one a $ref names as it
// is in a JSON pointer and a URI fragment: letters, digits, '_', '-', '.'.
func refName(name []byte) bool {
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return len(name) > 0
}

// annotation reports whether kw, a keyword KnownValid does not know, is one
// that Compile takes for an annotation whatever its value: one of an
// author's own (x-...), of another vocabulary (see annotations), or a
// plain word no keyword's near miss, which jsonschema-go does not take for
// a keyword in another case either.
func annotation(kw []byte) bool {
	if len(kw) > 2 && kw[0] == 'x' && kw[1] == '-' {
		return true
	}
	if len(kw) > 0 && kw[0] == '$' {
		return false // $recursiveRef, and whatever else a dialect means by one
	}
	word := string(kw)
	if slices.Contains(annotations, word) {
		return true
	}
	for _, c := range kw {
		if c >= utf8.RuneSelf {
			return false // encoding/json folds some letters beyond ASCII
		}
	}
	for _, known := range keywords {
		if strings.EqualFold(word, known) {
			return false
		}
	}
	_, near := spell.Suggest(word, keywords)
	return !near
}

// types steps over the value of "type": a type's name or a list of them.
func (k *known) types() bool {
	one := func() bool {
		name, plain, ok := k.str()
		return ok && plain && typeBit(string(name)) != 0
	}
	if !k.next('[') {
		return one()
	}
	if k.next(']') {
		return true
	}
	for {
		if !one() {
			return false
		}
		k.space()
		if k.next(']') {
			return true
		}
		if !k.next(',') {
			return false
		}
	}
}

// pattern steps over the value of "pattern", a regular expression.
func (k *known) pattern() bool {
	text, plain, ok := k.str()
	return ok && k.validPattern(text, plain)
}

// validPattern reports whether the JSON string text (between its quotes;
// plain when it has no escapes) is a regular expression as Compile reads
// one.
func (k *known) validPattern(text []byte, plain bool) bool {
	if k.seen != nil && k.seen.has(text) {
		return true
	}
	var src string
	if plain {
		src = string(text)
	} else {
		src = string(appendUnquoted(nil, text))
	}
	if _, err := regexp.Compile(src); err != nil {
		return false
	}
	if k.seen != nil {
		k.seen.add(text)
	}
	return true
}

// integer steps over the value of a keyword that counts (minLength,
// maxItems, ...): an integer of up to nine digits, which jsonschema-go
// reads into an int32. Other spellings of an integer (1.0, 1e2) are left
// to Compile.
func (k *known) integer() bool {
	text, shape, ok := k.number()
	if !ok || shape != numInt {
		return false
	}
	if text[0] == '-' {
		text = text[1:]
	}
	return len(text) <= 9
}

// strings steps over a list of strings.
func (k *known) strings() bool {
	if !k.next('[') {
		return false
	}
	if k.next(']') {
		return true
	}
	for {
		if _, _, ok := k.str(); !ok {
			return false
		}
		k.space()
		if k.next(']') {
			return true
		}
		if !k.next(',') {
			return false
		}
	}
}

// schemas steps over a list of schemas at p.
func (k *known) schemas(depth int, p place) bool {
	if !k.next('[') {
		return false
	}
	if k.next(']') {
		return true
	}
	for {
		if !k.schema(depth+1, p) {
			return false
		}
		k.space()
		if k.next(']') {
			return true
		}
		if !k.next(',') {
			return false
		}
	}
}

// members steps over an object whose members' values each satisfy value.
func (k *known) members(value func(*known) bool) bool {
	if !k.next('{') {
		return false
	}
	if k.next('}') {
		return true
	}
	for {
		if _, _, ok := k.str(); !ok {
			return false
		}
		k.space()
		if !k.next(':') || !value(k) {
			return false
		}
		k.space()
		if k.next('}') {
			return true
		}
		if !k.next(',') {
			return false
		}
	}
}

// patternMembers steps over the value of "patternProperties": regular
// expressions, each with a schema.
func (k *known) patternMembers(depth int, p place) bool {
	if !k.next('{') {
		return false
	}
	if k.next('}') {
		return true
	}
	for {
		src, plain, ok := k.str()
		if !ok || !k.validPattern(src, plain) {
			return false
		}
		k.space()
		if !k.next(':') || !k.schema(depth+1, p) {
			return false
		}
		k.space()
		if k.next('}') {
			return true
		}
		if !k.next(',') {
			return false
		}
	}
}
