package middleware_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/requeststate"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

func newSealer(t testing.TB) *requeststate.Sealer {
	t.Helper()
	s, err := requeststate.New([][]byte{[]byte(rand.Text() + rand.Text())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// deleteSchema lets the model pass "confirm": true, which must not count.
var deleteSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
	"path": {Type: "string"}, "confirm": {Type: "boolean"},
}}

// confirmServer serves delete_file and wipe_disk, both confirmed, and
// counts their runs.
func confirmServer(t *testing.T, sealer *requeststate.Sealer, opts *middleware.ConfirmOptions) (*mcpkit.Server, *atomic.Int32) {
	t.Helper()
	runs := new(atomic.Int32)
	run := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		runs.Add(1)
		if req.Call.Params.RequestState != "" || req.Call.Params.InputResponses != nil {
			return nil, mcpkit.ToolErrorf("the tool saw Confirm's state or answer")
		}
		return textResult("deleted " + string(req.Arguments)), nil
	})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "confirm", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(middleware.Destructive, middleware.Confirm(sealer, opts)))
	for _, name := range []string{"delete_file", "wipe_disk"} {
		if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: deleteSchema}, Handler: run}); err != nil {
			t.Fatal(err)
		}
	}
	return srv, runs
}

// eras connects to srv as a 2026-07-28 client (which answers and calls
// again) and as a 2025-11-25 one over a session (which the SDK asks).
var eras = []struct {
	name    string
	connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
}{
	{mcpkittest.StatelessVersion, mcpkittest.NewStatelessServer},
	{mcpkittest.StatefulVersion, mcpkittest.NewServer},
}

// TestConfirm: on both eras, the user is asked once with a message naming
// the tool and its arguments; accept with the box ticked runs the tool
// once; decline, cancel, or accept without the box run nothing and answer
// a fatal tool error.
func TestConfirm(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				answer *mcp.ElicitResult
				runs   int32
				want   string
			}{
				{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, 1, `deleted {"path":"/tmp/x"}`},
				{"decline", &mcp.ElicitResult{Action: "decline"}, 0, `the user declined: "delete_file" did not run`},
				{"cancel", &mcp.ElicitResult{Action: "cancel"}, 0, `the user cancelled: "delete_file" did not run`},
				{"unticked", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, 0, `the user did not confirm: "delete_file" did not run`},
			} {
				t.Run(tc.name, func(t *testing.T) {
					srv, runs := confirmServer(t, newSealer(t), nil)
					var asked []string
					ts := era.connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
						ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
							asked = append(asked, req.Params.Message)
							return tc.answer, nil
						},
					}})
					res, err := ts.CallTool(t.Context(), "delete_file", map[string]any{"path": "/tmp/x"})
					if err != nil {
						t.Fatal(err)
					}
					if got := onlyText(res); got != tc.want || res.IsError != (tc.runs == 0) {
						t.Errorf("got %q (isError %v), want %q", got, res.IsError, tc.want)
					}
					if tc.runs == 0 && res.Meta[mcpkit.MetaKeyErrorClass] != string(mcpkit.Fatal) {
						t.Errorf("refusal's _meta: %v, want class fatal", res.Meta)
					}
					if runs.Load() != tc.runs {
						t.Errorf("the tool ran %d times, want %d", runs.Load(), tc.runs)
					}
					if len(asked) != 1 || asked[0] != `Run "delete_file" with {"path":"/tmp/x"}?` {
						t.Errorf("asked %q, want once, naming the tool and its arguments", asked)
					}
				})
			}
		})
	}
}

