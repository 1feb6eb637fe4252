package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// atk46bToggle is a Visibility that disables the served names in off.
type atk46bToggle struct{ off map[string]bool }

func (v *atk46bToggle) Enabled(t *Tool) bool                        { return !v.off[t.Name] }
func (v *atk46bToggle) PerRequest() bool                            { return false }
func (v *atk46bToggle) Allowed(context.Context, *Tool, Caller) bool { return true }

// atk46bCheckRecords checks the records of s against what is registered:
// no record is empty; each holds under its name the versions registered
// under it, the enabled tools served under it, and chains only for tools
// served under it whose registered tool is still registered.
func atk46bCheckRecords(t *testing.T, s *Server, when string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	live := map[*Tool]bool{} // what the transforms made of each registered tool
	enabled := map[*Tool]bool{}
	for name, r := range s.reg {
		if len(r.versions) == 0 && len(r.group) == 0 && len(r.chains) == 0 {
			t.Fatalf("%s: the record of %s is empty and kept", when, name)
		}
		for _, v := range r.versions {
			if v.Name != name {
				t.Fatalf("%s: %s registered in the record of %s", when, v.Name, name)
			}
			dv := s.derivationOf(v)
			if dv.tool != nil {
				live[dv.tool] = true
				if dv.enabled {
					enabled[dv.tool] = true
				}
			}
		}
	}
	for name, r := range s.reg {
		for _, d := range r.group {
			if d.Name != name || !enabled[d] {
				t.Fatalf("%s: the group of %s holds %s (enabled and registered: %v)", when, name, d.Name, enabled[d])
			}
		}
		for _, bc := range r.chains {
			if bc.tool.Name != name || !live[bc.tool] {
				t.Fatalf("%s: the record of %s keeps a chain of %s (its tool registered: %v)", when, name, bc.tool.Name, live[bc.tool])
			}
		}
	}
	// The state served agrees: each name served has the record's group,
	// each with the chain the record keeps for it.
	st := s.state.Load()
	served := 0
	for n := range st.byName.All() {
		served++
		r := s.reg[n.name]
		if r == nil || len(r.group) != len(n.versions) {
			t.Fatalf("%s: %s is served with %d versions, its record's group differs", when, n.name, len(n.versions))
		}
		for _, e := range n.versions {
			if !slices.Contains(r.group, e.derived) {
				t.Fatalf("%s: %s %s is served, not in its record's group", when, n.name, e.derived.Version)
			}
			if c := r.chainOf(e.derived); c != e.chain {
				t.Fatalf("%s: %s %s is served with another chain than its record keeps (%p, %p)", when, n.name, e.derived.Version, e.chain, c)
			}
		}
	}
	groups := 0
	for _, r := range s.reg {
		if len(r.group) > 0 {
			groups++
		}
	}
	if groups != served {
		t.Fatalf("%s: %d names served, %d records with a group", when, served, groups)
	}
	for d := range enabled {
		r := s.reg[d.Name]
		found := false
		if r != nil {
			for _, x := range r.group {
				found = found || x == d
			}
		}
		if !found {
			t.Fatalf("%s: %s %s is enabled and not in its record's group", when, d.Name, d.Version)
		}
	}
}

// atk46bSeeds and atk46bSteps size TestAttack46bRecordsAtRandom.
var atk46bSeeds, atk46bSteps = 12, 500

// TestAttack46bRecordsAtRandom runs random changes on a server whose
// transforms rename some tools onto others' names (Add, ReplaceDuplicates,
// Remove, RemoveVersion, Visibility, Use, Transform that succeeds or
// fails) and checks the records after each; after removing every tool, no
// record is left.
func TestAttack46bRecordsAtRandom(t *testing.T) {
	for seed := range uint64(atk46bSeeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(46, seed))
			s := NewServer(&mcp.Implementation{Name: "atk46b-records"}, &ServerOptions{ReplaceDuplicates: true})
			vis := &atk46bToggle{off: map[string]bool{}}
			s.SetVisibility(vis)
			names := []string{"a", "b", "c", "x", "y"}
			vers := []string{"", "1", "2"}
			renameTo := func() CatalogTransform {
				// Each name is kept, renamed (by version too: a
				// replacement may move), or left out ("").
				m := map[[2]string]string{}
				for _, n := range names {
					for _, v := range vers {
						switch rng.IntN(6) {
						case 0, 1:
							m[[2]string{n, v}] = names[rng.IntN(len(names))]
						case 2:
							m[[2]string{n, v}] = ""
						}
					}
				}
				return func(tl *Tool) (*Tool, error) {
					to, ok := m[[2]string{tl.Name, tl.Version}]
					switch {
					case !ok:
						return tl, nil
					case to == "":
						return nil, nil
					}
					c := tl.Clone()
					c.Name = to
					return c, nil
				}
			}
			mk := func(name, ver string) *Tool {
				return &Tool{Tool: mcp.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}}, Version: ver,
					Handler: HandlerFunc(func(context.Context, *Request) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil })}
			}
			if err := s.Transform(renameTo()); err != nil {
				t.Fatal(err)
			}
			for step := range atk46bSteps {
				var what string
				switch op := rng.IntN(10); op {
				case 0, 1:
					n, v := names[rng.IntN(len(names))], vers[rng.IntN(len(vers))]
					what = "Add " + n + "@" + v
					_ = s.Add(mk(n, v)) // collisions are refused
				case 2:
					var batch []*Tool
					what = "Add"
					for range 1 + rng.IntN(4) {
						n, v := names[rng.IntN(len(names))], vers[rng.IntN(len(vers))]
						batch = append(batch, mk(n, v))
						what += " " + n + "@" + v
					}
					_ = s.Add(batch...) // collisions and twice in one Add are refused
				case 3:
					n := names[rng.IntN(len(names))]
					what = "Remove " + n
					s.Remove(n)
				case 4:
					n, v := names[rng.IntN(len(names))], vers[rng.IntN(len(vers))]
					what = "RemoveVersion " + n + "@" + v
					s.RemoveVersion(n, v)
				case 5:
					n := names[rng.IntN(len(names))]
					vis.off[n] = !vis.off[n]
					what = fmt.Sprintf("visibility %s off=%v", n, vis.off[n])
					if rng.IntN(2) == 0 {
						s.RefreshTools(n)
					} else {
						s.Refresh()
					}
				case 6:
					what = "Use"
					s.Use(func(h Handler) Handler { return h })
				case 7:
					what = "Transform"
					_ = s.Transform(renameTo()) // collisions are refused
				case 8:
					what = "failing Transform"
					bad := names[rng.IntN(len(names))]
					err := s.Transform(func(tl *Tool) (*Tool, error) {
						if tl.Name == bad {
							return nil, errors.New("atk46b: refused")
						}
						return tl, nil
					})
					_ = err // fails only when a tool is served as bad
				case 9:
					what = "SetVisibility"
					s.SetVisibility(vis)
				}
				atk46bCheckRecords(t, s, fmt.Sprintf("step %d (%s)", step, what))
			}
			s.Remove(names...)
			atk46bCheckRecords(t, s, "after removing everything")
			s.mu.Lock()
			left := len(s.reg)
			s.mu.Unlock()
			if left != 0 {
				t.Errorf("%d records left after removing every tool", left)
			}
		})
	}
}
