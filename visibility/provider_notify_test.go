package visibility_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/mcpkit/mcpkit"
)

// noTools is a Provider with nothing to provide (yet).
type noTools struct{}

func (noTools) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (noTools) LookupTool(context.Context, mcpkit.Caller, string) (*mcpkit.Tool, error) {
	return nil, nil
}

// TestProviderChangedPerPrincipal checks, on both eras, that a provider's
// change for one principal reaches that principal's listeners alone, one
// for everyone reaches everyone, and registry changes still reach
// everyone, with no per-request rule in effect.
func TestProviderChangedPerPrincipal(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newServer(t, nil, tool("a"))
				srv.AddProvider(noTools{})
				h := bearerHandler(srv)
				ada := listen(t, h, "admin-token", era)
				bob := listen(t, h, "user-token", era)
				synctest.Wait()

				srv.ProviderChanged("sub:ada")
				ada.check(t, "ProviderChanged(ada)", true, "a")
				bob.check(t, "ProviderChanged(ada)", false, "a")

				srv.ProviderChanged("")
				ada.check(t, "ProviderChanged(everyone)", true, "a")
				bob.check(t, "ProviderChanged(everyone)", true, "a")

				mustAdd(t, srv, tool("b"))
				ada.check(t, "Add", true, "a,b")
				bob.check(t, "Add", true, "a,b")
			})
		})
	}
}
