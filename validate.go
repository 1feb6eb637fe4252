package mcpkit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// A ValidationMode says how a tool's arguments are checked against its input
// schema before its handler runs. Every [Server] validates; see
// [ServerOptions.Validation] and [Tool.Validation].
type ValidationMode int

const (
	// DefaultValidation is the zero value: on a Tool, the server's mode;
	// on a Server, Strict.
	DefaultValidation ValidationMode = iota
	// Strict validates the arguments exactly as sent, after filling in the
	// defaults the schema gives for missing properties.
	Strict
	// Lenient first coerces what the schema asks for, as clients driven by
	// language models need: "10" becomes 10 for an integer, "true" becomes
	// true for a boolean, and a string holding JSON becomes the object or
	// array the schema wants. "abc" for an integer still fails.
	Lenient
	// NoValidation turns validation off, of the arguments and of the
	// structured output, for a tool that checks its own.
	NoValidation
)

// ErrValidation is wrapped by every [*ValidationError].
var ErrValidation = errors.New("mcpkit: validation failed")

// MetaKeyValidationIssues is the key, in the _meta of a result whose
// arguments failed validation, of the list of issues: objects with "path" (a
// JSON Pointer into the arguments, without its leading slash) and "message".
const MetaKeyValidationIssues = "io.github.mcpkit/validationIssues"

// A ValidationIssue is one place where a value fails its schema.
type ValidationIssue struct {
	// Path is the JSON Pointer of the value, without its leading slash
	// ("items/3/name"); "" is the whole value.
	Path string `json:"path"`
	// Message says what is wrong ("want string, got number").
	Message string `json:"message"`
}

// A ValidationError reports arguments that do not satisfy a tool's input
// schema, or structured content that does not satisfy its output schema.
// Argument errors reach the client as retryable tool errors naming the
// failing fields (SEP-1303), never masked; output errors are fatal, since
// the model cannot fix them.
type ValidationError struct {
	Tool   string
	Output bool // the tool's result failed, not its arguments
	// Issues are the first failing places found, in the order of the
	// value's text: at most ten, whatever the value's size, so that the
	// answer to a hostile request stays small.
	Issues []ValidationIssue
	// Omitted counts the failing places found beyond Issues.
	Omitted int
	// Err is set instead of Issues when the value is not JSON at all.
	Err error
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Output {
		fmt.Fprintf(&b, "tool %q returned structured content that does not match its output schema", e.Tool)
	} else {
		b.WriteString("invalid arguments")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	for i, is := range e.Issues {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if is.Path == "" {
			b.WriteString("(root)")
		} else {
			b.WriteString(is.Path)
		}
		b.WriteString(": ")
		b.WriteString(is.Message)
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "; and %d more", e.Omitted)
	}
	return b.String()
}

// Unwrap returns [ErrValidation].
func (e *ValidationError) Unwrap() error { return ErrValidation }

// ResultMeta lists the issues in the result's _meta under
// [MetaKeyValidationIssues], for clients that correct arguments by program.
func (e *ValidationError) ResultMeta() mcp.Meta {
	if len(e.Issues) == 0 {
		return nil
	}
	return mcp.Meta{MetaKeyValidationIssues: e.Issues}
}

// checker checks a tool's arguments and structured content against its
// schemas. It keeps no compiled schema: the server's cache of validators
// has them, by the digest of their JSON text, and compiles a schema when a
// call first needs it. So a tool costs no compiled schema until it is
// called, and tools with the same schema share one.
type checker struct {
	tool    *Tool // whose InputSchema and OutputSchema it checks
	lenient bool
	cache   *validators
	keys    atomic.Pointer[schemaKeys] // made on the first call
}

// schemaKeys are the digests of the text of a tool's schemas.
type schemaKeys struct {
	in, out textKey // out is zero without an output schema
}

// textKey is the digest of a schema's JSON text.
type textKey [16]byte

// digest returns the digest of text.
func digest(text []byte) textKey {
	sum := sha256.Sum256(text)
	return textKey(sum[:16])
}

// validationMode returns the mode of t's validation on a server whose mode
// is serverMode.
func validationMode(t *Tool, serverMode ValidationMode) ValidationMode {
	if t.Validation == DefaultValidation {
		return serverMode
	}
	return t.Validation
}

