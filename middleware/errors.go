package middleware

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// limitError is a rejection with a text for the client that unwraps to one
// of the sentinel errors above, and a retry delay, when one is known.
type limitError struct {
	msg        string
	sentinel   error
	retryAfter time.Duration
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.sentinel }

// ResultMeta puts the retry delay, in whole milliseconds rounded up, in the
// result's _meta under [MetaKeyRetryAfter], when there is one.
func (e *limitError) ResultMeta() mcp.Meta {
	if e.retryAfter <= 0 {
		return nil
	}
	return mcp.Meta{MetaKeyRetryAfter: (e.retryAfter + time.Millisecond - 1).Milliseconds()}
}

// reject returns the retryable tool error for a rejection.
func reject(sentinel error, msg string) error {
	return &mcpkit.ToolError{Err: &limitError{msg: msg, sentinel: sentinel}, Class: mcpkit.Retryable}
}

// A runaway is an error from a call that was answered while its handler
// went on running (see [Timeout]); Running's channel is closed when the
// handler really returns. Limits outside such a call hold its slot until
// then.
type runaway interface {
	Running() <-chan struct{}
}

// stillRunning returns the channel of the first runaway in err's chain
// with one, or nil when err reports no handler still running.
func stillRunning(err error) <-chan struct{} {
	if err == nil {
		return nil // before r, which escapes: a passing call allocates nothing
	}
	var r runaway
	if !errors.As(err, &r) {
		return nil
	}
	return r.Running()
}

// errNoPrompts is what a layer's ServePrompt answers when the Handler it
// wraps does not serve prompts: only outside a Server, which gives every
// layer of a prompt's chain a next that does.
var errNoPrompts = errors.New("middleware: the next handler does not serve prompts")

// promptsOf returns next as a PromptHandler, or one that answers
// errNoPrompts.
func promptsOf(next mcpkit.Handler) mcpkit.PromptHandler {
	if p, ok := next.(mcpkit.PromptHandler); ok {
		return p
	}
	return mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
		return nil, errNoPrompts
	})
}

// errNoResources is errNoPrompts for resources.
var errNoResources = errors.New("middleware: the next handler does not serve resources")

// resourcesOf returns next as a ResourceHandler, or one that answers
// errNoResources.
func resourcesOf(next mcpkit.Handler) mcpkit.ResourceHandler {
	if r, ok := next.(mcpkit.ResourceHandler); ok {
		return r
	}
	return mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, errNoResources
	})
}

// targetKeys makes the keys of prompts and resources in a limit's state:
// prefix, the kind, ":" and the target's [mcpkit.Target.Key]. No tool name
// holds a ":", so no prompt or resource shares a key with a tool. It
// remembers the last key it made: inside a Server, a handler serves one
// target, so that a request nearly always finds its key made.
type targetKeys struct {
	prefix string
	last   atomic.Pointer[targetKey]
}

type targetKey struct {
	t   mcpkit.Target
	key string
}

// of returns the key of t.
func (k *targetKeys) of(t mcpkit.Target) string {
	if l := k.last.Load(); l != nil && l.t == t {
		return l.key
	}
	l := &targetKey{t: t, key: k.prefix + t.Kind().String() + ":" + t.Key()}
	k.last.Store(l)
	return l.key
}

// resourceTarget returns what a resources/read reaches: its resource, or
// its template (or, for a request built by hand with neither, a resource
// of its URI).
func resourceTarget(req *mcpkit.ResourceRequest) mcpkit.Target {
	switch {
	case req.Resource != nil:
		return req.Resource
	case req.Template != nil:
		return req.Template
	}
	return &mcpkit.Resource{Resource: mcp.Resource{URI: req.URI}}
}

// resourceName names what a resources/read reads, in errors and logs: the
// resource's URI, or the template's text.
func resourceName(req *mcpkit.ResourceRequest) string {
	if req.Template != nil {
		return req.Template.URITemplate
	}
	return req.URI
}
