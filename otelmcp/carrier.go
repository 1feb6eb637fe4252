package otelmcp

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaCarrier reads a request's params._meta as a propagation carrier
// (traceparent, tracestate, baggage). Extraction never writes to it.
type metaCarrier mcp.Meta

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set does nothing: the request's _meta belongs to the request.
func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
