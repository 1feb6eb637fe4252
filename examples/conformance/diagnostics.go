package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// The server-stateless scenario (SEP-2575) calls diagnostic tools to check
// what the protocol requires of every request: a missing client
// capability is reported, log messages go only to clients that asked for
// them, input is asked for in results, never in requests on the response
// stream (test_streaming_elicitation is test_input_required_result_elicitation
// under another name), and changes to the lists reach subscribed clients.

// errNeedsSampling is the error SEP-2575 prescribes for a request that
// needs a capability the client did not declare: code -32021, with the
// missing capabilities in its data. The SDK answers it with HTTP 400.
var errNeedsSampling = &jsonrpc.Error{
	Code:    mcp.CodeMissingRequiredClientCapabilities,
	Message: "this tool needs the sampling capability, which the client did not declare",
	Data:    json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`),
}

// missingCapability runs only for clients that declared sampling.
func (k *toolkit) missingCapability(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
		return nil, errNeedsSampling
	}
	return textResult("The client declared sampling"), nil
}

// logOnce sends one log message, which the SDK passes on only to a client
// that asked for messages of its level: in the request's _meta on
// 2026-07-28, with logging/setLevel on a session before.
func (k *toolkit) logOnce(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if ss := req.Session(); ss != nil {
		err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "conformance", Data: "test_logging_tool ran"})
		if err != nil {
			return nil, fmt.Errorf("sending log message: %w", err)
		}
	}
	return textResult("Logged one message at level info, for clients that asked for it"), nil
}

// A listChanger adds and removes a tool and a prompt when called, so that
// clients hear of changes to the lists.
type listChanger struct {
	srv       *mcpkit.Server
	transient *mcpkit.Tool

	mu        sync.Mutex // a toggle reads, then changes
	hasTool   bool
	hasPrompt bool
}

const (
	transientTool   = "test_transient_tool"
	transientPrompt = "test_transient_prompt"
)

func newListChanger(srv *mcpkit.Server) *listChanger {
	return &listChanger{
		srv: srv,
		transient: &mcpkit.Tool{
			Tool: mcp.Tool{Name: transientTool, Description: "Comes and goes with test_trigger_tool_change.",
				InputSchema: json.RawMessage(noArgsSchema)},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return textResult("still here"), nil
			}),
		},
	}
}

// tools returns the tools that change the lists.
func (c *listChanger) tools() []*mcpkit.Tool {
	noArgs := json.RawMessage(noArgsSchema)
	return []*mcpkit.Tool{
		{
			Tool:    mcp.Tool{Name: "test_trigger_tool_change", Description: "Adds " + transientTool + ", or removes it if present.", InputSchema: noArgs},
			Handler: mcpkit.HandlerFunc(c.toggleTool),
		},
		{
			Tool:    mcp.Tool{Name: "test_trigger_prompt_change", Description: "Adds " + transientPrompt + ", or removes it if present.", InputSchema: noArgs},
			Handler: mcpkit.HandlerFunc(c.togglePrompt),
		},
	}
}

func (c *listChanger) toggleTool(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hasTool {
		c.srv.Remove(transientTool)
		c.hasTool = false
		return textResult("Removed " + transientTool), nil
	}
	if err := c.srv.Add(c.transient); err != nil {
		return nil, err
	}
	c.hasTool = true
	return textResult("Added " + transientTool), nil
}

func (c *listChanger) togglePrompt(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hasPrompt {
		c.srv.RemovePrompts(transientPrompt)
		c.hasPrompt = false
		return textResult("Removed " + transientPrompt), nil
	}
	err := c.srv.AddPrompts(&mcpkit.Prompt{
		Prompt:  mcp.Prompt{Name: transientPrompt, Description: "Comes and goes with test_trigger_prompt_change."},
		Handler: messages(&mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: "Still here."}}),
	})
	if err != nil {
		return nil, err
	}
	c.hasPrompt = true
	return textResult("Added " + transientPrompt), nil
}

// regionArgs are the arguments of test_x_mcp_header. A 2026-07-28 client
// sends the region in the Mcp-Param-Region header too (SEP-2243), and the
// SDK rejects a call whose header and body disagree.
type regionArgs struct {
	Region string `json:"region" header:"Region" description:"A region, mirrored into the Mcp-Param-Region header"`
}

func (k *toolkit) region(_ context.Context, req *mcpkit.Request, in regionArgs) (*mcp.CallToolResult, error) {
	header, ok := req.ParamHeader("Region")
	if !ok {
		header = "(not sent)"
	}
	return textResult(fmt.Sprintf("region=%s, Mcp-Param-Region: %s", in.Region, header)), nil
}
