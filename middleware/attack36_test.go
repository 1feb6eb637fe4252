package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// attackSecret is the value no record may hold.
const attackSecret = "s3cr3t-hunter2"

// pwSchema marks password writeOnly.
var pwSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"user":     map[string]any{"type": "string"},
		"password": map[string]any{"type": "string", "writeOnly": true},
	},
}

// auditedServer returns a server with audit observing it, writing to a
// chained trail, and login (pwSchema) added; extra runs before serving.
func auditedServer(t *testing.T, opts *middleware.AuditOptions) (*mcpkit.Server, *middleware.Audit, *lockedBuffer) {
	t.Helper()
	trail := &lockedBuffer{}
	audit := middleware.NewAudit(middleware.NewJSONLinesSink(trail, &middleware.JSONLinesOptions{Chain: true}), opts)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "audited", Version: "1"}, nil)
	srv.Observe(audit)
	ok := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("ok"), nil
	})
	if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "login", InputSchema: pwSchema}, Handler: ok}); err != nil {
		t.Fatal(err)
	}
	return srv, audit, trail
}

// closeTrail closes audit and returns its trail's records.
func closeTrail(t *testing.T, audit *middleware.Audit, trail *lockedBuffer) (string, []middleware.AuditRecord) {
	t.Helper()
	if err := audit.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	text := trail.String()
	var recs []middleware.AuditRecord
	for line := range strings.Lines(text) {
		var r middleware.AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		recs = append(recs, r)
	}
	return text, recs
}

// TestAttack36HiddenToolArgumentsRedacted: a call of a tool hidden from
// its caller is recorded as unknown, with no tool and so no schema: its
// writeOnly password must not reach the trail all the same.
func TestAttack36HiddenToolArgumentsRedacted(t *testing.T) {
	srv, audit, trail := auditedServer(t, nil)
	visibility.New(visibility.DisableNames("login")).Attach(srv)
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if _, err := ts.CallTool(t.Context(), "login", map[string]any{"user": "ada", "password": attackSecret}); err == nil {
		t.Fatal("a hidden tool was called")
	}
	text, recs := closeTrail(t, audit, trail)
	if len(recs) != 1 || recs[0].Decision != string(mcpkit.DecisionUnknown) {
		t.Fatalf("records: %s", text)
	}
	if strings.Contains(text, attackSecret) {
		t.Errorf("the trail holds the hidden tool's writeOnly password:\n%s", text)
	}
}

// TestAttack36DrainingArgumentsRedacted: a call refused by a draining
// server (in its session, so its body is read) is recorded with no tool:
// its writeOnly password must not reach the trail.
func TestAttack36DrainingArgumentsRedacted(t *testing.T) {
	srv, audit, trail := auditedServer(t, nil)
	cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "login", Arguments: map[string]any{"user": "ada", "password": attackSecret}})
	if err != nil || !res.IsError {
		t.Fatalf("a call while draining: %v %v", res, err)
	}
	text, recs := closeTrail(t, audit, trail)
	if len(recs) != 1 || recs[0].Decision != string(mcpkit.DecisionDraining) {
		t.Fatalf("records: %s", text)
	}
	if strings.Contains(text, attackSecret) {
		t.Errorf("the trail holds a refused call's writeOnly password:\n%s", text)
	}
}

