package mcpkit

import "github.com/modelcontextprotocol/go-sdk/mcp"

// WireResult returns what the client gets for a call of the tool named
// name whose chain returned res and err, by the error table of the package
// documentation: a result (with isError set for tool errors, timeouts,
// panics and internal errors, unmasked as the chain left them), or, for a
// protocol error, a nil result and the *jsonrpc.Error to send. Structured
// content is made fit for protocolVersion as the server does it for a
// synchronous call. It is the server's own mapping, for code that runs a
// tool's chain away from the server (a background task, say) and must
// report its outcome later; it never returns a nil result with a nil error.
func WireResult(name string, res *mcp.CallToolResult, err error, protocolVersion string) (*mcp.CallToolResult, error) {
	if err != nil {
		return wireResult(name, err)
	}
	return finish(name, res, wantsObjects(protocolVersion))
}
