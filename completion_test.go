package mcpkit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// prefixed is a CompleteFunc that suggests the values of all that start
// with what was typed.
func prefixed(all ...string) mcpkit.CompleteFunc {
	return func(_ context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
		var out []string
		for _, v := range all {
			if strings.HasPrefix(v, req.Value) {
				out = append(out, v)
			}
		}
		return out, nil
	}
}

// completeServer returns a server with a prompt "trip" whose argument
// "city" completes, a template "docs://{lang}/{page}" whose "page"
// completes by the "lang" already chosen, a prompt "many" whose "n"
// completes with 250 values, a prompt "broken" whose "x" fails, and a
// prompt "vault" and a template "vault://{key}" only admins see (see
// adminOnly).
func completeServer(t *testing.T) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "complete"}, nil)
	srv.SetVisibility(adminOnly{})
	trip := say("trip", &mcp.PromptArgument{Name: "city"}, &mcp.PromptArgument{Name: "note"})
	trip.Complete = map[string]mcpkit.CompleteFunc{"city": prefixed("paris", "park", "party", "rome")}
	many := say("many", &mcp.PromptArgument{Name: "n"})
	many.Complete = map[string]mcpkit.CompleteFunc{"n": func(context.Context, *mcpkit.CompleteRequest) ([]string, error) {
		out := make([]string, 250)
		for i := range out {
			out[i] = fmt.Sprint(i)
		}
		return out, nil
	}}
	broken := say("broken", &mcp.PromptArgument{Name: "x"})
	broken.Complete = map[string]mcpkit.CompleteFunc{"x": func(context.Context, *mcpkit.CompleteRequest) ([]string, error) {
		return nil, errors.New("the index is down")
	}}
	vault := say("vault", &mcp.PromptArgument{Name: "key"})
	vault.Tags = []string{"admin"}
	vault.Complete = map[string]mcpkit.CompleteFunc{"key": prefixed("k1")}
	if err := srv.AddPrompts(trip, many, broken, vault); err != nil {
		t.Fatal(err)
	}
	read := mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	pages := map[string][]string{"go": {"generics", "goroutines"}, "rust": {"generics", "traits"}}
	docs := &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{lang}/{page}", Name: "docs"},
		Handler:          read,
		Complete: map[string]mcpkit.CompleteFunc{"page": func(ctx context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
			if req.Template == nil || req.Prompt != nil || req.Argument != "page" {
				return nil, fmt.Errorf("request %+v", req)
			}
			return prefixed(pages[req.Arguments["lang"]]...)(ctx, req)
		}},
	}
	secret := &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "vault://{key}", Name: "secret"},
		Handler:          read,
		Complete:         map[string]mcpkit.CompleteFunc{"key": prefixed("k1")},
		Tags:             []string{"admin"},
	}
	if err := srv.AddResourceTemplates(docs, secret); err != nil {
		t.Fatal(err)
	}
	return srv
}

// completeArg asks cs to complete argument name, typed so far as value,
// of ref, with the arguments resolved so far.
func completeArg(cs *mcp.ClientSession, ref *mcp.CompleteReference, name, value string, resolved map[string]string) (*mcp.CompleteResult, error) {
	p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: name, Value: value}}
	if resolved != nil {
		p.Context = &mcp.CompleteContext{Arguments: resolved}
	}
	return cs.Complete(context.Background(), p)
}

func promptRef(name string) *mcp.CompleteReference {
	return &mcp.CompleteReference{Type: "ref/prompt", Name: name}
}

func resourceRef(uri string) *mcp.CompleteReference {
	return &mcp.CompleteReference{Type: "ref/resource", URI: uri}
}

// TestComplete completes, on both eras, a prompt's argument and a
// template's variable (by the template's text, and by a URI it matches)
// given the variables already resolved; an argument without a completer
// and a completer with nothing to suggest answer an empty array, never
// null; the capability is declared.
func TestComplete(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, completeServer(t), nil).Session
			if caps := cs.InitializeResult().Capabilities; caps.Completions == nil {
				t.Errorf("capabilities %+v: want completions", caps)
			}
			for _, tt := range []struct {
				ref      *mcp.CompleteReference
				arg, typ string
				resolved map[string]string
				want     []string
			}{
				{promptRef("trip"), "city", "par", nil, []string{"paris", "park", "party"}},
				{promptRef("trip"), "city", "zzz", nil, []string{}},
				{promptRef("trip"), "note", "a", nil, []string{}},
				{promptRef("trip"), "nosuch", "", nil, []string{}},
				{resourceRef("docs://{lang}/{page}"), "page", "g", map[string]string{"lang": "rust"}, []string{"generics"}},
				{resourceRef("docs://{lang}/{page}"), "page", "", map[string]string{"lang": "go"}, []string{"generics", "goroutines"}},
				{resourceRef("docs://go/x"), "page", "t", map[string]string{"lang": "rust"}, []string{"traits"}},
				{resourceRef("docs://{lang}/{page}"), "lang", "", nil, []string{}},
			} {
				res, err := completeArg(cs, tt.ref, tt.arg, tt.typ, tt.resolved)
				if err != nil {
					t.Errorf("%+v %s=%q: %v", tt.ref, tt.arg, tt.typ, err)
					continue
				}
				c := res.Completion
				if c.Values == nil || !slices.Equal(c.Values, tt.want) || c.Total != len(tt.want) || c.HasMore {
					t.Errorf("%+v %s=%q: %+v, want %q", tt.ref, tt.arg, tt.typ, c, tt.want)
				}
			}
		})
	}
}

