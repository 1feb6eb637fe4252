package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// lockdown is adminOnly, with the resources tagged "gated" also admin
// only: the visibility a server changes to in the tests below.
type lockdown struct{ adminOnly }

func (lockdown) AllowedTarget(ctx context.Context, t mcpkit.Target, c mcpkit.Caller) bool {
	if t.HasTag("gated") {
		caps := c.ClientCapabilities()
		return caps != nil && caps.Experimental["admin"] != nil
	}
	return adminOnly{}.AllowedTarget(ctx, t, c)
}

// subscribable returns a server under adminOnly with memo://open and
// memo://gated for everyone (until lockdown), memo://vault for admins,
// memo://retired for no one, and the templates note://{id} for everyone
// and secret://{id} for admins.
func subscribable(t *testing.T) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "subs"}, nil)
	srv.SetVisibility(adminOnly{})
	err := srv.AddResources(
		tools.TextResource("memo://open", "open", "text/plain", "hi", nil),
		tools.TextResource("memo://gated", "gated", "text/plain", "hi", &tools.ResourceOptions{Tags: []string{"gated"}}),
		tools.TextResource("memo://vault", "vault", "text/plain", "gold", &tools.ResourceOptions{Tags: []string{"admin"}}),
		tools.TextResource("memo://retired", "retired", "text/plain", "old", &tools.ResourceOptions{Tags: []string{"off"}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	read := func(_ context.Context, _ *mcpkit.ResourceRequest, p struct {
		ID string `json:"id"`
	}) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: p.ID}}}, nil
	}
	err = srv.AddResourceTemplates(
		tools.MustTemplate(tools.NewTemplate("note://{id}", read, nil)),
		tools.MustTemplate(tools.NewTemplate("secret://{id}", read, &tools.TemplateOptions{Tags: []string{"admin"}})),
	)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// updates connects a 2025-11-25 client over the in-memory transports,
// as an admin when admin is set, and returns its session and the URIs of
// the notifications/resources/updated it hears, in order.
func updates(t *testing.T, srv *mcpkit.Server, admin bool) (*mcp.ClientSession, <-chan string) {
	t.Helper()
	heard := make(chan string, 16)
	opts := &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion, Client: &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			heard <- req.Params.URI
		},
	}}
	if admin {
		opts = asAdmin(opts)
	}
	return mcpkittest.NewInMemoryServer(t, srv, opts).Session, heard
}

// next returns the next URI heard, failing the test after a generous
// bound (a safety net: every update awaited is sent before).
func next(t *testing.T, heard <-chan string) string {
	t.Helper()
	select {
	case uri := <-heard:
		return uri
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated")
		return ""
	}
}

// updated calls srv.ResourceUpdated for each of uris.
func updated(t *testing.T, srv *mcpkit.Server, uris ...string) {
	t.Helper()
	for _, uri := range uris {
		if err := srv.ResourceUpdated(t.Context(), uri); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSubscribe checks resources/subscribe on 2025-11-25: the server
// declares resources.subscribe; a subscriber hears the updates of the
// resources and template URIs it reaches, and no others; a hidden URI and
// an unknown one are refused with the bytes a read of them gets; after
// unsubscribe, and once the visibility hides a URI from a subscriber, it
// hears nothing of it, while others still do.
func TestSubscribe(t *testing.T) {
	srv := subscribable(t)
	guest, guestHeard := updates(t, srv, false)
	admin, adminHeard := updates(t, srv, true)
	if caps := guest.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("capabilities %+v: resources.subscribe not declared", caps.Resources)
	}
	sub := func(cs *mcp.ClientSession, uri string) error {
		return cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
	}
	for _, uri := range []string{"memo://open", "memo://gated", "note://7"} {
		if err := sub(guest, uri); err != nil {
			t.Fatalf("guest subscribes %s: %v", uri, err)
		}
	}
	for _, uri := range []string{"memo://vault", "memo://gated", "secret://42", "note://7"} {
		if err := sub(admin, uri); err != nil {
			t.Fatalf("admin subscribes %s: %v", uri, err)
		}
	}
	// Refused alike: hidden from the guest, disabled, a hidden template's
	// URI, unknown. Each is what a read of it gets.
	for _, uri := range []string{"memo://vault", "memo://retired", "secret://42", "memo://nothing", "other://x"} {
		err := sub(guest, uri)
		want := fmt.Sprintf(`{"code":-32602,"message":"Resource not found","data":{"uri":%q}}`, uri)
		if err == nil {
			t.Errorf("guest subscribed to %s", uri)
			continue
		}
		_, readErr := guest.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if got := wireError(t, err); got != want || got != wireError(t, readErr) {
			t.Errorf("subscribe %s: %s; read: %s; want %s", uri, got, wireError(t, readErr), want)
		}
		if err := guest.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err == nil || wireError(t, err) != want {
			t.Errorf("unsubscribe %s: %v", uri, err)
		}
	}

	updated(t, srv, "memo://vault", "secret://42", "memo://open", "note://7")
	if got := []string{next(t, guestHeard), next(t, guestHeard)}; !slices.Equal(got, []string{"memo://open", "note://7"}) {
		t.Errorf("guest heard %v, want memo://open, note://7", got)
	}
	if got := []string{next(t, adminHeard), next(t, adminHeard), next(t, adminHeard)}; !slices.Equal(got, []string{"memo://vault", "secret://42", "note://7"}) {
		t.Errorf("admin heard %v", got)
	}

	// Unsubscribed, then out of sight: the next update each hears is the
	// one sent after.
	if err := admin.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "secret://42"}); err != nil {
		t.Fatal(err)
	}
	srv.SetVisibility(lockdown{})
	updated(t, srv, "secret://42", "memo://gated", "note://7")
	if got := next(t, guestHeard); got != "note://7" {
		t.Errorf("guest, who lost sight of memo://gated, heard %s first", got)
	}
	if got := []string{next(t, adminHeard), next(t, adminHeard)}; !slices.Equal(got, []string{"memo://gated", "note://7"}) {
		t.Errorf("admin, unsubscribed from secret://42, heard %v", got)
	}
	// Back in sight: the subscription holds.
	srv.SetVisibility(adminOnly{})
	updated(t, srv, "memo://gated")
	if got := next(t, guestHeard); got != "memo://gated" {
		t.Errorf("guest heard %s, want memo://gated", got)
	}
}

