package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultShareTopic is the topic of [Server.ShareChanges] when
// [ShareOptions].Topic is empty.
const DefaultShareTopic = "tools"

// DefaultShareDelay is how long [Server.ShareChanges] gathers local
// changes into one event when [ShareOptions].Delay is zero.
const DefaultShareDelay = 10 * time.Millisecond

// ShareOptions configures [Server.ShareChanges]. The zero value, and a nil
// *ShareOptions, are the defaults.
type ShareOptions struct {
	// Topic is the bus topic the replicas share; empty means
	// [DefaultShareTopic]. Fleets of different servers on one bus need
	// topics of their own, and nothing else may publish on it.
	Topic string

	// OnChange, if set, is called when another replica's tools changed, or
	// when the bus may have lost events (it reconnected, or fell behind),
	// before this replica's clients are told that the list changed. It is
	// where a replica catches up with the configuration the replicas share:
	// reload feature flags and call [Server.Refresh], Add or Remove the
	// tools that another replica added or removed. The changes it makes
	// before it returns are not published again, so that replicas do not
	// echo each other's events; since a change does not say who made it,
	// neither is a change that another goroutine makes meanwhile (its own
	// clients are told, the other replicas are not). A replica that
	// changes the shared configuration should write it before changing its
	// registry, so that the event never arrives before what it announces.
	//
	// ctx is done when sharing stops. Calls do not overlap: events that
	// arrive while OnChange runs lead to one more call once it returns. An
	// error it returns, or a panic, is logged, and the clients are told
	// nevertheless. OnChange must not call the stop function of the
	// sharing it belongs to.
	OnChange func(ctx context.Context) error

	// Delay is how long a local change waits for others before they are
	// published together, as one event: a burst of changes (tools added one
	// by one at start-up, say) costs a few events, not one per change.
	// Zero means [DefaultShareDelay]; a negative Delay publishes at once,
	// still gathering the changes made while the previous event was being
	// published.
	Delay time.Duration

	// Logger receives the failures to publish and OnChange's errors. Nil
	// means the server's logger ([ServerOptions].Logger).
	Logger *slog.Logger
}

