package schema

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// ApplyDefaults returns data with the default values of missing properties
// inserted, and whether it inserted any. It returns data itself, without
// allocating, when no default is missing. Empty data and a bare null stand
// for {}.
//
// It applies every default that jsonschema-go's Resolved.ApplyDefaults
// applies, with the same value: a property of an object whose schema lists
// it in properties with a default, unless the schema requires it; a
// missing property whose own properties have defaults is added as an object
// holding them. Unlike jsonschema-go, it also follows $ref and allOf, and
// descends into array items (items and prefixItems) and into properties
// the schema requires; a property whose schema is a $ref takes the default
// of the reference's target when it has none of its own. Values that come from defaults are completed only
// through the properties keywords of their schema, as jsonschema-go does,
// so that a recursive schema cannot make them grow without end.
//
// Inserted properties follow those of the object, in the order of the
// schemas that have them (the schema itself, then $ref, then allOf), by
// name within each. Defaults are copied from the schema, never shared.
func (v *Validator) ApplyDefaults(data []byte) ([]byte, bool, error) {
	doc := data
	if len(doc) == 0 || isNullDoc(doc) {
		doc = v.empty
	}
	st := v.getState(doc)
	defer v.putState(st)
	st.quiet = true
	i := skipSpace(doc, 0)
	if i == len(doc) {
		return nil, false, &SyntaxError{Offset: i, Msg: "no JSON value"}
	}
	var b builder
	var end int
	if v.hasDefaults {
		end = st.defaults(v.root.defSources, i, &b)
	} else {
		end = st.skip(i)
	}
	if st.err != nil {
		return nil, false, st.err
	}
	if j := skipSpace(doc, end); j != len(doc) {
		return nil, false, &SyntaxError{Offset: j, Msg: "data after the JSON value"}
	}
	if b.out == nil {
		return data, false, nil
	}
	return b.finish(doc), true, nil
}

// builder builds a copy of a document with insertions, allocating nothing
// until the first one.
type builder struct {
	out  []byte
	last int // data[:last] is in out
}

// insert inserts text at data[at], after a comma if comma is set.
func (b *builder) insert(data []byte, at int, comma bool, text []byte) {
	if b.out == nil {
		b.out = make([]byte, 0, len(data)+64)
	}
	b.out = append(b.out, data[b.last:at]...)
	if comma {
		b.out = append(b.out, ',')
	}
	b.out = append(b.out, text...)
	b.last = at
}

func (b *builder) finish(data []byte) []byte {
	return append(b.out, data[b.last:]...)
}

// defaults walks the value at data[i], to which the nodes of set apply,
// inserting missing defaults into b.
func (st *state) defaults(set []*node, i int, b *builder) int {
	if st.budget--; st.budget < 0 {
		st.err = ErrTooComplex
		return -1
	}
	d := st.data
	if i >= len(d) {
		return st.syntax(i, "unexpected end of JSON input")
	}
	below := false
	for _, n := range set {
		below = below || n.defBelow
	}
	if !below {
		return st.skip(i)
	}
	switch d[i] {
	case '{':
		return st.defaultsObject(set, i, b)
	case '[':
		return st.defaultsArray(set, i, b)
	}
	return st.skip(i)
}

// propChildren pushes onto st.nodes the default sources of the schemas that
// the nodes of set apply to their property name, and returns them.
func (st *state) propChildren(set []*node, name []byte) []*node {
	base := len(st.nodes)
	for _, n := range set {
		if n.props == nil {
			continue
		}
		if idx := n.lookup(name); idx >= 0 {
			st.pushSources(base, n.props[idx])
		}
	}
	return st.nodes[base:]
}

// itemChildren is propChildren for array item k.
func (st *state) itemChildren(set []*node, k int) []*node {
	base := len(st.nodes)
	for _, n := range set {
		c := n.items
		if k < len(n.prefix) {
			c = n.prefix[k]
		}
		st.pushSources(base, c)
	}
	return st.nodes[base:]
}

func (st *state) pushSources(base int, c *node) {
	if c == nil || !c.defBelow {
		return
	}
	for _, s := range c.defSources {
		if !slices.Contains(st.nodes[base:], s) {
			st.nodes = append(st.nodes, s)
		}
	}
}

func (st *state) defaultsArray(set []*node, i int, b *builder) int {
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, ']')
	for k := 0; more; k++ {
		j = skipSpace(d, j)
		base := len(st.nodes)
		var end int
		if sub := st.itemChildren(set, k); len(sub) > 0 {
			end = st.defaults(sub, j, b)
		} else {
			end = st.skip(j)
		}
		st.nodes = st.nodes[:base]
		if end < 0 {
			return -1
		}
		if j, more = next(d, end, ']'); j < 0 {
			return st.sepError(end, ']')
		}
	}
	st.depth--
	return j
}

