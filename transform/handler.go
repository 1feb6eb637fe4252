package transform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// mapper is the handler of a derived tool that renames or hides arguments:
// it rewrites each call's arguments into the parent's and calls the
// parent's handler. Everything it needs per call is prepared by newMapper.
type mapper struct {
	next   mcpkit.Handler
	parent *mcpkit.Tool // what next finds in req.Tool

	// keys maps each visible argument's advertised name to its name in
	// the parent, quoted, or to nil when it keeps its name.
	keys map[string][]byte
	// drop are the parent's names that a client must not send (hidden
	// arguments, and renamed ones under their old name), compared as
	// encoding/json matches struct fields: without regard to case.
	drop   [][]byte
	inject []injection
	extra  int // the bytes the constant injections add
}

// injection is a hidden argument as the mapper adds it.
type injection struct {
	hidden
	quoted []byte // its name in the parent, as a JSON string
}

func newMapper(parent *mcpkit.Tool, rw *rewritten) *mapper {
	m := &mapper{next: parent.Handler, parent: parent, keys: make(map[string][]byte, len(rw.visible))}
	for _, name := range rw.visible {
		m.keys[name] = nil
	}
	for old, n := range rw.renames {
		m.keys[n] = quote(old)
		m.drop = append(m.drop, []byte(old))
	}
	for _, h := range rw.hidden {
		inj := injection{hidden: h, quoted: quote(h.name)}
		m.inject = append(m.inject, inj)
		m.drop = append(m.drop, []byte(h.name))
		m.extra += len(inj.quoted) + len(inj.value) + 2
	}
	return m
}

// ParentArgument returns the name the parent knows the argument name by,
// when the derived tool renamed it. [github.com/mcpkit/mcpkit/middleware.NewAudit]
// asks a tool's handler for it, so that a rule naming an argument follows
// it under its new name.
func (m *mapper) ParentArgument(name string) (string, bool) {
	q := m.keys[name]
	if q == nil {
		return "", false
	}
	var old string
	if json.Unmarshal(q, &old) != nil {
		return "", false
	}
	return old, true
}

func quote(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// ServeTool calls the parent's handler with the call's arguments under the
// parent's names, and the hidden ones.
func (m *mapper) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	args := bytes.TrimSpace(req.Arguments)
	none := len(args) == 0 || string(args) == "null" // as the SDK and validation read them: {}
	// Validation has checked the arguments unless it is off for the
	// tool; either way, what is copied must be JSON, or a value could
	// smuggle a member past the mapping.
	if !none && (args[0] != '{' || !json.Valid(args)) {
		return nil, mcpkit.ToolErrorf("invalid arguments: not a JSON object")
	}

	out := make([]byte, 1, len(args)+m.extra+16*len(m.inject)+2)
	out[0] = '{'
	if !none {
		out = m.appendArgs(out, args)
	}
	for i := range m.inject {
		var err error
		if out, err = m.inject[i].appendTo(ctx, req, out); err != nil {
			return nil, err
		}
	}
	if len(out) > 1 {
		out = out[:len(out)-1] // the last comma
	}
	out = append(out, '}')

	r := req.WithArguments(out)
	r.Tool = m.parent
	return m.next.ServeTool(ctx, r)
}

// appendArgs appends the members of args, a JSON object, to out, under
// the parent's names, leaving out those the parent must not get from a
// client.
func (m *mapper) appendArgs(out, args []byte) []byte {
	sc := objectReader{data: args, i: 1}
	for {
		key, quotedKey, value, ok := sc.next()
		if !ok {
			return out
		}
		switch parent, visible := m.keys[string(key)]; {
		case visible && parent != nil:
			out = appendMember(out, parent, value)
		case visible || !m.dropped(key):
			out = appendMember(out, quotedKey, value)
		}
	}
}

func (m *mapper) dropped(key []byte) bool {
	for _, d := range m.drop {
		if bytes.EqualFold(key, d) {
			return true
		}
	}
	return false
}

func appendMember(out, quotedKey, value []byte) []byte {
	out = append(out, quotedKey...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, ',')
}

// appendTo appends the hidden argument's member for req to out, or
// nothing when it is to be left out.
func (in *injection) appendTo(ctx context.Context, req *mcpkit.Request, out []byte) ([]byte, error) {
	if in.fn == nil {
		if in.value == nil {
			return out, nil // hidden, optional, no default: the parent never gets it
		}
		return appendMember(out, in.quoted, in.value), nil
	}
	v, err := in.fn(ctx, req)
	if err != nil {
		return nil, &ValueError{Tool: req.Tool.Name, Argument: in.name, Err: err}
	}
	switch v := v.(type) {
	case nil:
		if in.def == nil && in.required {
			return nil, &ValueError{Tool: req.Tool.Name, Argument: in.name, Err: errors.New("ValueFunc returned nil")}
		}
		if in.def == nil {
			return out, nil
		}
		return appendMember(out, in.quoted, in.def), nil
	case string:
		// The usual value (a user ID), written without json.Marshal's
		// allocation.
		out = append(append(out, in.quoted...), ':')
		return append(appendString(out, v), ','), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, &ValueError{Tool: req.Tool.Name, Argument: in.name, Err: err}
	}
	return appendMember(out, in.quoted, data), nil
}

// appendString appends s to out as a JSON string. It escapes what JSON
// requires, and U+2028 and U+2029 as encoding/json does; invalid UTF-8
// becomes U+FFFD, as with encoding/json.
func appendString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				out = append(out, '\\', c)
			case c == '\n':
				out = append(out, '\\', 'n')
			case c == '\r':
				out = append(out, '\\', 'r')
			case c == '\t':
				out = append(out, '\\', 't')
			case c < 0x20:
				out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			out = append(out, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return append(out, '"')
}

// objectReader reads the members of a JSON object, valid JSON, one by one.
type objectReader struct {
	data []byte
	i    int // after the '{', or after the last value read
}

// next returns the next member's name (unescaped), its name as written
// (with its quotes) and its value as written, or ok == false at the end.
func (s *objectReader) next() (key, quotedKey, value []byte, ok bool) {
	s.skipSpaceAnd(',')
	if s.data[s.i] == '}' {
		return nil, nil, nil, false
	}
	start := s.i
	s.i = jsonscan.String(s.data, s.i)
	quotedKey = s.data[start:s.i]
	key = quotedKey[1 : len(quotedKey)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		var k string
		json.Unmarshal(quotedKey, &k) // valid JSON: it cannot fail
		key = []byte(k)
	}
	s.skipSpaceAnd(':')
	start = s.i
	s.i = jsonscan.Value(s.data, s.i)
	return key, quotedKey, s.data[start:s.i], true
}

// skipSpaceAnd skips white space, at most one sep, and white space.
func (s *objectReader) skipSpaceAnd(sep byte) {
	s.skipSpace()
	if s.data[s.i] == sep {
		s.i++
		s.skipSpace()
	}
}

func (s *objectReader) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}
