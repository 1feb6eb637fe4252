package tools

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// headerKeyword is the schema keyword of SEP-2243 (protocol 2026-07-28)
// that mirrors an argument into an Mcp-Param-<name> HTTP header, so that
// proxies and load balancers can route on it without parsing the body.
const headerKeyword = "x-mcp-header"

// headerAnnotation puts the x-mcp-header annotation name on fs, the schema
// of a field tagged header:"name", after checking the rules of SEP-2243
// that concern one field: the name is a non-empty HTTP token, and the field
// a string, an integer or a boolean (numbers do not survive a header
// unchanged).
func headerAnnotation(fs *jsonschema.Schema, name string) error {
	if name == "" {
		return fmt.Errorf("header: empty name")
	}
	for i := 0; i < len(name); i++ {
		if !isTChar(name[i]) {
			return fmt.Errorf("header: %q has %q, which an HTTP header name cannot", name, name[i])
		}
	}
	switch fs.Type {
	case "string", "integer", "boolean":
	default:
		t := fs.Type
		if t == "" {
			t = strings.Join(fs.Types, ", ")
		}
		return fmt.Errorf("header: %q needs a string, integer or boolean field, not %s", name, t)
	}
	if fs.Extra == nil {
		fs.Extra = map[string]any{}
	}
	fs.Extra[headerKeyword] = name
	return nil
}

// checkHeaders checks the rules of SEP-2243 that concern the whole input
// schema s: every annotated argument is reachable through properties alone
// (not inside an array, a map or a $ref, where a request may hold it any
// number of times), and no two names differ only in case.
func checkHeaders(s *jsonschema.Schema) error {
	seen := map[string]string{}
	var props func(s *jsonschema.Schema, path string) error
	props = func(s *jsonschema.Schema, path string) error {
		for name, p := range s.Properties {
			at := path + "/" + name
			if h, ok := p.Extra[headerKeyword].(string); ok {
				if prev, dup := seen[strings.ToLower(h)]; dup {
					return fmt.Errorf("header: %s and %s both mirror into Mcp-Param-%s (names are case-insensitive)", prev, at, h)
				}
				seen[strings.ToLower(h)] = at
			}
			if err := props(p, at); err != nil {
				return err
			}
		}
		return nil
	}
	if err := props(s, ""); err != nil {
		return err
	}
	// Anything annotated elsewhere is out of reach.
	reachable := len(seen)
	if total := countHeaders(s); total != reachable {
		return fmt.Errorf("header: %d of the annotated fields sit inside a list, a map or a shared definition, where one request may hold several values; only fields reached through struct fields alone can be mirrored", total-reachable)
	}
	return nil
}

// countHeaders returns how many sub-schemas of s carry the annotation,
// wherever they are, in the keywords that inference writes.
func countHeaders(s *jsonschema.Schema) int {
	if s == nil {
		return 0
	}
	n := 0
	if _, ok := s.Extra[headerKeyword]; ok {
		n++
	}
	for _, p := range s.Properties {
		n += countHeaders(p)
	}
	for _, d := range s.Defs {
		n += countHeaders(d)
	}
	for _, sub := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf, s.PrefixItems} {
		for _, x := range sub {
			n += countHeaders(x)
		}
	}
	return n + countHeaders(s.Items) + countHeaders(s.AdditionalProperties)
}

// isTChar reports whether c may appear in an HTTP token (RFC 9110).
func isTChar(c byte) bool {
	switch {
	case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
