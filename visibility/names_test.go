package visibility_test

import (
	"testing"
	"testing/synctest"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// namedCatalog returns a server serving delete_repo under four names: its
// own, its deprecated alias remove_repo, drop_repo (a tool derived from it
// with transform.Tool), all in namespace gh (a catalog transform); and,
// beside them, list_repos and delete_repos, a name that starts as
// delete_repo's does. The alias is callable, not listed.
func namedCatalog(t *testing.T) *mcpkit.Server {
	t.Helper()
	del := tool("delete_repo")
	alias, err := transform.Alias(del, "remove_repo", nil)
	if err != nil {
		t.Fatal(err)
	}
	drop, err := transform.Tool(del, transform.Spec{Name: "drop_repo"})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, nil, del, alias, drop, tool("list_repos"), tool("delete_repos"))
	if err := srv.Transform(transform.Namespace("gh", ".")); err != nil {
		t.Fatal(err)
	}
	return srv
}

// The names namedCatalog lists, and those of them that do not derive from
// delete_repo.
const (
	allNames    = "gh.delete_repo,gh.delete_repos,gh.drop_repo,gh.list_repos"
	othersNames = "gh.delete_repos,gh.list_repos"
)

// deleteRoutes are the names by which namedCatalog serves delete_repo.

var deleteRoutes = []string{"gh.delete_repo", "gh.remove_repo", "gh.drop_repo"}

// TestNamedRules adds and removes rules by name while serving, on every
// transport and both protocol eras: each changes exactly the named tool
// and the tools derived from it (its alias, a tool made from it, and their
// namespaced names), in what is listed and in what a call reaches.
func TestNamedRules(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			var r *visibility.Rules // the current subtest's: they run one at a time
			newSrv := func(t *testing.T) *mcpkit.Server {
				srv := namedCatalog(t)
				r = visibility.New()
				r.Attach(srv)
				return srv
			}
			mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
				cs := ts.Session
				lists := func(what, want string) {
					t.Helper()
					if got := joined(names(t, cs)); got != want {
						t.Errorf("%s: listed %s, want %s", what, got, want)
					}
				}
				lists("no rule", allNames)
				for _, rule := range []*visibility.Rule{
					visibility.DisableNames("delete_repo"),
					visibility.DisableVersion("delete_repo", ""),
				} {
					r.Add(rule)
					lists("after Add", othersNames)
					for _, name := range deleteRoutes {
						wantUnknown(t, cs, name, nil)
					}
					wantServed(t, cs, "gh.delete_repos", nil, "delete_repos")
					r.Remove(rule)
					lists("after Remove", allNames)
					for _, name := range deleteRoutes {
						wantServed(t, cs, name, nil, "delete_repo")
					}
				}

				// The alias by its own name: the alias alone.
				alias := visibility.DisableNames("remove_repo")
				r.Add(alias)
				lists("after DisableNames(remove_repo)", allNames)
				wantUnknown(t, cs, "gh.remove_repo", nil)
				wantServed(t, cs, "gh.delete_repo", nil, "delete_repo")
				r.Remove(alias)

				// A version that no tool has selects nothing.
				none := visibility.DisableVersion("delete_repo", "2")
				r.Add(none)
				lists("after DisableVersion(delete_repo, 2)", allNames)
				r.Remove(none)
			}, &mcpkittest.Options{ProtocolVersion: era})
		})
	}
}

// TestNamedRulesAllowlist enables tools by name in an allowlist while
// serving.
func TestNamedRulesAllowlist(t *testing.T) {
	srv := namedCatalog(t)
	r := visibility.NewAllowlist(visibility.EnableNames("list_repos"))
	r.Attach(srv)
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if got := joined(names(t, ts.Session)); got != "gh.list_repos" {
		t.Errorf("listed %s, want gh.list_repos", got)
	}
	on := visibility.EnableNames("delete_repo")
	r.Add(on)
	if got, want := joined(names(t, ts.Session)), "gh.delete_repo,gh.drop_repo,gh.list_repos"; got != want {
		t.Errorf("after EnableNames(delete_repo): listed %s, want %s", got, want)
	}
	for _, name := range deleteRoutes {
		wantServed(t, ts.Session, name, nil, "delete_repo")
	}
	r.Remove(on)
	if got := joined(names(t, ts.Session)); got != "gh.list_repos" {
		t.Errorf("after Remove: listed %s, want gh.list_repos", got)
	}
	wantUnknown(t, ts.Session, "gh.remove_repo", nil)
}