// changeEvent is what a replica publishes when its tools change, as JSON:
// {"origin":"<replica>","seq":<n>}. Origin, random for each Server, tells
// a replica its own events apart (also those of its other sharings); seq
// numbers the Server's events from 1, for those reading the bus (a
// receiver does not depend on it: any event means "resynchronise").
//
// An event of another kind names it: {"origin":...,"seq":<n>,
// "kind":"resourceUpdated","uri":"<uri>"} says that the resource at uri
// was updated (see [Server.ResourceUpdated]). An event without a kind is a
// change, as it always was; one of a kind a replica does not know, or
// without what its kind needs, is taken for a change too.
type changeEvent struct {
	Origin string `json:"origin"`
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// resourceUpdatedEvent is the kind of the changeEvent of an update of a
// resource.
const resourceUpdatedEvent = "resourceUpdated"

// ShareChanges makes s one replica of a fleet whose replicas tell each
// other, through bus, that their tools changed, so that a client hears of a
// change whichever replica it listens on; the returned stop function ends
// that (see also the package documentation, "Several replicas").
//
// Each change of s's registry that makes its clients receive
// notifications/tools/list_changed (Add, Remove, RemoveVersion, Transform,
// SetVisibility, Refresh, Use, UseList) is published on the topic, a few
// small events for a burst of changes (see [ShareOptions].Delay). An event
// is {"origin":"<random identifier of s>","seq":<n>}, and says nothing of
// the change: each replica builds its registry itself (from code, and from
// the configuration the replicas share, in [ShareOptions].OnChange), so
// events only say when to look again. On an event of another replica, or a nil
// payload from bus after a reconnection, s calls OnChange, if set, and then
// sends notifications/tools/list_changed to its own clients, even when its
// own tools did not change: the fleet's did, and the client's next
// tools/list may reach another replica. Events never name a session.
//
// While a per-request [Visibility] is in effect, a replica whose OnChange
// caught up (it is set and returned nil) serves what the fleet serves, and
// tells only the listeners whose list it changed, as for its own changes
// (see [Server.Refresh]): the changes OnChange makes are judged as they are
// made, and every listener is judged once more after it returns, for
// predicates that read the shared configuration without a Refresh. A
// replica without OnChange, or whose OnChange failed, cannot know what
// changed and tells every listener: they learn that something changed in
// the fleet, tools hidden from them included.
//
// [Server.ResourceUpdated] publishes too, an event of its own kind that
// names the URI ({"origin":...,"seq":<n>,"kind":"resourceUpdated",
// "uri":"<uri>"}): each other replica tells its own subscribers of that
// URI, and calls no OnChange. A replica that does not know the kind takes
// it for a change.
//
// A failure to publish is logged and never fails the change, which is
// already served locally. stop, which may be called any number of times,
// drops changes not yet published, ends the subscription, cancels the
// context of a running OnChange and waits for it to return; nothing is
// published or received after it returns. ShareChanges fails only when
// bus is nil or refuses the subscription.
func (s *Server) ShareChanges(bus EventBus, opts *ShareOptions) (stop func(), err error) {
	if bus == nil {
		return nil, errors.New("mcpkit: ShareChanges: nil bus")
	}
	var o ShareOptions
	if opts != nil {
		o = *opts
	}
	if o.Topic == "" {
		o.Topic = DefaultShareTopic
	}
	if o.Delay == 0 {
		o.Delay = DefaultShareDelay
	}
	if o.Logger == nil {
		o.Logger = s.logger
	}
	sh := &sharer{
		server:  s,
		bus:     bus,
		opts:    o,
		local:   make(chan struct{}, 1),
		remote:  make(chan struct{}, 1),
		updates: make(chan struct{}, 1),
	}
	ctx, cancel := context.WithCancel(context.Background())
	unsubscribe, err := bus.Subscribe(ctx, o.Topic, sh.receive)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("mcpkit: ShareChanges: subscribing to %q: %w", o.Topic, err)
	}
	s.mu.Lock()
	s.sharers = append(s.sharers, sh)
	s.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { sh.publishing(ctx) })
	wg.Go(func() { sh.resyncing(ctx) })
	wg.Go(func() { sh.updating(ctx) })
	var first atomic.Bool
	stopped := make(chan struct{})
	return func() {
		if !first.CompareAndSwap(false, true) {
			<-stopped
			return
		}
		defer close(stopped)
		s.mu.Lock()
		s.sharers = slices.DeleteFunc(s.sharers, func(x *sharer) bool { return x == sh })
		s.mu.Unlock()
		cancel()
		unsubscribe()
		wg.Wait()
	}, nil
}

// sharer is one ShareChanges in effect.
type sharer struct {
	server *Server
	bus    EventBus
	opts   ShareOptions
	local  chan struct{} // holds a token when a local change awaits publishing
	remote chan struct{} // holds a token when another replica's change awaits OnChange

	updates chan struct{} // holds a token when pending may not be empty
	mu      sync.Mutex
	pending []string // URIs other replicas updated, not told yet, each once
}

// shareChange has every sharing of s publish that s's tools changed, unless
// the change is OnChange's. s.mu is held.
func (s *Server) shareChange() {
	if s.resyncs > 0 {
		return
	}
	for _, sh := range s.sharers {
		signal(sh.local)
	}
}

// signal leaves a token in c, a channel of capacity 1, unless one is there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// publishing publishes an event for each batch of local changes, until ctx
// is done.
func (sh *sharer) publishing(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.local:
		}
		if sh.opts.Delay > 0 {
			t := time.NewTimer(sh.opts.Delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		// The event covers the changes made during the delay; those made
		// while it is being published get the next one.
		select {
		case <-sh.local:
		default:
		}
		payload, err := json.Marshal(changeEvent{Origin: sh.server.replica, Seq: sh.server.events.Add(1)})
		if err != nil {
			panic(err) // a struct of a string and a number always marshals
		}
		if err := sh.bus.Publish(ctx, sh.opts.Topic, payload); err != nil && ctx.Err() == nil {
			sh.opts.Logger.Error("mcpkit: publishing a change of the tools failed", "topic", sh.opts.Topic, "error", err)
		}
	}
}

