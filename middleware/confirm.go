package middleware

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode"

	"github.com/mcpkit/mcpkit/internal/taskround"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/requeststate"
)

// Errors that the refusals of [Confirm] wrap, for errors.Is. The first
// two are fatal tool errors: asking again will not change the answer.
var (
	// ErrDeclined: the user declined or cancelled the confirmation, or
	// did not tick its box; the tool did not run.
	ErrDeclined = errors.New("middleware: confirmation declined")
	// ErrCannotConfirm: the client declared no way to ask its user (no
	// form elicitation capability); the tool did not run.
	ErrCannotConfirm = errors.New("middleware: client cannot ask its user to confirm")
	// ErrConfirmUnavailable: the store of used confirmations
	// ([ConfirmOptions.Used]) failed; the tool did not run. Retryable.
	ErrConfirmUnavailable = errors.New("middleware: confirmation store unavailable")
)

// ConfirmField is the one boolean field of the form that [Confirm] asks
// the user to fill in; the tool runs only when the user accepts with it
// true.
const ConfirmField = "confirm"

// confirmedKey marks the context of a call that a Confirm has had
// confirmed, with the *mcpkit.Request the user was asked about, for the
// Confirm layers further in (see ServeTool and covers).
type confirmedKey struct{}

// confirmKey is the key of Confirm's input request: a name no tool is
// likely to use for its own.
const confirmKey = "mcpkit.confirm"

// maxDescribe bounds the message of the default ConfirmOptions.Describe,
// in bytes.
const maxDescribe = 512

// ConfirmOptions configures [Confirm]. A nil *ConfirmOptions means the
// defaults.
type ConfirmOptions struct {
	// Describe returns the message the user is shown: what will happen
	// if they confirm. Nil means one naming the tool and its arguments,
	// clipped to 512 bytes.
	Describe func(req *mcpkit.Request) string
	// Unsupported decides a call from a client that cannot ask its user
	// (it declared no form elicitation capability): its error is the
	// call's answer, and nil runs the tool unconfirmed. Nil means a
	// fatal tool error wrapping ErrCannotConfirm. To hide such tools
	// from such clients instead, use a visibility rule: visibility.Require
	// with the same match function and a predicate on the client's
	// capabilities (see docs/middleware.md).
	Unsupported func(req *mcpkit.Request) error
	// Window is how long the user has to answer, and how long a used
	// confirmation is remembered; zero means five minutes. The sealer's
	// TTL, if shorter, bounds it too.
	Window time.Duration
	// Used records the confirmations already used, so that each runs
	// the tool at most once. Nil means an in-memory store of Confirm's
	// own, which only this process consults: give replicas one shared
	// store (the redisstore module's) so that none accepts a
	// confirmation another has used. Confirm fails closed: when the
	// store fails, the call gets a retryable tool error wrapping
	// ErrConfirmUnavailable and the tool does not run.
	Used IdempotencyStore
}

