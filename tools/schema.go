package tools

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// A Schemaer is a type that provides its own JSON Schema, for types whose
// JSON form reflection cannot see (custom MarshalJSON, enumerations).
// JSONSchema is called once, on the zero value, when a tool is built; the
// schema it returns is copied, never modified.
type Schemaer interface {
	JSONSchema() *jsonschema.Schema
}

var (
	schemaerType        = reflect.TypeFor[Schemaer]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType            = reflect.TypeFor[time.Time]()
	durationType        = reflect.TypeFor[time.Duration]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
)

// schemaFor infers the JSON Schema of values of type t as encoding/json
// reads them (input) or writes them (output).
//
// Types on a cycle (a tree node holding its children) are emitted once under
// $defs and referred to with $ref; every other type is inlined, because
// several MCP clients reject schemas with references. Input schemas are
// written for portability: a field is nullable only when tagged
// nullable:"true". Output schemas describe what encoding/json really writes:
// nil slices, maps and pointers without omitempty may be null.
func schemaFor(t reflect.Type, output bool, overrides map[reflect.Type]*jsonschema.Schema) (*jsonschema.Schema, error) {
	g := &inferrer{
		output:    output,
		overrides: overrides,
		onStack:   make(map[reflect.Type]bool),
		recursive: make(map[reflect.Type]string),
		defs:      make(map[string]*jsonschema.Schema),
	}
	s, err := g.schema(t)
	if err != nil || len(g.tagErrs) > 0 {
		// Every tag problem at once, so that a struct with several
		// misspelt tags is fixed in one run.
		return nil, errors.Join(append(g.tagErrs, err)...)
	}
	if s.Ref != "" {
		// The root type is itself recursive: advertise it inline (MCP wants
		// an object at the root), with its definition kept for the inner
		// references.
		s = g.defs[strings.TrimPrefix(s.Ref, "#/$defs/")].CloneSchemas()
	}
	if len(g.defs) > 0 {
		s.Defs = g.defs
	}
	return s, nil
}

type inferrer struct {
	output    bool
	overrides map[reflect.Type]*jsonschema.Schema
	onStack   map[reflect.Type]bool
	recursive map[reflect.Type]string // type -> its name under $defs
	defs      map[string]*jsonschema.Schema
	tagErrs   []error // the tag problems found so far (see checkTag), each once
}

func (g *inferrer) schema(t reflect.Type) (*jsonschema.Schema, error) {
	if s, ok := g.overrides[t]; ok {
		return s.CloneSchemas(), nil
	}
	if name, ok := g.recursive[t]; ok {
		return &jsonschema.Schema{Ref: "#/$defs/" + name}, nil
	}
	if g.onStack[t] {
		name := g.defName(t)
		g.recursive[t] = name
		return &jsonschema.Schema{Ref: "#/$defs/" + name}, nil
	}
	if s := g.special(t); s != nil {
		return s, nil
	}
	if t.Kind() == reflect.Pointer {
		return g.pointer(t)
	}
	if t.Name() != "" {
		g.onStack[t] = true
		defer delete(g.onStack, t)
	}
	s, err := g.structural(t)
	if err != nil {
		return nil, err
	}
	if name, ok := g.recursive[t]; ok {
		g.defs[name] = s
		return &jsonschema.Schema{Ref: "#/$defs/" + name}, nil
	}
	return s, nil
}

// special returns the schema of types whose JSON form is not their Go
// structure, or nil.
func (g *inferrer) special(t reflect.Type) *jsonschema.Schema {
	switch t {
	case timeType:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	case durationType:
		return &jsonschema.Schema{Type: "integer", Description: "A duration in nanoseconds."}
	case rawMessageType:
		return anySchema()
	case numberType:
		return &jsonschema.Schema{Type: "number"}
	}
	// Pointers are described by their element type (see pointer).
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(schemaerType) {
		if s := reflect.New(t).Interface().(Schemaer).JSONSchema(); s != nil {
			return s.CloneSchemas()
		}
	}
	return nil
}

func (g *inferrer) pointer(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := g.schema(t.Elem())
	if err != nil {
		return nil, err
	}
	if g.output {
		s = nullable(s)
	}
	return s, nil
}