// TestConfirmArgumentSatisfiesNothing: "confirm": true in the arguments
// gets the question, not the tool's run, from a client that does not
// answer it (here one that returns input_required results to its caller).
func TestConfirmArgumentSatisfiesNothing(t *testing.T) {
	srv, runs := confirmServer(t, newSealer(t), nil)
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("asked the user, with multi-round-trip handling off")
			return nil, nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}})
	res, err := ts.CallTool(t.Context(), "delete_file", map[string]any{"path": "/", "confirm": true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == "" || runs.Load() != 0 {
		t.Errorf("got %+v after %d runs, want an input_required result and no run", res, runs.Load())
	}
}

// askFor calls name with args on ts, whose client hands input_required
// results back, and returns the sealed state and the key of the question.
func askFor(t *testing.T, ts *mcpkittest.Server, name string, args map[string]any) (state, key string) {
	t.Helper()
	res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("%s: got %+v, want one input request", name, res)
	}
	for k := range res.InputRequests {
		key = k
	}
	return res.RequestState, key
}

// TestConfirmReplay: a confirmation runs the call it was asked for, once;
// on another call (other arguments, other tool, other caller), forged, or
// a second time, it gets -32602 "invalid request state" and runs nothing.
func TestConfirmReplay(t *testing.T) {
	srv, runs := confirmServer(t, newSealer(t), nil)
	tokens := map[string]*auth.TokenInfo{"tok-ada": {UserID: "ada"}, "tok-bob": {UserID: "bob"}}
	noRetry := &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}
	ada := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: noRetry, Tokens: tokens, Token: "tok-ada"})
	bob := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: noRetry, Tokens: tokens, Token: "tok-bob"})

	args := map[string]any{"path": "/tmp/x"}
	state, key := askFor(t, ada, "delete_file", args)
	yes := mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	answer := func(ts *mcpkittest.Server, name string, args map[string]any, state string) (*mcp.CallToolResult, error) {
		return ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args, RequestState: state, InputResponses: yes})
	}
	refused := func(what string, res *mcp.CallToolResult, err error) {
		t.Helper()
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || werr.Message != "invalid request state" {
			t.Errorf("%s: got %+v, %v; want -32602 invalid request state", what, res, err)
		}
	}
	res, err := answer(ada, "delete_file", map[string]any{"path": "/etc"}, state)
	refused("other arguments", res, err)
	res, err = answer(ada, "wipe_disk", args, state)
	refused("other tool", res, err)
	res, err = answer(bob, "delete_file", args, state)
	refused("other principal", res, err)
	res, err = answer(ada, "delete_file", args, "forged-"+state)
	refused("forged", res, err)
	if runs.Load() != 0 {
		t.Fatalf("the tool ran %d times on refused states", runs.Load())
	}

	res, err = answer(ada, "delete_file", args, state)
	if err != nil || onlyText(res) != `deleted {"path":"/tmp/x"}` {
		t.Fatalf("the call it was asked for: %+v, %v", res, err)
	}
	res, err = answer(ada, "delete_file", args, state)
	refused("used again", res, err)
	if runs.Load() != 1 {
		t.Errorf("the tool ran %d times, want once", runs.Load())
	}
}

// TestConfirmWithoutElicitation: a client that declared no elicitation
// gets a fatal tool error wrapping ErrCannotConfirm on both eras, unless
// Unsupported lets the call run.
func TestConfirmWithoutElicitation(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			srv, runs := confirmServer(t, newSealer(t), nil)
			res, err := era.connect(t, srv, nil).CallTool(t.Context(), "delete_file", map[string]any{"path": "/tmp/x"})
			want := `"delete_file" needs the user's confirmation, and this client cannot ask its user (no elicitation form capability)`
			if err != nil || !res.IsError || onlyText(res) != want || res.Meta[mcpkit.MetaKeyErrorClass] != string(mcpkit.Fatal) {
				t.Errorf("got %+v, %v; want the fatal error %q", res, err, want)
			}
			if runs.Load() != 0 {
				t.Errorf("the tool ran %d times", runs.Load())
			}

			var seen error
			srv, runs = confirmServer(t, newSealer(t), &middleware.ConfirmOptions{Unsupported: func(req *mcpkit.Request) error {
				seen = errors.New(req.Tool.Name)
				return nil
			}})
			res, err = era.connect(t, srv, nil).CallTool(t.Context(), "delete_file", map[string]any{"path": "/tmp/x"})
			if err != nil || res.IsError || runs.Load() != 1 || seen == nil {
				t.Errorf("with Unsupported allowing: %+v, %v, %d runs", res, err, runs.Load())
			}
		})
	}
}

