package transform

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/portable"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// portableHandler is the handler of a tool that [Portable] rewrote when
// calls need more than the server's validation of the rewritten schema:
// it validates them itself (a schema the server cannot read), maps them
// back (OpenAI strict mode's nulls), checks them against the tool's own
// schema (constraints the profile cannot express), and calls the tool.
type portableHandler struct {
	parent *mcpkit.Tool // what next finds in req.Tool
	next   mcpkit.Handler

	in      *schema.Validator // the rewritten schema as the provider reads it; nil: the server checks
	out     *schema.Validator // the output schema, when the server checks nothing
	plan    *portable.Plan
	orig    *schema.Validator // the tool's own schema; nil: the rewrite is exact
	lenient bool
}

// ServeTool checks and maps the call, calls the tool, and checks its
// output when the server does not.
func (h *portableHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	args := req.Arguments
	var err error
	if h.in != nil {
		if args, err = h.in.Process(args, h.lenient); err != nil {
			return nil, &mcpkit.ToolError{Err: validationError(req.Tool.Name, false, err), Class: mcpkit.Retryable}
		}
	}
	args = h.plan.Apply(args)
	if h.orig != nil {
		if args, err = h.orig.Process(args, h.lenient); err != nil {
			return nil, &mcpkit.ToolError{Err: validationError(req.Tool.Name, false, err), Class: mcpkit.Retryable}
		}
	}
	var r *mcpkit.Request
	if len(args) == len(req.Arguments) && (len(args) == 0 || &args[0] == &req.Arguments[0]) {
		c := *req // the same arguments: a copy for Tool alone
		r = &c
	} else {
		r = req.WithArguments(args)
	}
	r.Tool = h.parent
	res, err := h.next.ServeTool(ctx, r)
	if h.out == nil || err != nil || res == nil || res.IsError || res.InputRequests != nil ||
		res.StructuredContent == nil && len(res.Content) == 0 {
		return res, err // nothing to check, as the server's own validation decides
	}
	if err := checkStructured(h.out, res.StructuredContent); err != nil {
		return nil, &mcpkit.ToolError{Err: validationError(req.Tool.Name, true, err), Class: mcpkit.Fatal}
	}
	return res, nil
}

// checkStructured validates a result's structured content, which a tool
// with an output schema must send.
func checkStructured(out *schema.Validator, sc any) error {
	var data []byte
	switch sc := sc.(type) {
	case nil:
		return errors.New("no structured content")
	case json.RawMessage:
		data = sc
	default:
		b, err := json.Marshal(sc)
		if err != nil {
			return err
		}
		data = b
	}
	return out.Validate(data)
}

// validationError is the error the server reports for arguments (or
// output) that fail a schema, as the server words it.
func validationError(tool string, output bool, err error) *mcpkit.ValidationError {
	issues, omitted, cause := schema.Explain(err)
	ve := &mcpkit.ValidationError{Tool: tool, Output: output, Omitted: omitted, Err: cause}
	if issues != nil {
		ve.Issues = make([]mcpkit.ValidationIssue, len(issues))
		for i, is := range issues {
			ve.Issues[i] = mcpkit.ValidationIssue(is)
		}
	}
	return ve
}