// customJSON reports whether t encodes or decodes itself as JSON in a way
// reflection cannot see.
func (g *inferrer) customJSON(t reflect.Type) (text, other bool) {
	pt := reflect.PointerTo(t)
	implements := func(iface reflect.Type) bool { return t.Implements(iface) || pt.Implements(iface) }
	if g.output {
		if implements(jsonMarshalerType) {
			return false, true
		}
		return implements(textMarshalerType), false
	}
	if implements(jsonUnmarshalerType) {
		return false, true
	}
	return implements(textUnmarshalerType), false
}

func (g *inferrer) structural(t reflect.Type) (*jsonschema.Schema, error) {
	if text, other := g.customJSON(t); other {
		return nil, fmt.Errorf("type %s has its own JSON encoding: give it a JSONSchema method (tools.Schemaer) or set Options.TypeSchemas", t)
	} else if text {
		return &jsonschema.Schema{Type: "string"}, nil
	}
	s := new(jsonschema.Schema)
	switch t.Kind() {
	case reflect.Bool:
		s.Type = "boolean"
	case reflect.Int, reflect.Int64:
		s.Type = "integer"
	case reflect.Int8:
		s.Type, s.Minimum, s.Maximum = "integer", ptr(math.MinInt8), ptr(math.MaxInt8)
	case reflect.Int16:
		s.Type, s.Minimum, s.Maximum = "integer", ptr(math.MinInt16), ptr(math.MaxInt16)
	case reflect.Int32:
		s.Type, s.Minimum, s.Maximum = "integer", ptr(math.MinInt32), ptr(math.MaxInt32)
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		s.Type, s.Minimum = "integer", ptr(0)
	case reflect.Uint8:
		s.Type, s.Minimum, s.Maximum = "integer", ptr(0), ptr(math.MaxUint8)
	case reflect.Uint16:
		s.Type, s.Minimum, s.Maximum = "integer", ptr(0), ptr(math.MaxUint16)
	case reflect.Uint32:
		s.Type, s.Minimum, s.Maximum = "integer", ptr(0), ptr(math.MaxUint32)
	case reflect.Float32, reflect.Float64:
		s.Type = "number"
	case reflect.String:
		s.Type = "string"
	case reflect.Interface:
		return anySchema(), nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(textUnmarshalerType) {
			s.Type, s.ContentEncoding = "string", "base64" // encoding/json's []byte
			break
		}
		fallthrough
	case reflect.Array:
		items, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s.Type, s.Items = "array", items
		if t.Kind() == reflect.Array {
			s.MinItems, s.MaxItems = intPtr(t.Len()), intPtr(t.Len())
		}
		if g.output && t.Kind() == reflect.Slice {
			s = nullable(s)
		}
	case reflect.Map:
		switch k := t.Key(); {
		case k.Kind() == reflect.String, k.Implements(textMarshalerType) && !g.output || reflect.PointerTo(k).Implements(textUnmarshalerType),
			isIntKind(k.Kind()):
		default:
			return nil, fmt.Errorf("map key type %s has no JSON form", k)
		}
		values, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s.Type, s.AdditionalProperties = "object", values
		if g.output {
			s = nullable(s)
		}
	case reflect.Struct:
		return g.object(t)
	default:
		return nil, fmt.Errorf("type %s (%s) has no JSON form", t, t.Kind())
	}
	return s, nil
}

