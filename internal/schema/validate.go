package schema

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Validate reports whether data, a JSON document, is valid against the
// schema. It returns nil, a [*ValidationError] naming the first failing
// locations (at most [MaxIssues]) and counting the others, a [*SyntaxError]
// if data is not JSON, or [ErrTooComplex].
// Empty data and a bare null stand for no arguments and are validated as
// {}, as the MCP SDK does.
//
// Validate reads the document once, without decoding it into Go values, and
// does not allocate when the document is valid, except where
// [Validator.Fallbacks] says otherwise and for uniqueItems and for enum and
// const values that are arrays or objects, which decode the value.
func (v *Validator) Validate(data []byte) error {
	if len(data) == 0 || isNullDoc(data) {
		data = v.empty
	}
	st := v.getState(data)
	err := st.run(v.root)
	v.putState(st)
	return err
}

func (v *Validator) getState(data []byte) *state {
	st, _ := v.states.Get().(*state)
	if st == nil {
		st = &state{v: v, seed: maphash.MakeSeed()}
	}
	st.data = data
	st.budget = workLimit(len(data))
	return st
}

func (v *Validator) putState(st *state) {
	st.data = nil
	st.issues = nil
	st.err = nil
	st.nfail, st.omitted, st.probe, st.probeBase, st.depth, st.secret = 0, 0, 0, 0, 0, 0
	st.quiet = false
	st.path, st.keys, st.kbuf, st.sbuf, st.bits, st.spans = st.path[:0], st.keys[:0], st.kbuf[:0], st.sbuf[:0], st.bits[:0], st.spans[:0]
	st.ktab = st.ktab[:0]
	st.nodes = st.nodes[:0]
	v.states.Put(st)
}

// workLimit is the number of (value, schema) applications a document of n
// bytes may take: far more than any schema without nested alternatives
// needs, few enough to stop a blow-up within a second or so.
func workLimit(n int) int { return 1<<22 + 64*n }

// state is the state of one validation. Validators keep them in a pool so
// that validating a valid document allocates nothing.
type state struct {
	v    *Validator
	data []byte

	quiet     bool // coercing or inserting defaults: failures are not reported
	probe     int  // > 0 while only validity matters (inside anyOf, not, ...)
	probeBase int  // nfail when the innermost probe began
	nfail     int
	issues    []Issue // at most MaxIssues
	omitted   int     // failures found once issues was full
	err       error   // a *SyntaxError or ErrTooComplex: validation stops
	budget    int
	depth     int
	secret    int // > 0 within a value its schema marks secret: messages do not quote it

	path  []seg
	keys  []keyRef // property names of the open objects not in their schemas, a stack
	ktab  []int32  // hash indexes of the objects in keys with many names, a stack
	seed  maphash.Seed
	kbuf  []byte   // decoded property names, a stack
	sbuf  []byte   // a decoded string
	bits  []uint64 // seen-sets of objects with more than 64 names, a stack
	spans []span   // items of arrays with uniqueItems, a stack
	nodes []*node  // sets of nodes applying defaults, a stack
}

// seg is a segment of the path to the value being validated: an array index
// (idx >= 0) or a property name, data[ks:ke] (raw, decoded if !plain).
type seg struct {
	idx    int
	ks, ke int
	plain  bool
}

type keyRef struct {
	start, end int
	arena      bool // in kbuf rather than data
}

type span struct{ start, end int }

// run validates the whole document against root.
func (st *state) run(root *node) error {
	d := st.data
	i := skipSpace(d, 0)
	if i == len(d) {
		return &SyntaxError{Offset: i, Msg: "no JSON value"}
	}
	var end int
	if w := st.v.whole; w != nil {
		end = st.skipThenFallback(w, i)
	} else {
		end = st.value(root, i)
	}
	if st.err != nil {
		return st.err
	}
	if j := skipSpace(d, end); j != len(d) {
		return &SyntaxError{Offset: j, Msg: "data after the JSON value"}
	}
	if st.nfail > 0 {
		return &ValidationError{Issues: st.issues, Omitted: st.omitted}
	}
	return nil
}

// syntax records a syntax error at offset i and returns -1, which every
// caller passes up.
func (st *state) syntax(i int, msg string) int {
	if st.err == nil {
		st.err = &SyntaxError{Offset: i, Msg: msg}
	}
	return -1
}

