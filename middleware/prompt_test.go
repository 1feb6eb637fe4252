package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// TestPromptLayers gets prompts through Logging, Recover, MaskErrors and
// Timeout inside a Server: Logging writes one record per prompts/get, with
// the real text of a masked error and the outcome of a panic, and the
// chain answers as the error table says.
func TestPromptLayers(t *testing.T) {
	var buf bytes.Buffer
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "layers"}, nil)
	srv.Use(middleware.Logging(&middleware.LoggingOptions{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}),
		middleware.Recover(nil), middleware.MaskErrors(nil), middleware.Timeout(time.Minute, nil))
	prompt := func(name string, f func() (*mcp.GetPromptResult, error)) *mcpkit.Prompt {
		return &mcpkit.Prompt{Prompt: mcp.Prompt{Name: name}, Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return f()
		})}
	}
	err := srv.AddPrompts(
		prompt("ok", func() (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		}),
		prompt("boom", func() (*mcp.GetPromptResult, error) { panic("secret") }),
		prompt("db", func() (*mcp.GetPromptResult, error) { return nil, errors.New("dial db:5432") }),
	)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := srv.PromptPipeline("ok")
	for _, l := range layers {
		if l.Skipped {
			t.Errorf("%s skipped in a prompt's chain: %s", l.Name, l.Reason)
		}
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	for _, name := range []string{"ok", "boom", "db"} {
		_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
		if (err == nil) != (name == "ok") {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") || err != nil && strings.Contains(err.Error(), "5432") {
			t.Errorf("%s: the client sees %v", name, err)
		}
	}
	var got []string
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{rec["msg"].(string), rec["prompt"].(string), rec["outcome"].(string), str(rec["error"])}, "|"))
	}
	want := "prompt get|ok|ok| prompt get|boom|panic|panic: secret prompt get|db|error|dial db:5432"
	if strings.Join(got, " ") != want {
		t.Errorf("records:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// TestPromptLayerOutsideServer checks that a layer built by hand around a
// Handler that serves no prompts answers ServePrompt with an error.
func TestPromptLayerOutsideServer(t *testing.T) {
	h := middleware.Recover(nil)(mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }))
	p, ok := h.(mcpkit.PromptHandler)
	if !ok {
		t.Fatal("Recover's Handler does not serve prompts")
	}
	if _, err := p.ServePrompt(t.Context(), &mcpkit.PromptRequest{Prompt: &mcpkit.Prompt{}}); err == nil {
		t.Error("no error from a chain without a prompt handler")
	}
}