// Confirm returns a Middleware that runs a tool only once the user has
// confirmed the call, for tools that destroy or spend: select them with
// [mcpkit.ForTools], with [Destructive] or by name.
//
//	srv.Use(mcpkit.ForTools(middleware.Destructive, middleware.Confirm(sealer, nil)))
//
// A call without a confirmation gets an input_required result (SEP-2322)
// asking the user, through an elicitation form, whether to run the tool
// (the message is [ConfirmOptions.Describe]'s, the one field
// [ConfirmField]), with a request state sealed by sealer for this
// principal, tool identity and version, and arguments. The call that comes
// back with the answer runs the tool if the user accepted with the box
// ticked; otherwise it gets a fatal tool error wrapping [ErrDeclined]. A
// 2026-07-28 client answers and calls again itself; for older clients the
// SDK asks over their session (serve them with HTTPOptions.Sessions).
//
// Only the user's answer to the elicitation counts: an argument such as
// "confirm": true satisfies nothing, since the model could set it. A state
// that sealer does not open (forged, expired, sealed for another caller,
// tool or arguments) gets sealer's JSON-RPC error -32602 "invalid request
// state", as does one used before ([ConfirmOptions.Used]), so that an
// answer replayed within its window does not run the tool again. A
// client that cannot ask its user is refused ([ConfirmOptions.Unsupported]).
//
// When the tool itself asks for input, Confirm carries the confirmation
// along in the request state, and the tool sees only its own state and
// answers. A call that a Confirm further out already had confirmed (through
// call_tool, or a mounted server's tool) is not asked about again, nor is a
// later round of a task (package tasks), which the chain admitted when it
// created the task; a call to another tool that a confirmed tool or a
// task's round makes with its context (through Server.Resolve) is. Confirm belongs after MaskErrors and before the limits, so that
// asking costs no rate token or slot. It panics if sealer is nil.
func Confirm(sealer *requeststate.Sealer, opts *ConfirmOptions) mcpkit.Middleware {
	if sealer == nil {
		panic("middleware: Confirm: nil sealer")
	}
	c := &confirmer{sealer: sealer, window: 5 * time.Minute}
	if opts != nil {
		if opts.Window < 0 {
			panic(fmt.Sprintf("middleware: Confirm: negative Window %v", opts.Window))
		}
		if opts.Window > 0 {
			c.window = opts.Window
		}
		c.describe, c.unsupported, c.used = opts.Describe, opts.Unsupported, opts.Used
	}
	if c.describe == nil {
		c.describe = describeCall
	}
	if c.used == nil {
		c.used = NewMemoryIdempotencyStore(nil)
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		return &confirmHandler{confirmer: c, next: next}
	}
}

// Destructive is a match function for [mcpkit.ForTools] that selects the
// tools that may destroy, as the MCP annotations' defaults say: a tool not
// marked readOnlyHint whose destructiveHint is true or unset (a tool with
// no annotations at all is selected).
func Destructive(t *mcpkit.Tool) bool {
	a := t.Annotations
	return a == nil || !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
}

// confirmer is what every tool's Confirm layer shares.
type confirmer struct {
	sealer      *requeststate.Sealer
	window      time.Duration
	describe    func(*mcpkit.Request) string
	unsupported func(*mcpkit.Request) error
	used        IdempotencyStore
}

type confirmHandler struct {
	*confirmer
	next mcpkit.Handler
}

// confirmForm is the form the user fills in, as JSON: no call can change
// it.
var confirmForm = json.RawMessage(`{"type":"object","properties":{"` + ConfirmField +
	`":{"type":"boolean","title":"Confirm","description":"Run it?"}},"required":["` + ConfirmField + `"]}`)

// What a state that Confirm seals says: the user was asked; or the user
// confirmed, and the tool asked for more input (its own state follows).
const (
	stateAsked     = 'a'
	stateConfirmed = 'c'
)

func (h *confirmHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if asked, ok := ctx.Value(confirmedKey{}).(*mcpkit.Request); ok && covers(asked, req) {
		// A Confirm further out asked about this very call (call_tool
		// reaching a tool, a mounted server's tool under its parent's
		// layer): the user said yes once, to a message naming it all.
		// The layers further in compare with this call.
		return h.next.ServeTool(context.WithValue(ctx, confirmedKey{}, req), req)
	}
	if taskround.In(ctx, req.Tool.ID()) {
		// A later round of a task, which the whole chain, this layer
		// included, admitted when the task was created.
		return h.next.ServeTool(ctx, req)
	}
	raw, err := h.sealer.Open(req)
	if err != nil {
		return nil, err // forged, expired, another call's: -32602
	}
	if raw == nil {
		return h.ask(ctx, req)
	}
	kind, inner, ok := h.parse(raw)
	if !ok {
		return nil, errStateRefused
	}
	var answer *mcp.ElicitResult
	if kind == stateAsked {
		if answer, ok = mcpkit.InputResponse[*mcp.ElicitResult](req, confirmKey); !ok {
			return h.ask(ctx, req) // the state came back without an answer
		}
	}
	if err := h.claim(ctx, req.Tool.Name, req.Call.Params.RequestState); err != nil {
		return nil, err
	}
	if kind == stateAsked && (answer.Action != "accept" || answer.Content[ConfirmField] != true) {
		return nil, &mcpkit.ToolError{Err: &confirmError{
			msg: fmt.Sprintf("%s: %q did not run", declined(answer), req.Tool.Name), sentinel: ErrDeclined,
		}, Class: mcpkit.Fatal}
	}
	return h.run(ctx, req, inner)
}

