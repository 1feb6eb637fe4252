package mcpkit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestAttack45ForeignToolUnderHiddenName registers a tool on the SDK
// server directly (as code that holds MCPServer may) under the name of an
// mcpkit tool that is hidden from every caller. The list shows neither (the
// name is mcpkit's), so a call of it must get the unknown-tool answer of a
// name never registered. Since every call reaches the SDK under the
// dispatch name, the SDK's table keeps the foreign tool under that name,
// and a call mcpkit routes nowhere is passed to the SDK, which runs it.
func TestAttack45ForeignToolUnderHiddenName(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "foreign"}, nil)
	var foreignRan atomic.Bool
	srv.MCPServer().AddTool(&mcp.Tool{Name: "x", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		foreignRan.Store(true)
		return textResult("foreign"), nil
	})
	srv.SetVisibility(hideFromAll("x"))
	if err := srv.Add(tool("x", reply("kit"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	list, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "x" {
			t.Errorf("tools/list shows x, hidden from every caller")
		}
	}
	res, err := ts.CallTool(t.Context(), "x", nil)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != unknownAnswer("x") {
		t.Errorf("call of the hidden x: %v, %v (foreign handler ran: %v); want -32602 %q", res, err, foreignRan.Load(), unknownAnswer("x"))
	}
}

// TestAttack45CallsAndListsDuringRemoveStorm calls and lists tools over a
// real client while another goroutine removes and adds tools (run it with
// -race). A name that is never removed is always served; a churned name is
// either served or unknown, never another answer.
func TestAttack45CallsAndListsDuringRemoveStorm(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "storm"}, nil)
	const n = 300
	churn := func(i int) string { return fmt.Sprintf("c%03d", i) }
	for i := range n {
		if err := srv.Add(tool(churn(i), reply(churn(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Add(tool("stable", reply("stable"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	ctx := t.Context()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 0; ; round++ {
			for i := range n {
				select {
				case <-stop:
					return
				default:
				}
				srv.Remove(churn(i))
				if i%2 == round%2 {
					srv.Add(tool(churn(i), reply(churn(i))))
				}
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	var callers sync.WaitGroup
	for c := range 2 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for i := range 300 {
				if res, err := ts.CallTool(ctx, "stable", nil); err != nil || onlyText(res) != "stable" {
					t.Errorf("stable: %v, %v", res, err)
					return
				}
				name := churn((i*7 + c) % n)
				res, err := ts.CallTool(ctx, name, nil)
				var wire *jsonrpc.Error
				switch {
				case err == nil:
					if got := onlyText(res); got != name {
						t.Errorf("%s answered %q", name, got)
						return
					}
				case errors.As(err, &wire) && wire.Message == unknownAnswer(name):
				default:
					t.Errorf("%s: %v", name, err)
					return
				}
				if i%20 == 0 {
					if _, err := ts.Session.ListTools(ctx, nil); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	callers.Wait()
}

// TestAttack45RemovedToolsCollectable adds tools whose handlers hold a
// value, removes many, and collects: only the removals since the index's
// last compaction (at most an eighth of the index, or a chunk) may keep
// theirs reachable. (Held at the time of writing.)
func TestAttack45RemovedToolsCollectable(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mem"}, nil)
	const n, removed = 1000, 400
	var collected atomic.Int64
	add := func(i int) {
		payload := new([1 << 10]byte)
		payload[0] = byte(i)
		runtime.AddCleanup(payload, func(int) { collected.Add(1) }, i)
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: fmt.Sprintf("t%04d", i), InputSchema: &jsonschema.Schema{Type: "object"}},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return textResult(string(payload[:1])), nil
			}),
		})
	}
	for i := range n {
		add(i)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if _, err := ts.CallTool(t.Context(), "t0000", nil); err != nil {
		t.Fatal(err)
	}
	for i := range removed {
		srv.Remove(fmt.Sprintf("t%04d", i))
	}
	// The bound of the index's marks: an eighth of what is left, or a
	// chunk (64), whichever is more. Cleanups run on a goroutine of
	// their own after a collection: collect until the bound holds, or
	// many times over.
	bound := int64(max(64, (n-removed)/8) + 1)
	kept := int64(removed)
	for range 200 {
		runtime.GC()
		runtime.Gosched()
		if kept = int64(removed) - collected.Load(); kept <= bound {
			break
		}
	}
	t.Logf("%d of %d removed tools collected", collected.Load(), removed)
	if kept > bound {
		t.Errorf("%d of %d removed tools still reachable, want at most %d", kept, removed, bound)
	}
	runtime.KeepAlive(srv)
}

// TestAttack45SecondRoundNamesTheTool serves an input_required tool to a
// 2025-11-25 client over a session (the SDK asks the client and calls
// again, under the dispatch name) and to a 2026-07-28 client: both rounds
// see the tool's own name in the request, and the observers record it.
// (Held at the time of writing.)
func TestAttack45SecondRoundNamesTheTool(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "rounds"}, nil)
	var mu sync.Mutex
	var seen []string
	srv.Observe(mcpkit.ObserverFunc(func(_ context.Context, ev *mcpkit.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, "obs:"+ev.Name)
	}))
	srv.Add(tool("ask", func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		mu.Lock()
		seen = append(seen, "call:"+req.Call.Params.Name+"/"+req.Tool.Name)
		mu.Unlock()
		if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "ok"); !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"ok": &mcp.ElicitParams{Message: "ok?", RequestedSchema: &jsonschema.Schema{Type: "object"}},
			}}, nil
		}
		return textResult("done"), nil
	}))
	opts := &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}}
	for _, connect := range []func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{mcpkittest.NewServer, mcpkittest.NewStatelessServer} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		ts := connect(t, srv, opts)
		res, err := ts.CallTool(t.Context(), "ask", nil)
		if err != nil || onlyText(res) != "done" {
			t.Fatalf("%v, %v", res, err)
		}
		mu.Lock()
		got := strings.Join(seen, ",")
		mu.Unlock()
		if strings.Contains(got, "mcpkit.call.") || !strings.Contains(got, "call:ask/ask") {
			t.Errorf("%s: seen %s", ts.Session.InitializeResult().ProtocolVersion, got)
		}
	}
}

// TestAttack45InnerSDKMiddlewareSeesToolName wraps an SDK server that
// already has receiving middleware of its own (Wrap's use: a server the
// caller already has): an audit that records the called tool's name and a
// guard that refuses one tool by name. mcpkit's middleware is added after
// them, so it is outside them, and they see the request mcpkit passes on:
// it must name the tool called, as it did for registered tools before
// every call went through the dispatch; a guard by name must still refuse.
func TestAttack45InnerSDKMiddlewareSeesToolName(t *testing.T) {
	sdk := mcp.NewServer(&mcp.Implementation{Name: "existing"}, nil)
	var mu sync.Mutex
	var names []string
	sdk.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				mu.Lock()
				names = append(names, r.Params.Name)
				mu.Unlock()
				if r.Params.Name == "blocked" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "blocked by policy"}
				}
			}
			return next(ctx, method, req)
		}
	})
	srv := mcpkit.Wrap(sdk, nil)
	if err := srv.Add(tool("open", reply("open")), tool("blocked", reply("ran"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if _, err := ts.CallTool(t.Context(), "open", nil); err != nil {
		t.Fatal(err)
	}
	res, err := ts.CallTool(t.Context(), "blocked", nil)
	if err == nil {
		t.Errorf("the SDK middleware's guard was bypassed: blocked answered %q", onlyText(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(names, ","); got != "open,blocked" {
		t.Errorf("the SDK middleware saw tools/call of %s, want open,blocked", got)
	}
}