// TestSubscribeBeforeResources checks that a server that serves no
// resource answers resources/subscribe as the SDK does, -32601, and
// declares no subscription.
func TestSubscribeBeforeResources(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	cs := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion}).Session
	if r := cs.InitializeResult().Capabilities.Resources; r != nil {
		t.Errorf("resources declared: %+v", r)
	}
	err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "memo://open"})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("subscribe: %v, want -32601", err)
	}
}

// listenFor opens a 2026-07-28 subscriptions/listen stream on url asking
// for uris, as an admin when admin is set, and returns it with the
// resourceSubscriptions its acknowledgement agreed to.
func listenFor(t *testing.T, url string, admin bool, uris ...string) (*mcpkittest.RawStream, []string) {
	t.Helper()
	raw := mcpkittest.RawClient{Endpoint: url}
	if admin {
		raw.Capabilities = map[string]any{"experimental": map[string]any{"admin": map[string]any{}}}
	}
	st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": uris}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var ack struct {
		Method string `json:"method"`
		Params struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	b, err := st.Next()
	if err != nil {
		t.Fatal(err)
	}
	if json.Unmarshal(b, &ack) != nil || ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first event %s, want the acknowledgement", b)
	}
	return st, ack.Params.Notifications.ResourceSubscriptions
}

// nextUpdate returns the URI of the next event of st, which must be
// notifications/resources/updated for the listen request (ID 1).
func nextUpdate(t *testing.T, st *mcpkittest.RawStream) string {
	t.Helper()
	b, err := st.Next()
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Method != "notifications/resources/updated" || msg.Params.Meta[mcp.MetaKeySubscriptionID] != float64(1) {
		t.Fatalf("event %s, want notifications/resources/updated of the listen request", b)
	}
	return msg.Params.URI
}