// object returns the schema of a struct: its fields as encoding/json sees
// them, required unless optional, no other properties.
func (g *inferrer) object(t reflect.Type) (*jsonschema.Schema, error) {
	s := &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}, // false
	}
	for _, f := range jsonFields(t) {
		ft := f.typ
		if ft.Kind() == reflect.Pointer && g.overrides[ft] == nil {
			// Whether a field may be null depends on its tags, not on
			// its type alone: decided below.
			ft = ft.Elem()
		}
		fs, err := g.schema(ft)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", t, f.goName, err)
		}
		if f.quoted {
			fs = quotedSchema(fs)
		}
		// A tag that cannot be read is a problem like a misspelt key: kept
		// with the others, and the fields after it still checked.
		required, errs := g.applyTags(fs, f)
		for _, e := range append(checkTag(f.tag), errs...) {
			e = fmt.Errorf("field %s.%s: %w", t, f.goName, e)
			if !slices.ContainsFunc(g.tagErrs, func(x error) bool { return x.Error() == e.Error() }) {
				g.tagErrs = append(g.tagErrs, e)
			}
		}
		if g.output && f.mayBeNull() && !slices.Contains(fs.Types, "null") && fs.Type != "null" {
			fs = nullable(fs)
		}
		s.Properties[f.name] = fs
		s.PropertyOrder = append(s.PropertyOrder, f.name)
		if required {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// applyTags applies a field's schema tags to fs and reports whether the
// field is required, with every tag value it cannot read (the others are
// applied all the same).
func (g *inferrer) applyTags(fs *jsonschema.Schema, f jsonField) (required bool, errs []error) {
	tag := f.tag
	required = !f.omitEmpty && !f.omitZero
	if !g.output && f.typ.Kind() == reflect.Pointer {
		required = false
	}
	if d, ok := tag.Lookup("description"); ok {
		fs.Description = d
	} else if d, ok := tag.Lookup("jsonschema"); ok { // the SDK's convention
		fs.Description = d
	}
	if v, ok := tag.Lookup("title"); ok {
		fs.Title = v
	}
	if v, ok := tag.Lookup("header"); ok && !g.output {
		if err := headerAnnotation(fs, v); err != nil {
			errs = append(errs, err)
		}
	}
	target := fs // where value constraints go: the items, for a list of scalars
	if fs.Type == "array" && fs.Items != nil && fs.Items.Type != "object" && fs.Items.Type != "array" {
		target = fs.Items
	}
	elem := f.typ
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if target != fs {
		elem = elem.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
	}
	if v, ok := tag.Lookup("enum"); ok {
		for _, item := range strings.Split(v, ",") {
			val, err := tagValue(elem, strings.TrimSpace(item), f.quoted)
			if err != nil {
				errs = append(errs, fmt.Errorf("enum: %w", err))
				continue
			}
			target.Enum = append(target.Enum, val)
		}
	}
	if v, ok := tag.Lookup("default"); ok {
		if raw, err := defaultValue(f, v); err != nil {
			errs = append(errs, fmt.Errorf("default: %w", err))
		} else {
			fs.Default = raw
			required = false
		}
	}
	for _, num := range []struct {
		key string
		dst **float64
	}{
		{"minimum", &target.Minimum}, {"maximum", &target.Maximum},
		{"exclusiveMinimum", &target.ExclusiveMinimum}, {"exclusiveMaximum", &target.ExclusiveMaximum},
		{"multipleOf", &target.MultipleOf},
	} {
		if v, ok := tag.Lookup(num.key); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a number", num.key, v))
				continue
			}
			*num.dst = &x
		}
	}
	for _, n := range []struct {
		key string
		dst **int
	}{
		{"minLength", &target.MinLength}, {"maxLength", &target.MaxLength},
		{"minItems", &fs.MinItems}, {"maxItems", &fs.MaxItems},
		{"minProperties", &fs.MinProperties}, {"maxProperties", &fs.MaxProperties},
	} {
		if v, ok := tag.Lookup(n.key); ok {
			x, err := strconv.Atoi(v)
			if err != nil || x < 0 {
				errs = append(errs, fmt.Errorf("%s: %q is not a non-negative integer", n.key, v))
				continue
			}
			*n.dst = &x
		}
	}
	if v, ok := tag.Lookup("pattern"); ok {
		if _, err := regexp.Compile(v); err != nil {
			errs = append(errs, fmt.Errorf("pattern: %w", err))
		} else {
			target.Pattern = v
		}
	}
	if v, ok := tag.Lookup("format"); ok {
		target.Format = v
	}
	for _, b := range []struct {
		key string
		set func(bool) error
	}{
		{"uniqueItems", func(x bool) error { fs.UniqueItems = x; return nil }},
		{"deprecated", func(x bool) error { fs.Deprecated = x; return nil }},
		{"required", func(x bool) error { required = x; return nil }},
		{"nullable", func(x bool) error {
			if x {
				*fs = *nullable(fs)
			}
			return nil
		}},
	} {
		if v, ok := tag.Lookup(b.key); ok {
			x, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a boolean", b.key, v))
				continue
			}
			b.set(x)
		}
	}
	return required, errs
}

// defaultValue returns the JSON of the value of f's default tag v.
func defaultValue(f jsonField, v string) (json.RawMessage, error) {
	val, err := tagValue(f.typ, v, f.quoted)
	if err != nil {
		return nil, err
	}
	return json.Marshal(val)
}

