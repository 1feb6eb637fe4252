package deref

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// A node is one JSON value. Objects keep their keys in input order, so that
// the output lists properties in the order the author wrote them: clients
// show them, and models fill them in, in that order.
//
// Nodes of the input document are never changed after indexing. The output
// shares the input's nodes wherever it copies them unchanged (data such as
// enum values and descriptions) and builds new nodes for rewritten schemas.
type node struct {
	kind kind
	lit  string // a string's value or a number's literal text
	b    bool
	keys []string // an object's keys
	vals []*node  // an object's values, parallel to keys; an array's elements
	size int      // JSON values in the subtree, the node included

	// Where the node sits in the input document.
	parent *node
	token  string // JSON Pointer token (unescaped) from parent to node

	// Set by indexing for the values in schema positions.
	schema bool
	outer  *resource // the resource the schema is written in
	inner  *resource // outer, or the resource the schema's own $id starts
	id     *url.URL  // this subschema's $id when it starts a resource
	site   *site     // this schema's $ref, when it is a string
	named  bool      // a local $ref names this schema
}

// get returns the value of key in the object n, or nil.
func (n *node) get(key string) *node {
	if i := n.index(key); i >= 0 {
		return n.vals[i]
	}
	return nil
}

// index returns the position of key in the object n, or -1.
func (n *node) index(key string) int {
	for i, k := range n.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// add appends a member to the object n, which must be an output node.
func (n *node) add(key string, v *node) {
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// insert puts a member at position i of the object n, an output node.
func (n *node) insert(i int, key string, v *node) {
	n.keys = slices.Insert(n.keys, i, key)
	n.vals = slices.Insert(n.vals, i, v)
}

func newObject() *node { return &node{kind: kindObject} }

func newString(s string) *node { return &node{kind: kindString, lit: s} }

func newArray(elems ...*node) *node { return &node{kind: kindArray, vals: elems} }

// pointer returns the JSON Pointer of n in its document.
func (n *node) pointer() string {
	var toks []string
	for m := n; m.parent != nil; m = m.parent {
		toks = append(toks, m.token)
	}
	var sb strings.Builder
	for i := len(toks) - 1; i >= 0; i-- {
		sb.WriteByte('/')
		sb.WriteString(escapeToken(toks[i]))
	}
	return sb.String()
}

// lookup returns the value the JSON Pointer ptr selects in n, or nil.
func (n *node) lookup(ptr string) *node {
	if ptr == "" {
		return n
	}
	if ptr[0] != '/' {
		return nil
	}
	for tok := range strings.SplitSeq(ptr[1:], "/") {
		tok = unescapeToken(tok)
		switch n.kind {
		case kindObject:
			n = n.get(tok)
		case kindArray:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(n.vals) {
				return nil
			}
			n = n.vals[i]
		default:
			return nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

// arrayIndex parses a JSON Pointer array index: decimal digits without
// leading zeros.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 1 && tok[0] == '0' || len(tok) > 9 {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapeToken(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	// ~1 first: "~01" is "~1", not "/".
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// parse decodes data, which must be valid JSON (json.Valid), into a tree.
// As in encoding/json, the last of duplicate keys wins.
func parse(data []byte) (*node, error) {
	p := &parser{data: data}
	return p.value(nil, "")
}

// A parser reads JSON that json.Valid accepted, so it need not check the
// grammar.
type parser struct {
	data []byte
	pos  int
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(parent *node, token string) (*node, error) {
	p.space()
	n := &node{parent: parent, token: token, size: 1}
	switch c := p.data[p.pos]; c {
	case '{':
		n.kind = kindObject
		p.pos++
		p.space()
		if p.data[p.pos] == '}' {
			p.pos++
			return n, nil
		}
		var seen map[string]int // only for large objects; small ones scan
		for {
			p.space()
			key, err := p.string()
			if err != nil {
				return nil, err
			}
			p.space()
			p.pos++ // ':'
			v, err := p.value(n, key)
			if err != nil {
				return nil, err
			}
			i := -1
			if seen != nil {
				if j, ok := seen[key]; ok {
					i = j
				}
			} else {
				i = n.index(key)
			}
			if i >= 0 {
				n.size -= n.vals[i].size
				n.vals[i] = v
			} else {
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, v)
				if seen != nil {
					seen[key] = len(n.keys) - 1
				} else if len(n.keys) > 16 {
					seen = make(map[string]int, 2*len(n.keys))
					for j, k := range n.keys {
						seen[k] = j
					}
				}
			}
			n.size += v.size
			p.space()
			p.pos++ // ',' or '}'
			if p.data[p.pos-1] == '}' {
				return n, nil
			}
		}
	case '[':
		n.kind = kindArray
		p.pos++
		p.space()
		if p.data[p.pos] == ']' {
			p.pos++
			return n, nil
		}
		for {
			v, err := p.value(n, strconv.Itoa(len(n.vals)))
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			n.size += v.size
			p.space()
			p.pos++ // ',' or ']'
			if p.data[p.pos-1] == ']' {
				return n, nil
			}
		}
	case '"':
		n.kind = kindString
		s, err := p.string()
		n.lit = s
		return n, err
	case 't':
		n.kind, n.b = kindBool, true
		p.pos += len("true")
	case 'f':
		n.kind = kindBool
		p.pos += len("false")
	case 'n':
		n.kind = kindNull
		p.pos += len("null")
	default:
		start := p.pos
		for p.pos < len(p.data) && strings.IndexByte("+-0123456789.eE", p.data[p.pos]) >= 0 {
			p.pos++
		}
		n.kind, n.lit = kindNumber, string(p.data[start:p.pos])
	}
	return n, nil
}

// string reads a JSON string. Strings with escapes, which are rare in
// schemas, go through encoding/json.
func (p *parser) string() (string, error) {
	start := p.pos
	escaped := false
	for p.pos++; p.data[p.pos] != '"'; p.pos++ {
		if p.data[p.pos] == '\\' {
			escaped = true
			p.pos++
		}
	}
	p.pos++
	raw := p.data[start:p.pos]
	if !escaped {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// equal reports whether a and b are the same JSON value. Numbers compare by
// their literal text, which may call two equal numbers different; callers
// only use that to decide against a merge, which is always safe.
func equal(a, b *node) bool {
	if a == b {
		return true
	}
	if a.kind != b.kind || len(a.vals) != len(b.vals) {
		return false
	}
	switch a.kind {
	case kindBool:
		return a.b == b.b
	case kindNumber, kindString:
		return a.lit == b.lit
	case kindArray:
		for i := range a.vals {
			if !equal(a.vals[i], b.vals[i]) {
				return false
			}
		}
	case kindObject:
		for i, k := range a.keys {
			v := b.get(k)
			if v == nil || !equal(a.vals[i], v) {
				return false
			}
		}
	}
	return true
}

// appendJSON appends the compact JSON encoding of n to b.
func appendJSON(b []byte, n *node) []byte {
	switch n.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool:
		return strconv.AppendBool(b, n.b)
	case kindNumber:
		return append(b, n.lit...)
	case kindString:
		return appendString(b, n.lit)
	case kindArray:
		b = append(b, '[')
		for i, v := range n.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, v)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendJSON(b, n.vals[i])
		}
		return append(b, '}')
	}
}

// appendString appends s as a JSON string. Unlike encoding/json it leaves
// <, > and & alone: the result is read by MCP clients and models, not
// embedded in HTML.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c >= 0x20:
				b = append(b, c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not valid JavaScript in a string literal.
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