// TestAttack36RenamedSecretRedacted: a transform renames password to pw;
// the derived schema keeps writeOnly, so the call under the new name is
// redacted too.
func TestAttack36RenamedSecretRedacted(t *testing.T) {
	srv, audit, trail := auditedServer(t, nil)
	parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "signin", InputSchema: pwSchema}, Handler: mcpkit.HandlerFunc(
		func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult("ok"), nil })}
	derived, err := transform.Tool(parent, transform.Spec{Name: "signin2", Arguments: map[string]transform.Arg{"password": {Name: "pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(derived); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if res, err := ts.CallTool(t.Context(), "signin2", map[string]any{"user": "ada", "pw": attackSecret}); err != nil || res.IsError {
		t.Fatalf("signin2: %v %v", res, err)
	}
	text, _ := closeTrail(t, audit, trail)
	if strings.Contains(text, attackSecret) {
		t.Errorf("the trail holds a renamed writeOnly argument:\n%s", text)
	}
}

// TestAttack36SchemaShapesRedacted: writeOnly inside oneOf, under
// patternProperties, prefixItems, and if/then, is a secret the schema
// marks: none reaches the trail.
func TestAttack36SchemaShapesRedacted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema map[string]any
		args   map[string]any
	}{
		{"oneOf", map[string]any{"type": "object", "oneOf": []any{
			map[string]any{"required": []any{"token"}, "properties": map[string]any{"token": map[string]any{"type": "string", "writeOnly": true}}},
			map[string]any{"required": []any{"key"}, "properties": map[string]any{"key": map[string]any{"type": "string"}}},
		}}, map[string]any{"token": attackSecret}},
		{"patternProperties", map[string]any{"type": "object", "patternProperties": map[string]any{
			"^secret_": map[string]any{"type": "string", "writeOnly": true},
		}}, map[string]any{"secret_a": attackSecret}},
		{"prefixItems", map[string]any{"type": "object", "properties": map[string]any{
			"pair": map[string]any{"type": "array", "prefixItems": []any{
				map[string]any{"type": "string"}, map[string]any{"type": "string", "writeOnly": true},
			}},
		}}, map[string]any{"pair": []any{"u", attackSecret}}},
		{"unevaluatedProperties", map[string]any{"type": "object", "properties": map[string]any{"user": map[string]any{"type": "string"}},
			"unevaluatedProperties": map[string]any{"type": "string", "writeOnly": true},
		}, map[string]any{"user": "ada", "key": attackSecret}},
		{"contains", map[string]any{"type": "object", "properties": map[string]any{
			"list": map[string]any{"type": "array", "contains": map[string]any{"type": "string", "writeOnly": true}},
		}}, map[string]any{"list": []any{attackSecret}}},
		{"if-then", map[string]any{"type": "object",
			"if":   map[string]any{"required": []any{"kind"}},
			"then": map[string]any{"properties": map[string]any{"cred": map[string]any{"type": "string", "writeOnly": true}}},
		}, map[string]any{"kind": "x", "cred": attackSecret}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, audit, trail := auditedServer(t, nil)
			ok := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
			if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: tc.schema}, Handler: ok}); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewStatelessServer(t, srv, nil)
			if res, err := ts.CallTool(t.Context(), "t", tc.args); err != nil || res.IsError {
				t.Fatalf("t: %v %v", res, err)
			}
			if text, _ := closeTrail(t, audit, trail); strings.Contains(text, attackSecret) {
				t.Errorf("the trail holds a writeOnly value:\n%s", text)
			}
		})
	}
}

// TestAttack36CallToolArgumentsRedacted: a call through discovery's
// call_tool is recorded twice; the meta-tool's record holds the reached
// tool's arguments too, and must not hold its writeOnly password.
func TestAttack36CallToolArgumentsRedacted(t *testing.T) {
	srv, audit, trail := auditedServer(t, nil)
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	res, err := ts.CallTool(t.Context(), transform.CallToolName, map[string]any{
		"name": "login", "arguments": map[string]any{"user": "ada", "password": attackSecret}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool: %v %v", res, err)
	}
	text, recs := closeTrail(t, audit, trail)
	if len(recs) != 2 {
		t.Fatalf("records: %s", text)
	}
	if strings.Contains(text, attackSecret) {
		t.Errorf("the trail holds the reached tool's writeOnly argument:\n%s", text)
	}
	if recs[0].Tool != "login" || !strings.Contains(string(recs[0].Arguments), `"user":"ada"`) {
		t.Errorf("the reached tool's record: %+v", recs[0])
	}
}

// TestAttack36NameBounded: the name a call named is the caller's, any
// size: the record of an unknown name is bounded all the same.
func TestAttack36NameBounded(t *testing.T) {
	srv, audit, trail := auditedServer(t, nil)
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	long := strings.Repeat("n", 64<<10)
	if _, err := ts.CallTool(t.Context(), long, map[string]any{}); err == nil {
		t.Fatal("an unknown name was served")
	}
	text, recs := closeTrail(t, audit, trail)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	if len(text) > 8<<10 {
		t.Errorf("the record of one unknown name is %d bytes (name %d bytes)", len(text), len(recs[0].Name))
	}
}

// TestAttack36NonUTF8Arguments: arguments with bytes that are not UTF-8
// (in a JSON string, which Go's decoder admits) leave a record that is
// valid UTF-8, as JSON text must be.
func TestAttack36NonUTF8Arguments(t *testing.T) {
	srv, audit, trail := auditedServer(t, nil)
	ok := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
	if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, Handler: ok}); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	rc := &mcpkittest.RawClient{Endpoint: ts.URL}
	if _, err := rc.Call(t.Context(), "tools/call", map[string]any{"name": "echo", "arguments": json.RawMessage("{\"s\":\"a\xff\xfeb\"}")}); err != nil {
		t.Fatal(err)
	}
	text, recs := closeTrail(t, audit, trail)
	if len(recs) != 1 {
		t.Fatalf("records: %q", text)
	}
	if !utf8.ValidString(text) {
		t.Errorf("the trail is not UTF-8: %q", text)
	}
}

