package deref

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Errors returned by [Dereference]. A reference that cannot be resolved or
// inlined comes as a [*RefError] wrapping one of them.
var (
	// ErrInvalidJSON means the schema is not valid JSON.
	ErrInvalidJSON = errors.New("deref: invalid JSON")
	// ErrUnresolved means a $ref names a location in the document that
	// does not exist or is not a schema, or is not a valid URI.
	ErrUnresolved = errors.New("deref: unresolved $ref")
	// ErrUnsupported means the schema is valid, but rewriting it could
	// change what it means (dynamic references, identifiers defined twice,
	// subschemas with an $id that cannot move), so it should be used as it
	// is.
	ErrUnsupported = errors.New("deref: schema cannot be dereferenced safely")
)

// A RefError reports a $ref that [Dereference] could not resolve or inline.
type RefError struct {
	// Ref is the value of the $ref.
	Ref string
	// Location is the JSON Pointer, in the input, of the schema holding
	// the $ref ("" for the root).
	Location string
	// Err says what went wrong; it wraps [ErrUnresolved] or
	// [ErrUnsupported].
	Err error
}

func (e *RefError) Error() string {
	return e.Err.Error() + ` ($ref "` + e.Ref + `" at "#` + e.Location + `")`
}

// Unwrap returns e.Err.
func (e *RefError) Unwrap() error { return e.Err }

// Options configures [Dereference]. A nil *Options means the defaults.
type Options struct {
	// MaxNodes bounds the size of the result, counted in JSON values (each
	// object, array, string, number, boolean and null is one value).
	// When inlining every shared schema would exceed it, Dereference keeps
	// the shared schemas whose copies cost most as definitions, referenced
	// with $ref, until the result fits. Zero or less means 4 times the
	// input's count, and at least 1000. A bound below what the schema needs
	// with every shared schema kept is not met: the result is then as small
	// as keeping them makes it.
	MaxNodes int
}

func (o *Options) maxNodes(input int) int {
	if o != nil && o.MaxNodes > 0 {
		return o.MaxNodes
	}
	return max(4*input, 1000)
}

// Dereference returns a schema equivalent to schema with its local
// references ($ref to a location in the same document) replaced by the
// schemas they name, as far as that is possible: see the package
// documentation for the rules. The input is never modified. A schema
// without local references is returned as it is, the same slice.
//
// An error wraps [ErrInvalidJSON], [ErrUnresolved] or [ErrUnsupported];
// for the last, callers should use the schema unchanged.
func Dereference(schema json.RawMessage, opts *Options) (json.RawMessage, error) {
	if !json.Valid(schema) {
		return nil, ErrInvalidJSON
	}
	if !mayHaveRef(schema) {
		return schema, nil
	}
	root, err := parse(schema)
	if err != nil {
		return nil, errors.Join(ErrInvalidJSON, err)
	}
	d, err := index(root)
	if err != nil {
		return nil, err
	}
	if d.local == 0 {
		return schema, nil
	}
	if d.dynamic != "" {
		return nil, fmt.Errorf("%w: %s depends on the dynamic scope, which inlining changes", ErrUnsupported, d.dynamic)
	}
	p := newPlan(d)
	p.markCycles()
	p.bound(opts.maxNodes(root.size))
	p.markUsed()
	p.place()
	b := &builder{d: d, p: p, ids: map[string]bool{}}
	out, err := b.build()
	if err != nil {
		return nil, err
	}
	return appendJSON(make([]byte, 0, len(schema)), out), nil
}

// mayHaveRef reports whether data, valid JSON, may hold a "$ref" key: any
// such key is written literally or with a \u escape.
func mayHaveRef(data []byte) bool {
	return bytes.Contains(data, []byte(`"$ref"`)) || bytes.Contains(data, []byte(`\u`))
}