// TestCompleteCapped checks that a completer's 250 values are sent as the
// first 100, with total 250 and hasMore.
func TestCompleteCapped(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, completeServer(t), nil).Session
			res, err := completeArg(cs, promptRef("many"), "n", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Completion
			if len(c.Values) != mcpkit.MaxCompletions || c.Values[99] != "99" || c.Total != 250 || !c.HasMore {
				t.Errorf("%d values (last %q), total %d, hasMore %v; want 100, total 250, hasMore", len(c.Values), c.Values[len(c.Values)-1], c.Total, c.HasMore)
			}
		})
	}
}

// TestCompleteHiddenIsUnknown checks, on both eras, that completing a
// prompt or template hidden from the caller gets exactly the answer of
// one never registered (-32602, as prompts/get and resources/read answer
// it), while a caller who sees them gets their values.
func TestCompleteHiddenIsUnknown(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := completeServer(t)
			guest := era.Connect(t, srv, nil).Session
			admin := era.Connect(t, srv, asAdmin(nil)).Session
			for _, ref := range []*mcp.CompleteReference{promptRef("vault"), resourceRef("vault://{key}"), resourceRef("vault://k")} {
				if res, err := completeArg(admin, ref, "key", "k", nil); err != nil || !slices.Equal(res.Completion.Values, []string{"k1"}) {
					t.Errorf("admin completes %+v: %v, %v", ref, res, err)
				}
			}
			_, hiddenPrompt := completeArg(guest, promptRef("vault"), "key", "k", nil)
			_, hiddenTmpl := completeArg(guest, resourceRef("vault://{key}"), "key", "k", nil)
			_, hiddenURI := completeArg(guest, resourceRef("vault://k"), "key", "k", nil)
			_, getErr := guest.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "vault"})
			_, readErr := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "vault://k"})
			srv.RemovePrompts("vault")
			srv.RemoveResourceTemplates("vault://{key}")
			_, gonePrompt := completeArg(admin, promptRef("vault"), "key", "k", nil)
			_, goneTmpl := completeArg(admin, resourceRef("vault://{key}"), "key", "k", nil)
			_, goneURI := completeArg(admin, resourceRef("vault://k"), "key", "k", nil)
			for _, c := range []struct {
				what               string
				hidden, gone, like error
			}{
				{"prompt", hiddenPrompt, gonePrompt, getErr},
				{"template", hiddenTmpl, goneTmpl, nil},
				{"uri", hiddenURI, goneURI, readErr},
			} {
				h, g := wireError(t, c.hidden), wireError(t, c.gone)
				if h != g || !strings.Contains(g, `"code":-32602`) {
					t.Errorf("%s hidden: %s; never registered: %s", c.what, h, g)
				}
				if c.like != nil && wireError(t, c.like) != h {
					t.Errorf("%s: completion answers %s, the read or get %s", c.what, h, wireError(t, c.like))
				}
			}
		})
	}
}

// TestCompleteError checks that a completer's error is answered by the
// error table, as a prompt handler's is: -32603 with its text and class;
// a JSON-RPC error is kept.
func TestCompleteError(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := completeServer(t)
			odd := say("odd", &mcp.PromptArgument{Name: "x"})
			odd.Complete = map[string]mcpkit.CompleteFunc{"x": func(context.Context, *mcpkit.CompleteRequest) ([]string, error) {
				return nil, fmt.Errorf("odd: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "x must be a number"})
			}}
			panicky := say("panicky", &mcp.PromptArgument{Name: "x"})
			panicky.Complete = map[string]mcpkit.CompleteFunc{"x": func(context.Context, *mcpkit.CompleteRequest) ([]string, error) {
				panic("secret")
			}}
			if err := srv.AddPrompts(odd, panicky); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, srv, nil).Session
			for _, tt := range []struct{ prompt, want string }{
				{"broken", `{"code":-32603,"message":"the index is down","data":{"io.github.mcpkit/errorClass":"fatal"}}`},
				{"odd", `{"code":-32602,"message":"x must be a number"}`},
				{"panicky", `{"code":-32603,"message":"internal error in prompt \"panicky\"","data":{"io.github.mcpkit/errorClass":"fatal"}}`},
			} {
				_, err := completeArg(cs, promptRef(tt.prompt), "x", "", nil)
				if got := wireError(t, err); got != tt.want {
					t.Errorf("%s: %s, want %s", tt.prompt, got, tt.want)
				}
			}
		})
	}
}

