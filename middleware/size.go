package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// ArgumentSizeLimit returns a Middleware that rejects calls whose arguments
// are longer than n bytes of JSON, as the client sent them, before anything
// decodes them. The rejection is a retryable [*mcpkit.ToolError] (wrapping
// [ErrArgumentsTooLarge]) that reads
// `tool "name" arguments are 2048 bytes, the limit is 1024`. A zero or
// negative n means no limit: the middleware adds no layer.
//
// The SDK has read the whole request by then: to bound what a client can
// make the server read at all, limit the HTTP request body as well (for
// instance with [net/http.MaxBytesHandler]).
//
// ArgumentSizeLimit belongs inside [Timeout]; the server's validation, which
// decodes the arguments, runs after every middleware.
func ArgumentSizeLimit(n int) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		if n <= 0 {
			return next
		}
		return &argumentLimit{n: n, next: next}
	}
}

type argumentLimit struct {
	n    int
	next mcpkit.Handler
}

func (h *argumentLimit) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if len(req.Arguments) > h.n {
		return nil, reject(ErrArgumentsTooLarge, fmt.Sprintf("tool %q arguments are %d bytes, the limit is %d", req.Tool.Name, len(req.Arguments), h.n))
	}
	return h.next.ServeTool(ctx, req)
}

// LayerSettings shows the limit in the server's Pipeline, as a cap: a
// larger ArgumentSizeLimit inside this one never refuses a call.
func (h *argumentLimit) LayerSettings() []mcpkit.Setting {
	return []mcpkit.Setting{{Name: "argumentBytes", Value: strconv.Itoa(h.n), Cap: int64(h.n)}}
}

// ResultSizeLimitOptions configures [ResultSizeLimit]. A nil
// *ResultSizeLimitOptions means the defaults.
type ResultSizeLimitOptions struct {
	// Truncate makes an oversized result shorter instead of rejecting it,
	// by cutting its text content; see [ResultSizeLimit] for how.
	Truncate bool
}

// ResultSizeLimit returns a Middleware that limits the size of results to n
// bytes, measured as the JSON of the result the rest of the chain returns
// (the "result" member of the JSON-RPC response, as encoding/json writes
// it), not counting what the SDK adds on the way out, such as the
// serverInfo _meta of the stateless protocol. A zero or negative n means no
// limit: the middleware adds no layer. Results that cannot be marshalled
// pass unchanged (the server answers them with an error), and so do
// input_required results (SEP-2322), which ask the client for input.
//
// Errors are bounded too: an error whose text the client would see (a tool
// error, or an internal error when errors are not masked) and that is longer
// than n bytes of JSON is cut to n bytes, ending with the marker, keeping
// its class and its chain for errors.Is and errors.As.
//
// An oversized result is rejected with a retryable [*mcpkit.ToolError]
// (wrapping [ErrResultTooLarge]) that reads
// `tool "name" result is 12345 bytes, the limit is 10000`, so that the model
// can ask for less. With [ResultSizeLimitOptions.Truncate], the result is
// cut instead, into a new result (the handler's is not modified):
//
//   - only text content is cut; structured content, which must match the
//     tool's output schema, and other content (images, audio, resources)
//     are kept whole, as are _meta and isError;
//   - text blocks are kept in order while they fit; the first that does
//     not is cut (at a character boundary) and ends with the marker
//     "\n[truncated: the result was 12345 bytes, the limit is 10000]"; the
//     text blocks after it are dropped;
//   - if the result is still too large with all its text cut, for instance
//     because its structured content alone exceeds the limit, it is
//     rejected as above.
//
// The truncated result, marker included, is at most n bytes.
//
// ResultSizeLimit belongs inside [Timeout], so that the time a handler
// takes counts and its oversized result is not kept beyond its deadline,
// and outside validation of structured output, so that what it keeps has
// been validated.
func ResultSizeLimit(n int, opts *ResultSizeLimitOptions) mcpkit.Middleware {
	var o ResultSizeLimitOptions
	if opts != nil {
		o = *opts
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if n <= 0 {
			return next
		}
		return &resultLimit{limit: n, truncate: o.Truncate, next: next}
	}
}

type resultLimit struct {
	limit    int
	truncate bool
	next     mcpkit.Handler
}

func (h *resultLimit) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	res, err := h.next.ServeTool(ctx, req)
	if err != nil {
		return nil, boundError(err, h.limit)
	}
	if res == nil || res.InputRequests != nil {
		return res, nil // nothing, or input_required: passed untouched
	}
	data, merr := json.Marshal(res)
	if merr != nil || len(data) <= h.limit {
		return res, nil
	}
	if h.truncate {
		if t := truncate(res, len(data), h.limit); t != nil {
			return t, nil
		}
	}
	return nil, reject(ErrResultTooLarge, fmt.Sprintf("tool %q result is %d bytes, the limit is %d", req.Tool.Name, len(data), h.limit))
}