// checkSchemas reports whether the validator can enforce t's schemas, in
// the mode t or, failing that, the server asks for (with NoValidation,
// nothing is checked). A schema it cannot enforce is an error naming the
// tool, so that Add refuses it instead of every call failing. A schema is
// compiled here only when [schema.KnownValid] cannot tell; it is then kept
// in cache (when not nil) for the calls.
func checkSchemas(t *Tool, serverMode ValidationMode, cache *validators) error {
	if validationMode(t, serverMode) == NoValidation {
		return nil
	}
	if err := cache.check(t.InputSchema); err != nil {
		return schemaError(t, "input", err)
	}
	if t.OutputSchema != nil {
		if err := cache.check(t.OutputSchema); err != nil {
			return schemaError(t, "output", err)
		}
	}
	return nil
}

// newChecker returns what checks the calls of t, whose schemas
// checkSchemas accepted, against them; nil in NoValidation mode.
func newChecker(t *Tool, serverMode ValidationMode, cache *validators) *checker {
	mode := validationMode(t, serverMode)
	if mode == NoValidation {
		return nil
	}
	return &checker{tool: t, lenient: mode == Lenient, cache: cache}
}

// schemaKeys returns the digests of the tool's schemas, made once.
func (c *checker) schemaKeys() (*schemaKeys, error) {
	if k := c.keys.Load(); k != nil {
		return k, nil
	}
	k := new(schemaKeys)
	text, err := schemaText(c.tool.InputSchema)
	if err != nil {
		return nil, err
	}
	k.in = digest(text)
	if c.tool.OutputSchema != nil {
		if text, err = schemaText(c.tool.OutputSchema); err != nil {
			return nil, err
		}
		k.out = digest(text)
	}
	c.keys.CompareAndSwap(nil, k)
	return c.keys.Load(), nil
}

// input returns the validator of the tool's input schema.
func (c *checker) input() (*schema.Validator, error) {
	k, err := c.schemaKeys()
	if err != nil {
		return nil, err
	}
	return c.cache.get(k.in, c.tool.InputSchema)
}

// output returns the validator of the tool's output schema, which it has.
func (c *checker) output() (*schema.Validator, error) {
	k, err := c.schemaKeys()
	if err != nil {
		return nil, err
	}
	return c.cache.get(k.out, c.tool.OutputSchema)
}

// validators is a server's cache of compiled schemas by the digest of
// their JSON text, so that tools with identical schemas share one
// validator (a Validator is immutable and safe for concurrent use). It is
// bounded by the text of the schemas it holds, about maxValidatorText in
// all, in two halves: when the half it fills is full, the other is dropped
// and it starts filling that one, and a schema found in the older half
// moves to the newer. So the schemas in use stay, and those not used for
// a while are compiled again when a call needs them.
type validators struct {
	mu        sync.Mutex
	cur, prev map[textKey]compiled
	bytes     int // the text of the schemas in cur
	limit     int // the text it may hold; 0 is maxValidatorText

	patterns schema.Patterns // the regular expressions of schemas checked, found valid
}

// compiled is a compiled schema in the cache, with the size of its text.
type compiled struct {
	v    *schema.Validator
	size int
}

const maxValidatorText = 8 << 20

// check reports whether the validator can enforce s. It compiles s only
// when [schema.KnownValid] cannot tell, and then keeps the validator in v
// (when v is not nil).
func (v *validators) check(s any) error {
	text, err := schemaText(s)
	if err != nil {
		_, err = schema.Compile(s) // says what is wrong with s
		return err
	}
	if v == nil {
		if schema.KnownValid(text, nil) {
			return nil
		}
		_, err = schema.Compile(s)
		return err
	}
	if schema.KnownValid(text, &v.patterns) {
		return nil
	}
	key := digest(text)
	v.mu.Lock()
	_, seen := v.cur[key]
	if !seen {
		_, seen = v.prev[key]
	}
	v.mu.Unlock()
	if seen {
		return nil // compiled before: the same text, as generated catalogs repeat
	}
	c, err := schema.Compile(json.RawMessage(text))
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.put(key, compiled{c, len(text)})
	return nil
}

