// Package taskround marks the context of a later round of a task: the
// tool's whole chain run again by the tasks package, for a task that the
// chain admitted when the task was created. A layer that asks the user
// before a call (middleware.Confirm) lets such a round of that tool
// through: the user was asked about the call that created the task. The
// mark names the task's tool, so that a call the round's work makes to
// another tool (through Server.Resolve, with the round's context) is not
// taken for the round.
package taskround

import (
	"context"

	"github.com/mcpkit/mcpkit"
)

type key struct{}

// With returns a copy of ctx marked as the context of a later round of a
// task of the tool whose identity is id.
func With(ctx context.Context, id mcpkit.ToolID) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// In reports whether ctx is the context of a later round of a task of the
// tool whose identity is id.
func In(ctx context.Context, id mcpkit.ToolID) bool {
	got, ok := ctx.Value(key{}).(mcpkit.ToolID)
	return ok && got == id
}
