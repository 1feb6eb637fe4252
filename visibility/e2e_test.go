package visibility_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestTagRules disables the tools tagged "beta" and, while serving, a tool
// by name; disabled tools are neither listed nor callable, on every
// transport.
func TestTagRules(t *testing.T) {
	var r *visibility.Rules // the current subtest's: they run one at a time
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("a"), tool("b", "beta"), tool("c", "beta", "x"), tool("d", "x"))
		r = visibility.New(visibility.Disable(mcpkit.Tagged("beta")))
		r.Attach(srv)
		return srv
	}
	mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
		if got := joined(names(t, ts.Session)); got != "a,d" {
			t.Errorf("listed %s, want a,d", got)
		}
		wantServed(t, ts.Session, "a", nil, "a")
		wantUnknown(t, ts.Session, "b", nil)
		wantUnknown(t, ts.Session, "c", nil)

		noD := visibility.Disable(mcpkit.Named("d"))
		r.Add(noD)
		if got := joined(names(t, ts.Session)); got != "a" {
			t.Errorf("after Disable(d): listed %s, want a", got)
		}
		wantUnknown(t, ts.Session, "d", nil)
		r.Remove(noD)
		if got := joined(names(t, ts.Session)); got != "a,d" {
			t.Errorf("after removing Disable(d): listed %s, want a,d", got)
		}
		wantServed(t, ts.Session, "d", nil, "d")
	}, nil)
}

// TestAllowlist serves only what Enable rules select, and a Disable rule
// beats an Enable rule.
func TestAllowlist(t *testing.T) {
	var r *visibility.Rules // the current subtest's
	newSrv := func(t *testing.T) *mcpkit.Server {
		srv := newServer(t, nil, tool("a", "public"), tool("b", "public", "broken"), tool("c"), tool("d"))
		r = visibility.NewAllowlist(
			visibility.Enable(mcpkit.Tagged("public")),
			visibility.Disable(mcpkit.Tagged("broken")),
		)
		r.Attach(srv)
		return srv
	}
	mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
		if got := joined(names(t, ts.Session)); got != "a" {
			t.Errorf("listed %s, want a", got)
		}
		wantServed(t, ts.Session, "a", nil, "a")
		for _, name := range []string{"b", "c", "d"} {
			wantUnknown(t, ts.Session, name, nil)
		}
		d := visibility.Enable(mcpkit.Named("d", "b"))
		r.Add(d)
		if got := joined(names(t, ts.Session)); got != "a,d" {
			t.Errorf("after Enable(d, b): listed %s, want a,d (b stays disabled)", got)
		}
		wantServed(t, ts.Session, "d", nil, "d")
		wantUnknown(t, ts.Session, "b", nil)
	}, nil)

	t.Run("empty", func(t *testing.T) {
		srv := newServer(t, nil, tool("a"))
		visibility.NewAllowlist().Attach(srv)
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		if got := names(t, ts.Session); len(got) != 0 {
			t.Errorf("an empty allowlist lists %v", got)
		}
		wantUnknown(t, ts.Session, "a", nil)
	})
}

var _ = mcp.Meta{}