// receive is the subscription's fn: it must return quickly, so it only
// leaves a token for resyncing.
func (sh *sharer) receive(payload []byte) {
	if payload != nil {
		var ev changeEvent
		// An event that does not parse was not ours: resynchronise.
		if json.Unmarshal(payload, &ev) == nil {
			if ev.Origin == sh.server.replica {
				return
			}
			if ev.Kind == resourceUpdatedEvent && ev.URI != "" {
				sh.mu.Lock()
				if !slices.Contains(sh.pending, ev.URI) {
					sh.pending = append(sh.pending, ev.URI)
				}
				sh.mu.Unlock()
				signal(sh.updates)
				return
			}
		}
	}
	signal(sh.remote)
}

// publishUpdate publishes that the resource at uri was updated.
func (sh *sharer) publishUpdate(ctx context.Context, uri string) error {
	payload, err := json.Marshal(changeEvent{Origin: sh.server.replica, Seq: sh.server.events.Add(1), Kind: resourceUpdatedEvent, URI: uri})
	if err != nil {
		panic(err) // strings and a number always marshal
	}
	if err := sh.bus.Publish(ctx, sh.opts.Topic, payload); err != nil {
		return fmt.Errorf("mcpkit: publishing an update of %q: %w", uri, err)
	}
	return nil
}

// updating tells this replica's subscribers of the resources other
// replicas updated, until ctx is done. Updates of one URI that arrive
// while it is busy are told once.
func (sh *sharer) updating(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.updates:
		}
		sh.mu.Lock()
		uris := sh.pending
		sh.pending = nil
		sh.mu.Unlock()
		for _, uri := range uris {
			if ctx.Err() != nil {
				return
			}
			sh.server.updated(ctx, uri, nil, false)
		}
	}
}

// resyncing runs OnChange and tells this replica's clients, once for each
// batch of other replicas' events, until ctx is done.
func (sh *sharer) resyncing(ctx context.Context) {
	s := sh.server
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.remote:
		}
		s.mu.Lock()
		s.resyncs++
		s.mu.Unlock()
		caughtUp := sh.opts.OnChange != nil && sh.onChange(ctx)
		s.mu.Lock()
		s.resyncs--
		if ctx.Err() == nil {
			s.resync(caughtUp)
		}
		s.mu.Unlock()
	}
}

// onChange calls OnChange, logging its error or its panic, and reports
// whether it returned nil.
func (sh *sharer) onChange(ctx context.Context) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			pe := NewPanicError(v)
			sh.opts.Logger.Error("mcpkit: ShareOptions.OnChange panicked", "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
			ok = false
		}
	}()
	if err := sh.opts.OnChange(ctx); err != nil {
		sh.opts.Logger.Error("mcpkit: ShareOptions.OnChange failed", "error", err)
		return false
	}
	return true
}

// resync tells s's listeners that another replica's tools changed, once
// OnChange, if any, has run; caughtUp says that it ran and succeeded.
// s.mu is held.
//
// A replica that caught up serves what the fleet serves: the changes
// OnChange made were reviewed as they were made, and, when callers are not
// all listed the same, every listener's view is checked once more, for
// predicates that read the shared configuration without a Refresh; the
// listeners whose view did not change hear nothing. A replica that could
// not catch up cannot judge, and tells every listener, as it does when
// everyone's list is the same (the fleet's changed). With providers, whose
// tools no review lists, every listener is told too.
func (s *Server) resync(caughtUp bool) {
	s.commit(nil, change{remote: true, caughtUp: caughtUp})
}
