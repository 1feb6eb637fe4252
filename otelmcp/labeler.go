package otelmcp

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
)

// A Labeler collects attributes that a handler or an inner middleware adds
// to a call's metric record. It is safe for concurrent use.
type Labeler struct {
	mu    sync.Mutex
	attrs []attribute.KeyValue
}

// Add adds attributes to the call's metric record.
func (l *Labeler) Add(attrs ...attribute.KeyValue) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.attrs = append(l.attrs, attrs...)
}

// Get returns a copy of the attributes added so far.
func (l *Labeler) Get() []attribute.KeyValue {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]attribute.KeyValue(nil), l.attrs...)
}

type labelerKey struct{}

// ContextWithLabeler returns a copy of ctx carrying l.
func ContextWithLabeler(ctx context.Context, l *Labeler) context.Context {
	return context.WithValue(ctx, labelerKey{}, l)
}

// LabelerFromContext returns the Labeler of the call ctx belongs to, which
// the middleware puts there, or a new one and false when there is none (its
// attributes then go nowhere).
func LabelerFromContext(ctx context.Context) (*Labeler, bool) {
	l, ok := ctx.Value(labelerKey{}).(*Labeler)
	if !ok {
		return &Labeler{}, false
	}
	return l, true
}