// ask returns the input_required result that asks the user, or the
// refusal of a client that cannot ask.
func (h *confirmHandler) ask(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if !canElicitForm(req.ClientCapabilities()) {
		if h.unsupported != nil {
			if err := h.unsupported(req); err != nil {
				return nil, err
			}
			return h.next.ServeTool(ctx, req)
		}
		return nil, &mcpkit.ToolError{Err: &confirmError{
			msg:      fmt.Sprintf("%q needs the user's confirmation, and this client cannot ask its user (no elicitation form capability)", req.Tool.Name),
			sentinel: ErrCannotConfirm,
		}, Class: mcpkit.Fatal}
	}
	sealed, err := h.seal(req, stateAsked, "")
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{confirmKey: &mcp.ElicitParams{
			Mode: "form", Message: h.describe(req), RequestedSchema: confirmForm,
		}},
		RequestState: sealed,
	}, nil
}

// run runs the tool on a copy of req that carries only the tool's own
// request state and answers; a request for more input that it returns
// carries the confirmation along.
func (h *confirmHandler) run(ctx context.Context, req *mcpkit.Request, inner string) (*mcp.CallToolResult, error) {
	r := req.Clone()
	r.Call.Params.RequestState = inner
	if answers := r.Call.Params.InputResponses; answers != nil {
		answers = maps.Clone(answers)
		delete(answers, confirmKey)
		if len(answers) == 0 {
			answers = nil
		}
		r.Call.Params.InputResponses = answers
	}
	res, err := h.next.ServeTool(context.WithValue(ctx, confirmedKey{}, req), r)
	if err != nil || res == nil || res.InputRequests == nil {
		return res, err
	}
	sealed, err := h.seal(req, stateConfirmed, res.RequestState)
	if err != nil {
		return nil, err
	}
	out := *res
	out.RequestState = sealed
	return &out, nil
}

// seal returns the request state: its kind, when its window closes, and
// the tool's own state, sealed for req.
func (h *confirmHandler) seal(req *mcpkit.Request, kind byte, inner string) (string, error) {
	b := make([]byte, 0, 9+len(inner))
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, uint64(time.Now().Add(h.window).UnixNano()))
	return h.sealer.Seal(req, append(b, inner...))
}

// parse reads a state that seal made and whose window is open.
func (h *confirmHandler) parse(raw []byte) (kind byte, inner string, ok bool) {
	if len(raw) < 9 || raw[0] != stateAsked && raw[0] != stateConfirmed {
		return 0, "", false
	}
	if time.Now().UnixNano() >= int64(binary.BigEndian.Uint64(raw[1:9])) {
		return 0, "", false
	}
	return raw[0], string(raw[9:]), true
}

// claim marks the sealed state used, or refuses it if it was.
func (h *confirmHandler) claim(ctx context.Context, name, sealed string) error {
	key := newKeyHash("mcpkit confirm").add(sealed).sum("confirm:")
	_, claimed, err := h.used.Claim(ctx, key, IdempotencyRecord{Fingerprint: "used", Token: randomToken()}, h.window)
	if err != nil {
		return &mcpkit.ToolError{Err: &confirmError{
			msg: fmt.Sprintf("tool %q: confirmation store unavailable: try again later", name), sentinel: ErrConfirmUnavailable, cause: err,
		}, Class: mcpkit.Retryable}
	}
	if !claimed {
		return errStateRefused
	}
	return nil
}

