package schema

import (
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
)

// kind is the JSON type of an instance value.
type kind uint8

const (
	kNull kind = iota
	kBool
	kObject
	kArray
	kNumber
	kString
)

func (k kind) String() string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kObject:
		return "object"
	case kArray:
		return "array"
	case kNumber:
		return "number"
	default:
		return "string"
	}
}

// typeSet is the set of types a "type" keyword allows: one bit per kind, and
// tInteger for "integer", which admits the numbers with no fractional part.
type typeSet uint8

const tInteger typeSet = 1 << 6

func (t typeSet) has(k kind) bool { return t&(1<<k) != 0 }

// allows reports whether a value of kind k is allowed; integral tells, for a
// number, whether it has no fractional part.
func (t typeSet) allows(k kind, integral bool) bool {
	return t.has(k) || k == kNumber && integral && t&tInteger != 0
}

// constVal is a value of "enum" or "const".
type constVal struct {
	kind kind
	b    bool
	s    string
	f    float64
	// generic, when set, means the value is compared by decoding the
	// instance and calling jsonschema.Equal on v: objects, arrays and Go
	// values without an exact float64 or string form.
	generic bool
	v       any
}

type patternProp struct {
	src string
	re  *regexp.Regexp
	n   *node
}

type depRequired struct {
	trigger  int   // index in names
	required []int // indexes in names
}

type depSchema struct {
	trigger int
	n       *node
}

// A node is one compiled (sub)schema. Nodes form a graph: $ref edges may
// point back up, so nothing that walks nodes may recurse without consuming
// instance input (Compile rejects schemas that would).
type node struct {
	path string // JSON Pointer of the schema within the root

	inplace bool // has $ref, allOf, anyOf, oneOf, not or if
	local   bool // has an assertion of its own
	never   bool // the false schema
	secret  bool // writeOnly or format "password": messages do not quote the value
	direct  bool // only local assertions: validation can go straight to them

	// fallback, when set, validates the value instead of the fast path.
	fallback *jsonschema.Resolved

	ref                 *node
	allOf, anyOf, oneOf []*node
	not                 *node
	ifN, thenN, elseN   *node
	cycleEdges          []*node // what $dynamicRef and draft-07 dependencies apply in place, for finding cycles only

	hasType  bool
	types    typeSet
	typeText string // "string", "string or null", ...

	enum     []constVal
	hasEnum  bool
	enumText string
	konst    *constVal
	konstTxt string

	numChecks                              bool
	hasMin, hasMax, hasExMin, hasExMax     bool
	hasMultipleOf                          bool
	min, max, exMin, exMax, multipleOf     float64
	minText, maxText, exMinText, exMaxText string
	multipleOfText                         string
	mulDec                                 decimal // |multipleOf|, exactly as written
	mulFits                                bool    // mulDec holds it

	strChecks            bool
	hasMinLen, hasMaxLen bool
	minLen, maxLen       int
	pattern              *regexp.Regexp
	patternText          string // for messages

	arrChecks                      bool
	prefix                         []*node
	items                          *node
	hasMinItems, hasMaxItems       bool
	minItems, maxItems             int
	unique                         bool
	contains                       *node
	hasMinContains, hasMaxContains bool
	minContains, maxContains       int

	objChecks       bool
	names           []string       // properties, required and dependent names, sorted
	nameIdx         map[string]int // index of names, when there are many
	props           []*node        // by name index; nil for a name not in properties
	required        []int
	patterns        []patternProp
	additional      *node // nil: any value
	additionalFalse bool
	propertyNames   *node
	hasMinProps     bool
	hasMaxProps     bool
	minProps        int
	maxProps        int
	depRequired     []depRequired
	depSchemas      []depSchema

	// Defaults.
	insert     [][]byte // by name index: `"name":value` to add when missing
	defSources []*node  // this node and those $ref and allOf apply in place
	defBelow   bool     // a default may be inserted somewhere under a value of this node
}

// linearNames is the number of property names up to which a key is looked
// up by comparing it with each name rather than through a map.
const linearNames = 8

// lookup returns the index of key in n.names, or -1.
func (n *node) lookup(key []byte) int {
	if n.nameIdx != nil {
		if i, ok := n.nameIdx[string(key)]; ok {
			return i
		}
		return -1
	}
	for i, name := range n.names {
		if name == string(key) {
			return i
		}
	}
	return -1
}
