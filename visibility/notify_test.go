package visibility_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/visibility"
)

// eras are the protocol versions a listener may speak: a 2025-11-25 client
// hears notifications on its session's stream, a 2026-07-28 client on a
// subscriptions/listen stream.
var eras = []string{"2025-11-25", "2026-07-28"}

// TestListChangedPerCaller checks that a client listening for changes hears
// of the changes of what its own caller is listed, and of no other, on both
// eras, through the SDK's clients behind the SDK's bearer-token check. Bob
// (no admin scope) must not learn that admin-only tools come and go; Ada
// (admin) hears of those, and both hear of a tool they can both see. It
// covers registry changes (a tool added or removed, a version that only one
// of them sees), rule changes (Refresh), and tools registered on the SDK
// server directly, which are everyone's. The test runs in a synctest bubble
// on an in-process HTTP transport, so that it can tell that a change sent a
// listener nothing.
func TestListChangedPerCaller(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newServer(t, nil, tool("a"), versioned("v", "1"), versioned("v", "2", "admin"))
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
				step("Add(admin-only)", func() { mustAdd(t, srv, tool("secret", "admin")) },
					true, false, "a,secret,v", "a,v")
				step("Remove(admin-only)", func() { srv.Remove("secret") },
					true, false, "a,v", "a,v")
				step("Add(public)", func() { mustAdd(t, srv, tool("b")) },
					true, true, "a,b,v", "a,b,v")
				// Ada is listed v@3 from now on; Bob is still listed v@1,
				// whose _meta names only the versions he may pin.
				step("Add(admin-only version)", func() { mustAdd(t, srv, versioned("v", "3", "admin")) },
					true, false, "a,b,v", "a,b,v")
				if got := versionsOf(t, bob.cs, "v"); got != "1" {
					t.Errorf("Bob is listed v with versions %s, want 1", got)
				}
				step("RemoveVersion(public)", func() { srv.RemoveVersion("v", "1") },
					true, true, "a,b,v", "a,b")
				onlyAda := visibility.Require(mcpkit.Named("b"), visibility.Users("ada"))
				step("Add(Require)", func() { rules.Add(onlyAda) },
					false, true, "a,b,v", "a")
				step("Remove(Require)", func() { rules.Remove(onlyAda) },
					false, true, "a,b,v", "a,b")
				step("Add(Disable) of an admin-only tool", func() { rules.Add(visibility.Disable(mcpkit.Named("v"))) },
					true, false, "a,b", "a,b")

				// Tools added to the SDK server directly are listed to
				// everyone: everyone hears of them, and hidden tools
				// still reach only Ada.
				sdk := srv.MCPServer()
				step("SDK AddTool", func() { sdk.AddTool(&mcp.Tool{Name: "raw", InputSchema: map[string]any{"type": "object"}}, rawHandler) },
					true, true, "a,b,raw", "a,b,raw")
				step("Add(admin-only) beside SDK tools", func() { mustAdd(t, srv, tool("secret", "admin")) },
					true, false, "a,b,raw,secret", "a,b,raw")
				step("SDK RemoveTools", func() { sdk.RemoveTools("raw") },
					true, true, "a,b,secret", "a,b")
			})
		})
	}
}

// TestListChangedWithoutPerRequestRules checks that without a per-request
// rule every listener hears of every change: everyone is listed the same
// tools, so there is nothing to hide.
func TestListChangedWithoutPerRequestRules(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newServer(t, nil, tool("a"))
				rules := visibility.New(visibility.Disable(mcpkit.Tagged("off")))
				rules.Attach(srv)
				h := bearerHandler(srv)
				ada := listen(t, h, "admin-token", era)
				bob := listen(t, h, "user-token", era)
				synctest.Wait()
				for _, change := range []struct {
					what  string
					do    func()
					lists string
				}{
					{"Add", func() { mustAdd(t, srv, tool("b", "admin")) }, "a,b"},
					{"Add(Disable)", func() { rules.Add(visibility.Disable(mcpkit.Named("a"))) }, "b"},
					{"Remove", func() { srv.Remove("b") }, ""},
				} {
					change.do()
					ada.check(t, change.what, true, change.lists)
					bob.check(t, change.what, true, change.lists)
				}
			})
		})
	}
}

