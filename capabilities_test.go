package mcpkit_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestDeclaresWhatItAnswers checks, through a real client of each protocol
// version, that a server with tools and neither prompts nor resources
// declares a capability exactly when it answers that capability's list
// methods (2026-07-28 requires servers that answer prompts/list to declare
// prompts in server/discover): a server without prompts neither declares
// nor answers prompts/list, nor one without resources resources/list and
// resources/templates/list; completion/complete has no handler and is
// neither declared nor answered.
func TestDeclaresWhatItAnswers(t *testing.T) {
	newServer := func(t *testing.T) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "caps", Version: "1"}, nil)
		if err := srv.Add(tool("echo", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return textResult("echo"), nil
		})); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	mcpkittest.ForEachTransport(t, newServer, func(t *testing.T, ts *mcpkittest.Server) {
		ctx, cs := t.Context(), ts.Session
		caps := cs.InitializeResult().Capabilities
		if caps == nil {
			t.Fatal("no capabilities")
		}
		for _, c := range []struct {
			name     string
			declared bool
			answer   func() error
		}{
			{"tools", caps.Tools != nil, func() error { _, err := cs.ListTools(ctx, nil); return err }},
			{"prompts", caps.Prompts != nil, func() error { _, err := cs.ListPrompts(ctx, nil); return err }},
			{"resources", caps.Resources != nil, func() error { _, err := cs.ListResources(ctx, nil); return err }},
			{"resource templates", caps.Resources != nil, func() error { _, err := cs.ListResourceTemplates(ctx, nil); return err }},
			{"completions", caps.Completions != nil, func() error {
				_, err := cs.Complete(ctx, &mcp.CompleteParams{
					Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "p"},
					Argument: mcp.CompleteParamsArgument{Name: "a"},
				})
				return err
			}},
		} {
			if err := c.answer(); (err == nil) != c.declared {
				t.Errorf("%s: declared %v, answered with error %v", c.name, c.declared, err)
			}
		}
		if caps.Prompts != nil || caps.Resources != nil {
			t.Errorf("prompts %+v, resources %+v; want neither", caps.Prompts, caps.Resources)
		}
	}, nil)
}

// TestDeclaredCapabilitiesKept checks that capabilities given in the SDK
// options are declared as they are: NewServer fills in only those left
// nil.
func TestDeclaredCapabilitiesKept(t *testing.T) {
	own := &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{}, Completions: &mcp.CompletionCapabilities{}}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "caps", Version: "1"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: own}})
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	caps := ts.Session.InitializeResult().Capabilities
	if caps.Prompts == nil || caps.Prompts.ListChanged || caps.Completions == nil || caps.Resources != nil || !caps.Tools.ListChanged {
		t.Errorf("capabilities %+v: want prompts without listChanged and completions, as given, and tools added", caps)
	}
	if own.Resources != nil || own.Tools != nil {
		t.Error("the caller's capabilities were modified")
	}
}
