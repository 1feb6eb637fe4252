package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// Errors returned when a tool cannot be registered.
var (
	ErrInvalidToolName = errors.New("mcpkit: invalid tool name")
	ErrInvalidSchema   = errors.New("mcpkit: invalid tool schema")
	ErrNoHandler       = errors.New("mcpkit: tool has no handler")
	ErrDuplicateTool   = errors.New("mcpkit: duplicate tool")
)

// ErrorClass says what an agent loop should do after a failed call. It
// travels to the client in the result's _meta under [MetaKeyErrorClass];
// read it there with [ErrorClassOf].
type ErrorClass string

const (
	// Retryable means the model may try again, for instance with other
	// arguments: the call failed on something it can change.
	Retryable ErrorClass = "retryable"
	// Fatal means trying again will not help (a broken dependency, a
	// permission denied, a bug): the agent should stop.
	Fatal ErrorClass = "fatal"
)

// MetaKeyErrorClass is the key, in the _meta of a result with isError set,
// whose value is the call's [ErrorClass] as a string.
const MetaKeyErrorClass = "io.github.mcpkit/errorClass"

// ErrorClassOf returns the error class a server put in res, or "" when res is
// nil, is not an error result, or carries no class (for example because the
// server does not use mcpkit). It is meant for clients and agent loops.
func ErrorClassOf(res *mcp.CallToolResult) ErrorClass {
	if res == nil || !res.IsError {
		return ""
	}
	s, _ := res.Meta[MetaKeyErrorClass].(string)
	switch c := ErrorClass(s); c {
	case Retryable, Fatal:
		return c
	}
	return ""
}

// A ToolError is an error the tool reports to the model: the call reached the
// tool and the tool could not do what was asked. Its text is always shown to
// the client (error masking never hides it), so it must not carry secrets.
//
// Handlers usually create one with [ToolErrorf] or [NewToolError].
type ToolError struct {
	// Err is the error whose text the client sees.
	Err error
	// Class is what the agent should do next; empty means Retryable.
	Class ErrorClass
}

func (e *ToolError) Error() string {
	if e.Err == nil {
		return "tool error"
	}
	return e.Err.Error()
}

// Unwrap returns e.Err.
func (e *ToolError) Unwrap() error { return e.Err }

// ErrorClass returns e.Class, or Retryable when it is empty.
func (e *ToolError) ErrorClass() ErrorClass {
	if e.Class == "" {
		return Retryable
	}
	return e.Class
}

// ToolErrorf formats an error message like [fmt.Errorf] (%w included) and
// returns it as a retryable [*ToolError].
func ToolErrorf(format string, a ...any) error {
	return &ToolError{Err: fmt.Errorf(format, a...), Class: Retryable}
}

// NewToolError returns err as a [*ToolError] of the given class, whose text
// the client sees: [Retryable] when the model may recover by trying again
// differently, [Fatal] when the agent should stop. An empty class means
// Retryable. NewToolError returns nil if err is nil.
func NewToolError(err error, class ErrorClass) error {
	if err == nil {
		return nil
	}
	return &ToolError{Err: err, Class: class}
}

// NewProtocolError returns an error that reaches the client as a JSON-RPC error
// with the given code and message, also when it is wrapped. Code must not be
// 0; an error with code 0 is treated as an ordinary error.
//
// Avoid -32001 to -32005: the SDK's JSON-RPC layer gives them transport
// meanings (-32003, for instance, makes the client treat its connection as
// closed).
func NewProtocolError(code int64, message string) error {
	return &jsonrpc.Error{Code: code, Message: message}
}

// NewUnknownToolError returns the JSON-RPC error (-32602) a client gets for a
// tool that does not exist: `unknown tool "name"`, the name clipped to its
// first 40 bytes (cut at a character boundary, then "..."), since it is
// whatever the client sent. The server answers a name never registered
// with it too, so code that hides a registered tool from a caller returns
// it, and the hidden tool cannot be told apart from a missing one.
func NewUnknownToolError(name string) error {
	// The SDK's text, for the names it does not clip.
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", schema.Clip(name))}
}