// report counts a failure and reports whether its issue should be
// recorded: not inside a probe, and not once MaxIssues are, so that
// callers build no message and the work per further failure allocates
// nothing.
func (st *state) report() bool {
	st.nfail++
	if st.probe > 0 || st.quiet {
		return false
	}
	if len(st.issues) >= MaxIssues {
		st.omitted++
		return false
	}
	return true
}

// halted reports whether the innermost probe has already failed, so that
// the rest of its value need only be scanned.
func (st *state) halted() bool { return st.probe > 0 && st.nfail > st.probeBase }

func (st *state) add(msg string) { st.addAt("", msg) }

func (st *state) addf(format string, args ...any) { st.add(fmt.Sprintf(format, args...)) }

// addAt records an issue at the current path, extended by the property
// name extra if it is not empty.
func (st *state) addAt(extra, msg string) {
	var b []byte
	for k, sg := range st.path {
		if k == pathHead && len(st.path) > pathHead+pathTail {
			// A deep path keeps its first and last segments: where the
			// value is, and what it is.
			b = append(b, "/..."...)
			continue
		}
		if k > pathHead && k < len(st.path)-pathTail {
			continue
		}
		if len(b) > 0 {
			b = append(b, '/')
		}
		if sg.idx >= 0 {
			b = strconv.AppendInt(b, int64(sg.idx), 10)
			continue
		}
		key := st.data[sg.ks:sg.ke]
		if len(key) > 4*maxEcho { // an unquoted key is no longer than its JSON
			key = key[:4*maxEcho]
		}
		if !sg.plain {
			key = appendUnquoted(nil, key)
		}
		b = append(b, escapePointer(clip(string(key)))...)
	}
	if extra != "" {
		if len(b) > 0 {
			b = append(b, '/')
		}
		b = append(b, escapePointer(clip(extra))...)
	}
	// Every segment is clipped, but many of them still make a long path.
	is := Issue{Path: clipTo(string(b), maxLong), Message: msg}
	for _, prev := range st.issues {
		if prev == is {
			return
		}
	}
	st.issues = append(st.issues, is)
}

// matches reports whether the value at i is valid against n, recording no
// issue, and returns the index past the value.
func (st *state) matches(n *node, i int) (bool, int) {
	base, fails := st.probeBase, st.nfail
	st.probe++
	st.probeBase = fails
	end := st.value(n, i)
	st.probe--
	st.probeBase = base
	ok := st.nfail == fails
	st.nfail = fails
	return ok, end
}

// value validates the JSON value at data[i] against n and returns the
// index just past it, or -1 when validation must stop (st.err says why).
func (st *state) value(n *node, i int) int {
	if n.secret {
		st.secret++
		end := st.valueOf(n, i)
		st.secret--
		return end
	}
	return st.valueOf(n, i)
}

// valueOf is value, for n's own keywords.
func (st *state) valueOf(n *node, i int) int {
	st.budget--
	if st.budget < 0 {
		if st.err == nil {
			st.err = ErrTooComplex
		}
		return -1
	}
	if i >= len(st.data) {
		return st.syntax(i, "unexpected end of JSON input")
	}
	if n.direct && st.probe == 0 {
		return st.own(n, i)
	}
	if st.halted() {
		return st.skip(i)
	}
	if n.fallback != nil {
		return st.skipThenFallback(n.fallback, i)
	}
	end := -1
	if n.inplace {
		if end = st.inplace(n, i); end < 0 {
			return -1
		}
	}
	if n.never {
		if st.report() {
			k, _ := st.kindAt(i)
			st.add("want no value (the schema is false), got " + k.String())
		}
	}
	if !n.local || n.never {
		if end < 0 {
			end = st.skip(i)
		}
		return end
	}
	return st.own(n, i)
}

// own applies the keywords of n that are about the value's own type.
func (st *state) own(n *node, i int) int {
	switch st.data[i] {
	case '{':
		return st.object(n, i)
	case '[':
		return st.array(n, i)
	case '"':
		return st.str(n, i)
	case 't':
		return st.literal(n, i, "true", kBool, true)
	case 'f':
		return st.literal(n, i, "false", kBool, false)
	case 'n':
		return st.literal(n, i, "null", kNull, false)
	default:
		return st.number(n, i)
	}
}