// get returns the validator of s, whose text has the digest key, compiling
// it if the cache does not hold it.
func (v *validators) get(key textKey, s any) (*schema.Validator, error) {
	v.mu.Lock()
	c, ok := v.cur[key]
	if !ok {
		if c, ok = v.prev[key]; ok {
			delete(v.prev, key)
			v.put(key, c) // in use again: kept through the next turn
		}
	}
	v.mu.Unlock()
	if ok {
		return c.v, nil
	}
	text, err := schemaText(s)
	if err != nil {
		return nil, err
	}
	// Two calls may compile the same schema at once; both get a validator
	// that enforces it, and the cache keeps one.
	c.v, err = schema.Compile(json.RawMessage(text))
	if err != nil {
		return nil, err
	}
	c.size = len(text)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.put(key, c)
	return c.v, nil
}

// put adds c to the schemas in use. v.mu is held.
func (v *validators) put(key textKey, c compiled) {
	if v.cur == nil || v.bytes+c.size > cmp.Or(v.limit, maxValidatorText)/2 {
		v.prev, v.cur, v.bytes = v.cur, make(map[textKey]compiled), 0
	}
	v.cur[key] = c
	v.bytes += c.size
}

// schemaText returns the JSON text of a schema: as given when it is JSON
// text, else marshalled.
func schemaText(s any) ([]byte, error) {
	if raw, ok := rawJSON(s); ok {
		return raw, nil
	}
	return json.Marshal(s)
}

// schemaError says which tool's which schema cannot be enforced, and
// where in it: `mcpkit: invalid tool schema: tool "t": input schema:
// /properties/a/type: unknown type "strng"`.
func schemaError(t *Tool, which string, err error) error {
	var se *schema.SchemaError
	if errors.As(err, &se) && se.Msg != "" {
		where := se.Pointer
		if where == "" {
			where = "(root)"
		}
		return fmt.Errorf("%w: tool %q: %s schema: %s: %s", ErrInvalidSchema, t.Name, which, where, se.Msg)
	}
	return fmt.Errorf("%w: tool %q: %s schema: %v", ErrInvalidSchema, t.Name, which, err)
}

// validating is the innermost layer of a tool's chain: it checks the
// arguments before the handler and the structured content after it.
type validating struct {
	c    *checker
	next Handler
}

func (v *validating) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	in, err := v.c.input()
	if err != nil {
		return nil, fmt.Errorf("mcpkit: tool %q: input schema: %w", req.Tool.Name, err)
	}
	args, err := in.Process(req.Arguments, v.c.lenient)
	if err != nil {
		return nil, &ToolError{Err: newValidationError(req.Tool.Name, false, err), Class: Retryable}
	}
	if !sameBytes(args, req.Arguments) {
		req = req.WithArguments(args)
	}
	res, err := v.next.ServeTool(ctx, req)
	if err != nil || v.c.tool.OutputSchema == nil || res == nil || res.IsError || isEmpty(res) || res.InputRequests != nil {
		return res, err // an input_required result has no output yet
	}
	out, err := v.c.output()
	if err != nil {
		return nil, fmt.Errorf("mcpkit: tool %q: output schema: %w", req.Tool.Name, err)
	}
	if err := checkOutput(out, res); err != nil {
		return nil, &ToolError{Err: newValidationError(req.Tool.Name, true, err), Class: Fatal}
	}
	return res, nil
}

// isEmpty reports whether res carries nothing at all: the "nothing to
// report" answer (a nil result, or a typed tool's nil pointer), which has
// no structured output to check.
func isEmpty(res *mcp.CallToolResult) bool {
	return res.StructuredContent == nil && len(res.Content) == 0
}

// checkOutput validates res's structured content, which a tool with an
// output schema must send.
func checkOutput(out *schema.Validator, res *mcp.CallToolResult) error {
	var data []byte
	switch sc := res.StructuredContent.(type) {
	case nil:
		return errors.New("no structured content")
	case json.RawMessage:
		data = sc
	default:
		b, err := json.Marshal(sc)
		if err != nil {
			return err
		}
		data = b
	}
	return out.Validate(data)
}

func newValidationError(tool string, output bool, err error) *ValidationError {
	issues, omitted, cause := schema.Explain(err)
	ve := &ValidationError{Tool: tool, Output: output, Omitted: omitted, Err: cause}
	if issues != nil {
		ve.Issues = make([]ValidationIssue, len(issues))
		for i, is := range issues {
			ve.Issues[i] = ValidationIssue(is)
		}
	}
	return ve
}

// sameBytes reports whether a and b are the same slice, which is how
// Process says it changed nothing.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