// TestNamedRulesPerRequest requires a scope for delete_repo by name, added
// and removed while serving: Bob, without the scope, loses delete_repo
// under every name it is served by, and keeps the rest; Ada keeps all.
func TestNamedRulesPerRequest(t *testing.T) {
	for _, mode := range httpModes {
		t.Run(mode.name, func(t *testing.T) {
			srv := namedCatalog(t)
			r := visibility.New()
			r.Attach(srv)
			ada := mode.connect(t, srv, as("admin-token", nil)).Session
			bob := mode.connect(t, srv, as("user-token", nil)).Session
			admin := visibility.RequireNames(visibility.Scopes("admin"), "delete_repo")
			r.Add(admin)
			if got := joined(names(t, ada)); got != allNames {
				t.Errorf("Ada lists %s, want %s", got, allNames)
			}
			if got := joined(names(t, bob)); got != othersNames {
				t.Errorf("Bob lists %s, want %s", got, othersNames)
			}
			for _, name := range deleteRoutes {
				wantServed(t, ada, name, nil, "delete_repo")
				wantUnknown(t, bob, name, nil)
			}
			r.Remove(admin)
			if got := joined(names(t, bob)); got != allNames {
				t.Errorf("after Remove: Bob lists %s, want %s", got, allNames)
			}
			wantServed(t, bob, "gh.remove_repo", nil, "delete_repo")
		})
	}
}

// TestMixedRuleChange adds and removes, in one change, a rule by name and a
// rule with a match function: the server asks about every tool, and each
// rule takes effect.
func TestMixedRuleChange(t *testing.T) {
	srv := newServer(t, nil, tool("a"), tool("b", "beta"), tool("c"), tool("d"))
	r := visibility.New(visibility.DisableNames("d"))
	r.Attach(srv)
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	byName, byTag := visibility.DisableNames("a"), visibility.Disable(mcpkit.Tagged("beta"))
	r.Add(byName, byTag)
	if got := joined(names(t, ts.Session)); got != "c" {
		t.Errorf("after adding both: listed %s, want c", got)
	}
	wantUnknown(t, ts.Session, "a", nil)
	wantUnknown(t, ts.Session, "b", nil)
	r.Remove(byTag)
	if got := joined(names(t, ts.Session)); got != "b,c" {
		t.Errorf("after removing the tag rule: listed %s, want b,c", got)
	}
	r.Remove(byName, visibility.DisableNames("c")) // a rule not in effect is ignored
	if got := joined(names(t, ts.Session)); got != "a,b,c" {
		t.Errorf("after removing both: listed %s, want a,b,c", got)
	}
	wantServed(t, ts.Session, "a", nil, "a")
}

// TestNamedRuleListeners checks that clients listening for changes hear of
// a change of rules by name when what they are listed changes, and only
// then, on both eras, with a per-request rule in effect: the server
// compares each listener's view of the named tools before and after the
// change, not of every tool.
func TestNamedRuleListeners(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newServer(t, nil, tool("a"), tool("b"), tool("secret", "admin"))
				alias, err := transform.Alias(tool("secret", "admin"), "hidden", nil)
				if err != nil {
					t.Fatal(err)
				}
				mustAdd(t, srv, alias)
				rules := visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin")))
				rules.Attach(srv)
				h := bearerHandler(srv)
				ada := listen(t, h, "admin-token", era)
				bob := listen(t, h, "user-token", era)
				synctest.Wait()

				step := func(what string, change func(), adaHears, bobHears bool, adaLists, bobLists string) {
					t.Helper()
					change()
					ada.check(t, what, adaHears, adaLists)
					bob.check(t, what, bobHears, bobLists)
				}
				onlyAda := visibility.RequireNames(visibility.Users("ada"), "b")
				step("Add(RequireNames(b))", func() { rules.Add(onlyAda) },
					false, true, "a,b,secret", "a")
				step("Remove(RequireNames(b))", func() { rules.Remove(onlyAda) },
					false, true, "a,b,secret", "a,b")
				off := visibility.DisableNames("secret")
				step("Add(DisableNames) of an admin-only tool and its alias", func() { rules.Add(off) },
					true, false, "a,b", "a,b")
				if _, err := call(t.Context(), ada.cs, "hidden", nil); err == nil {
					t.Error("Ada reached the alias of a disabled tool")
				}
				step("Remove(DisableNames)", func() { rules.Remove(off) },
					true, false, "a,b,secret", "a,b")
				step("Add(DisableNames) of a tool everyone sees", func() { rules.Add(visibility.DisableNames("a")) },
					true, true, "b,secret", "b")
				step("Add(DisableNames) of no tool", func() { rules.Add(visibility.DisableNames("nothing")) },
					false, false, "b,secret", "b")
			})
		})
	}
}
