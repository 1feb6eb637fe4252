// Package requeststate provides a [Sealer] for the requestState of
// input_required results (multi-round-trip requests, SEP-2322), which the
// client sends back with its answers and which must not be trusted. A
// Sealer encrypts and authenticates the state, binding it to the caller
// ([mcpkit.Principal]), the tool's identity ([mcpkit.Tool.ID]) and the
// call's arguments, with an expiry; Open refuses any other state with the
// JSON-RPC error -32602 "invalid request state".
//
//	sealer, err := requeststate.New([][]byte{key}, nil) // key: 32+ random bytes, shared by the replicas
//	...
//	state, err := sealer.Open(req) // nil on the first call
//	if err != nil {
//		return nil, err
//	}
//	if state == nil {
//		sealed, err := sealer.Seal(req, []byte("asked"))
//		...
//		return &mcp.CallToolResult{InputRequests: ..., RequestState: sealed}, nil
//	}
//
// Options are a struct, [Options], where nil means the defaults.
package requeststate