// TestCompletionsDeclaredWithCompleters checks, on both eras, that a
// server with prompts and templates but no completer neither declares
// completions nor answers completion/complete (-32601), and that adding a
// prompt with one declares it to clients that connect afterwards.
func TestCompletionsDeclaredWithCompleters(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "caps"}, nil)
			if err := srv.AddPrompts(say("plain", &mcp.PromptArgument{Name: "a"})); err != nil {
				t.Fatal(err)
			}
			if err := srv.AddResourceTemplates(&mcpkit.ResourceTemplate{
				ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{page}", Name: "docs"},
				Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{}, nil
				}),
			}); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, srv, nil).Session
			if caps := cs.InitializeResult().Capabilities; caps.Completions != nil || caps.Prompts == nil {
				t.Errorf("without completers: completions %+v, prompts %+v; want none, declared", caps.Completions, caps.Prompts)
			}
			_, err := completeArg(cs, promptRef("plain"), "a", "", nil)
			if w := wireError(t, err); !strings.Contains(w, `"code":-32601`) {
				t.Errorf("without completers: %s, want -32601", w)
			}
			p := say("rich", &mcp.PromptArgument{Name: "a"})
			p.Complete = map[string]mcpkit.CompleteFunc{"a": prefixed("alpha")}
			if err := srv.AddPrompts(p); err != nil {
				t.Fatal(err)
			}
			cs = era.Connect(t, srv, nil).Session
			if caps := cs.InitializeResult().Capabilities; caps.Completions == nil {
				t.Errorf("with a completer: capabilities %+v, want completions", caps)
			}
			if res, err := completeArg(cs, promptRef("plain"), "a", "", nil); err != nil || res.Completion.Values == nil || len(res.Completion.Values) != 0 {
				t.Errorf("a prompt without completers: %+v, %v; want no values", res, err)
			}
		})
	}
}

// TestCompleterChecked checks that a completer of a name the prompt
// (template) does not have, or a nil one, is refused when added, naming
// it, and that nothing is registered then.
func TestCompleterChecked(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "check"}, nil)
	typo := say("trip", &mcp.PromptArgument{Name: "city"})
	typo.Complete = map[string]mcpkit.CompleteFunc{"ctiy": prefixed("paris")}
	nilFunc := say("trip", &mcp.PromptArgument{Name: "city"})
	nilFunc.Complete = map[string]mcpkit.CompleteFunc{"city": nil}
	tmpl := &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{lang}/{page}", Name: "docs"},
		Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		}),
		Complete: map[string]mcpkit.CompleteFunc{"pages": prefixed("x")},
	}
	for _, tt := range []struct {
		add  func() error
		want string
	}{
		{func() error { return srv.AddPrompts(typo) }, `mcpkit: prompt "trip" has a completer for "ctiy", which is not one of its arguments`},
		{func() error { return srv.AddPrompts(nilFunc) }, `mcpkit: prompt "trip": the completer of "city" is nil`},
		{func() error { return srv.AddResourceTemplates(tmpl) }, `mcpkit: template "docs://{lang}/{page}" has a completer for "pages", which is not one of its variables`},
	} {
		if err := tt.add(); err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	if caps := cs.InitializeResult().Capabilities; caps.Completions != nil || caps.Prompts != nil || caps.Resources != nil {
		t.Errorf("capabilities %+v after refused adds: want no prompts, resources or completions", caps)
	}
}

// TestCompleteWithSDKHandler checks that a server whose SDK options have
// a CompletionHandler answers for its own prompts itself and leaves the
// references it does not serve to that handler.
func TestCompleteWithSDKHandler(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "both"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"sdk:" + req.Params.Ref.Name}}}, nil
		},
	}})
	p := say("ours", &mcp.PromptArgument{Name: "a"})
	p.Complete = map[string]mcpkit.CompleteFunc{"a": prefixed("mine")}
	if err := srv.AddPrompts(p); err != nil {
		t.Fatal(err)
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, srv, nil).Session
			for name, want := range map[string]string{"ours": "mine", "theirs": "sdk:theirs"} {
				res, err := completeArg(cs, promptRef(name), "a", "", nil)
				if err != nil || !slices.Equal(res.Completion.Values, []string{want}) {
					t.Errorf("%s: %+v, %v; want %s", name, res, err, want)
				}
			}
		})
	}
}

// TestObserveCompletions checks that observers hear each
// completion/complete: served (with what its reference reached, and a
// completer's error as the outcome), and a hidden reference as unknown,
// as one never registered.
func TestObserveCompletions(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := completeServer(t)
			var log targetLog
			srv.Observe(&log)
			guest := era.Connect(t, srv, nil).Session
			for _, c := range []struct {
				ref *mcp.CompleteReference
				arg string
			}{
				{promptRef("trip"), "city"},
				{resourceRef("docs://go/x"), "page"},
				{promptRef("broken"), "x"},
				{promptRef("vault"), "key"},
				{promptRef("nosuch"), "key"},
			} {
				completeArg(guest, c.ref, c.arg, "", nil)
			}
			want := []string{
				"served completion/complete trip trip ok request",
				"served completion/complete docs://go/x docs://{lang}/{page} ok request",
				"served completion/complete broken broken error request",
				"unknown completion/complete vault - protocol_error request",
				"unknown completion/complete nosuch - protocol_error request",
			}
			if got := log.take(); !slices.Equal(got, want) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