// A PanicError is a recovered panic: the value passed to panic and the stack
// of the goroutine that panicked. Its class is Fatal. Make one with
// [NewPanicError].
type PanicError struct {
	Value any
	Stack []byte
}

// NewPanicError returns the [*PanicError] for v, a value just returned by
// recover. It must be called by the deferred function that recovered v, so
// that the stack it records is the panicking goroutine's. A v that is
// already a *PanicError (one re-raised on another goroutine, as [Handler]s
// running a call on a goroutine of their own do) is returned as is, keeping
// the stack of the goroutine that first panicked.
func NewPanicError(v any) *PanicError {
	if p, ok := v.(*PanicError); ok {
		return p
	}
	return &PanicError{Value: v, Stack: debug.Stack()}
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error, so that errors.Is sees
// through a panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// ErrorClass returns Fatal.
func (*PanicError) ErrorClass() ErrorClass { return Fatal }

// A ResultMetaError is an error that adds entries to the _meta of the error
// result it becomes, for agents to read (a rate limiter's retry delay, for
// instance). The server calls ResultMeta on the first error in the chain
// that has the method, looking inside the [*ToolError] for a tool error (as
// for its text, what wrappers around a tool error add is not shown). An
// error that hides another (as error masking does) implements ResultMeta
// itself, returning nil, so that nothing of the hidden error shows. Keys should be
// namespaced ("com.example/retryAfter") and [MetaKeyErrorClass] is set by
// the server.
type ResultMetaError interface {
	error
	ResultMeta() mcp.Meta
}

// An Outcome is how a tool call ended, as [Classify] decides it.
type Outcome string

// The outcomes of a call.
const (
	OutcomeOK            Outcome = "ok"             // a result without isError
	OutcomeToolError     Outcome = "tool_error"     // a [*ToolError] in the error's chain, or a result with isError set
	OutcomeTimeout       Outcome = "timeout"        // a [*ToolError] whose chain holds [context.DeadlineExceeded]
	OutcomeProtocolError Outcome = "protocol_error" // a JSON-RPC error with a non-zero code in the chain
	OutcomePanic         Outcome = "panic"          // a [*PanicError] in the chain
	OutcomeError         Outcome = "error"          // any other error: an internal error
)

// Classify returns the outcome and the error class of a call that returned
// res and err, by the table that decides what the client sees (see the
// package documentation). It is the one place that table is written:
// middleware that logs, masks, counts or traces calls asks Classify instead
// of inspecting errors itself.
//
// The rules, first match wins: a nil err is OutcomeOK, or OutcomeToolError
// with the class in res's _meta when res has isError set; a [*PanicError]
// anywhere in err's chain is OutcomePanic, class Fatal; a [*ToolError] is
// OutcomeTimeout if its chain holds [context.DeadlineExceeded] and
// OutcomeToolError otherwise, with its class; a JSON-RPC error with a
// non-zero code is OutcomeProtocolError with no class (the wire carries
// none); anything else is OutcomeError, with the class of the first error in
// the chain that has an ErrorClass method, or Fatal.
//
// Only OutcomeError is an internal error, whose text a client must not see
// when errors are masked; the others were meant for the client.
func Classify(res *mcp.CallToolResult, err error) (Outcome, ErrorClass) {
	if err == nil {
		if res != nil && res.IsError {
			return OutcomeToolError, ErrorClassOf(res)
		}
		return OutcomeOK, ""
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		return OutcomePanic, Fatal
	}
	var te *ToolError
	if errors.As(err, &te) {
		if errors.Is(te, context.DeadlineExceeded) {
			return OutcomeTimeout, te.ErrorClass()
		}
		return OutcomeToolError, te.ErrorClass()
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code != 0 {
		return OutcomeProtocolError, ""
	}
	var c interface{ ErrorClass() ErrorClass }
	if errors.As(err, &c) && c.ErrorClass() != "" {
		return OutcomeError, c.ErrorClass()
	}
	return OutcomeError, Fatal
}
