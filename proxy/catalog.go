package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// load reads the upstream's whole catalog through cs, page by page, and
// serves it. A tool whose definition did not change keeps its *Tool, so
// that the local server keeps what it built for it.
func (u *Upstream) load(ctx context.Context, cs *mcp.ClientSession) error {
	var defs []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for pages := 0; ; pages++ {
		if pages == DefaultMaxPages {
			return fmt.Errorf("proxy: %s lists more than %d pages of tools", u.label(), DefaultMaxPages)
		}
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return fmt.Errorf("proxy: list the tools of %s: %w", u.label(), err)
		}
		defs = append(defs, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		if res.NextCursor == params.Cursor {
			return fmt.Errorf("proxy: %s answered the same cursor twice", u.label())
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	old := u.catalog.Load()
	next := &catalog{byName: make(map[string]*mcpkit.Tool, len(defs))}
	var problems []error
	for _, d := range defs {
		if d == nil {
			continue
		}
		t, warn, err := u.tool(d)
		if warn != nil {
			problems = append(problems, warn)
		}
		if err != nil {
			problems = append(problems, err)
			u.logger.Warn("proxy: an upstream tool is left out", "upstream", u.Name(), "error", err)
			continue
		}
		if t == nil {
			continue
		}
		if _, dup := next.byName[t.Name]; dup {
			continue
		}
		if old != nil {
			if prev := old.byName[t.Name]; prev != nil && sameDefinition(&prev.Tool, &t.Tool) && prev.Validation == t.Validation {
				t = prev
			}
		}
		next.byName[t.Name] = t
		next.tools = append(next.tools, t)
	}
	slices.SortFunc(next.tools, func(a, b *mcpkit.Tool) int { return strings.Compare(a.Name, b.Name) })
	u.mu.Lock()
	u.problems = problems
	u.mu.Unlock()
	u.catalog.Store(next)
	if !sameCatalog(old, next) {
		u.changed()
	}
	return nil
}

// tool returns the local tool serving d, an upstream tool: named with the
// prefix, its definition copied, its calls forwarded. It returns an error
// naming the tool when the tool cannot be served, and warn when it is
// served with a validation other than the one asked for.
func (u *Upstream) tool(d *mcp.Tool) (t *mcpkit.Tool, warn, err error) {
	name := u.opts.Prefix + d.Name
	if err := mcpkit.ValidateToolName(name); err != nil {
		return nil, nil, fmt.Errorf("proxy: %s: tool %q: %w", u.label(), schema.Clip(d.Name), err)
	}
	t = &mcpkit.Tool{Tool: *d, Handler: &forward{u: u, name: d.Name}, Middleware: u.mw, Validation: u.opts.Validation}
	t.Name = name
	t.Icons = slices.Clone(d.Icons)
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if u.opts.Validation == mcpkit.NoValidation {
		return t, nil, nil
	}
	for _, s := range []struct {
		which string
		v     any
	}{{"input", t.InputSchema}, {"output", t.OutputSchema}} {
		if s.v == nil {
			continue
		}
		if _, err := schema.Compile(s.v); err != nil {
			err = fmt.Errorf("proxy: %s: tool %q: the local validator cannot enforce its %s schema: %w", u.label(), name, s.which, err)
			if u.opts.Unenforceable == mcpkit.DefaultValidation {
				return nil, nil, err
			}
			u.logger.Warn("proxy: an upstream tool is served with another validation", "upstream", u.Name(), "error", err)
			t.Validation = u.opts.Unenforceable
			return t, err, nil
		}
	}
	return t, nil, nil
}

// sameDefinition reports whether two definitions marshal alike.
func sameDefinition(a, b *mcp.Tool) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// sameCatalog reports whether two catalogs serve the same tools; nil is
// the empty catalog.
func sameCatalog(a, b *catalog) bool {
	var x, y []*mcpkit.Tool
	if a != nil {
		x = a.tools
	}
	if b != nil {
		y = b.tools
	}
	return slices.Equal(x, y)
}

// wantRefresh asks the refresh loop to read the catalog again.
func (u *Upstream) wantRefresh() {
	select {
	case u.refresh <- struct{}{}:
	default: // one is pending already
	}
}

// refreshLoop reads the catalog again each time it is asked to, one read
// at a time: asks that come during a read make one more read.
//
// A read that fails while the upstream is down, or before any catalog was
// read, is tried again after a delay, from minRetry doubling up to
// maxRetry, until it succeeds: so an upstream that was down when New ran,
// or whose tools are dropped while it is away (and so are not called,
// which would reconnect), comes back on its own. A lost session is
// reconnected at once, but no sooner than minRetry after it connected, so
// that an upstream that drops every session as it begins cannot make the
// proxy reconnect in a loop, and one that drops idle sessions is served.
// retrying says New's own attempt failed.
func (u *Upstream) refreshLoop(retrying bool) {
	defer u.loops.Done()
	var retry <-chan time.Time
	delay := minRetry
	if retrying {
		retry = time.After(delay)
		delay *= 2
	}
	for {
		select {
		case <-u.done:
			return
		case <-u.refresh:
			u.mu.Lock()
			lost, lived := u.session == nil && u.down, u.lived
			u.lived = minRetry
			u.mu.Unlock()
			if lost && lived < minRetry {
				// Its sessions end as they begin: reconnect no sooner than
				// minRetry after the last connection.
				if retry == nil {
					retry = time.After(minRetry - lived)
				}
				continue
			}
			if lost {
				delay = minRetry
			}
		case <-retry:
		}
		retry = nil
		ctx, cancel := u.ownContext()
		cs, err := u.current(ctx)
		if err == nil {
			if err = u.load(ctx, cs); err != nil && u.broken(err) {
				u.lost(cs)
			}
		}
		cancel()
		if err == nil {
			continue
		}
		if errors.Is(err, ErrClosed) {
			return
		}
		u.logger.Warn("proxy: could not read the upstream's catalog", "upstream", u.Name(), "error", err)
		u.mu.Lock()
		again := u.down || u.catalog.Load() == nil
		u.mu.Unlock()
		if again {
			retry = time.After(delay)
			delay = min(2*delay, maxRetry)
		}
	}
}

// The delays between attempts to reach an upstream that is down.
const (
	minRetry = time.Second
	maxRetry = time.Minute
)