// covers reports whether the user, asked about the call asked, was asked
// about req: the same tool (a mounted server's tool under its parent's
// layer), or the tool and arguments that asked's arguments name, as
// call_tool's do ({"name": ..., "arguments": ...}). Another call that the
// tool makes with its context (through Server.Resolve) is not covered:
// the user was not shown it.
func covers(asked, req *mcpkit.Request) bool {
	if asked.Tool.ID() == req.Tool.ID() {
		return true
	}
	var named struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(asked.Arguments, &named) != nil || named.Name == "" {
		return false
	}
	name := req.Tool.Name
	if req.Call != nil && req.Call.Params != nil {
		name = req.Call.Params.Name
	}
	return named.Name == name && bytes.Equal(named.Arguments, req.Arguments)
}

// canElicitForm reports whether a client with caps can show a form: it
// declared elicitation, with the form mode or (as before modes) none.
func canElicitForm(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// declined says how the user declined.
func declined(answer *mcp.ElicitResult) string {
	switch answer.Action {
	case "decline":
		return "the user declined"
	case "cancel":
		return "the user cancelled"
	}
	return "the user did not confirm"
}

// describeCall is the default ConfirmOptions.Describe.
func describeCall(req *mcpkit.Request) string {
	args := "{}"
	if len(req.Arguments) > 0 {
		// What the schema marks secret (writeOnly, format "password") is
		// not shown, as an audit trail does not record it.
		b := redactJSON(req.Arguments, planOf(req.Tool.InputSchema), nil)
		if b == nil {
			return clipText(fmt.Sprintf("Run %q?", req.Tool.Name), maxDescribe)
		}
		args = readable(b)
	}
	return clipText(fmt.Sprintf("Run %q with %s?", req.Tool.Name, args), maxDescribe)
}

// readable returns args, JSON, as the user should read them: the values
// the tool gets, not their spelling (a \u escape is shown decoded); each
// string clipped to maxDescribeString bytes, so that one long value does
// not push the others out of a clipped message; and the invisible
// characters that change how text reads (a right-to-left override, a
// zero-width space: Unicode's format characters) as escapes.
func readable(args json.RawMessage) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return string(args)
	}
	v = clipStrings(v, 0)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return string(args)
	}
	var b strings.Builder
	for _, r := range strings.TrimSuffix(buf.String(), "\n") {
		if unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// maxDescribeString bounds each string the default message shows, in
// bytes.
const maxDescribeString = 80

// clipStrings returns v, decoded JSON, with its strings clipped to
// maxDescribeString bytes, at any depth the walk of redactJSON allows.
func clipStrings(v any, depth int) any {
	if depth > maxRedactDepth {
		return v
	}
	switch x := v.(type) {
	case string:
		return clipText(x, maxDescribeString)
	case map[string]any:
		for k, val := range x {
			x[k] = clipStrings(val, depth+1)
		}
	case []any:
		for i := range x {
			x[i] = clipStrings(x[i], depth+1)
		}
	}
	return v
}

// confirmError is a refusal by Confirm: a text for the client that
// unwraps to one of Confirm's sentinel errors and to its cause, if any.
type confirmError struct {
	msg      string
	sentinel error
	cause    error
}

func (e *confirmError) Error() string { return e.msg }
func (e *confirmError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

// errStateRefused answers a state that the sealer opens but Confirm does not
// take (used already, or its window closed), as the sealer answers one it
// does not open.
var errStateRefused error = &usedStateError{wire: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid request state"}}

type usedStateError struct{ wire *jsonrpc.Error }

func (e *usedStateError) Error() string   { return e.wire.Message }
func (e *usedStateError) Unwrap() []error { return []error{requeststate.ErrInvalid, e.wire} }