// TestConfirmAudit: on both eras, with Server.Observe and NewAudit, the
// trail shows the declined call (served, tool_error, the reason naming the
// decline), and an observer finds ErrDeclined and ErrCannotConfirm with
// errors.Is.
func TestConfirmAudit(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			var trail lockedBuffer
			audit := middleware.NewAudit(middleware.NewJSONLinesSink(&trail, nil), nil)
			var declined, cannot atomic.Int32
			srv, runs := confirmServer(t, newSealer(t), nil)
			srv.Observe(audit, mcpkit.ObserverFunc(func(_ context.Context, ev *mcpkit.Event) {
				if errors.Is(ev.Err, middleware.ErrDeclined) {
					declined.Add(1)
				}
				if errors.Is(ev.Err, middleware.ErrCannotConfirm) {
					cannot.Add(1)
				}
			}))
			ts := era.connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			}})
			if res, err := ts.CallTool(t.Context(), "delete_file", map[string]any{"path": "/tmp/x"}); err != nil || !res.IsError {
				t.Fatalf("declined call: %+v, %v", res, err)
			}
			if res, err := era.connect(t, srv, nil).CallTool(t.Context(), "wipe_disk", map[string]any{}); err != nil || !res.IsError {
				t.Fatalf("call from a client that cannot ask: %+v, %v", res, err)
			}
			if err := audit.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			var found bool
			for line := range strings.Lines(trail.String()) {
				var r middleware.AuditRecord
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				if r.Tool == "delete_file" && r.Decision == "served" && r.Outcome == "tool_error" && r.Class == "fatal" &&
					r.Reason == `the user declined: "delete_file" did not run` {
					found = true
				}
			}
			if !found {
				t.Errorf("no record of the declined call in the trail:\n%s", trail.String())
			}
			if declined.Load() != 1 || cannot.Load() != 1 || runs.Load() != 0 {
				t.Errorf("observed %d declined and %d unconfirmable calls, want 1 each; %d runs", declined.Load(), cannot.Load(), runs.Load())
			}
		})
	}
}

// TestConfirmCarriesToolInput: a confirmed tool that asks for input of its
// own sees only its own state and answers, on both eras, and runs to the
// end without asking the user to confirm again.
func TestConfirmCarriesToolInput(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			var confirms, names atomic.Int32
			greet := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				p := req.Call.Params
				answer, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "name")
				if !ok {
					if p.RequestState != "" || len(p.InputResponses) != 0 {
						return nil, mcpkit.ToolErrorf("first round saw state %q, answers %v", p.RequestState, p.InputResponses)
					}
					return &mcp.CallToolResult{
						InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "Your name?",
							RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}},
						RequestState: "greet-1",
					}, nil
				}
				if p.RequestState != "greet-1" || len(p.InputResponses) != 1 {
					return nil, mcpkit.ToolErrorf("second round saw state %q, answers %v", p.RequestState, p.InputResponses)
				}
				return textResult("bye " + answer.Content["name"].(string)), nil
			})
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "confirm"}, nil)
			srv.Use(middleware.Confirm(newSealer(t), nil))
			if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "close_account", InputSchema: deleteSchema}, Handler: greet}); err != nil {
				t.Fatal(err)
			}
			ts := era.connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if req.Params.Message == "Your name?" {
						names.Add(1)
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
					}
					confirms.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
				},
			}})
			res, err := ts.CallTool(t.Context(), "close_account", map[string]any{})
			if err != nil || onlyText(res) != "bye Ada" {
				t.Fatalf("got %+v (%s), %v", res, onlyText(res), err)
			}
			if confirms.Load() != 1 || names.Load() != 1 {
				t.Errorf("asked to confirm %d times and for the name %d times, want once each", confirms.Load(), names.Load())
			}
		})
	}
}

