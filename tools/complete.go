package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit"
)

// CompleteFrom returns a completer that suggests, in the order given, the
// values that start with what the user has typed: for an argument or
// variable whose values are a fixed set. It copies values.
func CompleteFrom(values ...string) mcpkit.CompleteFunc {
	values = slices.Clone(values)
	return func(_ context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
		out := []string{}
		for _, v := range values {
			if strings.HasPrefix(v, req.Value) {
				out = append(out, v)
			}
		}
		return out, nil
	}
}
