package schema

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpkit/mcpkit/internal/spell"
)

// A SchemaError reports a schema that [Compile] rejects, and where in the
// schema the fault is. It wraps [ErrInvalidSchema] and, when set, Err.
type SchemaError struct {
	// Pointer is the JSON Pointer (RFC 6901) of the faulty keyword within
	// the schema, such as "/properties/a/type"; "" when the fault is not
	// in one keyword (the schema is not JSON, say).
	Pointer string
	// Msg says what is wrong, such as `unknown type "strng"`.
	Msg string
	// Err is the error behind the fault, if any: [ErrRemoteRef],
	// [ErrCircular], or one from encoding/json, regexp or jsonschema-go.
	Err error
}

// Error returns "schema: invalid schema: " followed by the pointer, if
// any, and the message, for instance
// `schema: invalid schema: /properties/a/type: unknown type "strng"`.
func (e *SchemaError) Error() string {
	if e.Pointer == "" {
		return ErrInvalidSchema.Error() + ": " + e.Msg
	}
	return ErrInvalidSchema.Error() + ": " + e.Pointer + ": " + e.Msg
}

// Unwrap returns [ErrInvalidSchema] and Err.
func (e *SchemaError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidSchema}
	}
	return []error{ErrInvalidSchema, e.Err}
}

// check rejects, before jsonschema-go resolves the schema, a null where a
// subschema should be, and what jsonschema-go would accept and then
// enforce wrongly or not at all:
//
//   - a "type" that names no JSON type ("strng"), which would match
//     nothing and so fail every call;
//   - a "pattern" or "patternProperties" that is not an RE2 regular
//     expression (reported here to name the keyword);
//   - keywords of other drafts that neither jsonschema-go nor this package
//     enforces under 2020-12, so that the schema would say more than
//     validation checks: the array form of "items", "additionalItems" and
//     "dependencies" (all three accepted under a draft-07 $schema, which
//     jsonschema-go implements), and 2019-09's "$recursiveRef";
//   - an unknown keyword that is a near miss of a known one ("propertees",
//     "mininum", "maxlength"), which would be taken for an annotation and
//     leave the schema accepting what its author meant to refuse. Unknown
//     keywords far from any known one, those that start with "x-", and a
//     few of other vocabularies (OpenAPI's example, nullable) stay
//     annotations.
//
// It checks the schemas in the order of their pointers, so that the error
// is the same for the same schema.
func (c *compiler) check() *SchemaError {
	if c.null != "" {
		return &SchemaError{Pointer: c.null, Msg: "null is not a schema"}
	}
	draft07 := isDraft07(c.root)
	for _, p := range slices.Sorted(maps.Keys(c.byPath)) {
		if err := checkOne(c.byPath[p], p, draft07); err != nil {
			return err
		}
	}
	return nil
}

func checkOne(s *jsonschema.Schema, ptr string, draft07 bool) *SchemaError {
	fault := func(kw, msg string, err error) *SchemaError {
		return &SchemaError{Pointer: ptr + "/" + kw, Msg: msg, Err: err}
	}
	if s.Type != "" && typeBit(s.Type) == 0 {
		return fault("type", "unknown type "+strconv.Quote(clip(s.Type)), nil)
	}
	for i, t := range s.Types {
		if typeBit(t) == 0 {
			return fault("type/"+strconv.Itoa(i), "unknown type "+strconv.Quote(clip(t)), nil)
		}
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			return fault("pattern", "not a regular expression: "+regexpReason(err), err)
		}
	}
	for _, src := range slices.Sorted(maps.Keys(s.PatternProperties)) {
		if _, err := regexp.Compile(src); err != nil {
			return fault("patternProperties/"+escapePointer(src), "not a regular expression: "+regexpReason(err), err)
		}
	}
	if !draft07 {
		switch {
		case s.ItemsArray != nil:
			return fault("items", "the array form of items is not enforced under 2020-12; use prefixItems", nil)
		case s.AdditionalItems != nil:
			return fault("additionalItems", "additionalItems is not enforced under 2020-12; use prefixItems and items", nil)
		case s.DependencySchemas != nil || s.DependencyStrings != nil:
			return fault("dependencies", "dependencies is not enforced under 2020-12; use dependentRequired or dependentSchemas", nil)
		}
	}
	if _, ok := s.Extra["$recursiveRef"]; ok {
		return fault("$recursiveRef", "$recursiveRef (2019-09) is not enforced; use $dynamicRef", nil)
	}
	for _, kw := range slices.Sorted(maps.Keys(s.Extra)) {
		if strings.HasPrefix(kw, "x-") || slices.Contains(annotations, kw) {
			continue
		}
		if want, ok := spell.Suggest(kw, keywords); ok {
			return fault(escapePointer(kw), fmt.Sprintf("unknown keyword %q: did you mean %q? (name an annotation of your own x-...)", clip(kw), want), nil)
		}
	}
	return nil
}

// keywords are the keywords of JSON Schema 2020-12 (and of draft-07, which
// a $schema may choose), which an unknown keyword may be a misspelling of.
var keywords = []string{
	"$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
	"definitions", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
	"exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
	"maxContains", "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
	"properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedProperties",
	"items", "prefixItems", "additionalItems", "contains", "unevaluatedItems", "allOf", "anyOf", "oneOf", "not",
	"if", "then", "else", "dependentSchemas", "dependencies", "title", "description", "default", "deprecated",
	"readOnly", "writeOnly", "examples", "format", "contentEncoding", "contentMediaType", "contentSchema",
}

// annotations are keywords of other vocabularies, in use in tool schemas,
// that are near misses of JSON Schema's and are not taken for misspellings
// (OpenAPI's example and nullable, say).
var annotations = []string{"example", "nullable", "discriminator", "externalDocs", "xml", "propertyOrder"}

// regexpReason returns the text of a regexp error with the part of the
// expression at fault clipped: the pointer already locates the expression,
// which may be long.
func regexpReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code) + ": `" + clip(se.Expr) + "`"
	}
	return err.Error()
}

// isDraft07 reports whether the schema declares draft-07 as its dialect.
func isDraft07(s *jsonschema.Schema) bool {
	switch s.Schema {
	case "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
		return true
	}
	return false
}

// refFault returns, after jsonschema-go failed to resolve the schema, the
// first $ref (in the order of pointers) that does not resolve within it:
// one to another document, which is never fetched, or one to a place the
// schema does not have. It returns nil if every $ref resolves.
func (c *compiler) refFault() *SchemaError {
	for _, p := range slices.Sorted(maps.Keys(c.byPath)) {
		s := c.byPath[p]
		if s.Ref == "" || c.resolveRef(s) != nil {
			continue
		}
		ref := strconv.Quote(clipTo(s.Ref, maxLong))
		u, err := url.Parse(s.Ref)
		if err != nil {
			return &SchemaError{Pointer: p + "/$ref", Msg: "$ref " + ref + " is not a URI reference", Err: err}
		}
		abs := *c.info[c.info[s].base].uri.ResolveReference(u)
		abs.Fragment, abs.RawFragment = "", ""
		if c.byURI[abs.String()] == nil {
			return &SchemaError{Pointer: p + "/$ref", Msg: "$ref " + ref + " is to another document, which is never fetched", Err: ErrRemoteRef}
		}
		return &SchemaError{Pointer: p + "/$ref", Msg: "$ref " + ref + " refers to nothing in the schema"}
	}
	return nil
}