// TestListChangedAcrossReplicas checks how listeners on one replica hear of
// another replica's changes (Server.ShareChanges) while a per-request rule
// is in effect. A replica whose OnChange catches up with the shared
// configuration judges its own listeners: Bob, listening on it, does not
// hear that an admin-only tool came on another replica, and hears when a
// predicate that reads the shared configuration shows it to him, though
// OnChange does not call Refresh. A replica without OnChange cannot judge,
// and tells every listener of every change in the fleet, hidden tools
// included: that pins what such a replica reveals.
func TestListChangedAcrossReplicas(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The configuration the replicas share.
				var secretOn, publicOn, bobIsAdmin atomic.Bool
				catchUp := func(srv *mcpkit.Server) error {
					for _, c := range []struct {
						on   *atomic.Bool
						tool *mcpkit.Tool
					}{{&secretOn, tool("secret", "admin")}, {&publicOn, tool("public")}} {
						_, served := srv.Lookup(c.tool.Name)
						switch {
						case c.on.Load() && !served:
							if err := srv.Add(c.tool); err != nil {
								return err
							}
						case !c.on.Load() && served:
							srv.Remove(c.tool.Name)
						}
					}
					return nil
				}
				admin := visibility.Scopes("admin")
				rules := visibility.New(visibility.Require(mcpkit.Tagged("admin"), func(ctx context.Context, c mcpkit.Caller) bool {
					if info := c.TokenInfo(); bobIsAdmin.Load() && info != nil && info.UserID == "bob" {
						return true
					}
					return admin(ctx, c)
				}))
				bus := mcpkit.NewMemoryBus()
				replica := func(onChange bool) *mcpkit.Server {
					srv := newServer(t, nil, tool("a"))
					rules.Attach(srv)
					var opts mcpkit.ShareOptions
					if onChange {
						opts.OnChange = func(context.Context) error { return catchUp(srv) }
					}
					stop, err := srv.ShareChanges(bus, &opts)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(stop)
					return srv
				}
				a, b, c := replica(true), replica(true), replica(false)
				hb, hc := bearerHandler(b), bearerHandler(c)
				adaB, bobB := listen(t, hb, "admin-token", era), listen(t, hb, "user-token", era)
				adaC, bobC := listen(t, hc, "admin-token", era), listen(t, hc, "user-token", era)
				synctest.Wait()

				step := func(what string, change func(), adaHearsOnB, bobHearsOnB bool, adaLists, bobLists string) {
					t.Helper()
					change()
					adaB.check(t, what+" (B)", adaHearsOnB, adaLists)
					bobB.check(t, what+" (B)", bobHearsOnB, bobLists)
					// C serves neither tool: it has no OnChange.
					adaC.check(t, what+" (C)", true, "a")
					bobC.check(t, what+" (C)", true, "a")
				}
				// set changes the shared configuration, and catches up on
				// replica A, which tells the others.
				set := func(b *atomic.Bool, v bool) func() {
					return func() {
						b.Store(v)
						if err := catchUp(a); err != nil {
							t.Fatal(err)
						}
					}
				}
				step("admin-only tool on", set(&secretOn, true), true, false, "a,secret", "a")
				step("public tool on", set(&publicOn, true), true, true, "a,public,secret", "a,public")
				// A refreshes after the predicate's configuration changed;
				// B's OnChange only syncs tools.
				step("Bob made admin", func() { bobIsAdmin.Store(true); a.Refresh() }, false, true, "a,public,secret", "a,public,secret")
				step("Bob no longer admin", func() { bobIsAdmin.Store(false); a.Refresh() }, false, true, "a,public,secret", "a,public")
				step("admin-only tool off", set(&secretOn, false), true, false, "a,public", "a,public")
			})
		})
	}
}

