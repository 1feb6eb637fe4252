package proxy_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// eras are the two ways a local client reaches the proxy.
var eras = map[string]func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{
	"2026-07-28": mcpkittest.NewStatelessServer,
	"2025-11-25": mcpkittest.NewServer,
}

// upstreamEras are the two protocol versions the proxy speaks with an
// upstream: the newest, over a stateless endpoint, and the older one,
// with a session.
var upstreamEras = []struct {
	version  string
	sessions bool
}{{"2026-07-28", false}, {"2025-11-25", true}}

var localTokens = map[string]*auth.TokenInfo{
	"client-secret": {UserID: "ada", Expiration: time.Now().Add(24 * time.Hour)},
}

// TestProxyHTTP proxies an upstream on HTTP, on each protocol version,
// to local clients of each protocol version, through a real SDK client
// at each hop: the catalog is read across the upstream's pages and
// listed with the prefix, calls are forwarded with their arguments and
// _meta, a remote tool error stays a tool error, and the client's token
// never reaches the upstream, which sees only the proxy's credentials and
// those minted for the verified principal.
func TestProxyHTTP(t *testing.T) {
	for _, ue := range upstreamEras {
		for era, connect := range eras {
			t.Run("upstream "+ue.version+"/client "+era, func(t *testing.T) {
				us := newUpstream(t, ue.sessions, 2) // pages of 2: the catalog takes several
				up := newProxy(t, proxy.HTTP(us.url, &proxy.HTTPOptions{
					Header: http.Header{"Authorization": {"Bearer proxy-own"}},
				}), &proxy.Options{
					Prefix:          "crm_",
					ProtocolVersion: ue.version,
					Credentials: func(_ context.Context, req *mcpkit.Request) (http.Header, error) {
						if p := mcpkit.VerifiedPrincipal(req); p != "" {
							return http.Header{"Authorization": {"Bearer minted-for-" + p}}, nil
						}
						return nil, nil
					},
				})
				local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
				local.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "local_help", InputSchema: objectSchema("")},
					Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("help"), nil })})
				up.AddTo(local)
				ts := connect(t, local, &mcpkittest.Options{Tokens: localTokens, Token: "client-secret"})
				ctx := t.Context()

				var names []string
				for tl, err := range ts.Session.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, tl.Name)
				}
				want := []string{"crm_ask", "crm_die", "crm_echo", "crm_fail", "crm_huge", "crm_meta", "crm_rpcerr", "crm_steps", "crm_wait", "local_help"}
				if !slices.Equal(names, want) {
					t.Errorf("listed %v, want %v", names, want)
				}

				res, err := ts.CallTool(ctx, "crm_echo", map[string]any{"say": "hi"})
				if err != nil || res.IsError || resultText(res) != "echo: hi" {
					t.Fatalf("crm_echo: %v, %v (%s)", res, err, resultText(res))
				}

				res, err = ts.CallTool(ctx, "crm_fail", nil)
				if err != nil || !res.IsError || resultText(res) != "no such repository" || mcpkit.ErrorClassOf(res) != mcpkit.Fatal {
					t.Errorf("crm_fail: %v, %v (%s, class %q); want the upstream's fatal tool error", res, err, resultText(res), mcpkit.ErrorClassOf(res))
				}

				trace := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
				_, err = ts.Session.CallTool(ctx, &mcp.CallToolParams{Name: "crm_meta", Meta: mcp.Meta{
					"traceparent": trace, "tracestate": "k=v", mcpkit.MetaKeyVersion: "",
				}})
				if err != nil {
					t.Fatal(err)
				}
				us.probe.mu.Lock()
				got := us.probe.metas[len(us.probe.metas)-1]
				us.probe.mu.Unlock()
				if got["traceparent"] != trace || got["tracestate"] != "k=v" {
					t.Errorf("upstream saw _meta %v; want the trace context", got)
				}
				if _, ok := got[mcpkit.MetaKeyVersion]; ok {
					t.Errorf("upstream saw the local version pin: %v", got)
				}
				if ci, _ := got["io.modelcontextprotocol/clientInfo"].(map[string]any); ci != nil && ci["name"] != "mcpkit-proxy" {
					t.Errorf("upstream saw the local client's info %v; want the proxy's", ci)
				}

				auths := us.authorizations()
				for a := range auths {
					if strings.Contains(a, "client-secret") {
						t.Errorf("the client's token reached the upstream: %q", a)
					}
				}
				if !auths["Bearer proxy-own"] || !auths["Bearer minted-for-sub:ada"] {
					t.Errorf("upstream saw Authorization %v; want the proxy's own and the minted one", auths)
				}
			})
		}
	}
}

// TestProxyValidatesLocally checks that a call whose arguments fail the
// upstream's advertised schema is refused locally, naming the field, and
// never reaches the upstream.
func TestProxyValidatesLocally(t *testing.T) {
	us := newUpstream(t, false, 0)
	up := newProxy(t, proxy.HTTP(us.url, nil), nil)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewStatelessServer(t, local, nil)
	res, err := ts.CallTool(t.Context(), "echo", map[string]any{"say": 42})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "say") {
		t.Fatalf("got %v, %v (%s); want a validation error naming say", res, err, resultText(res))
	}
	us.probe.mu.Lock()
	calls := us.probe.calls
	us.probe.mu.Unlock()
	if calls != 0 {
		t.Errorf("the upstream was called %d times with invalid arguments", calls)
	}
}