// confirmedRequest asks h, by a request built by hand from a client that
// can elicit, and returns the request that comes back with the user's yes.
func confirmedRequest(t *testing.T, h mcpkit.Handler, tool *mcpkit.Tool) *mcpkit.Request {
	t.Helper()
	caps := mcpkittest.WithMeta(mcp.Meta{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}})
	res, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]any{}, caps))
	if err != nil || res.InputRequests == nil {
		t.Fatalf("first round: %+v, %v", res, err)
	}
	req := mcpkittest.NewRequest(tool, map[string]any{}, caps)
	req.Call.Params.RequestState = res.RequestState
	for key := range res.InputRequests {
		req.Call.Params.InputResponses = mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	}
	return req
}

// TestConfirmWindow: an answer that comes back after the window has
// closed gets -32602 and runs nothing; one within it runs the tool.
func TestConfirmWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int32
		tool := newTool("drop_table", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			runs.Add(1)
			return textResult("dropped"), nil
		})
		h := middleware.Confirm(newSealer(t), &middleware.ConfirmOptions{Window: time.Minute})(tool.Handler)
		ask := func() *mcpkit.Request { return confirmedRequest(t, h, tool) }

		late := ask()
		time.Sleep(time.Minute)
		var werr *jsonrpc.Error
		if res, err := h.ServeTool(t.Context(), late); !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !errors.Is(err, requeststate.ErrInvalid) {
			t.Errorf("after the window: %+v, %v; want -32602", res, err)
		}
		timely := ask()
		time.Sleep(time.Minute - time.Second)
		if res, err := h.ServeTool(t.Context(), timely); err != nil || onlyText(res) != "dropped" {
			t.Errorf("within the window: %+v, %v", res, err)
		}
		if runs.Load() != 1 {
			t.Errorf("the tool ran %d times, want once", runs.Load())
		}
	})
}

// TestDestructive follows the annotations' defaults: destructive unless
// read-only or marked destructiveHint false.
func TestDestructive(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		a    *mcp.ToolAnnotations
		want bool
	}{
		{nil, true},
		{&mcp.ToolAnnotations{}, true},
		{&mcp.ToolAnnotations{DestructiveHint: &yes}, true},
		{&mcp.ToolAnnotations{DestructiveHint: &no}, false},
		{&mcp.ToolAnnotations{ReadOnlyHint: true}, false},
		{&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}, false},
	} {
		if got := middleware.Destructive(&mcpkit.Tool{Tool: mcp.Tool{Name: "t", Annotations: tc.a}}); got != tc.want {
			t.Errorf("Destructive(%+v) = %v, want %v", tc.a, got, tc.want)
		}
	}
}

// TestConfirmHiddenByVisibility: with the visibility rule of
// docs/middleware.md, a client that cannot confirm does not see the
// confirmed tools, and its call of one reaches no tool; a client that can
// sees them.
func TestConfirmHiddenByVisibility(t *testing.T) {
	canConfirm := func(_ context.Context, c mcpkit.Caller) bool {
		caps := c.ClientCapabilities()
		return caps != nil && caps.Elicitation != nil && (caps.Elicitation.Form != nil || caps.Elicitation.URL == nil)
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			srv, runs := confirmServer(t, newSealer(t), nil)
			srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "list_files", InputSchema: deleteSchema,
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcpkit.HandlerFunc(ok)})
			visibility.New(visibility.Require(middleware.Destructive, canConfirm)).Attach(srv)
			listed := func(ts *mcpkittest.Server) []string {
				res, err := ts.Session.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				return names
			}
			plain := era.connect(t, srv, nil)
			if got := listed(plain); !slices.Equal(got, []string{"list_files"}) {
				t.Errorf("a client without elicitation lists %v, want [list_files]", got)
			}
			if _, err := plain.CallTool(t.Context(), "delete_file", map[string]any{"path": "/"}); err == nil {
				t.Error("a client without elicitation called a hidden tool")
			}
			asking := era.connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			}})
			if got := listed(asking); !slices.Equal(got, []string{"delete_file", "list_files", "wipe_disk"}) {
				t.Errorf("a client with elicitation lists %v", got)
			}
			if runs.Load() != 0 {
				t.Errorf("the tool ran %d times", runs.Load())
			}
		})
	}
}