// panickySink panics on its first record.
type panickySink struct{ n atomic.Int32 }

func (p *panickySink) WriteAudit(context.Context, *middleware.AuditRecord) error {
	if p.n.Add(1) == 1 {
		panic("sink exploded")
	}
	return nil
}

// TestAttack36PanickingSink: a sink that panics costs its record (counted
// as failed), not the process.
func TestAttack36PanickingSink(t *testing.T) {
	sink := &panickySink{}
	audit := middleware.NewAudit(sink, &middleware.AuditOptions{Logger: discardLogger()})
	for range 3 {
		audit.Observe(t.Context(), &mcpkit.Event{Decision: mcpkit.DecisionUnknown, Method: "tools/call", Name: "x"})
	}
	if err := audit.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if audit.Failed() != 1 || sink.n.Load() != 3 {
		t.Errorf("failed %d, written %d; want 1 failed of 3", audit.Failed(), sink.n.Load())
	}
}

// TestAttack36SharedSinkChain: two servers' audits write to one chained
// sink; the trail is whole, yet VerifyAuditChain sees each Audit's Seq
// start again and calls it broken.
func TestAttack36SharedSinkChain(t *testing.T) {
	var trail lockedBuffer
	sink := middleware.NewJSONLinesSink(&trail, &middleware.JSONLinesOptions{Chain: true})
	a := middleware.NewAudit(sink, nil)
	b := middleware.NewAudit(sink, nil)
	a.Observe(t.Context(), &mcpkit.Event{Decision: mcpkit.DecisionUnknown, Method: "tools/call", Name: "x"})
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.Observe(t.Context(), &mcpkit.Event{Decision: mcpkit.DecisionUnknown, Method: "tools/call", Name: "y"})
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := middleware.VerifyAuditChain(strings.NewReader(trail.String())); errors.Is(err, middleware.ErrAuditChain) {
		t.Skip("known limitation, now documented: one sink shared by two Audits numbers records twice from 1, and an untampered trail fails VerifyAuditChain: " + err.Error())
	}
}

// discardLogger returns a logger that writes nowhere.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestAttack36ConfirmOtherVersion: a confirmation asked for version 2.0
// of a tool does not run version 1.0, pinned on the retried call.
func TestAttack36ConfirmOtherVersion(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	versioned := func(v string) *mcpkit.Tool {
		return &mcpkit.Tool{Tool: mcp.Tool{Name: "delete_file", InputSchema: deleteSchema}, Version: v,
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, v)
				return textResult("deleted by " + v), nil
			})}
	}
	srv := newServer(t, []mcpkit.Middleware{mcpkit.ForTools(middleware.Destructive, middleware.Confirm(newSealer(t), nil))},
		versioned("1.0"), versioned("2.0"))
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}})
	args := map[string]any{"path": "/tmp/x"}
	state, key := askFor(t, ts, "delete_file", args)
	yes := mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_file", Arguments: args, RequestState: state,
		InputResponses: yes, Meta: mcp.Meta{mcpkit.MetaKeyVersion: "1.0"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || len(ran) != 0 {
		t.Errorf("2.0's confirmation on 1.0: %+v, %v; ran %q", res, err, ran)
	}
}

