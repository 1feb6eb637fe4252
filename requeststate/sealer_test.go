package requeststate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/requeststate"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

var objectSchema = &jsonschema.Schema{Type: "object"}

// tool returns a tool named name with an empty object schema.
func tool(name string, h mcpkit.HandlerFunc) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: objectSchema}, Handler: h}
}

func reply(s string) mcpkit.HandlerFunc {
	return func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return textResult(s), nil }
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// resultText returns the text of the single text content of res.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// retried returns req as the client sends it again, carrying state.
func retried(req *mcpkit.Request, state string) *mcpkit.Request {
	r := req.Clone()
	r.Call.Params.RequestState = state
	return r
}

func TestSealer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sealer, err := requeststate.New([][]byte{key(1)}, &requeststate.Options{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		tl := tool("book", reply("x"))
		ada := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"})
		req := mcpkittest.NewRequest(tl, map[string]int{"seats": 2}, ada)
		sealed, err := sealer.Seal(req, []byte("step-1"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := sealer.Open(retried(req, sealed)); err != nil || string(got) != "step-1" {
			t.Fatalf("Open = %q, %v", got, err)
		}
		if got, err := sealer.Open(req); got != nil || err != nil {
			t.Errorf("no state: Open = %q, %v; want nothing", got, err)
		}

		tampered := []byte(sealed)
		tampered[len(tampered)-3] ^= 1
		rotated, _ := requeststate.New([][]byte{key(2), key(1)}, nil)
		retired, _ := requeststate.New([][]byte{key(2)}, nil)
		for name, r := range map[string]*mcpkit.Request{
			"tampered":        retried(req, string(tampered)),
			"garbage":         retried(req, "not a state"),
			"truncated":       retried(req, sealed[:10]),
			"other principal": retried(mcpkittest.NewRequest(tl, map[string]int{"seats": 2}, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "eve"})), sealed),
			"no principal":    retried(mcpkittest.NewRequest(tl, map[string]int{"seats": 2}), sealed),
			"same user, unverified token": retried(mcpkittest.NewRequest(tl, map[string]int{"seats": 2},
				mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer ada"}})), sealed),
			"other tool":      retried(mcpkittest.NewRequest(tool("cancel", reply("x")), map[string]int{"seats": 2}, ada), sealed),
			"other arguments": retried(mcpkittest.NewRequest(tl, map[string]int{"seats": 9}, ada), sealed),
			"other version":   retried(mcpkittest.NewRequest(withVersion(tl, "2"), map[string]int{"seats": 2}, ada), sealed),
		} {
			got, err := sealer.Open(r)
			var wire *jsonrpc.Error
			if got != nil || !errors.Is(err, requeststate.ErrInvalid) || !errors.As(err, &wire) ||
				wire.Code != jsonrpc.CodeInvalidParams || err.Error() != "invalid request state" {
				t.Errorf("%s: Open = %q, %v; want the opaque -32602", name, got, err)
			}
		}
		// The tool's identity, not the name it was called by: a state
		// sealed for book opens on a call to its alias with the same
		// arguments, since both reach the same tool.
		alias := tool("reserve", reply("x"))
		alias.Origin = tl
		if got, err := sealer.Open(retried(mcpkittest.NewRequest(alias, map[string]int{"seats": 2}, ada), sealed)); err != nil || string(got) != "step-1" {
			t.Errorf("alias: Open = %q, %v", got, err)
		}
		// Rotation: a new first key still opens what the old one sealed;
		// a sealer without the old key does not.
		if got, err := rotated.Open(retried(req, sealed)); err != nil || string(got) != "step-1" {
			t.Errorf("rotated: Open = %q, %v", got, err)
		}
		if _, err := retired.Open(retried(req, sealed)); !errors.Is(err, requeststate.ErrInvalid) {
			t.Errorf("retired key: Open = %v", err)
		}
		// Expiry, on the fake clock.
		time.Sleep(time.Minute)
		if _, err := sealer.Open(retried(req, sealed)); !errors.Is(err, requeststate.ErrInvalid) {
			t.Errorf("expired: Open = %v", err)
		}
	})
}

func TestNewRefusesWeakKeys(t *testing.T) {
	for name, keys := range map[string][][]byte{"none": nil, "short": {key(1), []byte("short")}} {
		if _, err := requeststate.New(keys, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSealedStateEndToEnd asks the client for input with a sealed state,
// on both eras, and checks a forged state is refused with -32602.
func TestSealedStateEndToEnd(t *testing.T) {
	sealer, err := requeststate.New([][]byte{key(7)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "sealed"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "book", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			state, err := sealer.Open(req)
			if err != nil {
				return nil, err
			}
			if state == nil {
				sealed, err := sealer.Seal(req, []byte("asked"))
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "Book it?",
						RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}}}},
					RequestState: sealed,
				}, nil
			}
			answer, _ := req.Call.Params.InputResponses["ok"].(*mcp.ElicitResult)
			return textResult(fmt.Sprintf("%s, answer %v", state, answer.Content["ok"])), nil
		}),
	})
	opts := &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
	}}
	for _, connect := range []func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{mcpkittest.NewStatelessServer, mcpkittest.NewServer} {
		ts := connect(t, srv, opts)
		res, err := ts.CallTool(t.Context(), "book", nil)
		if err != nil || resultText(t, res) != "asked, answer true" {
			t.Fatalf("%s: %v, %v", ts.Session.InitializeResult().ProtocolVersion, res, err)
		}
	}
	// A client that forges the state gets -32602.
	mem := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}})
	_, err = mem.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "book", RequestState: "forged"})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != "invalid request state" {
		t.Errorf("forged state: %v", err)
	}
}

