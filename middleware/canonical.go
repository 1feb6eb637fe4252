package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// maxCanonicalDepth is the deepest nesting canonicalJSON accepts. Deeper
// arguments are not canonicalized: the cache passes them by, and an
// idempotency fingerprint takes their bytes as they are.
const maxCanonicalDepth = 512

// maxCanonicalBytes is the longest text canonicalJSON accepts, for the
// same reason: the middleware that canonicalize arguments run before the
// argument size limits, and must not let a client make them parse megabytes.
const maxCanonicalBytes = 1 << 20

var (
	errNotJSON       = errors.New("not valid JSON")
	errDuplicateKey  = errors.New("an object has a key twice")
	errTooDeep       = errors.New("nested too deeply")
	errTooLongToHash = errors.New("too long")
)

// canonicalJSON returns the canonical form of the JSON text data: compact,
// every object's members sorted by key (byte order of the UTF-8 keys, as
// encoding/json sorts map keys), numbers as written, strings decoded and
// written again one way (only '"', '\\' and control characters escaped,
// invalid UTF-8 and lone surrogates as U+FFFD, as encoding/json decodes
// them). Texts that encoding/json decodes to the same value have the same
// canonical form, and a canonical form is its own.
//
// Invalid JSON, an object with a key twice (which decoders read in
// different ways), nesting deeper than maxCanonicalDepth and texts longer
// than maxCanonicalBytes are refused. Empty data (no arguments) is
// canonical "".
func canonicalJSON(dst, data []byte) ([]byte, error) {
	if len(data) == 0 {
		return dst, nil
	}
	if len(data) > maxCanonicalBytes {
		return nil, errTooLongToHash
	}
	if !json.Valid(data) {
		return nil, errNotJSON
	}
	c := canonicalizers.Get().(*canonicalizer)
	defer canonicalizers.Put(c)
	c.data = data
	defer func() {
		// Keep no reference to data in the pool.
		c.data = nil
		clear(c.members[:cap(c.members)])
	}()
	i := jsonscan.Space(data, 0)
	dst, i, err := c.value(dst, i, 0)
	if err != nil {
		return nil, err
	}
	if jsonscan.Space(data, i) != len(data) {
		return nil, errNotJSON // not reached: json.Valid said one value
	}
	return dst, nil
}

// canonicalizers keeps canonicalizers for reuse, with their buffers.
var canonicalizers = sync.Pool{New: func() any { return new(canonicalizer) }}

// A canonicalizer writes the canonical form of data, which json.Valid has
// accepted; it still checks every index, so that it cannot panic.
type canonicalizer struct {
	data    []byte
	scratch []byte   // for reordering members
	members []member // reused across objects of one depth: see object
}

// A member is one member of an object being written: its decoded key and
// where its canonical form ("key":value) lies in the output.
type member struct {
	key        []byte
	start, end int
}

// value writes the canonical form of the value at data[i] to dst and
// returns the index after it.
func (c *canonicalizer) value(dst []byte, i, depth int) ([]byte, int, error) {
	if i >= len(c.data) {
		return nil, i, errNotJSON
	}
	switch c.data[i] {
	case '{':
		return c.object(dst, i, depth+1)
	case '[':
		return c.array(dst, i, depth+1)
	case '"':
		s, j, err := c.string(i)
		if err != nil {
			return nil, j, err
		}
		return appendString(dst, s), j, nil
	default: // a number, true, false or null: as written
		j := jsonscan.Value(c.data, i)
		return append(dst, c.data[i:j]...), j, nil
	}
}

func (c *canonicalizer) array(dst []byte, i, depth int) ([]byte, int, error) {
	if depth > maxCanonicalDepth {
		return nil, i, errTooDeep
	}
	dst = append(dst, '[')
	i = jsonscan.Space(c.data, i+1)
	if i < len(c.data) && c.data[i] == ']' {
		return append(dst, ']'), i + 1, nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, i, err = c.value(dst, i, depth); err != nil {
			return nil, i, err
		}
		i = jsonscan.Space(c.data, i)
		if i >= len(c.data) {
			return nil, i, errNotJSON
		}
		if c.data[i] == ']' {
			return append(dst, ']'), i + 1, nil
		}
		i = jsonscan.Space(c.data, i+1) // past ','
	}
}

func (c *canonicalizer) object(dst []byte, i, depth int) ([]byte, int, error) {
	if depth > maxCanonicalDepth {
		return nil, i, errTooDeep
	}
	dst = append(dst, '{')
	begin := len(dst)
	i = jsonscan.Space(c.data, i+1)
	if i < len(c.data) && c.data[i] == '}' {
		return append(dst, '}'), i + 1, nil
	}
	// The members of this object follow those of the objects around it
	// in c.members; nested objects use (and give back) the space after.
	base := len(c.members)
	defer func() { c.members = c.members[:base] }()
	for {
		key, j, err := c.string(i)
		if err != nil {
			return nil, j, err
		}
		start := len(dst)
		if len(c.members) > base {
			dst = append(dst, ',')
			start++
		}
		dst = appendString(dst, key)
		dst = append(dst, ':')
		i = jsonscan.Space(c.data, j)
		i = jsonscan.Space(c.data, i+1) // past ':'
		if dst, i, err = c.value(dst, i, depth); err != nil {
			return nil, i, err
		}
		c.members = append(c.members, member{key: key, start: start, end: len(dst)})
		i = jsonscan.Space(c.data, i)
		if i >= len(c.data) {
			return nil, i, errNotJSON
		}
		if c.data[i] == '}' {
			i++
			break
		}
		i = jsonscan.Space(c.data, i+1) // past ','
	}
	ms := c.members[base:]
	if !slices.IsSortedFunc(ms, compareMembers) {
		slices.SortFunc(ms, compareMembers)
		// Write the members again in order, from a copy of this object's
		// output.
		c.scratch = append(c.scratch[:0], dst[begin:]...)
		off := begin
		dst = dst[:begin]
		for k, m := range ms {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, c.scratch[m.start-off:m.end-off]...)
		}
	}
	for k := 1; k < len(ms); k++ {
		if bytes.Equal(ms[k-1].key, ms[k].key) {
			return nil, i, errDuplicateKey
		}
	}
	return append(dst, '}'), i, nil
}

func compareMembers(a, b member) int { return bytes.Compare(a.key, b.key) }

// string decodes the string at data[i] and returns the index after it. The
// bytes returned may be those of data: they must not be modified.
func (c *canonicalizer) string(i int) ([]byte, int, error) {
	if i >= len(c.data) || c.data[i] != '"' {
		return nil, i, errNotJSON
	}
	j := jsonscan.String(c.data, i)
	if j > len(c.data) || j-i < 2 || c.data[j-1] != '"' {
		return nil, j, errNotJSON
	}
	raw := c.data[i:j]
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, j, nil // the common case: nothing to decode
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, j, errNotJSON
	}
	return []byte(s), j, nil
}

// appendString appends s as a canonical JSON string: only '"', '\\' and
// the control characters escaped, the rest as UTF-8. s is valid UTF-8, as
// encoding/json decodes strings.
func appendString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
		case b == '\n':
			dst = append(dst, '\\', 'n')
		case b == '\r':
			dst = append(dst, '\\', 'r')
		case b == '\t':
			dst = append(dst, '\\', 't')
		case b < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, '"')
}