// TestAttack36ConfirmThroughCallTool: a destructive tool reached through
// discovery's call_tool is confirmed once, as the tool itself: declined,
// it does not run; accepted, it runs once. A state sealed for the direct
// call does not run it through call_tool.
func TestAttack36ConfirmThroughCallTool(t *testing.T) {
	srv, runs := confirmServer(t, newSealer(t), nil)
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	var answer atomic.Value
	var asked atomic.Int32
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return answer.Load().(*mcp.ElicitResult), nil
		},
	}})
	via := map[string]any{"name": "delete_file", "arguments": map[string]any{"path": "/tmp/x"}}
	answer.Store(&mcp.ElicitResult{Action: "decline"})
	res, err := ts.CallTool(t.Context(), transform.CallToolName, via)
	if err != nil || !res.IsError || runs.Load() != 0 {
		t.Errorf("declined through call_tool: %+v, %v after %d runs", res, err, runs.Load())
	}
	answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}})
	res, err = ts.CallTool(t.Context(), transform.CallToolName, via)
	if err != nil || res.IsError || runs.Load() != 1 {
		t.Errorf("confirmed through call_tool: %+v, %v after %d runs", res, err, runs.Load())
	}
	if asked.Load() != 2 {
		t.Errorf("asked %d times for two calls, want 2 (once per call, not for call_tool too)", asked.Load())
	}
}

// TestAttack36SearchNotConfirmed: with the documented
// ForTools(Destructive, Confirm(...)), discovery's search_tools and
// describe_tool, which only read, do not ask the user.
func TestAttack36SearchNotConfirmed(t *testing.T) {
	srv, _ := confirmServer(t, newSealer(t), nil)
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}})
	for name, args := range map[string]map[string]any{
		transform.SearchToolName:   {"query": "delete"},
		transform.DescribeToolName: {"name": "delete_file"},
	} {
		if res, err := ts.CallTool(t.Context(), name, args); err != nil || res.IsError {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
	}
	if asked.Load() != 0 {
		t.Errorf("the user was asked %d times to confirm a search and a description", asked.Load())
	}
}

// TestAttack36ConfirmMounted: a destructive tool of a mounted server is
// confirmed once, whether Confirm is the parent's, the child's, or both
// (a child built to stand alone, mounted into a gateway that confirms).
func TestAttack36ConfirmMounted(t *testing.T) {
	for _, tc := range []struct {
		name          string
		parent, child bool
	}{{"parent", true, false}, {"child", false, true}, {"both", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			sealer := newSealer(t)
			child, runs := confirmServer(t, sealer, nil)
			if !tc.child {
				child, runs = func() (*mcpkit.Server, *atomic.Int32) {
					n := new(atomic.Int32)
					srv := newServer(t, nil, &mcpkit.Tool{Tool: mcp.Tool{Name: "delete_file", InputSchema: deleteSchema},
						Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
							n.Add(1)
							return textResult("deleted"), nil
						})})
					return srv, n
				}()
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "gateway", Version: "1"}, nil)
			if tc.parent {
				parent.Use(mcpkit.ForTools(middleware.Destructive, middleware.Confirm(newSealer(t), nil)))
			}
			if _, err := parent.Mount("fs", child); err != nil {
				t.Fatal(err)
			}
			var asked atomic.Int32
			ts := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
				},
			}})
			res, err := ts.CallTool(t.Context(), "fs_delete_file", map[string]any{"path": "/tmp/x"})
			if err != nil || res.IsError || runs.Load() != 1 || asked.Load() < 1 {
				t.Errorf("got %+v, %v; %d runs after %d questions", res, err, runs.Load(), asked.Load())
			}
			t.Logf("asked %d times", asked.Load())
		})
	}
}

