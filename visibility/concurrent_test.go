package visibility_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestConcurrentRuleChanges toggles rules (a Disable by name, a Require, a
// Disable of a tool's highest version, each with a match function and with
// a constructor by name) and adds and removes a tool in a
// loop, while 16 goroutines call and list. Every answer must be consistent
// with some state of the rules: a toggled tool is served correctly or
// answered as unknown, a tool disabled at all times is never served or
// listed, a tool never disabled always is, and a versioned tool is served at
// one of its versions. Run it with -race.
func TestConcurrentRuleChanges(t *testing.T) {
	newSrv := func(t *testing.T) *mcpkit.Server {
		return newServer(t, nil, tool("always"), tool("never"), tool("toggled"), tool("gated"),
			versioned("v", "1"), versioned("v", "2"))
	}
	for _, c := range []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"inmemory", mcpkittest.NewInMemoryServer},
		{"stateless", mcpkittest.NewStatelessServer},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newSrv(t)
			rules := visibility.New(visibility.Disable(mcpkit.Named("never")))
			rules.Attach(srv)
			ts := c.connect(t, srv, as("user-token", nil))
			toggles := []*visibility.Rule{
				visibility.Disable(mcpkit.Named("toggled")),
				visibility.Require(mcpkit.Named("gated"), visibility.Scopes("admin")),
				visibility.Disable(visibility.Key("v", "2")),
				// The same by name: the server asks about those tools
				// alone (RefreshTools).
				visibility.DisableNames("toggled"),
				visibility.RequireNames(visibility.Scopes("admin"), "gated"),
				visibility.DisableVersion("v", "2"),
			}

			// The toggler changes something each time a worker finishes
			// a round, so that changes and requests interleave without
			// the toggler starving the workers.
			tick, stop := make(chan struct{}, 1), make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-tick:
					case <-stop:
						return
					}
					r := toggles[i%len(toggles)]
					if i/len(toggles)%2 == 0 {
						rules.Add(r)
					} else {
						rules.Remove(r)
					}
					switch i % 5 {
					case 0:
						srv.Add(tool("extra"))
					case 2:
						srv.Remove("extra")
					}
					if i%16 == 0 {
						runtime.GC() // let the cache see tools go
					}
				}
			})

			const workers, rounds = 16, 10
			errs := make(chan error, workers*rounds*8)
			var work sync.WaitGroup
			for range workers {
				work.Go(func() {
					for range rounds {
						checkRound(t.Context(), ts.Session, errs)
						select {
						case tick <- struct{}{}:
						default:
						}
					}
				})
			}
			work.Wait()
			close(stop)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// checkRound calls and lists once, sending what is inconsistent to errs.
func checkRound(ctx context.Context, cs *mcp.ClientSession, errs chan<- error) {
	expect := func(name string, ok func(got string, err error) bool) {
		got, err := call(ctx, cs, name, nil)
		if !ok(got, err) {
			errs <- fmt.Errorf("call %s: %q, %v", name, got, err)
		}
	}
	servedOrUnknown := func(name string) func(string, error) bool {
		return func(got string, err error) bool {
			return err == nil && got == name || err != nil && unknownMismatch(err, name) == ""
		}
	}
	expect("always", func(got string, err error) bool { return err == nil && got == "always" })
	expect("never", func(_ string, err error) bool { return unknownMismatch(err, "never") == "" })
	expect("toggled", servedOrUnknown("toggled"))
	expect("gated", servedOrUnknown("gated"))
	expect("extra", servedOrUnknown("extra"))
	expect("v", func(got string, err error) bool { return err == nil && (got == "v@1" || got == "v@2") })

	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		errs <- err
		return
	}
	var listed []string
	for _, tl := range res.Tools {
		listed = append(listed, tl.Name)
		if tl.Name == "v" {
			if v := tl.Meta[mcpkit.MetaKeyVersion]; v != "1" && v != "2" {
				errs <- fmt.Errorf("v listed at version %v", v)
			}
		}
	}
	if slices.Contains(listed, "never") || !slices.Contains(listed, "always") || !slices.Contains(listed, "v") {
		errs <- fmt.Errorf("listed %v", listed)
	}
	if !slices.IsSorted(listed) || len(slices.Compact(slices.Clone(listed))) != len(listed) {
		errs <- fmt.Errorf("listed %v: not sorted, or a tool twice", listed)
	}
}
