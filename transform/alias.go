package transform

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// AliasOptions configures [Alias]. A nil *AliasOptions means the
// defaults: the old tool took the same arguments, and uses go unreported.
type AliasOptions struct {
	// Arguments maps an argument of the target to the name the old tool
	// gave it, for the arguments that were renamed: {"query": "q"} lets
	// old callers keep sending "q".
	Arguments map[string]string

	// OnUse, if set, is called on each call through the alias, before the
	// target runs, so that operators can log or count the callers that
	// still use the old name and know when it can go. It must be safe for
	// concurrent use.
	OnUse func(ctx context.Context, use AliasUse)
}

// An AliasUse is one call through a deprecated alias.
type AliasUse struct {
	Alias   string          // the old name that was called
	Target  string          // the tool that served the call
	Request *mcpkit.Request // the call, with the old argument names
}

// Alias returns a tool that keeps the old name of target working after a
// rename or a consolidation: add it to the server next to target. It is
// callable under oldName with the old argument names, validated against
// the target's schema rewritten to those names, and served by target's
// handler; it is absent from tools/list ([mcpkit.Tool.Unlisted]), so that
// new clients learn only the new name. Each use is reported to
// opts.OnUse.
//
// Alias returns the errors of [Tool], for instance when an argument of
// opts.Arguments is not one of target's.
func Alias(target *mcpkit.Tool, oldName string, opts *AliasOptions) (*mcpkit.Tool, error) {
	if opts == nil {
		opts = &AliasOptions{}
	}
	spec := Spec{Name: oldName}
	if len(opts.Arguments) > 0 {
		spec.Arguments = make(map[string]Arg, len(opts.Arguments))
		for name, old := range opts.Arguments {
			spec.Arguments[name] = Arg{Name: old}
		}
	}
	if onUse := opts.OnUse; onUse != nil && target != nil {
		targetName := target.Name
		spec.Middleware = []mcpkit.Middleware{func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				onUse(ctx, AliasUse{Alias: req.Tool.Name, Target: targetName, Request: req})
				return next.ServeTool(ctx, req)
			})
		}}
	}
	t, err := Tool(target, spec)
	if err != nil {
		return nil, err
	}
	t.Unlisted = true
	return t, nil
}
