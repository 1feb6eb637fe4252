package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/requeststate"
	"github.com/mcpkit/mcpkit/tools"
)

// Texts and schemas the conformance scenarios prescribe.
const (
	simpleText       = "This is a simple text response for testing."
	embeddedText     = "This is an embedded resource content."
	mixedText        = "Multiple content types test:"
	mixedJSON        = `{"test":"data","value":123}`
	loggingDone      = "Tool with logging executed successfully"
	reconnectionDone = "Reconnection test completed successfully"

	noArgsSchema  = `{"type":"object","properties":{}}`
	promptSchema  = `{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`
	messageSchema = `{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`

	// schema2020 exercises JSON Schema 2020-12 keywords that an SDK or a
	// middleware could strip (SEP-1613, SEP-2106): it must reach clients
	// byte for byte, hence a json.RawMessage rather than a jsonschema.Schema.
	schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
		`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},` +
		`"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
		`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
		`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
		`"then":{"required":["phone"]},"else":{"required":["email"]},` +
		`"additionalProperties":false}`

	userInfoRequest = `{"type":"object","properties":{` +
		`"username":{"type":"string","description":"User's response"},` +
		`"email":{"type":"string","description":"User's email address"}},` +
		`"required":["username","email"]}`

	// defaultsRequest has a default for every primitive type (SEP-1034).
	defaultsRequest = `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"User name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"User age","default":30},` +
		`"score":{"type":"number","description":"User score","default":95.5},` +
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verification status","default":true}}}`

	// enumsRequest has each of the five enum shapes of SEP-1330.
	enumsRequest = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`
)

var (
	// errIntentional is what test_error_handling fails with; the text is the
	// one the scenario describes.
	errIntentional = errors.New("This tool intentionally returns an error for testing")
	errNoSession   = errors.New("conformance: this tool needs a client session")
)

// A toolkit serves the scenarios' tools. Everything a handler needs that does
// not depend on the call is prepared here, once.
type toolkit struct {
	media  *media
	pause  time.Duration
	sealer *requeststate.Sealer // for the request states of input_required results

	userInfoRequest json.RawMessage
	defaultsRequest json.RawMessage
	enumsRequest    json.RawMessage
}

// tagVerbatimSchema marks the tools whose input schema is advertised exactly
// as registered, $ref and $defs included.
const tagVerbatimSchema = "verbatim-schema"

func newToolkit(m *media, pause time.Duration, sealer *requeststate.Sealer) *toolkit {
	return &toolkit{
		media:           m,
		pause:           pause,
		sealer:          sealer,
		userInfoRequest: json.RawMessage(userInfoRequest),
		defaultsRequest: json.RawMessage(defaultsRequest),
		enumsRequest:    json.RawMessage(enumsRequest),
	}
}

// tools returns the definitions of every tool the scenarios call.
func (k *toolkit) tools() []*mcpkit.Tool {
	noArgs := json.RawMessage(noArgsSchema)
	tool := func(name, description string, schema json.RawMessage, h mcpkit.HandlerFunc, tags ...string) *mcpkit.Tool {
		return &mcpkit.Tool{
			Tool:    mcp.Tool{Name: name, Description: description, InputSchema: schema},
			Handler: h,
			Tags:    tags,
		}
	}
	return []*mcpkit.Tool{
		tool("test_simple_text", "Returns one text block.", noArgs, k.simpleText),
		tool("test_image_content", "Returns a PNG image.", noArgs, k.image),
		tool("test_audio_content", "Returns a WAV clip.", noArgs, k.audio),
		tool("test_embedded_resource", "Returns an embedded text resource.", noArgs, k.embeddedResource),
		tool("test_multiple_content_types", "Returns text, an image and an embedded resource.", noArgs, k.mixed),
		tool("test_tool_with_logging", "Sends three log messages while it runs.", noArgs, k.logging),
		tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100 when the call has a progress token.", noArgs, k.progress),
		tool("test_error_handling", "Always fails.", noArgs, k.fail),
		tools.Must(tools.NewWithRequest("test_sampling", k.sampling, &tools.Options{
			Description: "Asks the client's LLM to answer a prompt.",
			InputSchema: json.RawMessage(promptSchema),
		})),
		tools.Must(tools.NewWithRequest("test_elicitation", k.elicitation, &tools.Options{
			Description: "Asks the user for a username and an email address.",
			InputSchema: json.RawMessage(messageSchema),
		})),
		tool("test_elicitation_sep1034_defaults", "Elicits a form whose fields all have defaults (SEP-1034).", noArgs, k.elicitDefaults),
		tool("test_elicitation_sep1330_enums", "Elicits a form with every enum shape (SEP-1330).", noArgs, k.elicitEnums),
		tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features (SEP-1613, SEP-2106).",
			json.RawMessage(schema2020), k.schema2020, tagVerbatimSchema),
		tool("test_reconnection", "Closes its SSE stream mid-call; the client resumes it to get the result (SEP-1699).", noArgs, k.reconnection),

		// Asking for input with input_required results (SEP-2322).
		tool("test_input_required_result_elicitation", "Asks for the caller's name, then greets them.", noArgs, k.inputElicitation),
		tool("test_input_required_result_sampling", "Asks the client's LLM for the capital of France.", noArgs, k.inputSampling),
		tool("test_input_required_result_list_roots", "Asks for the client's roots, then lists them.", noArgs, k.inputRoots),
		tool("test_input_required_result_request_state", "Asks for a confirmation with a sealed request state, and checks the state on return.", noArgs, k.inputConfirm),
		tool("test_input_required_result_tampered_state", "Asks for a confirmation with a sealed request state, and rejects a state that was changed.", noArgs, k.inputConfirm),
		tool("test_input_required_result_multiple_inputs", "Asks for a name, an LLM's greeting and the client's roots at once.", noArgs, k.inputMultiple),
		tool("test_input_required_result_multi_round", "Asks for a name, then a favorite color, carrying the name in its request state.", noArgs, k.inputMultiRound),
		tool("test_input_required_result_capabilities", "Asks only for the kinds of input the client declared it can give.", noArgs, k.inputCapabilities),

		// Diagnostics of the stateless protocol (SEP-2575) and of parameter
		// headers (SEP-2243).
		tool("test_missing_capability", "Runs only for clients that declared sampling; fails with -32021 for the others.", noArgs, k.missingCapability),
		tool("test_streaming_elicitation", "Asks for the caller's name in its result, never with a request on the response stream.", noArgs, k.inputElicitation),
		tool("test_logging_tool", "Sends one log message at level info, which reaches only clients that asked for it.", noArgs, k.logOnce),
		tools.Must(tools.NewWithRequest("test_x_mcp_header", k.region, &tools.Options{
			Description: "Echoes a region that 2026-07-28 clients also send in the Mcp-Param-Region header.",
		})),
	}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (k *toolkit) simpleText(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return textResult(simpleText), nil
}

func (k *toolkit) image(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: k.media.png, MIMEType: "image/png"}}}, nil
}

func (k *toolkit) audio(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: k.media.wav, MIMEType: "audio/wav"}}}, nil
}

func (k *toolkit) embeddedResource(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: embeddedText}},
	}}, nil
}

func (k *toolkit) mixed(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: mixedText},
		&mcp.ImageContent{Data: k.media.png, MIMEType: "image/png"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: mixedJSON}},
	}}, nil
}

// logging sends its messages through the MCP logging utility, so the client
// receives them only after it has chosen a level with logging/setLevel.
func (k *toolkit) logging(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	ss := req.Session()
	if ss == nil {
		return nil, errNoSession
	}
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := sleep(ctx, k.pause); err != nil {
				return nil, err
			}
		}
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "conformance", Data: msg}); err != nil {
			return nil, fmt.Errorf("sending log message: %w", err)
		}
	}
	return textResult(loggingDone), nil
}

// progress reports three steps when the caller asked for progress with a
// token in the request's _meta, and only takes the same time otherwise.
func (k *toolkit) progress(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var token any
	if req.Call != nil && req.Call.Params != nil {
		token = req.Call.Params.GetProgressToken()
	}
	ss := req.Session()
	const total = 100
	sent := 0
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, k.pause); err != nil {
				return nil, err
			}
		}
		if token == nil || ss == nil {
			continue
		}
		err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      p,
			Total:         total,
			Message:       fmt.Sprintf("step %d of 3", i+1),
		})
		if err != nil {
			return nil, fmt.Errorf("sending progress: %w", err)
		}
		sent++
	}
	return textResult(fmt.Sprintf("Sent %d progress notifications", sent)), nil
}

// fail reports errIntentional as a tool error: the scenario wants its text
// on the wire, and an error that is not a tool error would be masked.
func (k *toolkit) fail(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return nil, mcpkit.NewToolError(errIntentional, mcpkit.Fatal)
}

// samplingArgs are the arguments of test_sampling; validation against
// promptSchema guarantees the prompt.
type samplingArgs struct {
	Prompt string `json:"prompt"`
}

// sampling forwards the prompt to the client's LLM (sampling/createMessage).
func (k *toolkit) sampling(ctx context.Context, req *mcpkit.Request, in samplingArgs) (*mcp.CallToolResult, error) {
	ss := req.Session()
	if ss == nil {
		return nil, errNoSession
	}
	res, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		MaxTokens: 100,
	})
	if err != nil {
		// Asking again will not give the client a sampling capability.
		return nil, mcpkit.NewToolError(fmt.Errorf("sampling failed: %w", err), mcpkit.Fatal)
	}
	answer, ok := res.Content.(*mcp.TextContent)
	if !ok {
		return nil, mcpkit.NewToolError(fmt.Errorf("sampling returned %T content, not text", res.Content), mcpkit.Fatal)
	}
	return textResult("LLM response: " + answer.Text), nil
}

// elicitationArgs are the arguments of test_elicitation; validation against
// messageSchema guarantees the message.
type elicitationArgs struct {
	Message string `json:"message"`
}

// elicitation asks the user, through the client, for the fields of
// userInfoRequest.
func (k *toolkit) elicitation(ctx context.Context, req *mcpkit.Request, in elicitationArgs) (*mcp.CallToolResult, error) {
	return k.elicit(ctx, req, "User response", in.Message, k.userInfoRequest)
}

func (k *toolkit) elicitDefaults(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return k.elicit(ctx, req, "Elicitation completed", "Please review and update the form fields with defaults", k.defaultsRequest)
}

func (k *toolkit) elicitEnums(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return k.elicit(ctx, req, "Elicitation completed", "Please select options", k.enumsRequest)
}

// elicit sends one form elicitation and reports the user's action and
// answer as "<label>: action=..., content={...}".
func (k *toolkit) elicit(ctx context.Context, req *mcpkit.Request, label, message string, schema json.RawMessage) (*mcp.CallToolResult, error) {
	ss := req.Session()
	if ss == nil {
		return nil, errNoSession
	}
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return nil, mcpkit.NewToolError(fmt.Errorf("elicitation failed: %w", err), mcpkit.Fatal)
	}
	content, err := json.Marshal(res.Content)
	if err != nil {
		return nil, err
	}
	return textResult(fmt.Sprintf("%s: action=%s, content=%s", label, res.Action, content)), nil
}

// schema2020 echoes its arguments; the scenario is about its definition.
func (k *toolkit) schema2020(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	args := req.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return textResult("JSON Schema 2020-12 tool called with: " + string(args)), nil
}

// reconnection closes the SSE stream that carries the call, waits, and then
// answers: the client gets the result only by resuming the stream with
// Last-Event-ID, which needs an event store on the HTTP handler. On
// transports without SSE streams it just answers.
func (k *toolkit) reconnection(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if req.Call != nil && req.Call.Extra != nil && req.Call.Extra.CloseSSEStream != nil {
		req.Call.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: k.pause})
	}
	if err := sleep(ctx, 2*k.pause); err != nil {
		return nil, err
	}
	return textResult(reconnectionDone), nil
}

// sleep waits for d or until ctx is done, whichever comes first, and returns
// ctx's error in the second case.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
