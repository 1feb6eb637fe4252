package tools

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/internal/spell"
)

// tagKeys are the struct tag keys that New reads: encoding/json's, and the
// schema's.
var tagKeys = []string{
	"json", "description", "jsonschema", "title", "header", "enum", "default",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
	"pattern", "format", "uniqueItems", "deprecated", "required", "nullable",
}

// otherTagKeys are keys of other common libraries that are near misses of
// keys New reads, and are not taken for misspellings.
var otherTagKeys = []string{"bson", "yaml", "toml", "xml", "form", "env", "uri", "avro"}

// jsonOptions are the options of a json tag that encoding/json knows
// ("format:..." and "case:..." of encoding/json/v2 are taken by prefix).
var jsonOptions = []string{"omitempty", "omitzero", "string", "inline", "unknown", "nocase", "strictcase"}

// checkTag refuses what a field's tags hold that New would otherwise take
// silently and wrongly: a tag key that is a near miss of one New reads
// (`mininum:"1"`, `jsn:"n"`), and a json option encoding/json does not know
// (`json:"n,omitempy"`). Keys of other libraries (yaml, db, validate) are
// left alone. It returns every problem of the tag.
func checkTag(tag reflect.StructTag) []error {
	var errs []error
	for _, key := range structTagKeys(tag) {
		if slices.Contains(otherTagKeys, key) {
			continue
		}
		if want, ok := spell.Suggest(key, tagKeys); ok {
			errs = append(errs, fmt.Errorf("tag key %q is not one tools.New reads: did you mean %q?", key, want))
		}
	}
	v, ok := tag.Lookup("json")
	if !ok {
		return errs
	}
	_, opts, _ := strings.Cut(v, ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "" || strings.HasPrefix(o, "format:") || strings.HasPrefix(o, "case:") {
			continue
		}
		if slices.Contains(jsonOptions, o) {
			continue
		}
		if want, ok := spell.Suggest(o, jsonOptions); ok {
			errs = append(errs, fmt.Errorf("json tag option %q is not one encoding/json knows: did you mean %q?", o, want))
			continue
		}
		errs = append(errs, fmt.Errorf("json tag option %q is not one encoding/json knows (%s)", o, strings.Join(jsonOptions, ", ")))
	}
	return errs
}

// structTagKeys returns the keys of tag, in the conventional format
// `key:"value" key2:"value"`, as reflect.StructTag.Lookup reads it; it stops
// at the first part that is not in that format.
func structTagKeys(tag reflect.StructTag) []string {
	var keys []string
	s := string(tag)
	for s != "" {
		s = strings.TrimLeft(s, " ")
		i := 0
		for i < len(s) && s[i] > ' ' && s[i] != ':' && s[i] != '"' && s[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(s) || s[i] != ':' || s[i+1] != '"' {
			break
		}
		key := s[:i]
		s = s[i+1:]
		i = 1
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			break
		}
		if _, err := strconv.Unquote(s[:i+1]); err != nil {
			break
		}
		keys = append(keys, key)
		s = s[i+1:]
	}
	return keys
}
