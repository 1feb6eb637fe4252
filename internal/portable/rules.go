package portable

import (
	"fmt"
	"regexp"
)

// A Profile names one set of provider rules; see the package documentation
// for each.
type Profile int

// The profiles. Their values are those of transform.Profile.
const (
	AllProviders Profile = iota + 1
	Gemini
	OpenAIStrict
)

// String returns the profile's name: "AllProviders", "Gemini" or
// "OpenAIStrict", the names of transform's constants.
func (p Profile) String() string {
	switch p {
	case AllProviders:
		return "AllProviders"
	case Gemini:
		return "Gemini"
	case OpenAIStrict:
		return "OpenAIStrict"
	}
	return fmt.Sprintf("Profile(%d)", int(p))
}

// Valid reports whether p is one of the profiles.
func (p Profile) Valid() bool { return p >= AllProviders && p <= OpenAIStrict }

// nullIdiom is how a profile writes "this value may also be null".
type nullIdiom int

const (
	nullKeyword   nullIdiom = iota // {"type": "string", "nullable": true} (OpenAPI 3.0, Gemini)
	nullTypeArray                  // {"type": ["string", "null"]}, anyOf for the rest (OpenAI strict)
	nullAnyOf                      // {"anyOf": [{"type": "string"}, {"type": "null"}]} (all)
)

// rules is what a profile accepts and which idioms it is written in.
type rules struct {
	profile Profile
	null    nullIdiom
	// refs: $ref and $defs are accepted (recursion stays a reference).
	refs bool
	// closed: every object must have additionalProperties: false and list
	// every property in required (OpenAI strict mode).
	closed bool
	// anyOfAlone: a schema with anyOf has no other keyword (Vertex AI
	// Gemini: "When using any_of, it must be the only field set").
	anyOfAlone bool
	// anyOfInItems: items may be an anyOf.
	anyOfInItems bool
	// typeRequired: every schema without anyOf (or $ref) names its type.
	typeRequired bool
	// typeArrays: "type" may be an array of names.
	typeArrays bool
	// nonEmptyObjects: an object below the root has at least one property
	// ("properties: should be non-empty for OBJECT type").
	nonEmptyObjects bool
	// requiredDefined: every name in required is one of properties.
	requiredDefined bool
	// enumStrings: enum only on strings, and holds strings.
	enumStrings bool
	// limits: OpenAI's sizes (5000 properties, 10 levels of nested
	// objects, 1000 enum values, 120,000 characters of names and values).
	limits bool

	// keywords every schema may have, and those that apply to one type.
	common  set
	byType  map[string]set
	formats map[string]set // allowed formats, by type
	// rootNames, if set, is what a name among the root's properties must
	// match (Gemini's parameter names).
	rootNames *regexp.Regexp
}

type set map[string]bool

func setOf(s ...string) set {
	m := set{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

// geminiNames are the parameter names Gemini accepts: "must start with a
// letter or an underscore and must only contain chars a-z, A-Z, 0-9, or
// underscores with a maximum length of 64" (FunctionDeclaration.parameters).
var geminiNames = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

var geminiRules = &rules{
	profile:         Gemini,
	null:            nullKeyword,
	anyOfAlone:      true,
	typeRequired:    true,
	nonEmptyObjects: true,
	requiredDefined: true,
	enumStrings:     true,
	common:          setOf("type", "nullable", "title", "description", "default", "example"),
	byType: map[string]set{
		"string":  setOf("enum", "format", "pattern", "minLength", "maxLength"),
		"number":  setOf("minimum", "maximum"),
		"integer": setOf("minimum", "maximum"),
		"array":   setOf("items", "minItems", "maxItems"),
		"object":  setOf("properties", "required", "minProperties", "maxProperties", "propertyOrdering"),
	},
	formats:   map[string]set{"string": setOf("date-time")},
	rootNames: geminiNames,
}

var strictRules = &rules{
	profile:      OpenAIStrict,
	null:         nullTypeArray,
	refs:         true,
	closed:       true,
	anyOfInItems: true,
	typeRequired: true,
	typeArrays:   true,
	limits:       true,
	common:       setOf("type", "title", "description", "enum", "const"),
	byType: map[string]set{
		"string":  setOf("pattern", "format"),
		"number":  setOf("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
		"integer": setOf("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
		"array":   setOf("items", "minItems", "maxItems"),
		"object":  setOf("properties", "required", "additionalProperties"),
	},
	formats: map[string]set{
		"string": setOf("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"),
	},
}

// portableRules are the intersection: what Gemini's Schema and OpenAI's
// strict subset both know, used as both allow it, and JSON Schema reads
// alike. OpenAI's closed objects are left out, since Gemini rejects
// additionalProperties.
var portableRules = &rules{
	profile:         AllProviders,
	null:            nullAnyOf,
	anyOfAlone:      true,
	typeRequired:    true,
	nonEmptyObjects: true,
	requiredDefined: true,
	enumStrings:     true,
	limits:          true,
	common:          setOf("type", "title", "description"),
	byType: map[string]set{
		"string":  setOf("enum", "format", "pattern"),
		"number":  setOf("minimum", "maximum"),
		"integer": setOf("minimum", "maximum"),
		"array":   setOf("items", "minItems", "maxItems"),
		"object":  setOf("properties", "required"),
	},
	formats:   map[string]set{"string": setOf("date-time")},
	rootNames: geminiNames,
}

func rulesFor(p Profile) *rules {
	switch p {
	case AllProviders:
		return portableRules
	case Gemini:
		return geminiRules
	case OpenAIStrict:
		return strictRules
	}
	panic(fmt.Sprintf("portable: unknown profile %d", int(p)))
}

// allows reports whether a schema of type t may have keyword kw.
func (r *rules) allows(t, kw string) bool {
	return r.common[kw] || r.byType[t][kw]
}

// formatOK reports whether format f may be written on a schema of type t.
func (r *rules) formatOK(t, f string) bool { return r.formats[t][f] }

// The limits of OpenAI's strict mode (Structured Outputs, "Supported
// schemas").
const (
	maxProperties  = 5000
	maxNesting     = 10
	maxEnumValues  = 1000
	maxStringTotal = 120000
	// A single enum of strings with more than maxBigEnum values may hold at
	// most maxBigEnumChars characters in all.
	maxBigEnum      = 250
	maxBigEnumChars = 15000
)

// Tool names: Gemini's "must start with a letter or an underscore. Must be
// a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a
// maximum length of 128" (go-genai, FunctionDeclaration.Name); OpenAI's
// "must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum
// length of 64" (the API reference, function.name); AllProviders takes both.
var (
	geminiToolNames   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$`)
	openAIToolNames   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	portableToolNames = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
)

// CheckName returns the rule a tool's name breaks in profile p, or "".
func CheckName(name string, p Profile) string {
	switch p {
	case Gemini:
		if !geminiToolNames.MatchString(name) {
			return "Gemini takes a tool name of a letter or _, then letters, digits, _ . : -, at most 128"
		}
	case OpenAIStrict:
		if !openAIToolNames.MatchString(name) {
			return "OpenAI takes a tool name of letters, digits, _ and -, at most 64"
		}
	case AllProviders:
		if !portableToolNames.MatchString(name) {
			return "a portable tool name is a letter or _, then letters, digits, _ and -, at most 64"
		}
	}
	return ""
}
