package schema

import (
	"cmp"
	"math"
	"slices"
)

// Coerce returns data with the strings that the schema wants to be of
// another type converted to it, and whether it converted any. It returns
// data itself, without allocating, when nothing needs converting; in
// particular a valid document is never rewritten.
//
// A string is converted where the schema that applies to it has a "type"
// that excludes strings and admits what the string holds:
//
//   - "10" becomes 10 for integer or number ("3.5" only for number);
//     the string must hold a JSON number exactly, with no spaces;
//   - "true" and "false" become booleans, "null" becomes null;
//   - a string holding a JSON object or array becomes that object or
//     array, where the schema wants one, itself coerced the same way.
//
// Anything else ("abc" for an integer, say) is left for validation to
// report. Coercion applies inside arrays and objects, through $ref, allOf
// and the branch of if/then/else that the value takes. For anyOf and
// oneOf, a value valid against an alternative as it is stays as it is;
// otherwise it is coerced for the first alternative, in schema order, that
// the coerced value is valid against, and left alone if there is none.
// Coercion does not look into not, contains, propertyNames or
// dependentSchemas. Empty data and a bare null are returned as they are.
func (v *Validator) Coerce(data []byte) ([]byte, bool, error) {
	if len(data) == 0 || isNullDoc(data) {
		return data, false, nil
	}
	return v.coerceDoc(data, v.root)
}

// edit replaces data[start:end] by text.
type edit struct {
	start, end int
	text       []byte
}

// coerceDoc coerces the document data against n.
func (v *Validator) coerceDoc(data []byte, n *node) ([]byte, bool, error) {
	st := v.getState(data)
	defer v.putState(st)
	st.quiet = true
	i := skipSpace(data, 0)
	if i == len(data) {
		return nil, false, &SyntaxError{Offset: i, Msg: "no JSON value"}
	}
	var edits []edit
	end := st.coerce(n, i, &edits)
	if st.err != nil {
		return nil, false, st.err
	}
	if j := skipSpace(data, end); j != len(data) {
		return nil, false, &SyntaxError{Offset: j, Msg: "data after the JSON value"}
	}
	if len(edits) == 0 {
		return data, false, nil
	}
	return applyEdits(data, edits, 0), true, nil
}

// applyEdits returns a copy of data, which starts at offset base of the
// document that the edits refer to, with the edits applied. Of edits of
// the same value, the first made wins.
func applyEdits(data []byte, edits []edit, base int) []byte {
	slices.SortStableFunc(edits, func(a, b edit) int { return cmp.Compare(a.start, b.start) })
	out := make([]byte, 0, len(data)+16)
	last := 0
	for _, e := range edits {
		s := e.start - base
		if s < last {
			continue // the same value, edited already
		}
		out = append(out, data[last:s]...)
		out = append(out, e.text...)
		last = e.end - base
	}
	return append(out, data[last:]...)
}

// coerce walks the value at data[i] against n, adding the edits that
// coercion makes to edits, and returns the index past the value.
func (st *state) coerce(n *node, i int, edits *[]edit) int {
	if st.budget--; st.budget < 0 {
		if st.err == nil {
			st.err = ErrTooComplex
		}
		return -1
	}
	d := st.data
	if i >= len(d) {
		return st.syntax(i, "unexpected end of JSON input")
	}
	end := -1
	if n.ref != nil {
		if end = st.coerce(n.ref, i, edits); end < 0 {
			return -1
		}
	}
	for _, m := range n.allOf {
		if end = st.coerce(m, i, edits); end < 0 {
			return -1
		}
	}
	if n.anyOf != nil {
		if end = st.coerceAlternatives(n.anyOf, i, edits); end < 0 {
			return -1
		}
	}
	if n.oneOf != nil {
		if end = st.coerceAlternatives(n.oneOf, i, edits); end < 0 {
			return -1
		}
	}
	if n.ifN != nil {
		ok, e := st.matches(n.ifN, i)
		if e < 0 {
			return -1
		}
		branch := n.elseN
		if ok {
			branch = n.thenN
		}
		if branch != nil {
			if e = st.coerce(branch, i, edits); e < 0 {
				return -1
			}
		}
	}
	switch d[i] {
	case '"':
		e, plain, msg := scanString(d, i)
		if e < 0 {
			return st.syntax(i, msg)
		}
		if n.hasType && !n.types.has(kString) {
			if text := st.convert(n, i, e, plain); text != nil {
				*edits = append(*edits, edit{start: i, end: e, text: text})
			}
		}
		return e
	case '{':
		if (!n.hasType || n.types.has(kObject)) && (n.props != nil || n.patterns != nil || n.additional != nil) {
			return st.coerceObject(n, i, edits)
		}
	case '[':
		if (!n.hasType || n.types.has(kArray)) && (n.prefix != nil || n.items != nil) {
			return st.coerceArray(n, i, edits)
		}
	}
	if end >= 0 {
		return end
	}
	return st.skip(i)
}