// TestConfirmStoreFails: when the store of used confirmations fails, a
// confirmed call is refused, retryably, without the store's error in its
// text, and the tool does not run.
func TestConfirmStoreFails(t *testing.T) {
	var runs atomic.Int32
	tool := newTool("drop_table", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		runs.Add(1)
		return textResult("dropped"), nil
	})
	h := middleware.Confirm(newSealer(t), &middleware.ConfirmOptions{Used: &failingStore{}})(tool.Handler)
	res, err := h.ServeTool(t.Context(), confirmedRequest(t, h, tool))
	var te *mcpkit.ToolError
	if !errors.As(err, &te) || te.Class != mcpkit.Retryable || !errors.Is(err, middleware.ErrConfirmUnavailable) ||
		!errors.Is(err, errStore) || err.Error() != `tool "drop_table": confirmation store unavailable: try again later` {
		t.Errorf("got %+v, %v; want a retryable ErrConfirmUnavailable", res, err)
	}
	if runs.Load() != 0 {
		t.Errorf("the tool ran %d times", runs.Load())
	}
}

// TestConfirmFollowsTheTool: a call by a deprecated alias or a derived name
// of a destructive tool is asked about as a call by its own name, and runs
// only on the user's yes.
func TestConfirmFollowsTheTool(t *testing.T) {
	var runs atomic.Int32
	del := &mcpkit.Tool{Tool: mcp.Tool{Name: "delete_file", InputSchema: deleteSchema},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			runs.Add(1)
			return textResult("deleted " + string(req.Arguments)), nil
		})}
	alias, err := transform.Alias(del, "rm", &transform.AliasOptions{Arguments: map[string]string{"path": "file"}})
	if err != nil {
		t.Fatal(err)
	}
	derived, err := transform.Tool(del, transform.Spec{Name: "unlink", Arguments: map[string]transform.Arg{"path": {Name: "target"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, []mcpkit.Middleware{mcpkit.ForTools(middleware.Destructive, middleware.Confirm(newSealer(t), nil))}, del, alias, derived)
	var answer atomic.Value
	var asked []string
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return answer.Load().(*mcp.ElicitResult), nil
		},
	}})
	for _, route := range []struct{ name, arg string }{{"delete_file", "path"}, {"rm", "file"}, {"unlink", "target"}} {
		args := map[string]any{route.arg: "/tmp/x"}
		answer.Store(&mcp.ElicitResult{Action: "decline"})
		if res, err := ts.CallTool(t.Context(), route.name, args); err != nil || !res.IsError || runs.Load() != 0 {
			t.Errorf("%s, declined: %+v, %v after %d runs", route.name, res, err, runs.Load())
		}
		answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}})
		if res, err := ts.CallTool(t.Context(), route.name, args); err != nil || onlyText(res) != `deleted {"path":"/tmp/x"}` || runs.Load() != 1 {
			t.Errorf("%s, confirmed: %+v, %v after %d runs", route.name, res, err, runs.Load())
		}
		runs.Store(0)
	}
	if len(asked) != 6 {
		t.Errorf("asked %d times, want twice per route: %q", len(asked), asked)
	}
}
