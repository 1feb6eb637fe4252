package tasks

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// principal returns who is calling, for binding a task to its creator, by
// the rule every mcpkit store keys on ([mcpkit.Principal]): the verified
// token's user ID, else a digest of the bearer token, else "" (stdio,
// in-memory, or no credentials: every such caller is the same principal).
// The tasks/* methods are not tool calls, so their token and headers are
// put in the form Principal reads.
func principal(info *auth.TokenInfo, h http.Header) string {
	return mcpkit.Principal(&mcpkit.Request{Call: &mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: info, Header: h}}})
}