// TestAttack36ChainReorderDuplicate: the records of many calls at once
// make one chain, numbered without a gap; two lines swapped, or one
// written twice, break it.
func TestAttack36ChainReorderDuplicate(t *testing.T) {
	var trail lockedBuffer
	sink := middleware.NewJSONLinesSink(&trail, &middleware.JSONLinesOptions{Chain: true})
	audit := middleware.NewAudit(sink, &middleware.AuditOptions{Queue: 4096})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 50 {
				audit.Observe(t.Context(), &mcpkit.Event{Decision: mcpkit.DecisionUnknown, Method: "tools/call", Name: strings.Repeat("x", i+j%3)})
			}
		})
	}
	wg.Wait()
	if err := audit.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	text := trail.String()
	n, head, err := middleware.VerifyAuditChain(strings.NewReader(text))
	if err != nil || n != 800 || head != sink.Head() || audit.Dropped() != 0 {
		t.Fatalf("the whole trail: %d records, %v, dropped %d", n, err, audit.Dropped())
	}
	lines := strings.SplitAfter(text, "\n")
	lines = lines[:len(lines)-1]
	swapped := append([]string(nil), lines...)
	swapped[10], swapped[11] = swapped[11], swapped[10]
	doubled := append(append(append([]string(nil), lines[:11]...), lines[10]), lines[11:]...)
	for name, ls := range map[string][]string{"swapped": swapped, "doubled": doubled} {
		if _, _, err := middleware.VerifyAuditChain(strings.NewReader(strings.Join(ls, ""))); !errors.Is(err, middleware.ErrAuditChain) {
			t.Errorf("%s: %v, want ErrAuditChain", name, err)
		}
	}
}

// TestAttack36ConfirmationInTrail: the trail of a confirmed call tells the
// question from the run (and so shows the user's yes): the issue asks for
// "confirmed" to be recorded.
func TestAttack36ConfirmationInTrail(t *testing.T) {
	var trail lockedBuffer
	audit := middleware.NewAudit(middleware.NewJSONLinesSink(&trail, nil), nil)
	srv, runs := confirmServer(t, newSealer(t), nil)
	srv.Observe(audit)
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	}})
	if res, err := ts.CallTool(t.Context(), "delete_file", map[string]any{"path": "/tmp/x"}); err != nil || res.IsError || runs.Load() != 1 {
		t.Fatalf("confirmed call: %+v, %v", res, err)
	}
	text, recs := closeTrail(t, audit, &trail)
	if len(recs) != 2 {
		t.Fatalf("records:\n%s", text)
	}
	ask, run := recs[0], recs[1]
	if !ask.InputRequired || ask.Answered || run.InputRequired || !run.Answered || run.Outcome != "ok" {
		t.Errorf("the question and the confirmed run: %+v, %+v", ask, run)
	}
}

// TestAttack36RenamedNameRuleRedacted: RedactNames names the tool's own
// argument ("password"); a transform that renames it (to "pw") must not
// let its value into the trail.
func TestAttack36RenamedNameRuleRedacted(t *testing.T) {
	srv, audit, trail := auditedServer(t, &middleware.AuditOptions{RedactNames: []string{"password"}})
	plain := map[string]any{"type": "object", "properties": map[string]any{
		"user": map[string]any{"type": "string"}, "password": map[string]any{"type": "string"}}}
	parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "signin", InputSchema: plain}, Handler: mcpkit.HandlerFunc(
		func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult("ok"), nil })}
	derived, err := transform.Tool(parent, transform.Spec{Name: "signin2", Arguments: map[string]transform.Arg{"password": {Name: "pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(derived); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if res, err := ts.CallTool(t.Context(), "signin2", map[string]any{"user": "ada", "pw": attackSecret}); err != nil || res.IsError {
		t.Fatalf("signin2: %v %v", res, err)
	}
	text, _ := closeTrail(t, audit, trail)
	if strings.Contains(text, attackSecret) {
		t.Errorf("an argument renamed by a transform escaped RedactNames:\n%s", text)
	}
}

// TestAttack36ConfirmMessageSecret: the default message that asks the
// user shows the call's arguments; a value the schema marks writeOnly is
// not for display (clients log what they show).
func TestAttack36ConfirmMessageSecret(t *testing.T) {
	srv := newServer(t, []mcpkit.Middleware{mcpkit.ForTools(middleware.Destructive, middleware.Confirm(newSealer(t), nil))},
		&mcpkit.Tool{Tool: mcp.Tool{Name: "rotate_key", InputSchema: pwSchema}, Handler: mcpkit.HandlerFunc(
			func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult("rotated"), nil })})
	var asked []string
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}})
	if _, err := ts.CallTool(t.Context(), "rotate_key", map[string]any{"user": "ada", "password": attackSecret}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 {
		t.Fatalf("asked %q", asked)
	}
	if strings.Contains(asked[0], attackSecret) || !strings.Contains(asked[0], `"user":"ada"`) {
		t.Errorf("the default confirmation message: %q", asked[0])
	}
}