// inplace applies the in-place applicators of n to the value at i.
func (st *state) inplace(n *node, i int) int {
	end := -1
	if n.ref != nil {
		if end = st.value(n.ref, i); end < 0 {
			return -1
		}
	}
	for _, m := range n.allOf {
		if end = st.value(m, i); end < 0 {
			return -1
		}
	}
	if n.anyOf != nil {
		ok := false
		for _, m := range n.anyOf {
			var k bool
			if k, end = st.matches(m, i); end < 0 {
				return -1
			}
			if k {
				ok = true
				break
			}
		}
		if !ok && st.report() {
			if !st.explain(n.anyOf, i) {
				st.addf("want a match for one of the %d alternatives of anyOf, got none", len(n.anyOf))
			}
		}
	}
	if n.oneOf != nil {
		first, second := -1, -1
		for k, m := range n.oneOf {
			var ok bool
			if ok, end = st.matches(m, i); end < 0 {
				return -1
			}
			if ok {
				if first >= 0 {
					second = k
					break
				}
				first = k
			}
		}
		switch {
		case first < 0:
			if st.report() && !st.explain(n.oneOf, i) {
				st.addf("want a match for exactly one of the %d alternatives of oneOf, got none", len(n.oneOf))
			}
		case second >= 0:
			if st.report() {
				st.addf("want a match for exactly one of the %d alternatives of oneOf, got alternatives %d and %d", len(n.oneOf), first, second)
			}
		}
	}
	if n.not != nil {
		var ok bool
		if ok, end = st.matches(n.not, i); end < 0 {
			return -1
		}
		if ok && st.report() {
			st.add("want no match for the schema of not, got one")
		}
	}
	if n.ifN != nil {
		var ok bool
		if ok, end = st.matches(n.ifN, i); end < 0 {
			return -1
		}
		then := n.elseN
		if ok {
			then = n.thenN
		}
		if then != nil {
			if end = st.value(then, i); end < 0 {
				return -1
			}
		}
	}
	return end
}

// explain records the issues of the one alternative among alts whose type
// admits the value at i, and reports whether there was exactly one: then
// its issues say more than "matches no alternative".
func (st *state) explain(alts []*node, i int) bool {
	k, integral := st.kindAt(i)
	var only *node
	for _, m := range alts {
		for m.ref != nil && !m.hasType && !m.local && len(m.allOf) == 0 && m.anyOf == nil && m.oneOf == nil {
			m = m.ref // a bare $ref: look at its target's type
		}
		if m.hasType && !m.types.allows(k, integral) || m.never {
			continue
		}
		if only != nil {
			return false
		}
		only = m
	}
	if only == nil {
		return false
	}
	fails := st.nfail
	st.value(only, i)
	return st.nfail > fails && st.err == nil
}

// kindAt returns the kind of the (well-formed) value at i.
func (st *state) kindAt(i int) (kind, bool) {
	switch st.data[i] {
	case '{':
		return kObject, false
	case '[':
		return kArray, false
	case '"':
		return kString, false
	case 't', 'f':
		return kBool, false
	case 'n':
		return kNull, false
	}
	end, shape := scanNumber(st.data, i)
	if end < 0 {
		return kNumber, false
	}
	f, _ := parseNumber(st.data[i:end], shape)
	_, frac := math.Modf(f)
	return kNumber, frac == 0
}

// skipThenFallback scans the value at i and validates it with
// jsonschema-go, unless the scan found a number that cannot be decoded.
func (st *state) skipThenFallback(rs *jsonschema.Resolved, i int) int {
	fails := st.nfail
	end := st.skip(i)
	if end >= 0 && st.nfail == fails {
		st.fallbackCheck(rs, i, end)
	}
	return end
}

// fallbackCheck validates data[i:end] with jsonschema-go.
func (st *state) fallbackCheck(rs *jsonschema.Resolved, i, end int) {
	if rs == nil {
		return
	}
	var v any
	if err := json.Unmarshal(st.data[i:end], &v); err != nil {
		st.syntax(i, err.Error())
		return
	}
	if err := rs.Validate(&v); err != nil && st.report() {
		msg := err.Error()
		for strings.HasPrefix(msg, "validating ") {
			_, rest, ok := strings.Cut(msg, ": ")
			if !ok {
				break
			}
			msg = rest
		}
		if st.secret > 0 {
			msg = "the value does not match the schema" // jsonschema-go's text may quote it
		}
		st.add(clipTo(msg, maxLong)) // jsonschema-go's text may quote the value
	}
}

