package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// waitFor bounds how long a test waits for a notification that should
// already be on its way; it only matters when the test is failing.
const waitFor = 10 * time.Second

// start builds the server with opts and connects a client configured by
// client (nil for the defaults) over stateful streamable HTTP.
func start(t *testing.T, opts options, client *mcp.ClientOptions) *mcpkittest.Server {
	t.Helper()
	srv, err := newServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewServer(t, srv, &mcpkittest.Options{Client: client})
}

// sameJSON reports whether got and want marshal to equal JSON values.
func sameJSON(t *testing.T, got, want any) bool {
	t.Helper()
	var g, w any
	for _, p := range []struct {
		v   any
		out *any
	}{{got, &g}, {want, &w}} {
		b, err := json.Marshal(p.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, p.out); err != nil {
			t.Fatal(err)
		}
	}
	return reflect.DeepEqual(g, w)
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// TestContentTools checks the result of every tool that only returns
// content. test_reconnection is in TestRun: its result reaches the client
// only through a resumed stream, which the harness's client does not do.
func TestContentTools(t *testing.T) {
	ts := start(t, options{}, nil)
	m, err := newMedia()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool string
		args any
		want []mcp.Content
	}{
		{"test_simple_text", nil, []mcp.Content{&mcp.TextContent{Text: "This is a simple text response for testing."}}},
		{"test_image_content", map[string]any{}, []mcp.Content{&mcp.ImageContent{Data: m.png, MIMEType: "image/png"}}},
		{"test_audio_content", map[string]any{}, []mcp.Content{&mcp.AudioContent{Data: m.wav, MIMEType: "audio/wav"}}},
		{"test_embedded_resource", nil, []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}},
		{"test_multiple_content_types", nil, []mcp.Content{
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: m.png, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
		}},
		{"json_schema_2020_12_tool", map[string]any{"name": "Ada", "email": "ada@example.com"}, []mcp.Content{
			&mcp.TextContent{Text: `JSON Schema 2020-12 tool called with: {"email":"ada@example.com","name":"Ada"}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := ts.CallTool(t.Context(), tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("isError set: %+v", res.Content)
			}
			if !sameJSON(t, res.Content, tt.want) {
				got, _ := json.Marshal(res.Content)
				want, _ := json.Marshal(tt.want)
				t.Errorf("content\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestErrorTool(t *testing.T) {
	ts := start(t, options{}, nil)
	res, err := ts.CallTool(t.Context(), "test_error_handling", nil)
	if err != nil {
		t.Fatalf("got a protocol error, want an error result: %v", err)
	}
	if !res.IsError {
		t.Fatal("isError not set")
	}
	if got := resultText(t, res); got != "This tool intentionally returns an error for testing" {
		t.Errorf("text = %q", got)
	}
	if got := mcpkit.ErrorClassOf(res); got != mcpkit.Fatal {
		t.Errorf("error class = %q, want %q", got, mcpkit.Fatal)
	}
}

// TestToolList checks what the tools-list and json-schema-2020-12 scenarios
// check: every tool the scenarios call is listed with a description and an
// object schema, and the 2020-12 schema arrives with every keyword intact.
func TestToolList(t *testing.T) {
	ts := start(t, options{}, nil)
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var schema any
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		if s, _ := tool.InputSchema.(map[string]any); s["type"] != "object" {
			t.Errorf("%s: input schema %v is not an object schema", tool.Name, tool.InputSchema)
		}
		if tool.Name == "json_schema_2020_12_tool" {
			schema = tool.InputSchema
		}
	}
	want := []string{
		"confirm_delete", "failing_job", "greet", "json_schema_2020_12_tool", "multi_input", "protocol_error_job", "slow_compute", "test_audio_content", "test_elicitation", "test_elicitation_sep1034_defaults",
		"test_elicitation_sep1330_enums", "test_embedded_resource", "test_error_handling", "test_image_content",
		"test_input_required_result_capabilities", "test_input_required_result_elicitation",
		"test_input_required_result_list_roots", "test_input_required_result_multi_round",
		"test_input_required_result_multiple_inputs", "test_input_required_result_request_state",
		"test_input_required_result_sampling", "test_input_required_result_tampered_state",
		"test_logging_tool", "test_missing_capability", "test_multiple_content_types", "test_reconnection",
		"test_sampling", "test_simple_text", "test_streaming_elicitation", "test_tool_with_logging",
		"test_tool_with_progress", "test_tool_with_task", "test_trigger_prompt_change", "test_trigger_tool_change", "test_x_mcp_header",
	}
	if !slices.Equal(names, want) {
		t.Errorf("tools\n got %v\nwant %v", names, want)
	}
	// http-custom-header-server-validation looks for a string property
	// that carries x-mcp-header (SEP-2243).
	for _, tool := range res.Tools {
		if tool.Name != "test_x_mcp_header" {
			continue
		}
		region := tool.InputSchema.(map[string]any)["properties"].(map[string]any)["region"].(map[string]any)
		if region["type"] != "string" || region["x-mcp-header"] != "Region" {
			t.Errorf("test_x_mcp_header lists region as %v", region)
		}
	}
	if !sameJSON(t, schema, json.RawMessage(schema2020)) {
		got, _ := json.Marshal(schema)
		t.Errorf("json_schema_2020_12_tool schema changed on the way:\n got %s\nwant %s", got, schema2020)
	}
	for _, key := range []string{"$schema", "$defs", "additionalProperties", "allOf", "if", "then", "else"} {
		if _, ok := schema.(map[string]any)[key]; !ok {
			t.Errorf("schema lost %q", key)
		}
	}
}

func TestLoggingTool(t *testing.T) {
	got := make(chan *mcp.LoggingMessageParams, 10)
	ts := start(t, options{}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { got <- req.Params },
	})
	ctx := t.Context()
	if err := ts.Session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	res, err := ts.CallTool(ctx, "test_tool_with_logging", nil)
	if err != nil || res.IsError {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if text := resultText(t, res); text != "Tool with logging executed successfully" {
		t.Errorf("text = %q", text)
	}
	for _, want := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		select {
		case p := <-got:
			if p.Data != want || p.Level != "info" {
				t.Errorf("log message = %v at %q, want %q at info", p.Data, p.Level, want)
			}
		case <-time.After(waitFor):
			t.Fatalf("no log message %q", want)
		}
	}
}

func TestProgressTool(t *testing.T) {
	got := make(chan *mcp.ProgressNotificationParams, 10)
	ts := start(t, options{}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { got <- req.Params },
	})
	ctx := t.Context()

	t.Run("with token", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
		params.SetProgressToken("progress-test-1")
		res, err := ts.Session.CallTool(ctx, params)
		if err != nil || res.IsError {
			t.Fatalf("call: %+v, %v", res, err)
		}
		if text := resultText(t, res); text != "Sent 3 progress notifications" {
			t.Errorf("text = %q", text)
		}
		for _, want := range []float64{0, 50, 100} {
			select {
			case p := <-got:
				if p.ProgressToken != "progress-test-1" || p.Progress != want || p.Total != 100 {
					t.Errorf("progress = %+v, want %v/100 for progress-test-1", p, want)
				}
			case <-time.After(waitFor):
				t.Fatalf("no progress notification %v", want)
			}
		}
	})
	t.Run("without token", func(t *testing.T) {
		res, err := ts.CallTool(ctx, "test_tool_with_progress", nil)
		if err != nil || res.IsError {
			t.Fatalf("call: %+v, %v", res, err)
		}
		if text := resultText(t, res); text != "Sent 0 progress notifications" {
			t.Errorf("text = %q", text)
		}
	})
}

// TestPacing checks, in fake time, that the logging and progress tools
// space their notifications by the pause, as the scenarios ask, so that a
// client sees them arrive while the call runs.
func TestPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pause = 50 * time.Millisecond
		srv, err := newServer(options{pause: pause})
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu sync.Mutex
			at []time.Duration
		)
		start := time.Now()
		ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				at = append(at, time.Since(start))
			},
		}})
		params := &mcp.CallToolParams{Name: "test_tool_with_progress"}
		params.SetProgressToken(7)
		res, err := ts.Session.CallTool(t.Context(), params)
		if err != nil || res.IsError {
			t.Fatalf("call: %+v, %v", res, err)
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if want := []time.Duration{0, pause, 2 * pause}; !slices.Equal(at, want) {
			t.Errorf("notifications at %v, want %v", at, want)
		}
		if took := time.Since(start); took != 2*pause {
			t.Errorf("call took %v, want %v", took, 2*pause)
		}
	})
}

func TestSamplingTool(t *testing.T) {
	var asked *mcp.CreateMessageParams
	ts := start(t, options{}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked = req.Params
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "42"}}, nil
		},
	})
	noSampling := start(t, options{}, nil)
	ctx := t.Context()

	tests := []struct {
		name      string
		ts        *mcpkittest.Server
		args      any
		wantText  string
		wantClass mcpkit.ErrorClass // "" for success
	}{
		{"answer", ts, map[string]any{"prompt": "What is 6x7?"}, "LLM response: 42", ""},
		{"no prompt", ts, map[string]any{}, "invalid arguments: prompt: required property is missing", mcpkit.Retryable},
		{"client cannot sample", noSampling, map[string]any{"prompt": "hi"}, "sampling failed: ", mcpkit.Fatal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.ts.CallTool(ctx, "test_sampling", tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if text := resultText(t, res); !strings.HasPrefix(text, tt.wantText) {
				t.Errorf("text = %q, want prefix %q", text, tt.wantText)
			}
			if res.IsError != (tt.wantClass != "") || mcpkit.ErrorClassOf(res) != tt.wantClass {
				t.Errorf("isError = %v, class %q; want class %q", res.IsError, mcpkit.ErrorClassOf(res), tt.wantClass)
			}
		})
	}
	if asked == nil {
		t.Fatal("the client was never asked to sample")
	}
	if asked.MaxTokens != 100 || len(asked.Messages) != 1 || asked.Messages[0].Role != "user" ||
		!sameJSON(t, asked.Messages[0].Content, &mcp.TextContent{Text: "What is 6x7?"}) {
		t.Errorf("sampling request = %+v", asked)
	}
}

func TestElicitationTools(t *testing.T) {
	type asked struct {
		message string
		schema  any
	}
	requests := make(chan asked, 1)
	answers := map[string]*mcp.ElicitResult{
		"Please provide your information": {Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.com"}},
		"Please review and update the form fields with defaults": {Action: "accept", Content: map[string]any{
			"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false}},
		"Please select options": {Action: "decline"},
	}
	ts := start(t, options{}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			requests <- asked{req.Params.Message, req.Params.RequestedSchema}
			return answers[req.Params.Message], nil
		},
	})
	tests := []struct {
		tool, message, schema string
		args                  any
		wantText              string
	}{
		{"test_elicitation", "Please provide your information", userInfoRequest,
			map[string]any{"message": "Please provide your information"},
			`User response: action=accept, content={"email":"ada@example.com","username":"ada"}`},
		{"test_elicitation_sep1034_defaults", "Please review and update the form fields with defaults", defaultsRequest, nil,
			`Elicitation completed: action=accept, content={"age":25,"name":"Jane Smith","score":88,"status":"inactive","verified":false}`},
		{"test_elicitation_sep1330_enums", "Please select options", enumsRequest, nil,
			`Elicitation completed: action=decline, content=null`},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := ts.CallTool(t.Context(), tt.tool, tt.args)
			if err != nil || res.IsError {
				t.Fatalf("call: %+v, %v", res, err)
			}
			if text := resultText(t, res); text != tt.wantText {
				t.Errorf("text\n got %s\nwant %s", text, tt.wantText)
			}
			select {
			case a := <-requests:
				if a.message != tt.message {
					t.Errorf("message = %q, want %q", a.message, tt.message)
				}
				if !sameJSON(t, a.schema, json.RawMessage(tt.schema)) {
					t.Errorf("requested schema = %v, want %s", a.schema, tt.schema)
				}
			default:
				t.Fatal("the client was never asked")
			}
		})
	}
	t.Run("no message", func(t *testing.T) {
		res, err := ts.CallTool(t.Context(), "test_elicitation", map[string]any{"message": 3})
		if err != nil || !res.IsError || resultText(t, res) != "invalid arguments: message: want string, got number" ||
			mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
			t.Fatalf("call: %+v, %v", res, err)
		}
	})
}

func TestResources(t *testing.T) {
	updated := make(chan string, 1)
	ts := start(t, options{}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	ctx := t.Context()
	m, err := newMedia()
	if err != nil {
		t.Fatal(err)
	}

	list, err := ts.Session.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
		if r.Name == "" || r.Description == "" {
			t.Errorf("%s lacks a name or description", r.URI)
		}
	}
	// The SKILL.md files of the skills are listed too (see serveSkills).
	if want := []string{"skill://code-review/SKILL.md", "skill://pdf-processing/SKILL.md", "test://static-binary", "test://static-text", "test://watched-resource"}; !slices.Equal(uris, want) {
		t.Errorf("resources = %v, want %v", uris, want)
	}
	templates, err := ts.Session.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "test://template/{id}/data" {
		t.Errorf("templates = %+v, %v", templates, err)
	}

	reads := []struct {
		uri  string
		want *mcp.ResourceContents
	}{
		{"test://static-text", &mcp.ResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}},
		{"test://static-binary", &mcp.ResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: m.png}},
		{"test://template/123/data", &mcp.ResourceContents{URI: "test://template/123/data", MIMEType: "application/json",
			Text: `{"id":"123","templateTest":true,"data":"Data for ID: 123"}`}},
	}
	for _, tt := range reads {
		t.Run(tt.uri, func(t *testing.T) {
			res, err := ts.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 || !sameJSON(t, res.Contents[0], tt.want) {
				got, _ := json.Marshal(res.Contents)
				t.Errorf("contents = %s", got)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		_, err := ts.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/a/b/data"})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != mcp.CodeResourceNotFound {
			t.Errorf("err = %v, want code %d", err, mcp.CodeResourceNotFound)
		}
	})

	t.Run("subscribe", func(t *testing.T) {
		if err := ts.Session.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
			t.Fatal(err)
		}
		if err := ts.Server().ResourceUpdated(ctx, "test://watched-resource"); err != nil {
			t.Fatal(err)
		}
		select {
		case uri := <-updated:
			if uri != "test://watched-resource" {
				t.Errorf("update for %q", uri)
			}
		case <-time.After(waitFor):
			t.Fatal("no update notification")
		}
		if err := ts.Session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://watched-resource"}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPrompts(t *testing.T) {
	ts := start(t, options{}, nil)
	ctx := t.Context()
	m, err := newMedia()
	if err != nil {
		t.Fatal(err)
	}
	list, err := ts.Session.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 5 {
		t.Errorf("got %d prompts, want 5", len(list.Prompts))
	}
	for _, p := range list.Prompts {
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
	}

	tests := []struct {
		name string
		args map[string]string
		want []*mcp.PromptMessage
	}{
		{"test_simple_prompt", nil, []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}}}},
		{"test_prompt_with_arguments", map[string]string{"arg1": "hello", "arg2": "world"}, []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Prompt with arguments: arg1='hello', arg2='world'"}}}},
		{"test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"}, []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://example-resource", MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
			{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}}}},
		{"test_prompt_with_image", nil, []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.ImageContent{Data: m.png, MIMEType: "image/png"}},
			{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ts.Session.GetPrompt(ctx, &mcp.GetPromptParams{Name: tt.name, Arguments: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, res.Messages, tt.want) {
				got, _ := json.Marshal(res.Messages)
				t.Errorf("messages = %s", got)
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	ts := start(t, options{}, nil)
	tests := []struct {
		ref   *mcp.CompleteReference
		value string
		want  []string
	}{
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, "par", []string{"paris", "park", "party"}},
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, "test", []string{"test", "testValue1", "testValue2"}},
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, "zzz", []string{}},
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "test_simple_prompt"}, "", []string{}},
		{&mcp.CompleteReference{Type: "ref/resource", URI: "test://template/{id}/data"}, "1", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.ref.Name+tt.ref.URI+"/"+tt.value, func(t *testing.T) {
			res, err := ts.Session.Complete(t.Context(), &mcp.CompleteParams{
				Ref:      tt.ref,
				Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: tt.value},
			})
			if err != nil {
				t.Fatal(err)
			}
			// A nil slice would have crossed the wire as null, not [].
			if got := res.Completion.Values; got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("values = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// connect connects client to the HTTP test server ts, negotiating version:
// a 2026-07-28 client is served statelessly, an older one in a session, on
// the same endpoint, as the program serves them.
func connect(t *testing.T, ts *mcpkittest.Server, client *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// answers are a test client's answers to the questions the tools ask.
var answers = map[string]string{
	"What is your name?":                   "Ada",
	"Step 1: What is your name?":           "Ada",
	"Step 2: What is your favorite color?": "blue",
	"What is the capital of France?":       "Paris",
	"Generate a greeting":                  "Hello",
	"Generate a short greeting":            "Hi",
}

// answeringClient returns a client that answers elicitations and sampling
// requests from answers, exposes one root, and records the questions.
func answeringClient(asked *questions) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "answering", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.add(req.Params.Message)
			content := map[string]any{"ok": true}
			if a, ok := answers[req.Params.Message]; ok {
				field := "name"
				if strings.Contains(req.Params.Message, "color") {
					field = "color"
				}
				content = map[string]any{field: a}
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			asked.add(prompt)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: answers[prompt]}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	return c
}

// questions records what a client was asked, from any goroutine.
type questions struct {
	mu   sync.Mutex
	list []string
}

func (q *questions) add(s string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.list = append(q.list, s)
}

// take returns the questions asked so far, sorted, and forgets them.
func (q *questions) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.list
	q.list = nil
	slices.Sort(l)
	return l
}

// TestInputRequiredTools calls every tool of the input_required scenarios
// (SEP-2322) through an SDK client that answers what it is asked: a
// 2026-07-28 client answers each input_required result by calling again,
// and for a 2025-11-25 client the SDK asks over the session and calls the
// tool again, once.
func TestInputRequiredTools(t *testing.T) {
	ts := start(t, options{}, nil)
	var asked questions
	client := answeringClient(&asked)
	tests := []struct {
		tool      string
		want      string
		asked     []string
		newerOnly bool // takes more than the one round the SDK does for older clients
	}{
		{tool: "test_input_required_result_elicitation", want: "Hello, Ada!", asked: []string{"What is your name?"}},
		{tool: "test_streaming_elicitation", want: "Hello, Ada!", asked: []string{"What is your name?"}},
		{tool: "test_input_required_result_sampling", want: "Sampling response: Paris", asked: []string{"What is the capital of France?"}},
		{tool: "test_input_required_result_list_roots", want: "Client exposed 1 root(s): file:///work"},
		{tool: "test_input_required_result_request_state", want: "state-ok: the request state came back intact with the confirmation",
			asked: []string{"Please confirm"}},
		{tool: "test_input_required_result_tampered_state", want: "state-ok: the request state came back intact with the confirmation",
			asked: []string{"Please confirm"}},
		{tool: "test_input_required_result_multiple_inputs", want: "Hello Ada (1 root(s) visible)",
			asked: []string{"Generate a greeting", "What is your name?"}},
		{tool: "test_input_required_result_capabilities", want: "Received all 3 answer(s)",
			asked: []string{"Generate a short greeting", "What is your name?"}},
		{tool: "test_input_required_result_multi_round", want: "Multi-round complete: Ada likes blue",
			asked: []string{"Step 1: What is your name?", "Step 2: What is your favorite color?"}, newerOnly: true},
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := connect(t, ts, client, version)
		for _, tt := range tests {
			if tt.newerOnly && version < "2026-07-28" {
				continue
			}
			t.Run(version+"/"+tt.tool, func(t *testing.T) {
				asked.take()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || res.NeedsInput() || resultText(t, res) != tt.want {
					t.Errorf("result %+v, text %q; want %q", res, resultText(t, res), tt.want)
				}
				if got := asked.take(); !slices.Equal(got, tt.asked) {
					t.Errorf("asked %q, want %q", got, tt.asked)
				}
			})
		}
	}
}

// TestInputRequiredRounds checks, one round at a time, what the
// input_required scenarios check and an answering client hides: the keys
// and questions of the first round, what a tool does with missing, wrong
// and extra answers, request states that change between rounds and are
// sealed against tampering, and a prompt that asks for input.
func TestInputRequiredRounds(t *testing.T) {
	ts := start(t, options{}, nil)
	manual := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	cs := connect(t, ts, mcp.NewClient(&mcp.Implementation{Name: "manual", Version: "1"}, manual), "2026-07-28")
	ctx := t.Context()
	call := func(t *testing.T, tool string, responses mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
		t.Helper()
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}, InputResponses: responses, RequestState: state})
	}
	asks := func(t *testing.T, res *mcp.CallToolResult, err error, keys ...string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !res.NeedsInput() || !slices.Equal(slices.Sorted(maps.Keys(res.InputRequests)), keys) {
			t.Fatalf("got %+v, want input_required for %q", res, keys)
		}
	}
	accept := func(content map[string]any) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: content}
	}

	t.Run("elicitation", func(t *testing.T) {
		res, err := call(t, "test_input_required_result_elicitation", nil, "")
		asks(t, res, err, "user_name")
		if p := res.InputRequests["user_name"].(*mcp.ElicitParams); p.Message != "What is your name?" || !sameJSON(t, p.RequestedSchema, json.RawMessage(nameSchema)) {
			t.Errorf("asked %+v", p)
		}
		res, err = call(t, "test_input_required_result_elicitation", mcp.InputResponseMap{"wrong_key": accept(map[string]any{"data": "x"})}, "")
		asks(t, res, err, "user_name")
		res, err = call(t, "test_input_required_result_elicitation", mcp.InputResponseMap{
			"user_name": accept(map[string]any{"name": "Alice"}), "unknown_extra_key": accept(map[string]any{"foo": "bar"}),
		}, "")
		if err != nil || res.NeedsInput() || resultText(t, res) != "Hello, Alice!" {
			t.Errorf("with extra answers: %+v, %v", res, err)
		}
	})

	t.Run("sealed state", func(t *testing.T) {
		res, err := call(t, "test_input_required_result_request_state", nil, "")
		asks(t, res, err, "confirm")
		state := res.RequestState
		other, err := call(t, "test_input_required_result_tampered_state", nil, "")
		asks(t, other, err, "confirm")
		confirmed := mcp.InputResponseMap{"confirm": accept(map[string]any{"ok": true})}
		for _, bad := range []struct{ why, tool, state string }{
			{"tampered", "test_input_required_result_tampered_state", other.RequestState + "-TAMPERED"},
			{"sealed for another tool", "test_input_required_result_tampered_state", state},
			{"sealed for another tool", "test_input_required_result_request_state", other.RequestState},
			{"never sealed", "test_input_required_result_request_state", "confirm"},
		} {
			_, err := call(t, bad.tool, confirmed, bad.state)
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != "invalid request state" {
				t.Errorf("%s: state %s: err = %v, want -32602 invalid request state", bad.tool, bad.why, err)
			}
		}
		res, err = call(t, "test_input_required_result_request_state", confirmed, state)
		if err != nil || !strings.HasPrefix(resultText(t, res), "state-ok") {
			t.Errorf("intact state: %+v, %v", res, err)
		}
	})

	t.Run("multi-round", func(t *testing.T) {
		const tool = "test_input_required_result_multi_round"
		r1, err := call(t, tool, nil, "")
		asks(t, r1, err, "step1")
		r2, err := call(t, tool, mcp.InputResponseMap{"step1": accept(map[string]any{"name": "Alice"})}, r1.RequestState)
		asks(t, r2, err, "step2")
		if r2.RequestState == "" || r2.RequestState == r1.RequestState {
			t.Errorf("request state did not change between rounds: %q", r2.RequestState)
		}
		again, err := call(t, tool, nil, r2.RequestState)
		asks(t, again, err, "step2")
		r3, err := call(t, tool, mcp.InputResponseMap{"step2": accept(map[string]any{"color": "blue"})}, r2.RequestState)
		if err != nil || resultText(t, r3) != "Multi-round complete: Alice likes blue" {
			t.Errorf("round 3: %+v, %v", r3, err)
		}
	})

	t.Run("multiple inputs", func(t *testing.T) {
		res, err := call(t, "test_input_required_result_multiple_inputs", nil, "")
		asks(t, res, err, "client_roots", "greeting", "user_name")
		if res.RequestState == "" {
			t.Error("no request state")
		}
	})

	t.Run("capabilities", func(t *testing.T) {
		samplingOnly := mcp.NewClient(&mcp.Implementation{Name: "sampling-only", Version: "1"}, &mcp.ClientOptions{
			Capabilities:         &mcp.ClientCapabilities{},
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { return nil, nil },
			MultiRoundTrip:       &mcp.MultiRoundTripOptions{Disabled: true},
		})
		res, err := connect(t, ts, samplingOnly, "2026-07-28").CallTool(ctx, &mcp.CallToolParams{Name: "test_input_required_result_capabilities"})
		asks(t, res, err, "greeting")
	})

	t.Run("prompt", func(t *testing.T) {
		const prompt = "test_input_required_result_prompt"
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt})
		if err != nil || !res.NeedsInput() || res.InputRequests["user_context"] == nil {
			t.Fatalf("round 1: %+v, %v", res, err)
		}
		res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt,
			InputResponses: mcp.InputResponseMap{"user_context": accept(map[string]any{"context": "tests"})}})
		if err != nil || res.NeedsInput() || !sameJSON(t, res.Messages, []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Context: tests"}}}) {
			t.Errorf("round 2: %+v, %v", res, err)
		}
	})
}

// post sends one 2026-07-28 request to url the way the suite's stateless
// probes do, without the SDK, and returns the HTTP status and every
// message of the response: its JSON body, or the events of its SSE
// stream, which ends with the response. The request's _meta declares no
// client capabilities unless meta says otherwise.
func post(t *testing.T, url, method string, params, meta map[string]any, header http.Header) (int, []map[string]any) {
	t.Helper()
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	maps.Copy(m, meta)
	params["_meta"] = m
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	maps.Copy(req.Header, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msgs []map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var msg map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
			t.Fatalf("HTTP %d: %v", resp.StatusCode, err)
		}
		return resp.StatusCode, append(msgs, msg)
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data:")
		if !ok {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		msgs = append(msgs, msg)
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, msgs
}

// TestStatelessDiagnostics checks the diagnostic tools of the
// server-stateless scenario (SEP-2575), on the wire as the suite sees them
// and through SDK clients: test_missing_capability needs sampling,
// test_logging_tool logs only for clients that asked for it, and
// test_streaming_elicitation asks for input in its result, never with a
// request on the response stream.
func TestStatelessDiagnostics(t *testing.T) {
	ts := start(t, options{}, nil)
	ctx := t.Context()
	call := func(name string, meta map[string]any) (int, []map[string]any) {
		return post(t, ts.URL, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, meta, nil)
	}

	t.Run("missing capability", func(t *testing.T) {
		status, msgs := call("test_missing_capability", nil)
		want := map[string]any{"code": float64(mcp.CodeMissingRequiredClientCapabilities),
			"message": errNeedsSampling.Message, "data": map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}}}
		if status != http.StatusBadRequest || len(msgs) != 1 || !reflect.DeepEqual(msgs[0]["error"], want) {
			t.Errorf("HTTP %d, messages %v; want 400 and error %v", status, msgs, want)
		}

		plain := mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
		_, err := connect(t, ts, plain, "2026-07-28").CallTool(ctx, &mcp.CallToolParams{Name: "test_missing_capability"})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != mcp.CodeMissingRequiredClientCapabilities {
			t.Errorf("client without sampling: err = %v", err)
		}
		var asked questions
		res, err := connect(t, ts, answeringClient(&asked), "2026-07-28").CallTool(ctx, &mcp.CallToolParams{Name: "test_missing_capability"})
		if err != nil || resultText(t, res) != "The client declared sampling" {
			t.Errorf("client with sampling: %+v, %v", res, err)
		}
	})

	t.Run("logging", func(t *testing.T) {
		for _, level := range []string{"", "info", "error"} {
			meta := map[string]any{}
			if level != "" {
				meta[mcp.MetaKeyLogLevel] = level
			}
			_, msgs := call("test_logging_tool", meta)
			var logged []any
			for _, m := range msgs {
				if m["method"] == "notifications/message" {
					logged = append(logged, m["params"].(map[string]any)["data"])
				}
			}
			if want := level == "info"; len(msgs) == 0 || (len(logged) == 1) != want || len(logged) > 1 {
				t.Errorf("logLevel %q: messages %v", level, msgs)
			}
		}

		got := make(chan any, 1)
		listener := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { got <- req.Params.Data },
		})
		res, err := connect(t, ts, listener, "2026-07-28").CallTool(ctx, &mcp.CallToolParams{
			Name: "test_logging_tool", Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"},
		})
		if err != nil || res.IsError {
			t.Fatalf("call: %+v, %v", res, err)
		}
		select {
		case data := <-got:
			if data != "test_logging_tool ran" {
				t.Errorf("logged %v", data)
			}
		case <-time.After(waitFor):
			t.Error("no log message")
		}
	})

	t.Run("streaming elicitation", func(t *testing.T) {
		_, msgs := call("test_streaming_elicitation", map[string]any{
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
		})
		for _, m := range msgs {
			if _, isRequest := m["id"]; isRequest && m["method"] != nil {
				t.Errorf("request on the response stream: %v", m)
			}
		}
		if res, _ := msgs[len(msgs)-1]["result"].(map[string]any); res["resultType"] != "input_required" {
			t.Errorf("last message %v, want an input_required result", msgs[len(msgs)-1])
		}
	})
}

// TestListChanges calls the tools that change the lists and checks that
// clients of both protocols hear of it: a 2025-11-25 client in its session,
// a 2026-07-28 client on its subscriptions/listen stream.
func TestListChanges(t *testing.T) {
	type heard struct{ tools, prompts chan struct{} }
	listener := func(h heard) *mcp.ClientOptions {
		return &mcp.ClientOptions{
			ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { h.tools <- struct{}{} },
			PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { h.prompts <- struct{}{} },
		}
	}
	older := heard{make(chan struct{}, 10), make(chan struct{}, 10)}
	newer := heard{make(chan struct{}, 10), make(chan struct{}, 10)}
	ts := start(t, options{}, listener(older))
	cs := connect(t, ts, mcp.NewClient(&mcp.Implementation{Name: "newer", Version: "1"}, listener(newer)), "2026-07-28")
	ctx := t.Context()

	for _, present := range []bool{true, false} {
		t.Run(fmt.Sprint("tool present=", present), func(t *testing.T) {
			if _, err := ts.CallTool(ctx, "test_trigger_tool_change", nil); err != nil {
				t.Fatal(err)
			}
			for _, c := range []chan struct{}{older.tools, newer.tools} {
				select {
				case <-c:
				case <-time.After(waitFor):
					t.Fatal("a client was not told")
				}
			}
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if listed := slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == transientTool }); listed != present {
				t.Errorf("%s listed = %v", transientTool, listed)
			}
			res2, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: transientTool})
			if present && (err != nil || resultText(t, res2) != "still here") {
				t.Errorf("calling %s: %+v, %v", transientTool, res2, err)
			}
		})
		t.Run(fmt.Sprint("prompt present=", present), func(t *testing.T) {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_trigger_prompt_change"}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []chan struct{}{older.prompts, newer.prompts} {
				select {
				case <-c:
				case <-time.After(waitFor):
					t.Fatal("a client was not told")
				}
			}
			res, err := ts.Session.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if listed := slices.ContainsFunc(res.Prompts, func(p *mcp.Prompt) bool { return p.Name == transientPrompt }); listed != present {
				t.Errorf("%s listed = %v", transientPrompt, listed)
			}
		})
	}
}

// TestParamHeaderTool calls test_x_mcp_header, whose region argument
// 2026-07-28 clients mirror into the Mcp-Param-Region header (SEP-2243):
// the SDK client sends it (Base64-encoded when it is not plain ASCII), the
// tool reads it back, older clients send none, and the SDK rejects a
// header that disagrees with the body.
func TestParamHeaderTool(t *testing.T) {
	ts := start(t, options{}, nil)
	ctx := t.Context()
	newer := connect(t, ts, mcp.NewClient(&mcp.Implementation{Name: "newer", Version: "1"}, nil), "2026-07-28")
	// The client mirrors the arguments of the tools it has listed.
	if _, err := newer.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cs     *mcp.ClientSession
		region string
		want   string
	}{
		{newer, "eu-west", "region=eu-west, Mcp-Param-Region: eu-west"},
		{newer, "Zürich", "region=Zürich, Mcp-Param-Region: Zürich"},
		{ts.Session, "eu-west", "region=eu-west, Mcp-Param-Region: (not sent)"},
	} {
		res, err := tt.cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_x_mcp_header", Arguments: map[string]any{"region": tt.region}})
		if err != nil || resultText(t, res) != tt.want {
			t.Errorf("got %+v, %v; want %q", res, err, tt.want)
		}
	}

	status, msgs := post(t, ts.URL, "tools/call", map[string]any{"name": "test_x_mcp_header", "arguments": map[string]any{"region": "eu-west"}},
		nil, http.Header{"Mcp-Param-Region": {"us-east"}})
	errObj, _ := msgs[0]["error"].(map[string]any)
	if code, _ := errObj["code"].(float64); status != http.StatusBadRequest || code != mcp.CodeHeaderMismatch {
		t.Errorf("mismatched header: HTTP %d, %v; want 400 and code %d", status, msgs, mcp.CodeHeaderMismatch)
	}
}

// syncBuffer is a log destination that the server's goroutines may write
// while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the JSON log records written to b whose message is msg.
func (b *syncBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var recs []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			recs = append(recs, rec)
		}
	}
	return recs
}

// checkRecord reports the attributes of rec that differ from want, where ""
// means that the attribute must be absent.
func checkRecord(t *testing.T, rec map[string]any, want map[string]string) {
	t.Helper()
	for k, w := range want {
		v, ok := rec[k]
		switch {
		case w == "" && ok:
			t.Errorf("record has %s = %v, want none", k, v)
		case w != "" && (!ok || fmt.Sprint(v) != w):
			t.Errorf("record has %s = %v, want %q", k, v, w)
		}
	}
}

// TestLogCalls checks, over HTTP, that the program's chain logs exactly one
// record per call, with the outcome, the class and the error text, also for
// a call that validation rejects before the handler runs.
func TestLogCalls(t *testing.T) {
	var logs syncBuffer
	ts := start(t, options{logger: slog.New(slog.NewJSONHandler(&logs, nil))}, nil)
	calls := []struct {
		tool string
		args any
	}{
		{"test_simple_text", nil},
		{"test_error_handling", map[string]any{}},
		{"test_sampling", map[string]any{}},
	}
	for _, c := range calls {
		if _, err := ts.CallTool(t.Context(), c.tool, c.args); err != nil {
			t.Fatal(err)
		}
	}
	want := []map[string]string{
		{"tool": "test_simple_text", "outcome": "ok", "level": "INFO", "class": "", "error": ""},
		{"tool": "test_error_handling", "outcome": "tool_error", "level": "WARN", "class": "fatal",
			"error": "This tool intentionally returns an error for testing"},
		{"tool": "test_sampling", "outcome": "tool_error", "level": "WARN", "class": "retryable",
			"error": "invalid arguments: prompt: required property is missing"},
	}
	got := logs.records(t, "tool call")
	if len(got) != len(want) {
		t.Fatalf("got %d call records, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		t.Run(w["tool"], func(t *testing.T) {
			checkRecord(t, got[i], w)
			if _, ok := got[i]["duration"]; !ok {
				t.Error("record has no duration")
			}
		})
	}
	if masked := logs.records(t, "tool error masked"); len(masked) != 0 {
		t.Errorf("tool errors were masked: %v", masked)
	}
}

// TestServerMiddleware runs a probe tool on the program's server, in fake
// time over in-memory transports, and checks what the client gets and what
// is logged for each way a call can end: in time, past the limit (whether
// or not the handler heeds its context), with an internal error (masked for
// the client, not for the log), with a tool error (shown), with a panic,
// and with arguments that validation coerces or rejects.
func TestServerMiddleware(t *testing.T) {
	const limit = time.Second
	blocked := func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	sleeper := func(d time.Duration) mcpkit.HandlerFunc {
		return func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			time.Sleep(d)
			return textResult("done"), nil
		}
	}
	echo := func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(string(req.Arguments)), nil
	}
	timedOut := `tool "probe" timed out after 1s`
	tests := []struct {
		name      string
		limit     time.Duration
		handler   mcpkit.HandlerFunc
		args      any
		wantText  string
		wantClass mcpkit.ErrorClass // "" for success
		took      time.Duration
		log       map[string]string // the attributes of the call's record
		alsoLog   string            // another record the call must leave, or ""
	}{
		{"times out", limit, blocked, nil, timedOut, mcpkit.Retryable, limit,
			map[string]string{"outcome": "timeout", "class": "retryable", "error": timedOut}, ""},
		{"ignores its context", limit, sleeper(2 * limit), nil, timedOut, mcpkit.Retryable, limit,
			map[string]string{"outcome": "timeout", "class": "retryable", "error": timedOut}, ""},
		{"in time", limit, sleeper(limit / 2), nil, "done", "", limit / 2,
			map[string]string{"outcome": "ok", "class": "", "error": ""}, ""},
		{"no limit", 0, func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			if _, ok := ctx.Deadline(); ok {
				return nil, mcpkit.ToolErrorf("deadline set without a limit")
			}
			return textResult("done"), nil
		}, nil, "done", "", 0, map[string]string{"outcome": "ok"}, ""},
		{"internal error masked", limit, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, errors.New("dial tcp 10.0.0.7:5432: connection refused")
		}, nil, `error calling tool "probe"`, mcpkit.Fatal, 0,
			map[string]string{"outcome": "error", "class": "fatal", "error": "dial tcp 10.0.0.7:5432: connection refused"},
			""},
		{"tool error shown", limit, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.ToolErrorf("no city named %q", "Atlantis")
		}, nil, `no city named "Atlantis"`, mcpkit.Retryable, 0,
			map[string]string{"outcome": "tool_error", "class": "retryable", "error": `no city named "Atlantis"`}, ""},
		{"panic", limit, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			panic("boom")
		}, nil, `internal error in tool "probe"`, mcpkit.Fatal, 0,
			map[string]string{"outcome": "panic", "class": "fatal", "error": "panic: boom"}, ""},
		{"arguments coerced", limit, echo, map[string]any{"n": "10"}, `{"n":10}`, "", 0,
			map[string]string{"outcome": "ok"}, ""},
		{"arguments rejected", limit, echo, map[string]any{"n": "ten"}, "invalid arguments: n: want integer, got string",
			mcpkit.Retryable, 0, map[string]string{"outcome": "tool_error", "class": "retryable"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs syncBuffer
				srv, err := newServer(options{logger: slog.New(slog.NewJSONHandler(&logs, nil)), callTimeout: tt.limit})
				if err != nil {
					t.Fatal(err)
				}
				err = srv.Add(&mcpkit.Tool{
					Tool: mcp.Tool{Name: "probe", Description: "A test tool.",
						InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
					Handler: tt.handler,
				})
				if err != nil {
					t.Fatal(err)
				}
				ts := mcpkittest.NewInMemoryServer(t, srv, nil)

				start := time.Now()
				res, err := ts.CallTool(t.Context(), "probe", tt.args)
				took := time.Since(start)
				if err != nil {
					t.Fatalf("got a protocol error, want a result: %v", err)
				}
				if took != tt.took {
					t.Errorf("call took %v, want %v", took, tt.took)
				}
				if text := resultText(t, res); text != tt.wantText {
					t.Errorf("text = %q, want %q", text, tt.wantText)
				}
				if res.IsError != (tt.wantClass != "") || mcpkit.ErrorClassOf(res) != tt.wantClass {
					t.Errorf("isError = %v, class %q; want class %q", res.IsError, mcpkit.ErrorClassOf(res), tt.wantClass)
				}

				recs := logs.records(t, "tool call")
				if len(recs) != 1 {
					t.Fatalf("got %d call records, want 1: %v", len(recs), recs)
				}
				checkRecord(t, recs[0], tt.log)
				if got := recs[0]["tool"]; got != "probe" {
					t.Errorf("record names tool %v", got)
				}
				if got := recs[0]["duration"]; got != float64(tt.took) {
					t.Errorf("record has duration %v, want %d", got, tt.took)
				}
				if tt.alsoLog != "" && len(logs.records(t, tt.alsoLog)) != 1 {
					t.Errorf("no %q record", tt.alsoLog)
				}
				// Fake time stands still once this goroutine returns: let a
				// handler that overran its limit finish first.
				time.Sleep(3 * limit)
			})
		})
	}
}

// TestSuiteArguments checks that the program's chain lets through to the
// handlers the arguments the conformance suite sends: none for most tools,
// {} for many, and one string for sampling and elicitation. A schema
// stricter than the scenario would fail the scenario with a validation
// error; every tool must appear here.
func TestSuiteArguments(t *testing.T) {
	srv, err := newServer(options{})
	if err != nil {
		t.Fatal(err)
	}
	noArgs := []any{nil, map[string]any{}}
	sent := map[string][]any{
		"test_simple_text":                  noArgs,
		"test_image_content":                noArgs,
		"test_audio_content":                noArgs,
		"test_embedded_resource":            noArgs,
		"test_multiple_content_types":       noArgs,
		"test_tool_with_logging":            noArgs,
		"test_tool_with_progress":           noArgs,
		"test_error_handling":               noArgs,
		"test_elicitation_sep1034_defaults": noArgs,
		"test_elicitation_sep1330_enums":    noArgs,
		"test_reconnection":                 noArgs,
		"test_sampling":                     {map[string]any{"prompt": "Test prompt for sampling"}},
		"test_elicitation":                  {map[string]any{"message": "Please provide your information"}},

		"test_input_required_result_elicitation":     noArgs,
		"test_input_required_result_sampling":        noArgs,
		"test_input_required_result_list_roots":      noArgs,
		"test_input_required_result_request_state":   noArgs,
		"test_input_required_result_tampered_state":  noArgs,
		"test_input_required_result_multiple_inputs": noArgs,
		"test_input_required_result_multi_round":     noArgs,
		"test_input_required_result_capabilities":    noArgs,
		"test_missing_capability":                    noArgs,
		"test_streaming_elicitation":                 noArgs,
		"test_logging_tool":                          noArgs,
		"test_trigger_tool_change":                   noArgs,
		"test_trigger_prompt_change":                 noArgs,
		// The fixtures of the tasks scenarios (SEP-2663).
		"greet":               {map[string]any{"name": "World"}},
		"slow_compute":        {map[string]any{"seconds": 2, "label": "lifecycle-create"}, map[string]any{"seconds": 0, "label": "instant"}},
		"failing_job":         noArgs,
		"protocol_error_job":  noArgs,
		"confirm_delete":      {map[string]any{"filename": "mrtr-input.txt"}},
		"multi_input":         noArgs,
		"test_tool_with_task": noArgs,
		// Values of the http-custom-header-server-validation scenario.
		"test_x_mcp_header": {
			map[string]any{"region": "Hello"}, map[string]any{"region": "SGVsbG8="},
			map[string]any{"region": "=?base64?SGVsbG8="}, map[string]any{"region": "test-value"},
		},
		// The suite only lists this one; these are what its schema allows.
		"json_schema_2020_12_tool": {
			map[string]any{"name": "Ada", "email": "ada@example.com"},
			map[string]any{"contactMethod": "phone", "phone": "555-0100", "address": map[string]any{"city": "Paris"}},
		},
	}
	var reached bool
	probe := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		reached = true
		return textResult("ok"), nil
	})
	h := mcpkit.Chain(serverMiddleware(nil, options{})...)(probe)
	for _, tool := range srv.Tools() {
		args, ok := sent[tool.Name]
		if !ok {
			t.Errorf("%s: no arguments listed for it", tool.Name)
			continue
		}
		for _, a := range args {
			t.Run(tool.Name, func(t *testing.T) {
				reached = false
				res, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(tool, a))
				if err != nil || !reached {
					t.Errorf("arguments %v: handler reached = %v, err = %v", a, reached, err)
				}
				if res == nil || res.IsError {
					t.Errorf("arguments %v: result %+v", a, res)
				}
			})
		}
	}
}

// TestListedSchemas checks the program's list middleware: tools tagged
// verbatim-schema are listed exactly as registered, references and all,
// while others have their $ref inlined, and the scenarios' other schemas,
// which have none, are listed unchanged.
func TestListedSchemas(t *testing.T) {
	srv, err := newServer(options{})
	if err != nil {
		t.Fatal(err)
	}
	registered := make(map[string]any)
	for _, tool := range srv.Tools() {
		registered[tool.Name] = tool.InputSchema
	}
	const withRef = `{"type":"object","$defs":{"city":{"type":"string","minLength":1}},` +
		`"properties":{"from":{"$ref":"#/$defs/city"},"to":{"$ref":"#/$defs/city"}},"additionalProperties":false}`
	const inlined = `{"type":"object","properties":{"from":{"type":"string","minLength":1},` +
		`"to":{"type":"string","minLength":1}},"additionalProperties":false}`
	nop := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil })
	err = srv.Add(
		&mcpkit.Tool{Tool: mcp.Tool{Name: "route", Description: "d", InputSchema: json.RawMessage(withRef)}, Handler: nop},
		&mcpkit.Tool{Tool: mcp.Tool{Name: "route_verbatim", Description: "d", InputSchema: json.RawMessage(withRef)},
			Handler: nop, Tags: []string{tagVerbatimSchema}},
	)
	if err != nil {
		t.Fatal(err)
	}
	registered["route"] = json.RawMessage(inlined)
	registered["route_verbatim"] = json.RawMessage(withRef)

	ts := mcpkittest.NewServer(t, srv, nil)
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(registered) {
		t.Errorf("listed %d tools, want %d", len(res.Tools), len(registered))
	}
	for _, tool := range res.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			want, ok := registered[tool.Name]
			if !ok {
				t.Fatal("not registered")
			}
			if !sameJSON(t, tool.InputSchema, want) {
				got, _ := json.Marshal(tool.InputSchema)
				w, _ := json.Marshal(want)
				t.Errorf("listed schema\n got %s\nwant %s", got, w)
			}
		})
	}
}

func TestMedia(t *testing.T) {
	m, err := newMedia()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(m.png))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
		t.Errorf("image is %v, want 1x1", b)
	}
	if r, g, b, a := img.At(0, 0).RGBA(); r != 0xffff || g != 0 || b != 0 || a != 0xffff {
		t.Errorf("pixel = %v %v %v %v, want opaque red", r, g, b, a)
	}

	w := m.wav
	le := binary.LittleEndian
	checks := []struct {
		what      string
		got, want any
	}{
		{"RIFF tag", string(w[0:4]), "RIFF"},
		{"RIFF size", le.Uint32(w[4:8]), uint32(len(w) - 8)},
		{"WAVE tag", string(w[8:16]), "WAVEfmt "},
		{"format", le.Uint16(w[20:22]), uint16(1)},
		{"channels", le.Uint16(w[22:24]), uint16(1)},
		{"rate", le.Uint32(w[24:28]), uint32(8000)},
		{"byte rate", le.Uint32(w[28:32]), uint32(16000)},
		{"bits", le.Uint16(w[34:36]), uint16(16)},
		{"data tag", string(w[36:40]), "data"},
		{"data size", le.Uint32(w[40:44]), uint32(len(w) - 44)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("WAV %s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// TestRun runs the program as scripts/conformance.sh does and checks what
// only the real HTTP server has: the listening line, resuming a stream the
// server closed (event store), DNS-rebinding protection, and a shutdown that
// does not wait for open sessions.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-pause", "5ms"}, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output from run")
	}
	url, ok := strings.CutPrefix(lines.Text(), "listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("first line = %q", lines.Text())
	}
	go io.Copy(io.Discard, pr)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_reconnection"})
	if err != nil || res.IsError {
		t.Fatalf("test_reconnection: %+v, %v", res, err)
	}
	if text := resultText(t, res); text != "Reconnection test completed successfully" {
		t.Errorf("text = %q", text)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "attacker.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("request for Host attacker.example: status %d, want 403", resp.StatusCode)
	}

	cancel() // with cs still open
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after cancel", err)
		}
	case <-time.After(waitFor):
		t.Fatal("run did not return after cancel")
	}
	cs.Close()
}

func TestRunBadArgs(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-addr", "127.0.0.1:-1"}, "invalid port"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr strings.Builder
			err := run(t.Context(), tt.args, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// FuzzReadTemplateData reads URIs, which come from clients, through the
// server's route to the template: a URI either is not found (-32602) or is
// served JSON whose id rebuilds the URI.
func FuzzReadTemplateData(f *testing.F) {
	for _, uri := range []string{
		"test://template/123/data", "test://template//data", "test://template/a/b/data",
		"test://template/data", "test://template/\"q\"/data", "test://template/é/data", "",
	} {
		f.Add(uri)
	}
	srv, err := newServer(options{})
	if err != nil {
		f.Fatal(err)
	}
	cs, err := mcpkittest.ConnectInMemory(f.Context(), srv, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer cs.Close()
	f.Fuzz(func(t *testing.T, uri string) {
		if !utf8.ValidString(uri) {
			return // JSON cannot carry it: no client can send it
		}
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || wire.Code != mcp.CodeResourceNotFound {
				t.Fatalf("%q: unexpected error %v", uri, err)
			}
			return
		}
		if !strings.HasPrefix(uri, "test://template/") {
			return // a static resource
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Fatalf("%q: contents %+v", uri, res.Contents)
		}
		var d templateData
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &d); err != nil {
			t.Fatalf("%q: %v", uri, err)
		}
		mid, _ := strings.CutPrefix(uri, "test://template/")
		mid, _ = strings.CutSuffix(mid, "/data")
		if id, err := url.PathUnescape(mid); !d.TemplateTest || d.ID == "" || err != nil || d.ID != id {
			t.Fatalf("%q: served %+v", uri, d)
		}
	})
}

func TestHelpExitsCleanly(t *testing.T) {
	var stderr strings.Builder
	if err := run(t.Context(), []string{"-h"}, io.Discard, &stderr); err != nil {
		t.Fatalf("run -h = %v, want nil (exit 0)", err)
	}
	if !strings.Contains(stderr.String(), "-addr") {
		t.Errorf("usage not printed: %s", stderr.String())
	}
}
