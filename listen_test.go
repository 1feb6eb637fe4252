package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// An extension's middleware adds its field to a listen stream's
// acknowledgement and sends its own notifications on the stream, after the
// acknowledgement and never before; once the request is answered, Notify
// fails with ErrListenClosed.
func TestListenStream(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "listen", Version: "1"}, nil)
	type step struct {
		early, late, bad, reack error
	}
	steps := make(chan step, 1)
	var kept *mcpkit.ListenStream
	srv.MCPServer().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			l := mcpkit.ListenStreamFrom(ctx)
			if method != "subscriptions/listen" || l == nil {
				return next(ctx, method, req)
			}
			var subs struct {
				Echo string `json:"echo"`
			}
			json.Unmarshal(l.Subscriptions(), &subs)
			var s step
			s.early = l.Notify("notifications/echo", map[string]any{"text": "too soon"})
			l.Acknowledge("echo", subs.Echo)
			go func() {
				<-l.Acknowledged()
				s.late = l.Notify("notifications/echo", map[string]any{"text": subs.Echo, "_meta": map[string]any{"k": "v"}})
				s.bad = l.Notify("notifications/echo", []int{1})
				s.reack = l.Acknowledge("echo", "again")
				kept = l
				steps <- s
			}()
			return next(ctx, method, req) // parks until the client goes: it listens for list_changed
		}
	})
	hs := httptest.NewServer(srv.HTTPHandler(nil))
	defer hs.Close()
	raw := mcpkittest.RawClient{Endpoint: hs.URL}
	st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"echo": "hello", "toolsListChanged": true}})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	for range 2 {
		b, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		msgs = append(msgs, m)
	}
	s := <-steps
	st.Close()
	ack, _ := msgs[0]["params"].(map[string]any)
	notes, _ := ack["notifications"].(map[string]any)
	if msgs[0]["method"] != "notifications/subscriptions/acknowledged" || notes["echo"] != "hello" || notes["toolsListChanged"] != true {
		t.Errorf("acknowledgement = %v", msgs[0])
	}
	params, _ := msgs[1]["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	if msgs[1]["method"] != "notifications/echo" || params["text"] != "hello" || meta["k"] != "v" || meta[mcp.MetaKeySubscriptionID] != float64(1) {
		t.Errorf("notification = %v", msgs[1])
	}
	if s.early == nil || s.late != nil || s.bad == nil || s.reack == nil {
		t.Errorf("Notify before the acknowledgement: %v; after: %v; with an array: %v; Acknowledge after: %v", s.early, s.late, s.bad, s.reack)
	}
	hs.Close() // waits for the listen request to be answered
	if err := kept.Notify("notifications/echo", map[string]any{}); !errors.Is(err, mcpkit.ErrListenClosed) {
		t.Errorf("Notify after the request was answered: %v, want ErrListenClosed", err)
	}
	if mcpkit.ListenStreamFrom(context.Background()) != nil {
		t.Error("a context without a listen request has a stream")
	}
}
