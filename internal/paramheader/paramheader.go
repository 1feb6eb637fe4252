// Package paramheader reads the Mcp-Param-* HTTP headers of protocol
// 2026-07-28 (SEP-2243): which arguments a tool's input schema mirrors into
// headers (the x-mcp-header annotation), whether those annotations are
// valid, how a header's value is decoded, and whether the headers of a
// request agree with the arguments of its call.
//
// It is the one reader of these headers in mcpkit: the server's check of a
// call and Request.ParamHeader decode a value the same way.
package paramheader

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// Prefix starts the name of every header that mirrors an argument.
const Prefix = "Mcp-Param-"

// A Param is one argument mirrored into an HTTP header.
type Param struct {
	Header string   // the full header name: "Mcp-Param-Region"
	Path   []string // the argument, as property names from the root
}

// node is the part of a schema the annotations live in.
type node struct {
	Type       json.RawMessage  `json:"type"`
	Header     json.RawMessage  `json:"x-mcp-header"`
	Properties map[string]*node `json:"properties"`
}

// annotated returns the schema's root node when s (a schema of any Go
// form) marshals to JSON holding an x-mcp-header annotation.
func annotated(s any) (*node, bool) {
	var data []byte
	switch v := s.(type) {
	case json.RawMessage:
		data = v // JSON text already: marshalling it would only compact it
	default:
		var err error
		if data, err = json.Marshal(s); err != nil {
			return nil, false
		}
	}
	if !bytes.Contains(data, []byte(`"x-mcp-header"`)) {
		return nil, false
	}
	var root node
	if json.Unmarshal(data, &root) != nil {
		return nil, false
	}
	return &root, true
}

// Of returns the arguments the input schema s mirrors into headers, nested
// properties included, in the order of their paths; nil when there are
// none. It does not check the annotations (see [Check]).
func Of(s any) []Param {
	root, ok := annotated(s)
	if !ok {
		return nil
	}
	var out []Param
	var walk func(props map[string]*node, prefix []string)
	walk = func(props map[string]*node, prefix []string) {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			n := props[name]
			if n == nil {
				continue
			}
			path := append(slices.Clip(prefix), name)
			var h string
			if json.Unmarshal(n.Header, &h) == nil && h != "" {
				out = append(out, Param{Header: Prefix + h, Path: path})
			}
			walk(n.Properties, path)
		}
	}
	walk(root.Properties, nil)
	return out
}

// Check reports what is wrong with the x-mcp-header annotations of the
// input schema s, as SEP-2243 constrains them: on a property (at any depth)
// of type string, integer or boolean (a type array, even with "null", is
// refused: clients would not mirror it), naming an HTTP header (a token),
// no two alike but for case. A client refuses a tool whose annotations
// break these rules.
func Check(s any) error {
	root, ok := annotated(s)
	if !ok {
		return nil
	}
	seen := map[string]string{}
	var walk func(props map[string]*node, prefix string) error
	walk = func(props map[string]*node, prefix string) error {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			n, path := props[name], prefix+name
			if n == nil {
				continue
			}
			if n.Header != nil {
				var typ, h string
				if json.Unmarshal(n.Type, &typ) != nil || typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("property %q: x-mcp-header is only for an argument of type string, integer or boolean, not %s", path, schema.Clip(string(n.Type)))
				}
				if json.Unmarshal(n.Header, &h) != nil || h == "" {
					return fmt.Errorf("property %q: x-mcp-header is empty or not a string", path)
				}
				if i := strings.IndexFunc(h, func(r rune) bool { return r > 0x7e || !isTokenChar(byte(r)) }); i >= 0 {
					return fmt.Errorf("property %q: x-mcp-header %q is not an HTTP header name: it has %q", path, schema.Clip(h), []rune(h[i:])[0])
				}
				if other, dup := seen[strings.ToLower(h)]; dup {
					return fmt.Errorf("property %q: x-mcp-header %q names the header of %q too (header names ignore case)", path, h, other)
				}
				seen[strings.ToLower(h)] = path
			}
			if err := walk(n.Properties, path+"."); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root.Properties, "")
}

// isTokenChar reports whether c may appear in an HTTP field name (RFC 9110
// tchar).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// Decode returns the value a header carries: the text inside =?base64?...?=
// decoded (standard alphabet, padding required, canonical), or the header
// as it is when it does not have that form. It reports false for the
// encoded form with invalid Base64.
func Decode(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v, true // not the encoded form: a literal
	}
	b, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// ErrMismatch is wrapped by the errors of [Agree].
var ErrMismatch = errors.New("header mismatch")

// Agree reports how the headers disagree with the arguments args of a
// call, for the arguments params mirrors: a header for an argument that is
// absent or null, a header sent more than once, a header that is not the
// argument's value (as a string, boolean or integer, in plain text or as
// =?base64?...?=), and, when required is set, no header for an argument
// that is present. The error's text never echoes a value; it wraps
// ErrMismatch.
func Agree(header http.Header, args json.RawMessage, params []Param, required bool) error {
	var obj map[string]json.RawMessage
	if len(args) > 0 && json.Unmarshal(args, &obj) != nil {
		obj = nil
	}
	for _, p := range params {
		got := header.Values(p.Header)
		arg, ok := lookupArg(obj, p.Path)
		name := strings.Join(p.Path, ".")
		switch {
		case !ok || string(arg) == "null":
			if len(got) > 0 {
				return mismatch("%s was sent for the argument %q, which is absent or null", p.Header, name)
			}
		case len(got) == 0:
			if required {
				return mismatch("%s is missing for the argument %q", p.Header, name)
			}
		case len(got) > 1:
			return mismatch("%s was sent more than once", p.Header)
		default:
			value, ok := Decode(got[0])
			if !ok {
				return mismatch("%s is not valid Base64 inside =?base64?...?=", p.Header)
			}
			if !valueIs(value, arg) {
				return mismatch("%s does not match the argument %q", p.Header, name)
			}
		}
	}
	return nil
}

func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMismatch}, args...)...)
}

// lookupArg returns the value at path in the arguments obj.
func lookupArg(obj map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	v, ok := obj[path[0]]
	for _, name := range path[1:] {
		if !ok {
			return nil, false
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(v, &inner) != nil {
			return nil, false
		}
		v, ok = inner[name]
	}
	return v, ok
}

// valueIs reports whether the header text v is the argument arg: the same
// string, "true" or "false" for a boolean, the same integer for an integer
// (within ±2^53-1, as JSON numbers are exact there). Other JSON values are
// never mirrored, so never match.
func valueIs(v string, arg json.RawMessage) bool {
	var x any
	if json.Unmarshal(arg, &x) != nil {
		return false
	}
	const maxSafe = 1<<53 - 1
	switch x := x.(type) {
	case string:
		return v == x
	case bool:
		return v == strconv.FormatBool(x)
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > maxSafe {
			return false
		}
		h, err := strconv.ParseFloat(v, 64)
		return err == nil && h == x
	}
	return false
}