// FuzzOpen feeds arbitrary request states to Open: it never panics,
// and accepts only what Seal made for the same request (a state sealed with
// the fuzz key for it, whichever process sealed it).
func FuzzOpen(f *testing.F) {
	sealer, err := requeststate.New([][]byte{key(3)}, nil)
	if err != nil {
		f.Fatal(err)
	}
	req := mcpkittest.NewRequest(tool("t", reply("x")), map[string]int{"a": 1})
	good, _ := sealer.Seal(req, []byte("state"))
	for _, s := range []string{good, good[:len(good)-1], "", "AQ", "AQAAAAA", "\x00", good + "A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := sealer.Open(retried(req, s))
		switch {
		case s == "":
			if got != nil || err != nil {
				t.Fatalf("empty state: %q, %v", got, err)
			}
		case err == nil:
			if string(got) != "state" {
				t.Fatalf("accepted %q as %q", s, got)
			}
		case !errors.Is(err, requeststate.ErrInvalid) || got != nil:
			t.Fatalf("%q: %q, %v", s, got, err)
		}
	})
}

// Without a verifier, a state is bound to the bearer token the call
// carried: a caller with another token cannot use it.
func TestSealerUnverifiedTokens(t *testing.T) {
	sealer, err := requeststate.New([][]byte{key(1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := tool("book", reply("x"))
	bearer := func(tok string) mcpkittest.RequestOption {
		return mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer " + tok}})
	}
	sealed, err := sealer.Seal(mcpkittest.NewRequest(tl, map[string]int{"seats": 2}, bearer("token-a")), []byte("step-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sealer.Open(retried(mcpkittest.NewRequest(tl, map[string]int{"seats": 2}, bearer("token-a")), sealed)); err != nil || string(got) != "step-1" {
		t.Errorf("same token: Open = %q, %v", got, err)
	}
	for name, r := range map[string]*mcpkit.Request{
		"other token": mcpkittest.NewRequest(tl, map[string]int{"seats": 2}, bearer("token-b")),
		"no token":    mcpkittest.NewRequest(tl, map[string]int{"seats": 2}),
	} {
		if got, err := sealer.Open(retried(r, sealed)); !errors.Is(err, requeststate.ErrInvalid) {
			t.Errorf("%s: Open = %q, %v; want ErrInvalid", name, got, err)
		}
	}
}

// withVersion returns a copy of t with version v.
func withVersion(t *mcpkit.Tool, v string) *mcpkit.Tool {
	t2 := t.Clone()
	t2.Version = v
	return t2
}

// A state sealed on a call of one version of a tool opens on a retry of
// that version only: the retry of the same call pinned to another version
// is refused, through a real client.
func TestSealedStateVersionsEndToEnd(t *testing.T) {
	sealer, err := requeststate.New([][]byte{key(8)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	book := func(version string) *mcpkit.Tool {
		return &mcpkit.Tool{
			Tool:    mcp.Tool{Name: "book", InputSchema: &jsonschema.Schema{Type: "object"}},
			Version: version,
			Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				state, err := sealer.Open(req)
				if err != nil {
					return nil, err
				}
				if state == nil {
					sealed, err := sealer.Seal(req, []byte("asked by "+version))
					if err != nil {
						return nil, err
					}
					return &mcp.CallToolResult{
						InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "Book it?",
							RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}}}},
						RequestState: sealed,
					}, nil
				}
				return textResult(version + " resumed " + string(state)), nil
			}),
		}
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "sealed"}, nil)
	if err := srv.Add(book("1"), book("2")); err != nil {
		t.Fatal(err)
	}
	mem := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}})
	pin := func(v string) mcp.Meta { return mcp.Meta{mcpkit.MetaKeyVersion: v} }
	first, err := mem.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "book", Meta: pin("1")})
	if err != nil || first.RequestState == "" {
		t.Fatalf("first round: %+v, %v", first, err)
	}
	answers := mcp.InputResponseMap{"ok": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}
	_, err = mem.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "book", Meta: pin("2"), RequestState: first.RequestState, InputResponses: answers})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != "invalid request state" {
		t.Errorf("version 1's state on version 2: %v; want -32602 invalid request state", err)
	}
	res, err := mem.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "book", Meta: pin("1"), RequestState: first.RequestState, InputResponses: answers})
	if err != nil || resultText(t, res) != "1 resumed asked by 1" {
		t.Errorf("version 1's state on version 1: %+v, %v", res, err)
	}
}