// TestListenResourceSubscriptions checks a 2026-07-28 listen stream's
// resourceSubscriptions: the acknowledgement agrees to the URIs the
// caller reaches (resources and template URIs, each once), leaving out
// hidden and unknown ones alike; updates reach the stream for those only,
// and stop for a URI the visibility hides from it since. The server
// declares resources.subscribe; resources/subscribe is not a method of
// the protocol.
func TestListenResourceSubscriptions(t *testing.T) {
	srv := subscribable(t)
	hs := httptest.NewServer(srv.HTTPHandler(nil))
	t.Cleanup(hs.Close) // after the streams close: it waits for their requests

	raw := mcpkittest.RawClient{Endpoint: hs.URL}
	b, err := raw.Call(t.Context(), "server/discover", nil)
	var disc mcp.DiscoverResult
	if err != nil || json.Unmarshal(b, &disc) != nil || disc.Capabilities == nil || disc.Capabilities.Resources == nil || !disc.Capabilities.Resources.Subscribe {
		t.Fatalf("server/discover: %s, %v: resources.subscribe not declared", b, err)
	}
	_, err = raw.Call(t.Context(), "resources/subscribe", map[string]any{"uri": "memo://open"})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("resources/subscribe on 2026-07-28: %v, want -32601", err)
	}

	guest, agreed := listenFor(t, hs.URL, false, "memo://open", "memo://vault", "memo://retired", "memo://gated", "secret://42", "memo://nothing", "note://7", "memo://open")
	if want := []string{"memo://open", "memo://gated", "note://7"}; !slices.Equal(agreed, want) {
		t.Errorf("guest's acknowledgement agreed to %q, want %q", agreed, want)
	}
	admin, agreed := listenFor(t, hs.URL, true, "memo://vault", "secret://42", "memo://gated")
	if want := []string{"memo://vault", "secret://42", "memo://gated"}; !slices.Equal(agreed, want) {
		t.Errorf("admin's acknowledgement agreed to %q, want %q", agreed, want)
	}

	updated(t, srv, "memo://vault", "secret://42", "memo://open")
	if got := nextUpdate(t, guest); got != "memo://open" {
		t.Errorf("guest heard %s first, want memo://open", got)
	}
	if got := []string{nextUpdate(t, admin), nextUpdate(t, admin)}; !slices.Equal(got, []string{"memo://vault", "secret://42"}) {
		t.Errorf("admin heard %v", got)
	}

	srv.SetVisibility(lockdown{})
	updated(t, srv, "memo://gated", "note://7")
	if got := nextUpdate(t, guest); got != "note://7" {
		t.Errorf("guest, who lost sight of memo://gated, heard %s first", got)
	}
	if got := nextUpdate(t, admin); got != "memo://gated" {
		t.Errorf("admin heard %s, want memo://gated", got)
	}
}

// TestListenNothingAgreed checks that a listen stream whose
// resourceSubscriptions are all refused is acknowledged with none, and
// ends at once when it asked for nothing else.
func TestListenNothingAgreed(t *testing.T) {
	srv := subscribable(t)
	hs := httptest.NewServer(srv.HTTPHandler(nil))
	t.Cleanup(hs.Close) // after the streams close: it waits for their requests
	st, agreed := listenFor(t, hs.URL, false, "memo://vault", "memo://nothing")
	if agreed != nil {
		t.Errorf("acknowledgement agreed to %q, want none", agreed)
	}
	for {
		if _, err := st.Next(); err != nil {
			break // the response ended the stream
		}
	}
}

// TestSubscribeAcrossReplicas checks that an update on one replica
// reaches the subscribers of another that shares its changes on the same
// bus, once, and that a replica does not tell its own subscribers twice.
func TestSubscribeAcrossReplicas(t *testing.T) {
	bus := mcpkit.NewMemoryBus()
	a, b := subscribable(t), subscribable(t)
	for _, srv := range []*mcpkit.Server{a, b} {
		stop, err := srv.ShareChanges(bus, &mcpkit.ShareOptions{Delay: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	onA, heardA := updates(t, a, false)
	onB, heardB := updates(t, b, false)
	for _, cs := range []*mcp.ClientSession{onA, onB} {
		for _, uri := range []string{"memo://open", "note://7"} {
			if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
		}
	}
	updated(t, a, "memo://open")
	if got := next(t, heardB); got != "memo://open" {
		t.Errorf("B's subscriber heard %s", got)
	}
	updated(t, b, "note://7")
	if got := []string{next(t, heardA), next(t, heardA)}; !slices.Equal(got, []string{"memo://open", "note://7"}) {
		t.Errorf("A's subscriber heard %v, want memo://open once, then note://7", got)
	}
	if got := next(t, heardB); got != "note://7" {
		t.Errorf("B's subscriber heard %s, want note://7 once", got)
	}
}

// TestShareUpdateEvents checks the events of updates on the bus: an
// update is published as a resourceUpdated event naming the URI, which
// tells the subscribers and calls no OnChange; an event of the old shape
// (no kind) is still a change, as is one of a kind unknown.
func TestShareUpdateEvents(t *testing.T) {
	bus := mcpkit.NewMemoryBus()
	srv := subscribable(t)
	changes := make(chan struct{}, 4)
	stop, err := srv.ShareChanges(bus, &mcpkit.ShareOptions{Delay: -1, OnChange: func(context.Context) error {
		changes <- struct{}{}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	events := make(chan []byte, 4)
	unsubscribe, err := bus.Subscribe(t.Context(), mcpkit.DefaultShareTopic, func(p []byte) { events <- p })
	if err != nil {
		t.Fatal(err)
	}
	defer unsubscribe()
	cs, heard := updates(t, srv, false)
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "memo://open"}); err != nil {
		t.Fatal(err)
	}

	updated(t, srv, "memo://open")
	if got := next(t, heard); got != "memo://open" {
		t.Fatalf("heard %s", got)
	}
	var ev map[string]any
	if err := json.Unmarshal(<-events, &ev); err != nil || ev["kind"] != "resourceUpdated" || ev["uri"] != "memo://open" || ev["origin"] == "" || ev["seq"] == nil {
		t.Errorf("published %v, %v", ev, err)
	}

	publish := func(payload string) {
		t.Helper()
		if err := bus.Publish(t.Context(), mcpkit.DefaultShareTopic, []byte(payload)); err != nil {
			t.Fatal(err)
		}
		<-events
	}
	publish(`{"origin":"other","seq":1,"kind":"resourceUpdated","uri":"memo://open"}`)
	if got := next(t, heard); got != "memo://open" {
		t.Errorf("heard %s", got)
	}
	publish(`{"origin":"other","seq":2}`)
	<-changes
	publish(`{"origin":"other","seq":3,"kind":"somethingNew"}`)
	<-changes
	select {
	case uri := <-heard:
		t.Errorf("heard %s of a change", uri)
	default:
	}
}

// TestSubscribeOverHTTPSession checks that a 2025-11-25 session over
// streamable HTTP hears the updates it subscribed to, on its stream.
func TestSubscribeOverHTTPSession(t *testing.T) {
	srv := subscribable(t)
	heard := make(chan string, 4)
	cs := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			heard <- req.Params.URI
		},
	}}).Session
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "note://7"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "memo://vault"}); err == nil {
		t.Error("subscribed to a hidden resource")
	}
	updated(t, srv, "memo://vault", "note://7")
	if got := next(t, heard); got != "note://7" {
		t.Errorf("heard %s, want note://7", got)
	}
}