func (st *state) defaultsObject(set []*node, i int, b *builder) int {
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, '}')
	keys := keySet{base: len(st.keys)}
	kbufBase := len(st.kbuf)
	members := 0
	for more {
		key, _, _, vj := st.member(skipSpace(d, j), &keys)
		if vj < 0 {
			return -1
		}
		base := len(st.nodes)
		var end int
		if sub := st.propChildren(set, key); len(sub) > 0 {
			end = st.defaults(sub, vj, b)
		} else {
			end = st.skip(vj)
		}
		st.nodes = st.nodes[:base]
		if end < 0 {
			return -1
		}
		members++
		if j, more = next(d, end, '}'); j < 0 {
			return st.sepError(end, '}')
		}
	}
	// Insert the missing defaults before the closing brace.
	var inserted []string
	for _, src := range set {
		for idx, text := range src.insert {
			if text == nil {
				continue
			}
			name := src.names[idx]
			if st.hasKey(&keys, []byte(name)) || slices.Contains(inserted, name) {
				continue
			}
			inserted = append(inserted, name)
			b.insert(d, j-1, members > 0, text)
			members++
		}
	}
	st.dropKeys(&keys)
	st.kbuf = st.kbuf[:kbufBase]
	st.depth--
	return j
}

// fillInserts computes, for the properties of s that have a default (or
// whose properties have), the member text to insert when they are missing.
func (c *compiler) fillInserts(n *node, s *jsonschema.Schema) {
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for idx, name := range n.names {
		ps := s.Properties[name]
		if ps == nil || required[name] {
			continue
		}
		// A property whose schema is only a reference takes the default
		// its target declares (an enumeration in $defs with its usual
		// value, say); a default next to the $ref takes precedence.
		// Only an explicit default is taken from the target: an object
		// behind a reference is not created just because its properties
		// have defaults.
		for t, hops := ps, 0; ps.Default == nil && t.Ref != "" && hops < 32; hops++ {
			if t = c.resolveRef(t); t == nil {
				break
			}
			if t.Default != nil {
				ps = t
			}
		}
		var val any
		var err error
		switch {
		case ps.Default != nil:
			if val, err = decodeDefault(ps.Default); err == nil {
				val, err = fillDefaults(val, ps)
			}
		case hasDefaultsInProperties(ps):
			val, err = fillDefaults(map[string]any{}, ps)
		default:
			continue
		}
		if err == nil {
			var text []byte
			if text, err = marshalMember(name, val); err == nil {
				if n.insert == nil {
					n.insert = make([][]byte, len(n.names))
				}
				n.insert[idx] = text
				continue
			}
		}
		c.fail(s, "properties/"+escapePointer(name)+"/default", err)
		return
	}
}

// decodeDefault decodes a default value, keeping its numbers as written.
func decodeDefault(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// fillDefaults applies the defaults of the properties of s to v, as
// jsonschema-go's ApplyDefaults does: through properties only.
func fillDefaults(v any, s *jsonschema.Schema) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	for prop, sub := range s.Properties {
		if slices.Contains(s.Required, prop) {
			continue
		}
		val, present := m[prop]
		var err error
		switch {
		case !present && sub.Default != nil:
			if val, err = decodeDefault(sub.Default); err == nil {
				m[prop], err = fillDefaults(val, sub)
			}
		case present:
			m[prop], err = fillDefaults(val, sub)
		case hasDefaultsInProperties(sub):
			m[prop], err = fillDefaults(map[string]any{}, sub)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// hasDefaultsInProperties reports whether s or a schema below it through
// properties has a default.
func hasDefaultsInProperties(s *jsonschema.Schema) bool {
	if s.Default != nil {
		return true
	}
	for _, ps := range s.Properties {
		if hasDefaultsInProperties(ps) {
			return true
		}
	}
	return false
}

// marshalMember returns `"name":value` as JSON, without HTML escaping.
func marshalMember(name string, val any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(name); err != nil {
		return nil, err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.WriteByte(':')
	if err := enc.Encode(val); err != nil {
		return nil, err
	}
	buf.Truncate(buf.Len() - 1)
	return buf.Bytes(), nil
}

// prepareDefaults computes, once every node is compiled, the nodes whose
// defaults apply to a value together (defSources) and where defaults may be
// inserted (defBelow).
func (c *compiler) prepareDefaults() {
	var sources func(n *node) []*node
	sources = func(n *node) []*node {
		if n.defSources != nil {
			return n.defSources
		}
		out := []*node{n}
		add := func(m *node) {
			for _, s := range sources(m) {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		if n.ref != nil {
			add(n.ref)
		}
		for _, m := range n.allOf {
			add(m)
		}
		n.defSources = out
		return out
	}
	all := make([]*node, 0, len(c.nodes))
	for _, n := range c.nodes {
		all = append(all, n)
	}
	for _, n := range all {
		sources(n)
	}
	// defBelow grows monotonically; iterate to the fixpoint.
	for changed := true; changed; {
		changed = false
		for _, n := range all {
			if !n.defBelow && insertsBelow(n) {
				n.defBelow = true
				changed = true
			}
		}
	}
}

func insertsBelow(n *node) bool {
	for _, s := range n.defSources {
		for _, t := range s.insert {
			if t != nil {
				return true
			}
		}
		for _, p := range s.props {
			if p != nil && p.defBelow {
				return true
			}
		}
		for _, p := range s.prefix {
			if p.defBelow {
				return true
			}
		}
		if s.items != nil && s.items.defBelow {
			return true
		}
	}
	return false
}