// typeMismatch records that the value at i is not of a type n allows.
func (st *state) typeMismatch(n *node, i int) {
	if !st.report() {
		return
	}
	k, _ := st.kindAt(i)
	got := k.String()
	if k == kNumber && n.types&tInteger != 0 {
		// "want integer, got number" alone would not say why 2.5 is
		// not one.
		end, _ := scanNumber(st.data, i)
		got += " " + clip(string(st.data[i:end]))
	}
	st.add("want " + n.typeText + ", got " + got)
}

func (st *state) literal(n *node, i int, lit string, k kind, b bool) int {
	d := st.data
	end := i + len(lit)
	if end > len(d) || string(d[i:end]) != lit {
		return st.syntax(i, "invalid literal")
	}
	if n.hasType && !n.types.has(k) {
		st.typeMismatch(n, i)
		return end
	}
	if n.hasEnum || n.konst != nil {
		st.checkConsts(n, i, end, k, b, nil, 0)
	}
	return end
}

func (st *state) number(n *node, i int) int {
	d := st.data
	end, shape := scanNumber(d, i)
	if end < 0 {
		return st.syntax(i, "invalid character")
	}
	raw := d[i:end]
	var f float64
	parsed := false
	if mayOverflow(raw, shape) {
		var ok bool
		if f, ok = parseNumber(raw, shape); !ok {
			st.outOfRange(raw)
			return end
		}
		parsed = true
	}
	if n.hasType && !n.types.has(kNumber) {
		integral := shape == numInt
		if !integral && n.types&tInteger != 0 {
			_, frac := math.Modf(f)
			integral = frac == 0
		}
		if !n.types.allows(kNumber, integral) {
			st.typeMismatch(n, i)
			return end
		}
	}
	if !n.numChecks && !n.hasEnum && n.konst == nil {
		return end
	}
	if !parsed {
		f, _ = parseNumber(raw, shape)
	}
	if n.hasEnum || n.konst != nil {
		st.checkConsts(n, i, end, kNumber, false, nil, f)
	}
	if !n.numChecks {
		return end
	}
	// Float comparisons are exactly jsonschema-go's big.Rat comparisons
	// of the same float64 values.
	switch {
	case n.hasMin && f < n.min:
		st.numFail(">=", n.minText, raw)
	case n.hasMax && f > n.max:
		st.numFail("<=", n.maxText, raw)
	}
	switch {
	case n.hasExMin && f <= n.exMin:
		st.numFail(">", n.exMinText, raw)
	case n.hasExMax && f >= n.exMax:
		st.numFail("<", n.exMaxText, raw)
	}
	if n.hasMultipleOf && !n.isMultiple(raw, f) && st.report() {
		st.add("want a multiple of " + n.multipleOfText + ", got " + clip(string(raw)))
	}
	return end
}

// outOfRange records that the number raw is beyond the range of a float64:
// valid JSON, but not a value that encoding/json (and so a Go handler) can
// decode, nor one that any keyword could be checked against.
func (st *state) outOfRange(raw []byte) {
	if st.report() {
		st.add("want a number within the range of a 64-bit float (about ±1.8e308), got " + st.echo(raw))
	}
}

func (st *state) numFail(op, bound string, raw []byte) {
	if st.report() {
		st.add("want " + op + " " + bound + ", got " + st.echo(raw))
	}
}

func (st *state) str(n *node, i int) int {
	d := st.data
	end, plain, msg := scanString(d, i)
	if end < 0 {
		return st.syntax(i, msg)
	}
	if n.hasType && !n.types.has(kString) {
		st.typeMismatch(n, i)
		return end
	}
	if !n.strChecks && !n.hasEnum && n.konst == nil {
		return end
	}
	s := d[i+1 : end-1]
	if !plain {
		st.sbuf = appendUnquoted(st.sbuf[:0], s)
		s = st.sbuf
	}
	if n.hasEnum || n.konst != nil {
		st.checkConsts(n, i, end, kString, false, s, 0)
	}
	if n.hasMinLen || n.hasMaxLen {
		// Runes, as the specification says; invalid UTF-8 was replaced by
		// U+FFFD, one rune per byte, as encoding/json does.
		c := utf8.RuneCount(s)
		if n.hasMinLen && c < n.minLen && st.report() {
			st.addf("want at least %s, got %d", plural(n.minLen, "character"), c)
		}
		if n.hasMaxLen && c > n.maxLen && st.report() {
			st.addf("want at most %s, got %d", plural(n.maxLen, "character"), c)
		}
	}
	if n.pattern != nil && !n.pattern.Match(s) && st.report() {
		st.add("want a string matching " + n.patternText + ", got " + st.excerpt(i, end))
	}
	return end
}