// TestSubscribeThroughMount checks that a client of the parent subscribes
// to a mounted resource by its prefixed URI, and hears the updates the
// child announces under its own URI, prefixed; a URI the child hides from
// the caller is refused at the parent as one never served.
func TestSubscribeThroughMount(t *testing.T) {
	child := subscribable(t)
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("kb", child); err != nil {
		t.Fatal(err)
	}
	cs, heard := updates(t, parent, false)
	for _, uri := range []string{"memo://kb/open", "note://kb/7"} {
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	hidden := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "memo://kb/vault"})
	unknown := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "memo://kb/nosuch"})
	if h, u := wireError(t, hidden), wireError(t, unknown); h != strings.ReplaceAll(u, "nosuch", "vault") {
		t.Errorf("hidden %s, unknown %s: want the same refusal", h, u)
	}
	updated(t, child, "memo://vault", "note://7", "memo://open")
	for _, want := range []string{"note://kb/7", "memo://kb/open"} {
		if got := next(t, heard); got != want {
			t.Errorf("heard %s, want %s", got, want)
		}
	}
}

// notifyingProvider is a kindsProvider that announces its changes.
type notifyingProvider struct{ *kindsProvider }

func (notifyingProvider) NotifiesResourceUpdates() bool { return true }

// TestSubscribeProvided checks that a subscription to a provider's URI is
// agreed to only when the provider announces its changes (a
// ResourceNotifier): then the subscriber hears ResourceUpdated; a
// provider that does not gets the answer of a URI never served, rather
// than a promise no one keeps.
func TestSubscribeProvided(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider mcpkit.Provider
		agreed   bool
	}{
		{"silent", newKindsProvider(), false},
		{"notifier", notifyingProvider{newKindsProvider()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "subs"}, nil)
			srv.AddProvider(tc.provider)
			cs, heard := updates(t, srv, false)
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://1"}); err != nil {
				t.Fatalf("read: %v", err)
			}
			err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "mem://1"})
			unknown := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "mem://nosuch"})
			if !tc.agreed {
				if err == nil || wireError(t, err) != strings.ReplaceAll(wireError(t, unknown), "mem://nosuch", "mem://1") {
					t.Errorf("subscribe to a silent provider's URI: %v; want the answer of a URI never served", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			updated(t, srv, "mem://1")
			if got := next(t, heard); got != "mem://1" {
				t.Errorf("heard %s", got)
			}
		})
	}
}

// TestSubscribeBounded checks that one session holds at most 1,024
// subscriptions (a template serves any number of URIs): the next is
// refused, an unsubscribe makes room, and a subscription repeated counts
// once.
func TestSubscribeBounded(t *testing.T) {
	cs, _ := updates(t, subscribable(t), false)
	ctx := t.Context()
	for i := range 1024 {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: fmt.Sprintf("note://%d", i)}); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://0"}); err != nil {
		t.Errorf("a subscription repeated: %v", err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://more"}); err == nil || !strings.Contains(err.Error(), "too many subscriptions") {
		t.Errorf("subscription 1,025: %v; want too many", err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "note://5"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://more"}); err != nil {
		t.Errorf("after an unsubscribe: %v", err)
	}
}