// TestListChangedSessionNotSeenOpen pins the exception for sessions that
// the mcpkit server did not see open (connected to the SDK server before
// Wrap): it cannot judge them, so they hear of every change, hidden tools
// included, while a session opened after Wrap hears only of its own list's.
func TestListChangedSessionNotSeenOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sdk := mcp.NewServer(&mcp.Implementation{Name: "wrapped"}, &mcp.ServerOptions{
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		})
		connect := func(who string) *listening {
			l := &listening{who: who}
			client := mcp.NewClient(&mcp.Implementation{Name: who, Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { l.heard.Add(1) },
			})
			ct, st := mcp.NewInMemoryTransports()
			ss, err := sdk.Connect(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				cs.Close()
				ss.Wait()
			})
			l.cs = cs
			return l
		}
		before := connect("before Wrap")
		srv := mcpkit.Wrap(sdk, nil)
		mustAdd(t, srv, tool("a"))
		visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))).Attach(srv)
		after := connect("after Wrap")
		// Past the notifications of the changes so far.
		time.Sleep(time.Second)
		synctest.Wait()
		before.heard.Store(0)
		after.heard.Store(0)

		mustAdd(t, srv, tool("secret", "admin"))
		before.check(t, "Add(admin-only)", true, "a")
		after.check(t, "Add(admin-only)", false, "a")
	})
}

// A listening is a client listening for list changes, counting the
// notifications it hears.
type listening struct {
	who   string
	cs    *mcp.ClientSession
	heard atomic.Int32
}

// listen connects a client of protocol version era with the bearer token
// token to h, listening for list changes. In a synctest bubble, the server
// has taken the client's listener once synctest.Wait returns.
func listen(t *testing.T, h http.Handler, token, era string) *listening {
	t.Helper()
	l := &listening{who: token}
	client := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { l.heard.Add(1) },
	})
	transport := &mcp.StreamableClientTransport{
		Endpoint:   "http://mcp.test/",
		HTTPClient: &http.Client{Transport: &inProcess{handler: h, token: token}},
		MaxRetries: -1,
	}
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	l.cs = cs
	return l
}

// check waits until every notification sent has been heard (time in the
// bubble runs past the SDK's debouncing), then checks that l heard one if
// hears, none otherwise, and that it lists the tools lists.
func (l *listening) check(t *testing.T, what string, hears bool, lists string) {
	t.Helper()
	time.Sleep(time.Second)
	synctest.Wait()
	want := int32(0)
	if hears {
		want = 1
	}
	if got := l.heard.Swap(0); got != want {
		t.Errorf("after %s: %s heard %d notifications, want %d", what, l.who, got, want)
	}
	if got := joined(names(t, l.cs)); got != lists {
		t.Errorf("after %s: %s lists %s, want %s", what, l.who, got, lists)
	}
}

// versionsOf returns the versions that the definition of name that cs is
// listed names in its _meta.
func versionsOf(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tl.Name != name {
			continue
		}
		vs, _ := tl.Meta[mcpkit.MetaKeyVersions].([]any)
		var out []string
		for _, v := range vs {
			s, _ := v.(string)
			out = append(out, s)
		}
		return joined(out)
	}
	return ""
}

func mustAdd(t *testing.T, srv *mcpkit.Server, tools ...*mcpkit.Tool) {
	t.Helper()
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
}

func rawHandler(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "raw"}}}, nil
}

// bearerHandler serves srv over streamable HTTP, with sessions for
// 2025-11-25 clients, behind the SDK's bearer-token check with the tests'
// tokens.
func bearerHandler(srv *mcpkit.Server) http.Handler {
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := tokens[token]; ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
		srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
}

// inProcess is an http.RoundTripper that serves each request with handler
// in this process, sending token as a bearer token: no sockets, so that
// HTTP clients and servers can run in a synctest bubble, where goroutines
// that wait on a pipe count as blocked.
type inProcess struct {
	handler http.Handler
	token   string
}

func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not modify the request
	req.Header.Set("Authorization", "Bearer "+t.token)
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		defer pw.Close()
		defer w.WriteHeader(http.StatusOK) // a handler that wrote nothing
		if req.Body != nil {
			defer req.Body.Close()
		}
		t.handler.ServeHTTP(w, req)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	return &http.Response{
		Status:        http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeResponse is the http.ResponseWriter of inProcess: the body goes
// through a pipe to the client, the status and headers when first written.
type pipeResponse struct {
	header http.Header
	body   *io.PipeWriter
	once   sync.Once
	ready  chan struct{} // closed once status and sent are set
	status int
	sent   http.Header
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.status, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

func (w *pipeResponse) Flush() { w.WriteHeader(http.StatusOK) }