// checkConsts applies enum and const to the value data[i:end] of kind k,
// whose value is b, s or f for a boolean, string or number.
func (st *state) checkConsts(n *node, i, end int, k kind, b bool, s []byte, f float64) {
	var decoded any
	isDecoded := false
	equal := func(c *constVal) bool {
		if c.generic {
			if !isDecoded {
				decoded, isDecoded = decodeValue(st.data[i:end])
				if !isDecoded {
					return false
				}
			}
			return jsonschema.Equal(c.v, decoded)
		}
		if c.kind != k {
			return false
		}
		switch k {
		case kBool:
			return c.b == b
		case kString:
			return c.s == string(s)
		case kNumber:
			return c.f == f
		case kNull:
			return true
		}
		return false // objects and arrays are generic
	}
	if n.hasEnum {
		ok := false
		for j := range n.enum {
			if equal(&n.enum[j]) {
				ok = true
				break
			}
		}
		if !ok && st.report() {
			st.add("want one of [" + n.enumText + "], got " + st.excerpt(i, end))
		}
	}
	if n.konst != nil && !equal(n.konst) && st.report() {
		st.add("want " + n.konstTxt + ", got " + st.excerpt(i, end))
	}
}

// decodeValue decodes data as encoding/json decodes into an any.
func decodeValue(data []byte) (any, bool) {
	var v any
	err := json.Unmarshal(data, &v)
	return v, err == nil
}

// excerpt returns the JSON text of data[i:end], clipped (see echo).
func (st *state) excerpt(i, end int) string {
	return st.echo(st.data[i:min(end, i+maxEcho+utf8.UTFMax)])
}

// echo returns raw, part of the value being validated, clipped, for a
// message; within a secret value (writeOnly, format "password"), which
// the message would carry to logs and audit trails, only "a secret value".
func (st *state) echo(raw []byte) string {
	if st.secret > 0 {
		return "a secret value"
	}
	return clip(string(raw))
}

func (st *state) array(n *node, i int) int {
	if n.hasType && !n.types.has(kArray) {
		st.typeMismatch(n, i)
		return st.skip(i)
	}
	if !n.arrChecks {
		end := st.skip(i)
		if end >= 0 && (n.hasEnum || n.konst != nil) {
			st.checkConsts(n, i, end, kArray, false, nil, 0)
		}
		return end
	}
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, ']')
	spanBase := len(st.spans)
	count, nContains := 0, 0
	if more {
		st.path = append(st.path, seg{})
		top := len(st.path) - 1
		for more {
			j = skipSpace(d, j)
			st.path[top] = seg{idx: count}
			sub := n.items
			if count < len(n.prefix) {
				sub = n.prefix[count]
			}
			var end int
			if sub != nil {
				end = st.value(sub, j)
			} else {
				end = st.skip(j)
			}
			if end < 0 {
				return -1
			}
			if n.contains != nil {
				ok, e := st.matches(n.contains, j)
				if e < 0 {
					return -1
				}
				if ok {
					nContains++
				}
			}
			if n.unique {
				st.spans = append(st.spans, span{j, end})
			}
			count++
			if j, more = next(d, end, ']'); j < 0 {
				return st.sepError(end, ']')
			}
		}
		st.path = st.path[:top]
	}
	st.depth--
	if n.hasMinItems && count < n.minItems && st.report() {
		st.addf("want at least %s, got %d", plural(n.minItems, "item"), count)
	}
	if n.hasMaxItems && count > n.maxItems && st.report() {
		st.addf("want at most %s, got %d", plural(n.maxItems, "item"), count)
	}
	if n.contains != nil {
		// As jsonschema-go: minContains defaults to 1, and only applies
		// with contains, like maxContains.
		if nContains == 0 && (!n.hasMinContains || n.minContains > 0) && st.report() {
			st.add("want an item matching contains, got none")
		}
		if n.hasMinContains && nContains < n.minContains && nContains > 0 && st.report() {
			st.addf("want at least %s matching contains, got %d", plural(n.minContains, "item"), nContains)
		}
		if n.hasMaxContains && nContains > n.maxContains && st.report() {
			st.addf("want at most %s matching contains, got %d", plural(n.maxContains, "item"), nContains)
		}
	}
	if n.unique {
		if a, b, dup := st.duplicateItems(st.spans[spanBase:]); dup && st.report() {
			st.addf("want unique items, got items %d and %d equal", a, b)
		}
		st.spans = st.spans[:spanBase]
	}
	if n.hasEnum || n.konst != nil {
		st.checkConsts(n, i, j, kArray, false, nil, 0)
	}
	return j
}

