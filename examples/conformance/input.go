package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// The input_required scenarios (SEP-2322) prescribe the keys, questions and
// schemas below. Their tools ask the client for input by returning an
// input_required result and are called again with the answers, which
// mcpkit.InputResponse reads: a 2026-07-28 client makes the second call
// itself, and for an older client with a session the SDK asks over the
// session and calls the tool again, once.
const (
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	colorSchema   = `{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`
	confirmSchema = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	contextSchema = `{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`

	// The request states the tools seal: what the client was asked.
	stateConfirm  = "confirm"
	stateMultiple = "multiple_inputs"
)

// askName asks for the caller's name, as several scenarios do.
func askName(message string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(nameSchema)}
}

// askLLM asks the client's LLM to answer prompt.
func askLLM(prompt string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}},
		MaxTokens: maxTokens,
	}
}

// inputRequired returns the input_required result that asks for requests,
// with state, if not empty, sealed for this call as its requestState.
func (k *toolkit) inputRequired(req *mcpkit.Request, state string, requests mcp.InputRequestMap) (*mcp.CallToolResult, error) {
	res := &mcp.CallToolResult{InputRequests: requests}
	if state != "" {
		sealed, err := k.sealer.Seal(req, []byte(state))
		if err != nil {
			return nil, err
		}
		res.RequestState = sealed
	}
	return res, nil
}

// form returns the content of the form the user accepted in answer to the
// request under key, or nil.
func form(req *mcpkit.Request, key string) map[string]any {
	res, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, key)
	if !ok || res.Action != "accept" {
		return nil
	}
	return res.Content
}

// formString returns the non-empty string field of the form accepted under
// key.
func formString(req *mcpkit.Request, key, field string) (string, bool) {
	s, ok := form(req, key)[field].(string)
	return s, ok && s != ""
}

// sampled returns the text of the LLM's answer under key, and whether
// there is one. Over the wire, sampling answers arrive as
// *mcp.CreateMessageWithToolsResult.
func sampled(req *mcpkit.Request, key string) (string, bool) {
	res, ok := mcpkit.InputResponse[*mcp.CreateMessageWithToolsResult](req, key)
	if !ok {
		return "", false
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, true
		}
	}
	return "", false
}

// inputElicitation asks for the caller's name until an accepted answer
// under user_name names it: a call with answers that are missing, under
// other keys or declined is asked again, and extra answers are ignored.
func (k *toolkit) inputElicitation(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if name, ok := formString(req, "user_name", "name"); ok {
		return textResult(fmt.Sprintf("Hello, %s!", name)), nil
	}
	return k.inputRequired(req, "", mcp.InputRequestMap{"user_name": askName("What is your name?")})
}

func (k *toolkit) inputSampling(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if answer, ok := sampled(req, "capital_question"); ok {
		return textResult("Sampling response: " + answer), nil
	}
	return k.inputRequired(req, "", mcp.InputRequestMap{"capital_question": askLLM("What is the capital of France?", 100)})
}

func (k *toolkit) inputRoots(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if res, ok := mcpkit.InputResponse[*mcp.ListRootsResult](req, "client_roots"); ok {
		return textResult(fmt.Sprintf("Client exposed %d root(s): %s", len(res.Roots), rootURIs(res.Roots))), nil
	}
	return k.inputRequired(req, "", mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}})
}

func rootURIs(roots []*mcp.Root) string {
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}

// inputConfirm asks for a confirmation with a sealed requestState and
// completes only when the retried call brings the state back intact with
// an accepted answer. A state that was tampered with, has expired or was
// sealed for another call fails the call with JSON-RPC error -32602.
func (k *toolkit) inputConfirm(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	state, err := k.sealer.Open(req)
	if err != nil {
		return nil, err
	}
	if string(state) == stateConfirm && form(req, "confirm") != nil {
		return textResult("state-ok: the request state came back intact with the confirmation"), nil
	}
	return k.inputRequired(req, stateConfirm, mcp.InputRequestMap{
		"confirm": &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: json.RawMessage(confirmSchema)},
	})
}

