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
	"github.com/mcpkit/mcpkit/skills"
)

// The kinds of the upstream's catalog, as bits: what a refresh reads.
const (
	kindTools uint32 = 1 << iota
	kindPrompts
	kindResources // resources and templates, which change together

	allKinds = kindTools | kindPrompts | kindResources
)

// load reads through cs the kinds of the upstream's catalog that kinds
// names, each list page by page, and serves them with the kinds it did
// not read as they were. A kind the upstream does not declare is served
// empty without asking. A definition that did not change keeps its local
// value (its *Tool, *Prompt, ...), so that the local server keeps what it
// built for it. It returns the kinds it failed to read, which keep their
// last copy: all of them when the tools could not be read.
func (u *Upstream) load(ctx context.Context, cs *mcp.ClientSession, kinds uint32) (failed uint32, err error) {
	old := u.catalog.Load()
	next := &catalog{}
	if old != nil {
		*next = *old
	} else {
		next.byName = map[string]*mcpkit.Tool{}
		next.byPrompt = map[string]*mcpkit.Prompt{}
		next.byURI = map[string]*mcpkit.Resource{}
	}
	var caps mcp.ServerCapabilities
	if r := cs.InitializeResult(); r != nil && r.Capabilities != nil {
		caps = *r.Capabilities
	}
	next.completes = caps.Completions != nil
	_, next.skills = caps.Extensions[skills.ExtensionID]
	if kinds&kindTools != 0 {
		defs, err := readAll(ctx, u, "tools", func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
			res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.Tools, res.NextCursor, nil
		})
		// An upstream that does not declare tools may refuse to list them:
		// it has none.
		if err != nil && (caps.Tools != nil || upstreamAnswer(err) == nil) {
			return kinds, err
		}
		u.loadTools(next, old, defs)
	}
	var errs []error
	if kinds&kindPrompts != 0 {
		var defs []*mcp.Prompt
		var err error
		if caps.Prompts != nil {
			defs, err = readAll(ctx, u, "prompts", func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
				res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Prompts, res.NextCursor, nil
			})
		}
		if err != nil {
			failed |= kindPrompts
			errs = append(errs, err)
		} else {
			u.loadPrompts(next, old, defs)
		}
	}
	if kinds&kindResources != 0 {
		var (
			defs  []*mcp.Resource
			tdefs []*mcp.ResourceTemplate
			err   error
		)
		if caps.Resources != nil {
			defs, err = readAll(ctx, u, "resources", func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
				res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Resources, res.NextCursor, nil
			})
			if err == nil {
				tdefs, err = readAll(ctx, u, "resource templates", func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
					res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
					if err != nil {
						return nil, "", err
					}
					return res.ResourceTemplates, res.NextCursor, nil
				})
			}
		}
		if err != nil {
			failed |= kindResources
			errs = append(errs, err)
		} else {
			u.loadResources(next, old, defs, tdefs)
		}
	}
	u.catalog.Store(next)
	if !sameCatalog(old, next) {
		u.changed()
	}
	return failed, errors.Join(errs...)
}

// readAll reads one list of the upstream (what it lists, for errors)
// across its pages, page reading the page at a cursor: at most
// DefaultMaxPages of them, and never the same cursor twice.
func readAll[T any](ctx context.Context, u *Upstream, what string, page func(context.Context, string) ([]T, string, error)) ([]T, error) {
	var all []T
	cursor := ""
	for pages := 0; ; pages++ {
		if pages == DefaultMaxPages {
			return nil, fmt.Errorf("proxy: %s lists more than %d pages of %s", u.label(), DefaultMaxPages, what)
		}
		items, nextCursor, err := page(ctx, cursor)
		if err != nil {
			return nil, fmt.Errorf("proxy: list the %s of %s: %w", what, u.label(), err)
		}
		all = append(all, items...)
		if nextCursor == "" {
			return all, nil
		}
		if nextCursor == cursor {
			return nil, fmt.Errorf("proxy: %s answered the same cursor twice", u.label())
		}
		cursor = nextCursor
	}
}

// loadTools makes defs, the upstream's tools, the tools of next, keeping
// those of old whose definitions did not change.
func (u *Upstream) loadTools(next, old *catalog, defs []*mcp.Tool) {
	next.tools = nil
	next.byName = make(map[string]*mcpkit.Tool, len(defs))
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
	next.toolProblems = problems
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
func sameDefinition[T any](a, b *T) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// sameCatalog reports whether two catalogs serve the same tools, prompts,
// resources and templates; nil is the empty catalog.
func sameCatalog(a, b *catalog) bool {
	if a == nil {
		a = &catalog{}
	}
	if b == nil {
		b = &catalog{}
	}
	return slices.Equal(a.tools, b.tools) && slices.Equal(a.prompts, b.prompts) &&
		slices.Equal(a.resources, b.resources) && slices.Equal(a.templates, b.templates)
}

// wantRefresh asks the refresh loop to read the kinds of the catalog
// again.
func (u *Upstream) wantRefresh(kinds uint32) {
	u.stale.Or(kinds)
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
		retry = u.clock.After(delay)
		delay *= 2
	}
	for {
		select {
		case <-u.done:
			return
		case <-u.refresh:
			u.mu.Lock()
			lost, since := u.session == nil && u.down, u.clock.Now().Sub(u.connected)
			u.mu.Unlock()
			if lost && since < minRetry {
				// Its sessions end as they begin: reconnect no sooner than
				// minRetry after the last connection, however many asks
				// the loss made.
				if retry == nil {
					retry = u.clock.After(minRetry - since)
				}
				continue
			}
			if lost {
				delay = minRetry
			}
		case <-retry:
		}
		retry = nil
		kinds := u.stale.Swap(0)
		if kinds == 0 {
			kinds = allKinds // a retry: read everything
		}
		ctx, cancel := u.ownContext()
		cs, err := u.current(ctx)
		failed := kinds
		if err == nil {
			if failed, err = u.load(ctx, cs, kinds); err != nil && u.broken(err) {
				u.lost(cs)
			}
		}
		cancel()
		// What failed is read again on the next refresh.
		u.stale.Or(failed)
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
			retry = u.clock.After(delay)
			delay = min(2*delay, maxRetry)
		}
	}
}

// The delays between attempts to reach an upstream that is down.
const (
	minRetry = time.Second
	maxRetry = time.Minute
)
