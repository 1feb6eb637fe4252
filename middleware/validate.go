package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// A ValidationMode says how [Validate] treats a tool's arguments.
type ValidationMode int

const (
	// DefaultValidation is the zero value: in ValidateOptions.Mode it
	// means Lenient; from ValidateOptions.PerTool, the server-wide mode.
	DefaultValidation ValidationMode = iota
	// Lenient coerces what the schema asks for before validating, as
	// clients driven by language models need: "10" becomes 10 for an
	// integer, "true" becomes true for a boolean, and a string holding
	// JSON becomes the object or array the schema wants. "abc" for an
	// integer still fails.
	Lenient
	// Strict validates the arguments exactly as sent.
	Strict
	// NoValidation turns validation off (for a tool that validates its
	// own arguments, say).
	NoValidation
)

// ErrValidation is wrapped by every [*ValidationError].
var ErrValidation = errors.New("middleware: validation failed")

// MetaKeyValidationIssues is the key, in the _meta of a result rejected by
// [Validate], of the list of issues: objects with "path" (a JSON Pointer
// into the arguments, without its leading slash) and "message".
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
// Arguments errors reach the client as retryable tool errors naming every
// failing field (SEP-1303), and are never masked; output errors are fatal,
// since the model cannot fix them.
type ValidationError struct {
	Tool   string
	Output bool // the tool's result failed, not its arguments
	Issues []ValidationIssue
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

// ValidateOptions configures [Validate]. A nil *ValidateOptions means the
// defaults: lenient input validation, output validation on.
type ValidateOptions struct {
	// Mode is the server-wide mode; zero means Lenient.
	Mode ValidationMode

	// PerTool, if set, overrides Mode for some tools; a zero result keeps
	// Mode.
	PerTool func(*mcpkit.Tool) ValidationMode

	// SkipOutput turns off the check of structured content against the
	// output schema.
	SkipOutput bool

	// Logger receives an error for each tool whose schema cannot be
	// compiled (calls to it then fail). Nil means no logging.
	Logger *slog.Logger
}

// Validate returns a middleware that checks each call's arguments against
// the tool's input schema (JSON Schema 2020-12, $ref and composition
// included) and the structured content of its result against its output
// schema.
//
// Before validating, missing properties that have a default in the schema
// get it (also through $ref, which jsonschema-go's ApplyDefaults does not
// follow), and in Lenient mode values are coerced to the types the schema
// asks for; the handler then receives the completed arguments. Arguments
// that fail are answered with a retryable tool error that names every
// failing field and why; the handler does not run. Structured content that
// fails its output schema (or is missing when the tool declares one) is a
// fatal tool error, never a JSON-RPC error.
//
// Each tool's schemas are compiled once, when a [mcpkit.Server] builds its
// chain (or on the tool's first call, in chains built by hand), into a
// validator that works on the JSON text directly: on valid arguments it
// costs about one pass over them and allocates nothing. A schema that
// cannot be compiled (one with a remote $ref, which is never fetched) makes
// every call to that tool fail with a fatal error, and is logged.
//
// Validate belongs innermost, next to the handler: inside Timeout and the
// limits, and inside MaskErrors, which leaves its errors alone anyway.
func Validate(opts *ValidateOptions) mcpkit.Middleware {
	var o ValidateOptions
	if opts != nil {
		o = *opts
	}
	if o.Mode == DefaultValidation {
		o.Mode = Lenient
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if t, ok := mcpkit.ToolOf(next); ok {
			v := o.compile(t)
			if v.mode == NoValidation && (o.SkipOutput || v.out == nil) {
				return next // nothing to do for this tool
			}
			return &validator{next: next, opts: &o, fixed: v}
		}
		return &validator{next: next, opts: &o}
	}
}

type validator struct {
	next  mcpkit.Handler
	opts  *ValidateOptions
	fixed *compiled // the tool's validators, when known at construction
	cache sync.Map  // *mcpkit.Tool -> *compiled, otherwise
}

// compiled holds what Validate needs for one tool.
type compiled struct {
	mode ValidationMode
	in   *schema.Validator
	out  *schema.Validator // nil: no output schema, or not checked
	err  error             // the schema could not be compiled
}

func (o *ValidateOptions) compile(t *mcpkit.Tool) *compiled {
	c := &compiled{mode: o.Mode}
	if o.PerTool != nil {
		if m := o.PerTool(t); m != DefaultValidation {
			c.mode = m
		}
	}
	if c.mode != NoValidation {
		if c.in, c.err = schema.Compile(t.InputSchema); c.err != nil {
			c.err = fmt.Errorf("tool %q: input schema: %w", t.Name, c.err)
		}
	}
	if c.err == nil && !o.SkipOutput && t.OutputSchema != nil {
		if c.out, c.err = schema.Compile(t.OutputSchema); c.err != nil {
			c.err = fmt.Errorf("tool %q: output schema: %w", t.Name, c.err)
		}
	}
	if c.err != nil {
		o.Logger.Error("mcpkit: validate: schema cannot be compiled; calls to the tool will fail", "tool", t.Name, "error", c.err)
	}
	return c
}

func (v *validator) forTool(t *mcpkit.Tool) *compiled {
	if v.fixed != nil {
		return v.fixed
	}
	if t == nil {
		return &compiled{mode: NoValidation}
	}
	if c, ok := v.cache.Load(t); ok {
		return c.(*compiled)
	}
	c, _ := v.cache.LoadOrStore(t, v.opts.compile(t))
	return c.(*compiled)
}

func (v *validator) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	c := v.forTool(req.Tool)
	if c.err != nil {
		return nil, mcpkit.NewToolError(c.err, mcpkit.Fatal)
	}
	if c.mode != NoValidation {
		args, err := c.in.Process(req.Arguments, c.mode == Lenient)
		if err != nil {
			return nil, &mcpkit.ToolError{Err: validationError(req, false, err), Class: mcpkit.Retryable}
		}
		if !sameBytes(args, req.Arguments) {
			req = req.WithArguments(args)
		}
	}
	res, err := v.next.ServeTool(ctx, req)
	if err != nil || c.out == nil || res == nil || res.IsError {
		return res, err
	}
	if err := checkOutput(c.out, res); err != nil {
		return nil, mcpkit.NewToolError(validationError(req, true, err), mcpkit.Fatal)
	}
	return res, nil
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

func validationError(req *mcpkit.Request, output bool, err error) *ValidationError {
	ve := &ValidationError{Output: output}
	if req.Tool != nil {
		ve.Tool = req.Tool.Name
	}
	var se *schema.ValidationError
	if errors.As(err, &se) {
		ve.Issues = make([]ValidationIssue, len(se.Issues))
		for i, is := range se.Issues {
			ve.Issues[i] = ValidationIssue{Path: is.Path, Message: is.Message}
		}
		return ve
	}
	var syn *schema.SyntaxError
	switch {
	case errors.As(err, &syn):
		ve.Err = fmt.Errorf("not valid JSON at offset %d: %s", syn.Offset, syn.Msg)
	case errors.Is(err, schema.ErrTooComplex):
		ve.Err = errors.New("too complex to validate")
	default:
		ve.Err = err
	}
	return ve
}

// sameBytes reports whether a and b are the same slice, which is how
// Process says it changed nothing.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
