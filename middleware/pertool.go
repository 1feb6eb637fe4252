package middleware

import (
	"errors"
	"maps"

	"github.com/mcpkit/mcpkit"
)

// Errors that rejections by the limit middleware wrap, for errors.Is. The
// client sees a more specific text naming the tool and the limit.
var (
	ErrBusy              = errors.New("middleware: concurrency limit reached")
	ErrRateLimited       = errors.New("middleware: rate limit exceeded")
	ErrArgumentsTooLarge = errors.New("middleware: arguments too large")
	ErrResultTooLarge    = errors.New("middleware: result too large")
)

// ByName returns a PerTool function that looks a tool's setting up by its
// name in m, giving the zero value (the server-wide setting) for tools not
// in m. m is copied: later changes to it have no effect.
func ByName[T any](m map[string]T) func(*mcpkit.Tool) T {
	m = maps.Clone(m)
	return func(t *mcpkit.Tool) T {
		if t == nil {
			var zero T
			return zero
		}
		return m[t.Name]
	}
}

// resolvePerTool returns the value of the PerTool option perTool for the
// tool whose chain next belongs to, when a Server is building that chain
// (see [mcpkit.ToolOf]): the middleware then resolves the option once, not
// on every call. It returns false when perTool is nil or the tool is not
// known; the middleware then asks perTool on each call, with req.Tool.
func resolvePerTool[T any](next mcpkit.Handler, perTool func(*mcpkit.Tool) T) (v T, ok bool) {
	if perTool == nil {
		return v, false
	}
	t, ok := mcpkit.ToolOf(next)
	if !ok {
		return v, false
	}
	return perTool(t), true
}

// toolName returns the name of the tool req calls, or "" for a request built
// without one.
func toolName(req *mcpkit.Request) string {
	if req.Tool == nil {
		return ""
	}
	return req.Tool.Name
}

// toolVersion is toolName for the version.
func toolVersion(req *mcpkit.Request) string {
	if req.Tool == nil {
		return ""
	}
	return req.Tool.Version
}

// limitError is a rejection with a text for the client that unwraps to one
// of the sentinel errors above.
type limitError struct {
	msg      string
	sentinel error
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.sentinel }

// reject returns the retryable tool error for a rejection.
func reject(sentinel error, msg string) error {
	return &mcpkit.ToolError{Err: &limitError{msg: msg, sentinel: sentinel}, Class: mcpkit.Retryable}
}
