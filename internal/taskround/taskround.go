// Package taskround marks the context of a later round of a task: the
// tool's whole chain run again by the tasks package, for a task that the
// chain admitted when the task was created. A layer that asks the user
// before a call (middleware.Confirm) lets such a round through: the user
// was asked about the call that created the task.
package taskround

import "context"

type key struct{}

// With returns a copy of ctx marked as the context of a later round.
func With(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, true)
}

// In reports whether ctx is the context of a later round.
func In(ctx context.Context) bool {
	return ctx.Value(key{}) != nil
}
