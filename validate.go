package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

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

// checker holds a tool's compiled schemas.
type checker struct {
	in      *schema.Validator // nil: arguments are not checked
	lenient bool
	out     *schema.Validator // nil: no output schema, or not checked
}

// compileChecker compiles t's schemas for the mode t or, failing that, the
// server asks for. A schema the validator cannot enforce is an error naming
// the tool, so that Add refuses it instead of every call failing. Schemas
// already compiled (the same JSON, as generated catalogs repeat) come from
// cache, when it is not nil.
func compileChecker(t *Tool, serverMode ValidationMode, cache *validators) (*checker, error) {
	mode := t.Validation
	if mode == DefaultValidation {
		mode = serverMode
	}
	if mode == NoValidation {
		return nil, nil
	}
	c := &checker{lenient: mode == Lenient}
	var err error
	if c.in, err = cache.compile(t.InputSchema); err != nil {
		return nil, schemaError(t, "input", err)
	}
	if t.OutputSchema != nil {
		if c.out, err = cache.compile(t.OutputSchema); err != nil {
			return nil, schemaError(t, "output", err)
		}
	}
	return c, nil
}

// validators is a server's cache of compiled schemas by their JSON text,
// so that tools with identical schemas share one validator (a Validator is
// immutable and safe for concurrent use). It is bounded by the text it
// keeps: past maxValidatorText bytes it starts again empty.
type validators struct {
	mu    sync.Mutex
	m     map[string]*schema.Validator
	bytes int
}

const maxValidatorText = 8 << 20

// compile returns the validator of s, compiled once per JSON text; with a
// nil cache, compiled each time.
func (v *validators) compile(s any) (*schema.Validator, error) {
	if v == nil {
		return schema.Compile(s)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return schema.Compile(s) // says what is wrong with s
	}
	v.mu.Lock()
	c, ok := v.m[string(data)]
	v.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err = schema.Compile(json.RawMessage(data))
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil || v.bytes+len(data) > maxValidatorText {
		v.m, v.bytes = make(map[string]*schema.Validator), 0
	}
	v.m[string(data)] = c
	v.bytes += len(data)
	return c, nil
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
	args, err := v.c.in.Process(req.Arguments, v.c.lenient)
	if err != nil {
		return nil, &ToolError{Err: newValidationError(req.Tool.Name, false, err), Class: Retryable}
	}
	if !sameBytes(args, req.Arguments) {
		req = req.WithArguments(args)
	}
	res, err := v.next.ServeTool(ctx, req)
	if err != nil || v.c.out == nil || res == nil || res.IsError || isEmpty(res) || res.InputRequests != nil {
		return res, err // an input_required result has no output yet
	}
	if err := checkOutput(v.c.out, res); err != nil {
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
