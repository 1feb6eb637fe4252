package mcpkit

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProgressInterval is the shortest time between two progress notifications
// of one call: reports that come faster are coalesced, the latest kept.
const ProgressInterval = 100 * time.Millisecond

// ReportProgress reports the progress of the tool call ctx belongs to: done
// out of total (zero when the total is not known), and a message that may
// be empty. It is the one call a handler makes, on every transport and
// protocol version, typed tools included (they have the context, not the
// Request).
//
// The client hears of it as notifications/progress when it asked for
// progress with a progressToken (a string or a number; any other token is
// ignored, as the spec allows only those). Reports closer together than
// ProgressInterval are coalesced: the latest is sent at the end of the
// interval, so a tight loop cannot flood the stream. ReportProgress never
// blocks on the client: notifications are sent from a goroutine of the
// call's own, one at a time, and none is sent once the call has returned.
//
// Middleware that watches progress sees every report, coalesced or not:
// middleware.Timeout's idle limit starts again at each one. Outside a tool
// call ReportProgress does nothing.
func ReportProgress(ctx context.Context, done, total float64, message string) {
	for w := watchersOf(ctx); w != nil; w = w.next {
		w.touch(done, total, message)
	}
	if p, ok := ctx.Value(progressKey{}).(*progress); ok {
		p.report(done, total, message)
	}
}

// A ProgressWatcher is called with each progress report of the calls it
// watches (see [WatchProgress]), on the reporting goroutine. It must be
// quick and safe for concurrent use.
type ProgressWatcher func(done, total float64, message string)

// WatchProgress returns a context for the rest of a call's chain in which
// every [ReportProgress] calls w: for middleware that treats progress as a
// sign of life, as middleware.Timeout's idle limit does, or that passes
// it on elsewhere, as a task's status message. Watchers of outer layers
// keep being called.
func WatchProgress(ctx context.Context, w ProgressWatcher) context.Context {
	return context.WithValue(ctx, watcherKey{}, &watcher{touch: w, next: watchersOf(ctx)})
}

type watcher struct {
	touch ProgressWatcher
	next  *watcher
}

type watcherKey struct{}

func watchersOf(ctx context.Context) *watcher {
	w, _ := ctx.Value(watcherKey{}).(*watcher)
	return w
}

type progressKey struct{}

// progress sends the progress notifications of one call to its client,
// coalesced, from a goroutine of its own.
type progress struct {
	ss    *mcp.ServerSession
	token any
	ctx   context.Context // the call's values, without its end

	mu      sync.Mutex
	pending *mcp.ProgressNotificationParams // the latest report not sent yet
	sending bool                            // a goroutine sends or waits out the interval
	closed  bool

	// sendMu is held while a notification is being sent, so that close
	// waits for it: none may follow the call's result.
	sendMu sync.Mutex
}

// withProgress returns ctx with the progress sender of call, when its
// client asked for progress with a valid token and there is a session to
// send on; ctx itself otherwise. The returned function ends the sending,
// when the call returns.
func withProgress(ctx context.Context, call *mcp.CallToolRequest) (context.Context, func()) {
	if call == nil || call.Session == nil || call.Params == nil {
		return ctx, func() {}
	}
	token := call.Params.GetProgressToken()
	switch token.(type) {
	case string, float64, int, int32, int64, uint, uint32, uint64:
	default:
		return ctx, func() {}
	}
	p := &progress{ss: call.Session, token: token, ctx: context.WithoutCancel(ctx)}
	return context.WithValue(ctx, progressKey{}, p), p.close
}

func (p *progress) report(done, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.pending = &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: done, Total: total, Message: message}
	if !p.sending {
		p.sending = true
		go p.send()
	}
}

// send sends the pending report, then waits out the interval and sends the
// report that came meanwhile, if any, until there is none.
func (p *progress) send() {
	for {
		p.mu.Lock()
		n := p.pending
		p.pending = nil
		if n == nil || p.closed {
			p.sending = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.sendMu.Lock()
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if !closed {
			p.ss.NotifyProgress(p.ctx, n) // an error means the client has gone: nothing to do
		}
		p.sendMu.Unlock()
		time.Sleep(ProgressInterval)
	}
}

// close ends the sending, once a notification being sent has gone: the
// call's result follows.
func (p *progress) close() {
	p.sendMu.Lock() // wait out a notification being sent
	defer p.sendMu.Unlock()
	p.mu.Lock()
	p.closed, p.pending = true, nil
	p.mu.Unlock()
}
