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
// interval, so a tight loop cannot flood the stream. The report still
// pending when the handler returns is sent at once, before the result, so
// the client hears the last report. ReportProgress never blocks on the
// client: notifications are sent from a goroutine of the call's own, one
// at a time, and none is sent once the call has been answered or its
// client has cancelled it, whatever the handler goes on reporting.
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

// progressToken returns the progress token of call, if it has one that
// the spec allows (a string or a number) and a session to send on.
func progressToken(call *mcp.CallToolRequest) (any, bool) {
	if call == nil || call.Session == nil || call.Params == nil {
		return nil, false
	}
	token := call.Params.GetProgressToken()
	switch token.(type) {
	case string, float64, int, int32, int64, uint, uint32, uint64:
		return token, true
	}
	return nil, false
}

// progress sends the progress notifications of one call to its client,
// coalesced, from a goroutine of its own, until the call is answered or
// cancelled. Then it lets go of the call's session and context: work the
// call started that outlives it (a task's) may keep the progress in its
// context, and must not keep the session, which on a stateless server
// holds the call's whole message.
type progress struct {
	token any

	mu      sync.Mutex
	ss      *mcp.ServerSession              // nil once the sending has ended
	ctx     context.Context                 // the call's; nil once the sending has ended
	pending *mcp.ProgressNotificationParams // the latest report not sent yet
	sending bool                            // a goroutine sends or waits out the interval
	ended   bool

	// sendMu is held while a report is taken from pending and sent, so
	// that close, which takes it too, sends the last report after every
	// other, and none after the result.
	sendMu sync.Mutex
}

// withProgress returns ctx with the progress sender of call, when its
// client asked for progress with a valid token and there is a session to
// send on; ctx itself otherwise. The returned function ends the sending,
// when the call returns, after sending the report still pending.
func withProgress(ctx context.Context, call *mcp.CallToolRequest) (context.Context, func()) {
	token, ok := progressToken(call)
	if !ok {
		return ctx, func() {}
	}
	p := &progress{ss: call.Session, token: token, ctx: ctx}
	stop := context.AfterFunc(ctx, func() { p.end() })
	return context.WithValue(ctx, progressKey{}, p), func() {
		stop()
		p.close()
	}
}

func (p *progress) report(done, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
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
		p.sendMu.Lock()
		p.mu.Lock()
		n, ss, ctx := p.pending, p.ss, p.ctx
		p.pending = nil
		if n == nil || p.ended {
			p.sending = false
			p.mu.Unlock()
			p.sendMu.Unlock()
			return
		}
		p.mu.Unlock()
		ss.NotifyProgress(ctx, n) // an error means the client has gone: nothing to do
		p.sendMu.Unlock()
		time.Sleep(ProgressInterval)
	}
}

// end ends the sending for good, and returns the report still pending and
// what to send it with (nil if the sending had ended already). It runs
// when the call's context ends (its client cancelled it, or went away),
// and when the call returns.
func (p *progress) end() (*mcp.ProgressNotificationParams, *mcp.ServerSession, context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ss, ctx := p.pending, p.ss, p.ctx
	p.ended, p.pending, p.ss, p.ctx = true, nil, nil, nil
	return n, ss, ctx
}

// close ends the sending when the call returns: once a notification being
// sent has gone, it sends the report still pending, if the call has not
// been cancelled; the call's result follows.
func (p *progress) close() {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	if n, ss, ctx := p.end(); n != nil && ctx.Err() == nil {
		ss.NotifyProgress(ctx, n)
	}
}
