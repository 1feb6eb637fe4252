package mcpkit

import "github.com/modelcontextprotocol/go-sdk/mcp"

// InputResponse returns the client's answer to the input request the tool
// made under key in an earlier round of the call (see "Asking the client
// for input" in docs/concepts.md), and whether there is one of
// type T: [*mcp.ElicitResult] for an elicitation, and for sampling and roots
// (deprecated by protocol 2026-07-28, SEP-2577) the SDK's
// CreateMessageWithToolsResult (which the SDK delivers for every sampling
// answer, with or without tools) and ListRootsResult.
//
//	answer, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm")
//	if !ok {
//		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
//			"confirm": &mcp.ElicitParams{Message: "Delete 3 files?", RequestedSchema: schema},
//		}}, nil
//	}
func InputResponse[T mcp.InputResponse](r *Request, key string) (T, bool) {
	var zero T
	if r.Call == nil || r.Call.Params == nil {
		return zero, false
	}
	v, ok := r.Call.Params.InputResponses[key].(T)
	return v, ok
}
