// Package mcpgo holds no code: its tests compare, on one machine and in one
// run, what the server spends on one tools/call over streamable HTTP with the
// go-sdk, with mcpkit and with github.com/mark3labs/mcp-go.
//
// It is a module of its own so that mcpkit's go.mod does not depend on
// mcp-go. Run the comparison from the repository's root:
//
//	bash scripts/floor-mcpgo.sh
//
// README.md in this directory has the numbers and how they were made.
package mcpgo