// inputMultiple asks for a name, an LLM's greeting and the client's roots
// in one round, and completes when all three come back.
func (k *toolkit) inputMultiple(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	state, err := k.sealer.Open(req)
	if err != nil {
		return nil, err
	}
	name, hasName := formString(req, "user_name", "name")
	greeting, hasGreeting := sampled(req, "greeting")
	roots, hasRoots := mcpkit.InputResponse[*mcp.ListRootsResult](req, "client_roots")
	if string(state) == stateMultiple && hasName && hasGreeting && hasRoots {
		return textResult(fmt.Sprintf("%s %s (%d root(s) visible)", greeting, name, len(roots.Roots))), nil
	}
	return k.inputRequired(req, stateMultiple, mcp.InputRequestMap{
		"user_name":    askName("What is your name?"),
		"greeting":     askLLM("Generate a greeting", 50),
		"client_roots": &mcp.ListRootsParams{},
	})
}

// progress is the sealed state of test_input_required_result_multi_round:
// the round that was asked, and what the earlier rounds answered, since no
// server remembers anything between the calls.
type progress struct {
	Round int    `json:"round"`
	Name  string `json:"name,omitempty"`
}

// inputMultiRound asks for a name, then for a favourite colour, carrying
// the name from one round to the next in its request state.
func (k *toolkit) inputMultiRound(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	sealed, err := k.sealer.Open(req)
	if err != nil {
		return nil, err
	}
	var p progress
	if sealed != nil {
		if err := json.Unmarshal(sealed, &p); err != nil {
			return nil, err // a state this tool sealed, so not the client's fault
		}
	}
	switch name, named := formString(req, "step1", "name"); {
	case p.Round == 2:
		if color, ok := formString(req, "step2", "color"); ok {
			return textResult(fmt.Sprintf("Multi-round complete: %s likes %s", p.Name, color)), nil
		}
	case p.Round == 1 && named:
		p = progress{Round: 2, Name: name}
	default:
		p = progress{Round: 1}
	}
	state, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	question := mcp.InputRequestMap{"step1": askName("Step 1: What is your name?")}
	if p.Round == 2 {
		question = mcp.InputRequestMap{"step2": &mcp.ElicitParams{
			Message: "Step 2: What is your favorite color?", RequestedSchema: json.RawMessage(colorSchema),
		}}
	}
	return k.inputRequired(req, string(state), question)
}

// inputCapabilities asks only for the kinds of input the client declared
// it can give (SEP-2322: a server must not rely on capabilities the client
// did not declare), and answers without asking when it declared none.
func (k *toolkit) inputCapabilities(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	caps := req.ClientCapabilities()
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	requests := mcp.InputRequestMap{}
	if caps.Elicitation != nil {
		requests["user_name"] = askName("What is your name?")
	}
	if caps.Sampling != nil {
		requests["greeting"] = askLLM("Generate a short greeting", 50)
	}
	if caps.RootsV2 != nil || caps.Roots.ListChanged {
		requests["client_roots"] = &mcp.ListRootsParams{}
	}
	if len(requests) == 0 {
		return textResult("The client declared no capability to answer with"), nil
	}
	for key := range requests {
		if _, ok := mcpkit.InputResponse[mcp.InputResponse](req, key); !ok {
			return k.inputRequired(req, "", requests)
		}
	}
	return textResult(fmt.Sprintf("Received all %d answer(s)", len(requests))), nil
}

// promptWithInput serves test_input_required_result_prompt: input_required
// results are not only for tools, and this prompt asks for context before
// it is rendered.
func promptWithInput(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	if answer, ok := req.Call.Params.InputResponses["user_context"].(*mcp.ElicitResult); ok && answer.Action == "accept" {
		if c, ok := answer.Content["context"].(string); ok {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Context: " + c}},
			}}, nil
		}
	}
	return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{
		"user_context": &mcp.ElicitParams{Message: "What context should the prompt use?", RequestedSchema: json.RawMessage(contextSchema)},
	}}, nil
}