// tagValue parses a tag's text as a value of type t: strings are taken
// literally, everything else is JSON.
func tagValue(t reflect.Type, text string, quoted bool) (any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.String && !quoted {
		return text, nil
	}
	v := reflect.New(t)
	if err := json.Unmarshal([]byte(text), v.Interface()); err != nil {
		return nil, fmt.Errorf("%q is not %s", text, kindName(t))
	}
	// Keep the JSON form, which is what the schema holds.
	var out any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// kindName says what a value of t is, for messages: "an integer", "a
// string".
func kindName(t reflect.Type) string {
	name := jsonTypeName(t)
	if strings.IndexByte("aeiou", name[0]) >= 0 {
		return "an " + name
	}
	return "a " + name
}

// defName returns a name under $defs for t, unique within this schema.
func (g *inferrer) defName(t reflect.Type) string {
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 { // generic instantiation
		name = name[:i]
	}
	taken := func(n string) bool {
		for _, used := range g.recursive {
			if used == n {
				return true
			}
		}
		return false
	}
	base := name
	for i := 2; taken(name); i++ {
		name = base + strconv.Itoa(i)
	}
	return name
}

// anySchema admits any JSON value. It is written {"description": ...}
// rather than true: some clients reject boolean schemas for properties.
func anySchema() *jsonschema.Schema {
	return &jsonschema.Schema{Description: "Any JSON value."}
}

// nullable returns s extended to admit null.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	switch {
	case s.Type != "":
		s.Types, s.Type = []string{s.Type, "null"}, ""
	case len(s.Types) > 0:
		if !slices.Contains(s.Types, "null") {
			s.Types = append(s.Types, "null")
		}
	case s.Ref != "":
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
	}
	return s
}

// quotedSchema is the schema of a field with the ",string" option, which
// encoding/json writes as a JSON string holding the value.
func quotedSchema(s *jsonschema.Schema) *jsonschema.Schema {
	switch s.Type {
	case "integer", "number", "boolean":
		return &jsonschema.Schema{Type: "string", Description: s.Description}
	}
	return s
}

func isIntKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func ptr(f float64) *float64 { return &f }
func intPtr(n int) *int      { return &n }

// A jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name      string
	goName    string
	tagged    bool
	index     []int
	typ       reflect.Type
	tag       reflect.StructTag
	omitEmpty bool
	omitZero  bool
	quoted    bool
}

// mayBeNull reports whether encoding/json may write null for the field.
func (f jsonField) mayBeNull() bool {
	if f.omitEmpty || f.omitZero {
		return false
	}
	switch f.typ.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return true
	}
	return false
}

// jsonFields returns the fields encoding/json encodes for struct type t, in
// its order, applying its rules for embedded structs and name conflicts.
func jsonFields(t reflect.Type) []jsonField {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var (
		fields  []jsonField
		depthOf = map[string]int{}
		level   = []embedded{{typ: t}}
		visited = map[reflect.Type]bool{}
	)
	for depth := 0; len(level) > 0; depth++ {
		var next []embedded
		var found []jsonField
		for _, e := range level {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(e.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, embedded{typ: ft, index: index})
					continue
				}
				f := jsonField{
					name:   name,
					goName: sf.Name,
					tagged: name != "",
					index:  index,
					typ:    sf.Type,
					tag:    sf.Tag,
				}
				if f.name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty":
						f.omitEmpty = true
					case "omitzero":
						f.omitZero = true
					case "string":
						switch sf.Type.Kind() {
						case reflect.Bool, reflect.Float32, reflect.Float64, reflect.String,
							reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
							f.quoted = sf.Type.Kind() != reflect.String
						}
					}
				}
				found = append(found, f)
			}
		}
		// At one depth, a name held by several fields is dropped unless
		// exactly one of them is tagged; a name seen at a shallower depth
		// hides deeper ones.
		byName := map[string][]jsonField{}
		for _, f := range found {
			if _, shallower := depthOf[f.name]; !shallower {
				byName[f.name] = append(byName[f.name], f)
			}
		}
		for _, f := range found {
			group := byName[f.name]
			if len(group) == 0 {
				continue
			}
			winner, ok := dominant(group)
			if ok && slices.Equal(winner.index, f.index) {
				fields = append(fields, f)
			}
		}
		for name := range byName {
			depthOf[name] = depth
		}
		level = next
	}
	slices.SortStableFunc(fields, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return fields
}

func dominant(group []jsonField) (jsonField, bool) {
	if len(group) == 1 {
		return group[0], true
	}
	var tagged []jsonField
	for _, f := range group {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return jsonField{}, false
}