// TestProxyUnenforceableSchema serves an upstream tool whose schema the
// local validator cannot enforce (a remote $ref): by default it is left
// out and reported; with Unenforceable set to NoValidation it is served,
// and reported all the same.
func TestProxyUnenforceableSchema(t *testing.T) {
	upstreamSrv := mcpkit.NewServer(&mcp.Implementation{Name: "odd"}, nil)
	err := upstreamSrv.Add(&mcpkit.Tool{
		Tool:       mcp.Tool{Name: "remote_ref", InputSchema: objectSchema(`"a":{"$ref":"https://example.com/a.json"}`)},
		Validation: mcpkit.NoValidation,
		Handler:    mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("served"), nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []mcpkit.ValidationMode{mcpkit.DefaultValidation, mcpkit.NoValidation} {
		up := newProxy(t, inMemory(upstreamSrv), &proxy.Options{Unenforceable: mode})
		if p := up.Problems(); len(p) != 1 || !strings.Contains(p[0].Error(), `tool "remote_ref"`) {
			t.Errorf("mode %v: problems %v; want one naming remote_ref", mode, p)
		}
		local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
		up.AddTo(local)
		res, err := mcpkittest.NewInMemoryServer(t, local, nil).CallTool(t.Context(), "remote_ref", map[string]any{"a": 1})
		served := err == nil && resultText(res) == "served"
		if served != (mode == mcpkit.NoValidation) {
			t.Errorf("mode %v: got %v, %v", mode, res, err)
		}
	}
}

// TestProxyResultMeta checks that a forwarded result keeps the _meta its
// tool gave it, but names the local server as the one that answered, not
// the upstream whose serverInfo the proxy received.
func TestProxyResultMeta(t *testing.T) {
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "remote"}, nil)
	err := remote.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "noted", InputSchema: objectSchema(``)},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			res := text("ok")
			res.Meta = mcp.Meta{"note": "kept"}
			return res, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	up := newProxy(t, inMemory(remote), nil)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	res, err := mcpkittest.NewInMemoryServer(t, local, nil).CallTool(t.Context(), "noted", nil)
	if err != nil || res.IsError {
		t.Fatalf("got %v, %v", res, err)
	}
	if res.Meta["note"] != "kept" {
		t.Errorf("_meta %v; want the tool's note kept", res.Meta)
	}
	info, _ := res.Meta[mcp.MetaKeyServerInfo].(map[string]any)
	if info["name"] != "local" {
		t.Errorf("serverInfo %v; want the local server's", res.Meta[mcp.MetaKeyServerInfo])
	}
}

// TestProxyRemoteProtocolError checks that an upstream's JSON-RPC error
// reaches the client as a retryable tool error with the upstream's code
// in its text, not as a JSON-RPC error of the local server, and so does a
// call of a tool the upstream no longer has.
func TestProxyRemoteProtocolError(t *testing.T) {
	us := newUpstream(t, false, 0)
	up := newProxy(t, proxy.HTTP(us.url, nil), nil)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewStatelessServer(t, local, nil)
	res, err := ts.CallTool(t.Context(), "rpcerr", nil)
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "-32603: database on fire") {
		t.Fatalf("got %v, %v (%s); want a retryable tool error with the upstream's code", res, err, resultText(res))
	}
	var ue *proxy.UpstreamError
	tl, _ := up.LookupTool(t.Context(), nil, "rpcerr")
	_, werr := tl.Handler.ServeTool(t.Context(), mcpkittest.NewRequest(tl, nil))
	if !errors.As(werr, &ue) || ue.Code != -32603 || errors.Is(werr, proxy.ErrUnavailable) {
		t.Errorf("the handler returned %v; want an *UpstreamError with code -32603", werr)
	}

	us.srv.Remove("echo")
	res, err = ts.CallTool(t.Context(), "echo", nil)
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "-32602") {
		t.Fatalf("a tool gone upstream: got %v, %v (%s); want a retryable tool error", res, err, resultText(res))
	}
}

// TestProxyListChanged adds a tool upstream: the upstream's
// notifications/tools/list_changed makes the proxy read the catalog
// again, the local listening client is told, and the new tool is
// callable through the proxy. The upstream is reached on each protocol
// version (2026-07-28 listens with subscriptions/listen).
func TestProxyListChanged(t *testing.T) {
	for _, ue := range upstreamEras {
		t.Run("upstream "+ue.version, func(t *testing.T) {
			us := newUpstream(t, ue.sessions, 0)
			up := newProxy(t, proxy.HTTP(us.url, nil), &proxy.Options{ProtocolVersion: ue.version})
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			changed := make(chan struct{}, 8)
			ts := mcpkittest.NewServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			}})
			us.srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "fresh", InputSchema: objectSchema("")},
				Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("fresh"), nil })})
			for {
				<-changed
				if tl, _ := up.LookupTool(t.Context(), nil, "fresh"); tl != nil {
					break
				}
			}
			res, err := ts.CallTool(t.Context(), "fresh", nil)
			if err != nil || resultText(res) != "fresh" {
				t.Fatalf("fresh: %v, %v", res, err)
			}
		})
	}
}

// TestProxyCredentialsFail checks that a call whose credentials cannot be
// had fails with a retryable error and never reaches the upstream.
func TestProxyCredentialsFail(t *testing.T) {
	us := newUpstream(t, false, 0)
	up := newProxy(t, proxy.HTTP(us.url, nil), &proxy.Options{
		Credentials: func(context.Context, *mcpkit.Request) (http.Header, error) {
			return nil, errors.New("token exchange refused")
		},
	})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	res, err := mcpkittest.NewStatelessServer(t, local, nil).CallTool(t.Context(), "echo", map[string]any{"say": "x"})
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "token exchange refused") {
		t.Fatalf("got %v, %v (%s)", res, err, resultText(res))
	}
	us.probe.mu.Lock()
	defer us.probe.mu.Unlock()
	if us.probe.calls != 0 {
		t.Errorf("the upstream was called without credentials")
	}
}
