package mcpkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// gated is a tool whose calls wait for release, after saying they started.
func gated(started chan<- struct{}, release <-chan struct{}) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: "gated", InputSchema: objectSchema},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finished"}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}),
	}
}

// drainBegun registers a drain hook on srv that closes the returned channel
// when the drain begins.
func drainBegun(srv *mcpkit.Server) <-chan struct{} {
	begun := make(chan struct{})
	srv.RegisterOnDrain(func(context.Context) error { close(begun); return nil })
	return begun
}

// A call in flight when the drain begins finishes; a call that comes after
// is refused, retryably: over HTTP outside a session, with 503 and
// Retry-After before any work (a proxy passes it to another replica); in a
// session (2025-11-25) and in memory, with an error result of class
// Retryable, ErrDraining in its chain and a retry hint. Readiness flips to
// 503 at once, and Drain returns once the call in flight is answered.
func TestDrainFinishesCallsInFlightAndRefusesNewOnes(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(*testing.T, *mcpkit.Server) *mcpkittest.Server
		http bool // a call after the drain began is refused with 503
	}{
		{"2026-07-28 stateless HTTP", func(t *testing.T, srv *mcpkit.Server) *mcpkittest.Server {
			return mcpkittest.NewStatelessServer(t, srv, nil)
		}, true},
		{"2025-11-25 stateless HTTP", func(t *testing.T, srv *mcpkit.Server) *mcpkittest.Server {
			return mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
		}, true},
		{"2025-11-25 session", func(t *testing.T, srv *mcpkit.Server) *mcpkittest.Server {
			// Without the session's GET stream: it ends once the drain
			// has no call left, and the SDK client takes that for the end
			// of the session, which may reach it before the last result.
			ts := mcpkittest.NewServer(t, srv, nil)
			tr := &mcp.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true, MaxRetries: -1}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: mcpkittest.StatefulVersion})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			ts.Session = cs
			return ts
		}, false},
		{"2026-07-28 in memory", func(t *testing.T, srv *mcpkit.Server) *mcpkittest.Server {
			return mcpkittest.NewInMemoryServer(t, srv, nil)
		}, false},
		{"2025-11-25 in memory", func(t *testing.T, srv *mcpkit.Server) *mcpkittest.Server {
			return mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			started, release := make(chan struct{}, 2), make(chan struct{})
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "drain", Version: "1"}, nil)
			if err := srv.Add(gated(started, release)); err != nil {
				t.Fatal(err)
			}
			begun := drainBegun(srv)
			ts := c.open(t, srv)
			ready := srv.ReadinessHandler()
			if code := probe(ready); code != http.StatusOK {
				t.Fatalf("readiness before the drain = %d", code)
			}

			first := make(chan error, 1)
			go func() {
				res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "gated"})
				if err == nil && (res.IsError || onlyText(res) != "finished") {
					err = errors.New("result " + onlyText(res))
				}
				first <- err
			}()
			<-started
			drained := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net only
				defer cancel()
				drained <- srv.Drain(ctx)
			}()
			<-begun
			if code := probe(ready); code != http.StatusServiceUnavailable {
				t.Errorf("readiness while draining = %d, want 503", code)
			}

			res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "gated"})
			if c.http {
				if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
					t.Errorf("call while draining = %+v, %v; want a 503", res, err)
				}
				resp := post(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gated"}}`)
				if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
					t.Errorf("raw call while draining: %s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || res.Meta[mcpkit.MetaKeyRetryAfter] != float64(1000) {
					t.Errorf("call while draining = %+v, want a retryable refusal with a retry hint", res)
				}
				if !strings.Contains(onlyText(res), "shutting down") {
					t.Errorf("refusal text = %q", onlyText(res))
				}
			}
			select {
			case <-started:
				t.Error("a call refused by the drain started")
			default:
			}
			select {
			case err := <-drained:
				t.Fatalf("Drain returned %v with a call in flight", err)
			default:
			}
			close(release)
			if err := <-first; err != nil {
				t.Errorf("the call in flight: %v", err)
			}
			if err := <-drained; err != nil {
				t.Errorf("Drain = %v", err)
			}
		})
	}
}

// Drain gives up when its context ends, saying how many calls were left;
// the functions registered with RegisterOnDrain get the context and their
// errors are reported.
func TestDrainDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}, 1), make(chan struct{})
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "drain", Version: "1"}, nil)
		srv.Add(gated(started, release))
		hookErr := errors.New("two jobs left")
		srv.RegisterOnDrain(func(ctx context.Context) error {
			<-ctx.Done()
			return hookErr
		})
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		go ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "gated"})
		<-started
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		start := time.Now()
		err := srv.Drain(ctx)
		if got := time.Since(start); got != 30*time.Second {
			t.Errorf("Drain returned after %v, want 30s", got)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 call still running") {
			t.Errorf("Drain = %v", err)
		}
		close(release)
		synctest.Wait()
		// Once the call is answered, Drain waits for the functions only,
		// and reports their errors.
		if err := srv.Drain(context.Background()); !errors.Is(err, hookErr) {
			t.Errorf("Drain again = %v, want the function's error", err)
		}
	})
}

// A 2026-07-28 subscriptions/listen stream ends when the drain begins,
// with the listen request's result; a session's GET stream (2025-11-25)
// ends its response. Neither is waited for as a call. New streams are
// refused with 503.
func TestDrainEndsListenStreams(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "drain", Version: "1"}, nil)
	hs := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true}))
	defer hs.Close()

	raw := mcpkittest.RawClient{Endpoint: hs.URL}
	listen, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Close()
	if ack, err := listen.Next(); err != nil || !bytes.Contains(ack, []byte("notifications/subscriptions/acknowledged")) {
		t.Fatalf("acknowledgement: %s, %v", ack, err)
	}

	// A session of 2025-11-25, and its GET stream.
	resp := post(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	sessionHeaders(req, session)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %v, %v", resp, err)
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, hs.URL, nil)
	sessionHeaders(req, session)
	get, err := http.DefaultClient.Do(req)
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v, %v", get, err)
	}
	defer get.Body.Close()

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net only
	defer cancel()
	if err := srv.Drain(ctx); err != nil {
		t.Fatalf("Drain = %v", err)
	}
	res, err := listen.Next()
	var msg struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err != nil || json.Unmarshal(res, &msg) != nil || msg.ID != 1 || msg.Result == nil {
		t.Errorf("listen stream after the drain: %s, %v; want its result", res, err)
	}
	if _, err := listen.Next(); err != io.EOF {
		t.Errorf("listen stream after its result: %v, want EOF", err)
	}
	if _, err := io.ReadAll(get.Body); err != nil {
		t.Errorf("GET stream after the drain: %v, want a clean end", err)
	}
	if _, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a listen stream opened while draining: %v, want 503", err)
	}
}

// probe returns the status the readiness handler h answers.
func probe(h http.Handler) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code
}

// post sends body to url as a 2025-11-25 client would, and returns the
// response, its body read.
func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func sessionHeaders(req *http.Request, session string) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
}
