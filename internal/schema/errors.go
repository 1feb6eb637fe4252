package schema

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Errors that validation wraps or returns.
var (
	// ErrInvalid is wrapped by every [*ValidationError].
	ErrInvalid = errors.New("schema: invalid value")
	// ErrSyntax is wrapped by every [*SyntaxError].
	ErrSyntax = errors.New("schema: invalid JSON")
	// ErrTooComplex is returned when validating a document would take more
	// than a bounded amount of work, which only a schema whose alternatives
	// nest within each other (anyOf inside anyOf through $ref, say) and an
	// instance built to exploit them can cause.
	ErrTooComplex = errors.New("schema: validation exceeds its work limit")
)

// An Issue is one place where a value fails its schema.
type Issue struct {
	// Path locates the value at fault: the JSON Pointer (RFC 6901) of the
	// value within the instance, without its leading slash, such as
	// "items/3/name"; "" is the instance itself. A missing required property
	// is located at the path the property would have.
	Path string
	// Message says what is wrong, such as "want string, got number".
	Message string
}

// String returns the path and the message, "items/3/name: want string, got
// number", with "(root)" for the empty path.
func (is Issue) String() string {
	p := is.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + is.Message
}

// MaxIssues is the largest number of issues a [ValidationError] lists,
// whatever the size of the instance: the answer to a hostile request of
// millions of wrong values stays small, and so does the work of making it.
const MaxIssues = 10

// Limits on the text of an issue: a value or a property name taken from
// the instance is clipped to maxEcho bytes; a whole path, a message from
// jsonschema-go and text from the schema (an enum's values, a pattern) to
// maxLong; and a path deeper than pathHead+pathTail segments keeps only its
// first pathHead and last pathTail ones.
const (
	maxEcho  = 40
	maxLong  = 200
	pathHead = 3
	pathTail = 8
)

// A ValidationError lists the first places where an instance fails its
// schema, in the order of the instance's text, each once; at most
// [MaxIssues] of them.
type ValidationError struct {
	// Issues are the failures listed, at most MaxIssues; never empty.
	Issues []Issue
	// Omitted counts the failures found after Issues was full (some of
	// them may repeat one listed).
	Omitted int
}

// Error names every listed location with its reason, and how many more
// failed, for instance "schema: invalid value: items/3/name: want string,
// got number; q: required property is missing; and 2 more".
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(ErrInvalid.Error())
	for i, is := range e.Issues {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(is.String())
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "; and %d more", e.Omitted)
	}
	return b.String()
}

// clip returns s, or its first maxEcho bytes (cut at a character boundary)
// followed by "..." when it is longer: for text that comes from an
// instance, which may be of any size.
func clip(s string) string { return clipTo(s, maxEcho) }

// Clip is the rule by which every mcpkit error clips text that comes from
// a request: at most 40 bytes, cut at a character boundary, then "...".
// The typed-tool decoder uses it too, so that both read alike.
func Clip(s string) string { return clip(s) }

// clipTo is clip with another limit.
func clipTo(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = s[:limit]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}

// Unwrap returns [ErrInvalid].
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// A SyntaxError reports an instance that is not JSON that encoding/json
// would decode: malformed text, nesting deeper than 10000, or an object
// with the same property twice (which the validator and the handler could
// read differently). A number beyond the range of a float64, which is
// well-formed JSON, is an [Issue] of a [*ValidationError] instead, located
// at the number.
type SyntaxError struct {
	// Offset is the byte offset in the instance where the problem is.
	Offset int
	// Msg describes the problem.
	Msg string
}

// Error returns "schema: invalid JSON at offset N: " and the message.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at offset %d: %s", ErrSyntax.Error(), e.Offset, e.Msg)
}

// Unwrap returns [ErrSyntax].
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Explain splits err, an error of [Validator.Validate] or
// [Validator.Process], into what a report of it shows: the issues of a
// [*ValidationError] (and how many were left out), or else a cause worded
// for the client (the JSON offset of a [*SyntaxError], "too complex to
// validate" for [ErrTooComplex], or err itself).
func Explain(err error) (issues []Issue, omitted int, cause error) {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Issues, ve.Omitted, nil
	}
	var syn *SyntaxError
	switch {
	case errors.As(err, &syn):
		return nil, 0, fmt.Errorf("not valid JSON at offset %d: %s", syn.Offset, syn.Msg)
	case errors.Is(err, ErrTooComplex):
		return nil, 0, errors.New("too complex to validate")
	}
	return nil, 0, err
}
