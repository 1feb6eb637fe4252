package tools_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

func ExampleNewPrompt() {
	type ReviewIn struct {
		Code     string  `json:"code" description:"The code to review."`
		Language *string `json:"language" description:"Its language, if known."`
	}
	review := func(ctx context.Context, req *mcpkit.PromptRequest, in ReviewIn) ([]*mcp.PromptMessage, error) {
		text := "Review this code:\n" + in.Code
		if in.Language != nil {
			text = "Review this " + *in.Language + " code:\n" + in.Code
		}
		return []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}, nil
	}
	prompt := tools.MustPrompt(tools.NewPrompt("review", review, &tools.PromptOptions{Description: "Ask for a code review."}))
	for _, a := range prompt.Arguments {
		fmt.Printf("%s (required: %v): %s\n", a.Name, a.Required, a.Description)
	}

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reviews"}, nil)
	if err := srv.AddPrompts(prompt); err != nil {
		log.Fatal(err)
	}
	cs := connect(srv)
	defer cs.Close()
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "x := 1", "language": "Go"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Messages[0].Content.(*mcp.TextContent).Text)
	_, err = cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "review"})
	fmt.Println(err)
	// Output:
	// code (required: true): The code to review.
	// language (required: false): Its language, if known.
	// Review this Go code:
	// x := 1
	// calling "prompts/get": prompt "review": missing required argument "code"
}

// TestNewPromptArguments checks the arguments NewPrompt derives from a
// struct, and that it refuses fields that cannot be arguments.
func TestNewPromptArguments(t *testing.T) {
	type In struct {
		Topic string        `json:"topic" title:"Topic" jsonschema:"What to write about."`
		Tone  string        `json:"tone,omitempty"`
		When  time.Time     `json:"when,omitzero"`
		Limit *stringNumber `json:"limit"`
		Skip  string        `json:"-"`
		Plain string
		quiet string
	}
	_ = In{}.quiet
	p, err := tools.NewPrompt("write", func(context.Context, *mcpkit.PromptRequest, In) ([]*mcp.PromptMessage, error) { return nil, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range p.Arguments {
		got = append(got, fmt.Sprintf("%s/%s/%s/%v", a.Name, a.Title, a.Description, a.Required))
	}
	if want := "topic/Topic/What to write about./true tone///false when///false limit///false Plain///true"; strings.Join(got, " ") != want {
		t.Errorf("arguments %s, want %s", strings.Join(got, " "), want)
	}
	bad := []struct {
		name string
		fn   func() error
	}{
		{"int field", func() error {
			_, err := tools.NewPrompt("p", func(context.Context, *mcpkit.PromptRequest, struct{ N int }) ([]*mcp.PromptMessage, error) {
				return nil, nil
			}, nil)
			return err
		}},
		{"not a struct", func() error {
			_, err := tools.NewPrompt("p", func(context.Context, *mcpkit.PromptRequest, string) ([]*mcp.PromptMessage, error) { return nil, nil }, nil)
			return err
		}},
		{"bad name", func() error {
			_, err := tools.NewPrompt("a b", func(context.Context, *mcpkit.PromptRequest, struct{}) ([]*mcp.PromptMessage, error) { return nil, nil }, nil)
			return err
		}},
		{"nil function", func() error {
			_, err := tools.NewPrompt[struct{}]("p", nil, nil)
			return err
		}},
	}
	for _, b := range bad {
		if err := b.fn(); err == nil {
			t.Errorf("%s: no error", b.name)
		}
	}
}

// stringNumber is a number given as text.
type stringNumber int

func (n *stringNumber) UnmarshalText(b []byte) error {
	var v int
	if _, err := fmt.Sscanf(string(b), "%d", &v); err != nil {
		return errors.New("not a number")
	}
	*n = stringNumber(v)
	return nil
}

// TestNewPromptDecodes gets a typed prompt through a real client: text
// values decode into their fields, an absent optional one stays nil, and
// a value its field cannot decode is -32602 naming the argument.
func TestNewPromptDecodes(t *testing.T) {
	type In struct {
		Topic string        `json:"topic"`
		Limit *stringNumber `json:"limit"`
	}
	p := tools.MustPrompt(tools.NewPrompt("write", func(_ context.Context, req *mcpkit.PromptRequest, in In) ([]*mcp.PromptMessage, error) {
		limit := "none"
		if in.Limit != nil {
			limit = fmt.Sprint(int(*in.Limit))
		}
		return []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Topic + " " + limit}}}, nil
	}, &tools.PromptOptions{Description: "Write."}))
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "typed"}, nil)
	if err := srv.AddPrompts(p); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, srv, nil).Session
	for args, want := range map[string]string{"7": "go 7", "": "go none"} {
		a := map[string]string{"topic": "go"}
		if args != "" {
			a["limit"] = args
		}
		res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "write", Arguments: a})
		if err != nil || res.Description != "Write." || res.Messages[0].Content.(*mcp.TextContent).Text != want {
			t.Errorf("limit %q: %+v, %v", args, res, err)
		}
	}
	_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "write", Arguments: map[string]string{"topic": "go", "limit": "many"}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || !strings.Contains(wire.Message, `argument "limit"`) {
		t.Errorf("a bad limit: %v, want -32602 naming it", err)
	}
}