// duplicateItems returns the indexes of the first two equal items, by JSON
// Schema equality (1 equals 1.0; property order does not matter).
func (st *state) duplicateItems(items []span) (int, int, bool) {
	if len(items) < 2 {
		return 0, 0, false
	}
	first := make(map[string]int, len(items))
	var buf []byte
	for k, it := range items {
		var v any
		if json.Unmarshal(st.data[it.start:it.end], &v) != nil {
			return 0, 0, false
		}
		buf = appendCanonical(buf[:0], v)
		if j, ok := first[string(buf)]; ok {
			return j, k, true
		}
		first[string(buf)] = k
	}
	return 0, 0, false
}

// appendCanonical appends a text of v that is the same for values equal by
// JSON Schema equality and different otherwise.
func appendCanonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		if x {
			return append(b, 't')
		}
		return append(b, 'f')
	case float64:
		b = append(b, 'd')
		return strconv.AppendFloat(b, x+0, 'g', -1, 64) // x+0 turns -0 into 0
	case string:
		b = append(b, 's')
		return strconv.AppendQuote(b, x)
	case []any:
		b = append(b, '[')
		for _, e := range x {
			b = appendCanonical(b, e)
			b = append(b, ',')
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b = strconv.AppendQuote(b, k)
			b = append(b, ':')
			b = appendCanonical(b, x[k])
			b = append(b, ',')
		}
		return append(b, '}')
	}
	return fmt.Appendf(b, "?%v", v)
}

func (st *state) object(n *node, i int) int {
	if n.hasType && !n.types.has(kObject) {
		st.typeMismatch(n, i)
		return st.skip(i)
	}
	if !n.objChecks {
		end := st.skip(i)
		if end >= 0 && (n.hasEnum || n.konst != nil) {
			st.checkConsts(n, i, end, kObject, false, nil, 0)
		}
		return end
	}
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, '}')
	// Which names of n the object has: bits 0-63 in seen, the others on
	// the bits stack.
	var seen uint64
	bitsBase := len(st.bits)
	if len(n.names) > 64 {
		for range (len(n.names) - 1) / 64 {
			st.bits = append(st.bits, 0)
		}
	}
	keys := keySet{base: len(st.keys)}
	kbufBase := len(st.kbuf)
	count := 0
	if more {
		st.path = append(st.path, seg{})
		top := len(st.path) - 1
		for {
			key, kr, ke, vj := st.member(j, nil)
			if vj < 0 {
				return -1
			}
			idx := n.lookup(key)
			if idx >= 0 {
				var dup bool
				if idx < 64 {
					bit := uint64(1) << idx
					dup = seen&bit != 0
					seen |= bit
				} else {
					w, bit := &st.bits[bitsBase+idx/64-1], uint64(1)<<(idx%64)
					dup = *w&bit != 0
					*w |= bit
				}
				if dup {
					return st.duplicate(j, key)
				}
			} else if st.addKey(&keys, kr) {
				return st.duplicate(j, key)
			}
			// key decodes the name into kbuf exactly when it is not plain.
			st.path[top] = seg{idx: -1, ks: j + 1, ke: ke - 1, plain: !kr.arena}
			end := -1
			matched := false
			if idx >= 0 && n.props != nil && n.props[idx] != nil {
				matched = true
				if end = st.value(n.props[idx], vj); end < 0 {
					return -1
				}
			}
			for k := range n.patterns {
				if p := &n.patterns[k]; p.re.Match(key) {
					matched = true
					if end = st.value(p.n, vj); end < 0 {
						return -1
					}
				}
			}
			if !matched {
				switch {
				case n.additionalFalse:
					if st.report() {
						st.add("unexpected property")
					}
				case n.additional != nil:
					if end = st.value(n.additional, vj); end < 0 {
						return -1
					}
				}
			}
			if end < 0 {
				if end = st.skip(vj); end < 0 {
					return -1
				}
			}
			if n.propertyNames != nil {
				ok, e := st.matches(n.propertyNames, j)
				if e < 0 {
					return -1
				}
				if !ok && st.report() {
					st.add("want a name allowed by propertyNames, got " + st.excerpt(j, ke))
				}
			}
			count++
			// Written out rather than calling next, which costs this,
			// the hottest loop, some 4% of Validate's time (measured).
			if j = skipSpace(d, end); j < len(d) && d[j] == ',' {
				j = skipSpace(d, j+1)
				continue
			}
			if j >= len(d) || d[j] != '}' {
				return st.sepError(end, '}')
			}
			j++
			break
		}
		st.path = st.path[:top]
	}
	st.depth--
	has := func(idx int) bool {
		if idx < 64 {
			return seen&(1<<idx) != 0
		}
		return st.bits[bitsBase+idx/64-1]&(1<<(idx%64)) != 0
	}
	for _, r := range n.required {
		if !has(r) && st.report() {
			st.addAt(n.names[r], "required property is missing")
		}
	}
	if n.hasMinProps && count < n.minProps && st.report() {
		st.addf("want at least %s, got %d", plural(n.minProps, "property"), count)
	}
	if n.hasMaxProps && count > n.maxProps && st.report() {
		st.addf("want at most %s, got %d", plural(n.maxProps, "property"), count)
	}
	for _, dr := range n.depRequired {
		if !has(dr.trigger) {
			continue
		}
		for _, r := range dr.required {
			if !has(r) && st.report() {
				st.addAt(n.names[r], "required property is missing (required when "+strconv.Quote(clip(n.names[dr.trigger]))+" is present)")
			}
		}
	}
	st.dropKeys(&keys)
	st.kbuf = st.kbuf[:kbufBase]
	for _, ds := range n.depSchemas {
		if has(ds.trigger) {
			if st.value(ds.n, i) < 0 {
				return -1
			}
		}
	}
	st.bits = st.bits[:bitsBase]
	if n.hasEnum || n.konst != nil {
		st.checkConsts(n, i, j, kObject, false, nil, 0)
	}
	return j
}

