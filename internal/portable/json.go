package portable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// An object is a JSON object that keeps its members in the order they were
// written: models fill in a tool's arguments in the order of its schema's
// properties, and OpenAI's strict mode produces them in that order.
type object struct {
	keys []string
	vals []any
}

func (o *object) len() int { return len(o.keys) }

func (o *object) index(key string) int { return slices.Index(o.keys, key) }

// get returns the value of key, and whether o has it.
func (o *object) get(key string) (any, bool) {
	if i := o.index(key); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// set replaces the value of key, or appends the member.
func (o *object) set(key string, v any) {
	if i := o.index(key); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, v)
}

func (o *object) del(key string) {
	if i := o.index(key); i >= 0 {
		o.keys = slices.Delete(o.keys, i, i+1)
		o.vals = slices.Delete(o.vals, i, i+1)
	}
}

// decode reads one JSON value: nil, bool, json.Number, string, []any or
// *object. An object with a member written twice keeps the last, as
// encoding/json does.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			o := &object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k.(string), v)
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", tok)
	}
	return tok, nil // nil, bool, json.Number or string
}

// encode appends the compact JSON of v, a value decode returns (or that the
// package builds of the same types), to b.
func encode(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if v {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case json.Number:
		return append(b, v...)
	case string:
		s, _ := json.Marshal(v) // a string always marshals
		return append(b, s...)
	case []any:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = encode(b, x)
		}
		return append(b, ']')
	case *object:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = encode(b, k)
			b = append(b, ':')
			b = encode(b, v.vals[i])
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("portable: encode: unexpected %T", v))
}

// equal reports whether a and b are the same JSON value; numbers are equal
// when they denote the same number.
func equal(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		return ok && numEqual(a, b)
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equal)
	case *object:
		b, ok := b.(*object)
		if !ok || a.len() != b.len() {
			return false
		}
		for i, k := range a.keys {
			if v, ok := b.get(k); !ok || !equal(a.vals[i], v) {
				return false
			}
		}
		return true
	}
	return a == b
}

// escapeToken escapes a JSON Pointer token.
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// unescapeToken undoes escapeToken.
func unescapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