// LayerSettings shows the limit in the server's Pipeline. It is no cap:
// a larger limit inside this one still sees the result first.
func (h *resultLimit) LayerSettings() []mcpkit.Setting {
	s := []mcpkit.Setting{{Name: "resultBytes", Value: strconv.Itoa(h.limit)}}
	if h.truncate {
		s = append(s, mcpkit.Setting{Name: "truncate", Value: "true"})
	}
	return s
}

// boundError returns err, or, when the text the client would see of it is
// longer than limit bytes of JSON, an error with that text cut to fit.
func boundError(err error, limit int) error {
	return reword(err, func(text string) (string, bool) {
		size := jsonStringLen(text)
		if size <= limit {
			return "", false
		}
		marker := fmt.Sprintf("\n[truncated: the error was %d bytes, the limit is %d]", size, limit)
		return jsonPrefix(text, max(0, limit-jsonStringLen(marker))) + marker, true
	})
}

// reword returns err, or, when shorten returns a shorter form of the text
// the client would see of err, an error that shows that form and keeps
// err's class and chain. Errors whose text the client does not see (a
// panic's, a JSON-RPC error's) are returned as they are.
func reword(err error, shorten func(text string) (string, bool)) error {
	outcome, class := mcpkit.Classify(nil, err)
	var text string
	switch outcome {
	case mcpkit.OutcomeToolError, mcpkit.OutcomeTimeout:
		var te *mcpkit.ToolError
		errors.As(err, &te)
		text = te.Error()
	case mcpkit.OutcomeError:
		text = err.Error()
	default:
		return err // a generic text, or a JSON-RPC error
	}
	short, ok := shorten(text)
	if !ok {
		return err
	}
	cut := &cutError{text: short, err: err}
	if outcome == mcpkit.OutcomeError {
		return cut
	}
	return &mcpkit.ToolError{Err: cut, Class: class}
}

// cutError shows a shortened text and unwraps to the error it shortens.
type cutError struct {
	text string
	err  error
}

func (e *cutError) Error() string { return e.text }
func (e *cutError) Unwrap() error { return e.err }

// truncate returns a copy of res, whose JSON is size bytes long, with its
// text cut so that its JSON is at most limit bytes, or nil if cutting text
// cannot make it that small.
func truncate(res *mcp.CallToolResult, size, limit int) *mcp.CallToolResult {
	marker := fmt.Sprintf("\n[truncated: the result was %d bytes, the limit is %d]", size, limit)
	// A text block's text adds exactly its escaped length to the JSON, so
	// the room left for text is the limit minus everything else.
	text := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += jsonStringLen(tc.Text)
		}
	}
	budget := limit - (size - text) - jsonStringLen(marker)
	if budget < 0 {
		return nil
	}
	out := *res
	out.Content = make([]mcp.Content, 0, len(res.Content))
	cut := false
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		switch {
		case !ok:
			out.Content = append(out.Content, c)
		case cut:
			// Text after the cut would read as if nothing were missing.
		case jsonStringLen(tc.Text) <= budget:
			budget -= jsonStringLen(tc.Text)
			out.Content = append(out.Content, c)
		default:
			short := *tc
			short.Text = jsonPrefix(tc.Text, budget) + marker
			out.Content = append(out.Content, &short)
			cut = true
		}
	}
	// The arithmetic above mirrors encoding/json; measuring again makes the
	// guarantee independent of it.
	if data, err := json.Marshal(&out); err != nil || len(data) > limit {
		return nil
	}
	return &out
}

// jsonStringLen returns the length of s as a JSON string by encoding/json,
// without the quotes.
func jsonStringLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		l, size := jsonRuneLen(s[i:])
		n += l
		i += size
	}
	return n
}

// jsonPrefix returns the longest prefix of s, ending at a character
// boundary, whose JSON is at most limit bytes long (without the quotes).
func jsonPrefix(s string, limit int) string {
	n := 0
	for i := 0; i < len(s); {
		l, size := jsonRuneLen(s[i:])
		if n+l > limit {
			return s[:i]
		}
		n += l
		i += size
	}
	return s
}

// jsonRuneLen returns the length of the JSON encoding (by encoding/json,
// which escapes HTML characters) of the first character of s, and that
// character's length in s.
func jsonRuneLen(s string) (encoded, size int) {
	if b := s[0]; b < utf8.RuneSelf {
		switch {
		case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			return 2, 1
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			return 6, 1 // \u00XX
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 6, size // \ufffd, \u2028, \u2029
	}
	return size, size
}