// key returns the decoded property name whose quoted form is data[q:end],
// and a reference to it that stays valid while its object is open.
func (st *state) key(q, end int, plain bool) ([]byte, keyRef) {
	if plain {
		return st.data[q+1 : end-1], keyRef{start: q + 1, end: end - 1}
	}
	start := len(st.kbuf)
	st.kbuf = appendUnquoted(st.kbuf, st.data[q+1:end-1])
	return st.kbuf[start:], keyRef{start: start, end: len(st.kbuf), arena: true}
}

func (st *state) keyBytes(k keyRef) []byte {
	if k.arena {
		return st.kbuf[k.start:k.end]
	}
	return st.data[k.start:k.end]
}

// skip scans the value at data[i], checking that it is well-formed, and
// returns the index past it.
func (st *state) skip(i int) int {
	d := st.data
	if i >= len(d) {
		return st.syntax(i, "unexpected end of JSON input")
	}
	switch d[i] {
	case '{':
		return st.skipObject(i)
	case '[':
		return st.skipArray(i)
	case '"':
		end, _, msg := scanString(d, i)
		if end < 0 {
			return st.syntax(i, msg)
		}
		return end
	case 't':
		return st.skipLiteral(i, "true")
	case 'f':
		return st.skipLiteral(i, "false")
	case 'n':
		return st.skipLiteral(i, "null")
	}
	end, shape := scanNumber(d, i)
	if end < 0 {
		return st.syntax(i, "invalid character")
	}
	if raw := d[i:end]; mayOverflow(raw, shape) && overflows(raw) {
		st.outOfRange(raw)
	}
	return end
}

func (st *state) skipLiteral(i int, lit string) int {
	end := i + len(lit)
	if end > len(st.data) || string(st.data[i:end]) != lit {
		return st.syntax(i, "invalid literal")
	}
	return end
}

func (st *state) skipArray(i int) int {
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, ']')
	if more {
		// The path is kept for the one issue skip may find, a number out
		// of range.
		st.path = append(st.path, seg{})
		top := len(st.path) - 1
		for k := 0; more; k++ {
			st.path[top] = seg{idx: k}
			end := st.skip(skipSpace(d, j))
			if end < 0 {
				return -1
			}
			if j, more = next(d, end, ']'); j < 0 {
				return st.sepError(end, ']')
			}
		}
		st.path = st.path[:top]
	}
	st.depth--
	return j
}