// coerceAlternatives coerces the value at i for anyOf or oneOf.
func (st *state) coerceAlternatives(alts []*node, i int, edits *[]edit) int {
	end := -1
	for _, m := range alts {
		var ok bool
		if ok, end = st.matches(m, i); end < 0 || ok {
			return end
		}
	}
	for _, m := range alts {
		var mine []edit
		if st.coerce(m, i, &mine) < 0 {
			return -1
		}
		if len(mine) == 0 {
			continue
		}
		candidate := applyEdits(st.data[i:end], mine, i)
		if st.v.validWith(m, candidate) {
			*edits = append(*edits, mine...)
			break
		}
	}
	return end
}

// validWith reports whether the document data is valid against n.
func (v *Validator) validWith(n *node, data []byte) bool {
	st := v.getState(data)
	defer v.putState(st)
	st.probe = 1
	end := st.value(n, skipSpace(data, 0))
	return end >= 0 && st.err == nil && st.nfail == 0
}

// convert returns the JSON that the string data[i:end] converts to for n,
// or nil.
func (st *state) convert(n *node, i, end int, plain bool) []byte {
	s := st.data[i+1 : end-1]
	if !plain {
		s = appendUnquoted(nil, s)
	}
	t := n.types
	switch string(s) {
	case "null":
		if t.has(kNull) {
			return s
		}
		return nil
	case "true", "false":
		if t.has(kBool) {
			return s
		}
		return nil
	}
	if t.has(kNumber) || t&tInteger != 0 {
		if e, shape := scanNumber(s, 0); e == len(s) && e > 0 {
			f, ok := parseNumber(s, shape)
			if !ok {
				return nil
			}
			if _, frac := math.Modf(f); t.has(kNumber) || frac == 0 {
				return s
			}
			return nil
		}
	}
	if j := skipSpace(s, 0); j < len(s) && (s[j] == '{' && t.has(kObject) || s[j] == '[' && t.has(kArray)) {
		if st.depth >= maxDepth {
			return nil
		}
		out, _, err := st.v.coerceDoc(s, n)
		if err != nil {
			return nil
		}
		return out
	}
	return nil
}

func (st *state) coerceArray(n *node, i int, edits *[]edit) int {
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, ']')
	for k := 0; more; k++ {
		j = skipSpace(d, j)
		sub := n.items
		if k < len(n.prefix) {
			sub = n.prefix[k]
		}
		var end int
		if sub != nil {
			end = st.coerce(sub, j, edits)
		} else {
			end = st.skip(j)
		}
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

func (st *state) coerceObject(n *node, i int, edits *[]edit) int {
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, '}')
	keys := keySet{base: len(st.keys)}
	kbufBase := len(st.kbuf)
	for more {
		key, _, _, vj := st.member(skipSpace(d, j), &keys)
		if vj < 0 {
			return -1
		}
		end := -1
		matched := false
		if idx := n.lookup(key); idx >= 0 && n.props != nil && n.props[idx] != nil {
			matched = true
			if end = st.coerce(n.props[idx], vj, edits); end < 0 {
				return -1
			}
		}
		for k := range n.patterns {
			if p := &n.patterns[k]; p.re.Match(key) {
				matched = true
				if end = st.coerce(p.n, vj, edits); end < 0 {
					return -1
				}
			}
		}
		if !matched && n.additional != nil {
			if end = st.coerce(n.additional, vj, edits); end < 0 {
				return -1
			}
		}
		if end < 0 {
			if end = st.skip(vj); end < 0 {
				return -1
			}
		}
		if j, more = next(d, end, '}'); j < 0 {
			return st.sepError(end, '}')
		}
	}
	st.dropKeys(&keys)
	st.kbuf = st.kbuf[:kbufBase]
	st.depth--
	return j
}
