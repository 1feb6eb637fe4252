package mcpkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/paramheader"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// A Tool is an MCP tool definition together with the code that serves it.
//
// The embedded [mcp.Tool] is what clients see in tools/list: name, title,
// description, input and output schema, annotations, icons and _meta.
// [Server.Add] copies the Tool; changing it afterwards has no effect on the
// server. The schemas and maps it refers to are never modified by mcpkit.
type Tool struct {
	mcp.Tool

	// Handler serves calls to the tool. It is required.
	Handler Handler

	// Middleware wraps Handler for this tool only, inside the server-wide
	// middleware: the server's chain runs first, then these, in order.
	Middleware []Middleware

	// Tags are free-form labels for filtering and visibility rules.
	Tags []string

	// Validation overrides the server's [ServerOptions.Validation] for
	// this tool; the zero value keeps it.
	Validation ValidationMode

	// Version distinguishes several registrations of the same name. Clients
	// list and call the highest visible version, and can pin another with
	// [MetaKeyVersion] in a call's _meta. From lowest to highest: the empty
	// version; semver-like versions (an optional "v", dot-separated numbers
	// compared as numbers, so "1.10" > "1.9"; an optional "-" pre-release,
	// lower than its release, "2.0.0-rc.1" < "2.0.0"; missing parts count
	// as zero; an optional "+" build suffix, ignored); then any other
	// string, compared byte-wise. Versions that rank alike but are spelled
	// differently ("1.2", "v1.2.0") are ordered byte-wise.
	Version string

	// Unlisted keeps the tool out of tools/list while it stays callable by
	// its name: for an old name kept working after a rename (see
	// transform.Alias). A name is unlisted when the version served to a
	// request is.
	Unlisted bool

	// Origin is the tool this one derives from, or nil for a tool of its
	// own. Package transform sets it on the tools it derives (renamed,
	// aliased, with arguments hidden), and the Server on what a
	// [CatalogTransform] makes of a registered tool (a namespaced name,
	// say), so that every decision keyed on a tool finds the same tool
	// whichever way a call came in: see [Tool.ID]. The origin is shared
	// and must not be modified.
	Origin *Tool

	// probe is set on the tool alone that SelectorNames gives a match
	// function, to learn the names it selects by (see Named).
	probe *nameProbe
}

// A ToolID is the identity of a tool: the name and version of the tool it
// derives from, at the end of its [Tool.Origin] chain. Every decision that
// keys on a tool (visibility rules, [ForTools] selectors, limits and pools,
// the keys of stores, sealed request state, task records) uses it, so that
// a deprecated alias, a derived or namespaced name and a discovery
// meta-tool reach a tool under the same rules as its own name.
type ToolID struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// String returns id as "name" or "name@version".
func (id ToolID) String() string {
	if id.Version == "" {
		return id.Name
	}
	return id.Name + "@" + id.Version
}

// maxOrigins bounds the walk along a chain of origins, so that a cycle
// built by hand cannot hang a call. Real chains have a few links.
const maxOrigins = 64

// ID returns t's identity: the name and version of the last tool in its
// chain of [Tool.Origin]s, or t's own when it has no origin. It costs a
// few pointer loads and allocates nothing.
func (t *Tool) ID() ToolID {
	o := t.root()
	return ToolID{Name: o.Name, Version: o.Version}
}

// root returns the last tool along t's chain of origins.
func (t *Tool) root() *Tool {
	o := t
	for i := 0; o.Origin != nil && i < maxOrigins; i++ {
		o = o.Origin
	}
	return o
}

// Lineage returns t followed by its origins, nearest first: every tool
// that a call to t reaches. A rule that restricts access (disabling a
// tool, requiring a scope) holds for t when it holds for any of them.
func (t *Tool) Lineage() iter.Seq[*Tool] {
	return func(yield func(*Tool) bool) {
		o := t
		for i := 0; o != nil && i <= maxOrigins; i++ {
			if !yield(o) {
				return
			}
			o = o.Origin
		}
	}
}

// HasTag reports whether t carries tag.
func (t *Tool) HasTag(tag string) bool { return slices.Contains(t.Tags, tag) }

// ValidateToolName reports whether name is a valid MCP tool name: 1 to 128
// characters, each an ASCII letter, digit, '_', '-' or '.'. The error wraps
// [ErrInvalidToolName].
func ValidateToolName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidToolName)
	}
	if len(name) > 128 {
		return fmt.Errorf("%w: %d characters, the limit is 128", ErrInvalidToolName, len(name))
	}
	for i := 0; i < len(name); i++ {
		if !validNameByte(name[i]) {
			return fmt.Errorf("%w: %q has %q at offset %d (allowed: A-Z a-z 0-9 _ - .)", ErrInvalidToolName, name, name[i], i)
		}
	}
	return nil
}

func validNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// validate checks what the server needs of t before it can be registered.
func (t *Tool) validate() error {
	if err := ValidateToolName(t.Name); err != nil {
		return err
	}
	if f, isFunc := t.Handler.(HandlerFunc); t.Handler == nil || isFunc && f == nil {
		return fmt.Errorf("%w: %q", ErrNoHandler, t.Name)
	}
	for i, m := range t.Middleware {
		if m == nil {
			return fmt.Errorf("mcpkit: tool %q: middleware %d is nil", t.Name, i)
		}
	}
	if err := checkSchema(t.InputSchema, true); err != nil {
		return fmt.Errorf("%w: tool %q: input schema: %v", ErrInvalidSchema, t.Name, err)
	}
	if err := paramheader.Check(t.InputSchema); err != nil {
		return fmt.Errorf("%w: tool %q: input schema: %v", ErrInvalidSchema, t.Name, err)
	}
	if t.OutputSchema != nil {
		if err := checkSchema(t.OutputSchema, false); err != nil {
			return fmt.Errorf("%w: tool %q: output schema: %v", ErrInvalidSchema, t.Name, err)
		}
	}
	return nil
}

// checkSchema reports whether s marshals to a JSON object and, for an input
// schema, whether that object has "type": "object" as MCP requires.
func checkSchema(s any, input bool) error {
	if s == nil {
		return fmt.Errorf("missing")
	}
	if raw, ok := rawJSON(s); ok {
		if err := checkJSON(raw); err != nil {
			return err
		}
		if objectOfType(raw, input) {
			return nil // the common case, read without decoding the text
		}
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	// Only the root's type is read: nested schemas are the validator's.
	var root struct {
		Type any `json:"type"`
	}
	if d := bytes.TrimLeft(data, " \t\r\n"); len(d) == 0 || d[0] != '{' || json.Unmarshal(data, &root) != nil {
		return fmt.Errorf("not a JSON object: %.40s", data)
	}
	if input && root.Type != "object" {
		return fmt.Errorf(`type must be "object", not %v`, root.Type)
	}
	return nil
}

// objectOfType reports whether data, valid JSON text, is an object and,
// for an input schema, one whose "type" is "object", as checkSchema reads
// it. False says nothing: checkSchema decodes the text to find out.
func objectOfType(data []byte, input bool) bool {
	i := jsonscan.Space(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	if !input {
		return true
	}
	// encoding/json matches "type" in any case, and keeps the last.
	var typ []byte
	for i = jsonscan.Space(data, i+1); i < len(data) && data[i] == '"'; {
		end := jsonscan.String(data, i)
		key := data[i+1 : end-1]
		for _, c := range key {
			if c == '\\' || c >= utf8.RuneSelf {
				return false // an escape, or a letter encoding/json may fold
			}
		}
		i = jsonscan.Space(data, jsonscan.Space(data, end)+1) // past the colon
		next := jsonscan.Value(data, i)
		if bytes.EqualFold(key, []byte("type")) {
			typ = data[i:next]
		}
		i = jsonscan.Space(data, next)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.Space(data, i+1)
		}
	}
	return string(typ) == `"object"`
}

// rawJSON returns the text of a schema given as JSON text.
func rawJSON(s any) ([]byte, bool) {
	switch v := s.(type) {
	case json.RawMessage:
		return v, true
	case []byte:
		return v, true
	case string:
		return []byte(v), true
	}
	return nil, false
}

// checkJSON says, in a schema author's words, what is wrong with data if it
// is not one JSON value: empty, cut short, or where it goes wrong.
func checkJSON(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf(`empty, want a JSON object such as {"type":"object"}`)
	}
	if json.Valid(data) {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("not valid JSON")
	}
	at := int(min(max(se.Offset, 1), int64(len(data))))
	if strings.HasPrefix(se.Error(), "unexpected end") {
		return fmt.Errorf("not valid JSON: it ends before the value is complete: %s", schema.Clip(string(data)))
	}
	return fmt.Errorf("not valid JSON: unexpected %q at byte %d, after %s", data[at-1], at, schema.Clip(string(data[max(0, at-21):at-1])))
}

// clone returns a copy of t that shares nothing mutable with t's slices.
// The schemas and _meta are shared: mcpkit never writes to them.
func (t *Tool) clone() *Tool {
	t2 := *t
	t2.Middleware = slices.Clone(t.Middleware)
	t2.Tags = slices.Clone(t.Tags)
	t2.Icons = slices.Clone(t.Icons)
	return &t2
}
