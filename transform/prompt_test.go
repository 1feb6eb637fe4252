package transform_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// echoPrompt returns a prompt "review" whose handler answers the
// arguments it received, sorted, and whose "lang" argument completes.
func echoPrompt() *mcpkit.Prompt {
	return &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{
			{Name: "code", Required: true}, {Name: "lang"}, {Name: "tenant", Required: true}, {Name: "style"},
		}},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(req.Arguments)) {
				parts = append(parts, k+"="+req.Arguments[k])
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: strings.Join(parts, " ")}}}}, nil
		}),
		Complete: map[string]mcpkit.CompleteFunc{
			"lang": func(_ context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
				// The parent's names, whatever the client calls them.
				return []string{fmt.Sprintf("%s:%s:%s", req.Argument, req.Value, req.Arguments["code"])}, nil
			},
			"tenant": func(context.Context, *mcpkit.CompleteRequest) ([]string, error) { return []string{"t1"}, nil },
		},
		Tags: []string{"review"},
	}
}

// TestPromptTransform serves a derived prompt through SDK clients on both
// eras: renamed arguments reach the parent under its names, a hidden one
// gets its computed value (whatever the client sends), a default fills
// what the client leaves out, completions answer under the new names,
// and a visibility rule keyed on the parent's identity hides the derived
// prompt too.
func TestPromptTransform(t *testing.T) {
	derived, err := transform.Prompt(echoPrompt(), transform.PromptSpec{
		Name: "code_review",
		Arguments: map[string]transform.PromptArg{
			"code":  {Name: "source"},
			"lang":  {Name: "language"},
			"style": {Default: "terse"},
			"tenant": {Hide: true, ValueFunc: func(_ context.Context, req *mcpkit.PromptRequest) (string, bool, error) {
				return "acme-" + req.Arguments["source"], true, nil
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if derived.Key() != "review" {
		t.Errorf("Key %q: want the parent's, review", derived.Key())
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "p"}, nil)
			if err := srv.AddPrompts(derived); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, srv, nil).Session
			lp, err := cs.ListPrompts(t.Context(), nil)
			if err != nil || len(lp.Prompts) != 1 {
				t.Fatalf("list: %v, %v", lp, err)
			}
			var names []string
			for _, a := range lp.Prompts[0].Arguments {
				names = append(names, fmt.Sprintf("%s:%v", a.Name, a.Required))
			}
			if got := strings.Join(names, " "); got != "source:true language:false style:false" {
				t.Errorf("arguments %s", got)
			}
			res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "code_review",
				Arguments: map[string]string{"source": "x", "language": "go", "tenant": "evil", "code": "old"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "code=x lang=go style=terse tenant=acme-x" {
				t.Errorf("parent received %q", got)
			}
			if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "code_review", Arguments: map[string]string{"code": "x"}}); err == nil || !strings.Contains(err.Error(), "source") {
				t.Errorf("missing the renamed required argument: %v", err)
			}
			cr, err := cs.Complete(t.Context(), &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "code_review"},
				Argument: mcp.CompleteParamsArgument{Name: "language", Value: "g"},
				Context:  &mcp.CompleteContext{Arguments: map[string]string{"source": "y"}},
			})
			if err != nil || !slices.Equal(cr.Completion.Values, []string{"lang:g:y"}) {
				t.Errorf("complete language: %v, %v", cr, err)
			}
			cr, err = cs.Complete(t.Context(), &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "code_review"},
				Argument: mcp.CompleteParamsArgument{Name: "tenant", Value: ""},
			})
			if err != nil || len(cr.Completion.Values) != 0 {
				t.Errorf("a hidden argument completed: %v, %v", cr, err)
			}
		})
	}
	t.Run("identity", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "p"}, nil)
		visibility.New(visibility.Disable(func(p *mcpkit.Prompt) bool { return p.Key() == "review" })).Attach(srv)
		if err := srv.AddPrompts(derived); err != nil {
			t.Fatal(err)
		}
		cs := mcpkittest.Eras()[0].Connect(t, srv, nil).Session
		if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "code_review", Arguments: map[string]string{"source": "x"}}); err == nil {
			t.Error("a rule on the parent's identity does not hide the derived prompt")
		}
	})
}

// TestPromptTransformErrors checks what Prompt refuses, and that a failing
// ValueFunc ends the request with a ValueError.
func TestPromptTransformErrors(t *testing.T) {
	for _, c := range []struct {
		spec transform.PromptSpec
		want error
	}{
		{transform.PromptSpec{Name: "bad name!"}, transform.ErrInvalidName},
		{transform.PromptSpec{Arguments: map[string]transform.PromptArg{"nosuch": {}}}, transform.ErrUnknownArgument},
		{transform.PromptSpec{Arguments: map[string]transform.PromptArg{"lang": {Name: "code"}}}, transform.ErrDuplicateArgument},
		{transform.PromptSpec{Arguments: map[string]transform.PromptArg{"code": {Hide: true}}}, transform.ErrMissingValue},
		{transform.PromptSpec{Arguments: map[string]transform.PromptArg{"code": {Required: transform.Optional}}}, transform.ErrMissingValue},
		{transform.PromptSpec{Arguments: map[string]transform.PromptArg{"lang": {Value: "go"}}}, transform.ErrInvalidSpec},
		{transform.PromptSpec{Arguments: map[string]transform.PromptArg{"lang": {Name: "a b"}}}, transform.ErrInvalidName},
	} {
		if _, err := transform.Prompt(echoPrompt(), c.spec); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.spec, err, c.want)
		}
	}
	if _, err := transform.Prompt(nil, transform.PromptSpec{}); !errors.Is(err, transform.ErrInvalidTool) {
		t.Errorf("nil prompt: %v", err)
	}
	boom := errors.New("no tenant in the token")
	d, err := transform.Prompt(echoPrompt(), transform.PromptSpec{Arguments: map[string]transform.PromptArg{
		"tenant": {Hide: true, ValueFunc: func(context.Context, *mcpkit.PromptRequest) (string, bool, error) { return "", false, boom }},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Handler.ServePrompt(t.Context(), &mcpkit.PromptRequest{Prompt: d, Arguments: map[string]string{"code": "x"}})
	var ve *transform.ValueError
	if !errors.As(err, &ve) || ve.Argument != "tenant" || !errors.Is(err, boom) {
		t.Errorf("ValueFunc failing: %v", err)
	}
}

// ExamplePrompt derives a prompt whose "tenant" argument comes from the
// server, not the client, and whose "code" argument is called "source".
func ExamplePrompt() {
	review := &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{
			{Name: "code", Required: true}, {Name: "tenant", Required: true},
		}},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			text := fmt.Sprintf("Review %s for %s.", req.Arguments["code"], req.Arguments["tenant"])
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		}),
	}
	derived, err := transform.Prompt(review, transform.PromptSpec{
		Name: "code_review",
		Arguments: map[string]transform.PromptArg{
			"code":   {Name: "source"},
			"tenant": {Hide: true, Value: "acme"},
		},
	})
	if err != nil {
		panic(err)
	}
	for _, a := range derived.Arguments {
		fmt.Println("argument:", a.Name)
	}
	res, _ := derived.Handler.ServePrompt(context.Background(), &mcpkit.PromptRequest{Prompt: derived, Arguments: map[string]string{"source": "main.go"}})
	fmt.Println(res.Messages[0].Content.(*mcp.TextContent).Text)
	// Output:
	// argument: source
	// Review main.go for acme.
}