func (st *state) skipObject(i int) int {
	if st.depth++; st.depth > maxDepth {
		return st.syntax(i, "exceeded max depth")
	}
	d := st.data
	j, more := st.first(i, '}')
	keys := keySet{base: len(st.keys)}
	kbufBase := len(st.kbuf)
	top := len(st.path)
	if more {
		st.path = append(st.path, seg{}) // as in skipArray
	}
	for more {
		q := skipSpace(d, j)
		_, kr, ke, vj := st.member(q, &keys)
		if vj < 0 {
			return -1
		}
		st.path[top] = seg{idx: -1, ks: q + 1, ke: ke - 1, plain: !kr.arena}
		end := st.skip(vj)
		if end < 0 {
			return -1
		}
		if j, more = next(d, end, '}'); j < 0 {
			return st.sepError(end, '}')
		}
	}
	st.path = st.path[:top]
	st.dropKeys(&keys)
	st.kbuf = st.kbuf[:kbufBase]
	st.depth--
	return j
}

// The walkers of arrays and objects (validate, coerce, defaults, skip) all
// scan them with first, member, next and sepError, so that they accept the
// same documents and report the same syntax errors at the same offsets.
// first and next are inlined and member replaces the calls to scanString
// and key the walkers made before, because one more call an element costs
// Validate about a tenth of its time; for the same reason the depth check
// stays in the walkers, where first cannot take it and remain inlined.

// first returns the start of the first element of the array or object
// whose opening bracket is at data[i] and which close ends, or, with more
// false, the index past close if it is empty.
func (st *state) first(i int, close byte) (j int, more bool) {
	d := st.data
	j = skipSpace(d, i+1)
	if j < len(d) && d[j] == close {
		return j + 1, false
	}
	return j, true
}

// next returns the index past the comma or the close that follows the
// element ending at d[end], with more true after a comma, or -1 if neither
// does: then sepError says why. The caller skips the space that may follow
// the comma; skipping it here would make next too large to inline.
func next(d []byte, end int, close byte) (j int, more bool) {
	j = skipSpace(d, end)
	if j < len(d) {
		if d[j] == ',' {
			return j + 1, true
		}
		if d[j] == close {
			return j + 1, false
		}
	}
	return -1, false
}

// sepError records the syntax error after the element ending at
// data[end], which next found followed by neither a comma nor close.
func (st *state) sepError(end int, close byte) int {
	j := skipSpace(st.data, end)
	switch {
	case j >= len(st.data):
		return st.syntax(j, "unexpected end of JSON input")
	case close == ']':
		return st.syntax(j, "expected , or ] after array element")
	}
	return st.syntax(j, "expected , or } after object member")
}

// member scans the name of the object member at data[j] and the colon
// after it. It returns the decoded name, a reference to it, the index past
// the name's closing quote and the start of the value, or vj = -1 after a
// syntax error. A name already in keys is an error, found before a missing
// colon is; object passes nil keys because it looks names up in its schema
// first, after the colon.
func (st *state) member(j int, keys *keySet) (key []byte, kr keyRef, ke, vj int) {
	d := st.data
	if j >= len(d) || d[j] != '"' {
		return nil, kr, 0, st.syntax(j, "expected a property name")
	}
	// Most names are plain ASCII: scanning them here, as scanString would,
	// spares the walkers the calls to scanString and key they used to make.
	k := j + 1
	for k < len(d) && d[k] < utf8.RuneSelf && plainByte[d[k]] != 0 {
		k++
	}
	if k < len(d) && d[k] == '"' {
		ke = k + 1
		key, kr = d[j+1:k], keyRef{start: j + 1, end: k}
	} else {
		var plain bool
		var msg string
		if ke, plain, msg = scanString(d, j); ke < 0 {
			return nil, kr, 0, st.syntax(j, msg)
		}
		key, kr = st.key(j, ke, plain)
	}
	if keys != nil && st.addKey(keys, kr) {
		return nil, kr, 0, st.duplicate(j, key)
	}
	c := skipSpace(d, ke)
	if c >= len(d) || d[c] != ':' {
		return nil, kr, 0, st.syntax(c, "expected : after property name")
	}
	return key, kr, ke, skipSpace(d, c+1)
}

// duplicate records the syntax error of the property name at data[j],
// which its object already has.
func (st *state) duplicate(j int, key []byte) int {
	return st.syntax(j, "duplicate property "+strconv.Quote(string(key)))
}

// plural returns n and noun, in the plural unless n is 1: "1 character",
// "2 characters", "0 properties".
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return strconv.Itoa(n) + " " + noun[:len(noun)-1] + "ies"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
