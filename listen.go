package mcpkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A ListenStream is the response stream of one subscriptions/listen
// request (protocol 2026-07-28, SEP-2575) that [Server.HTTPHandler] serves.
// It lets an extension deliver notifications the SDK does not know, such
// as the tasks extension's notifications/tasks, on the stream the client
// listens to, alongside the SDK's own. A receiving middleware of the SDK
// server finds it with [ListenStreamFrom] while it handles the request:
//
//  1. it reads the extension's fields of the request with
//     [ListenStream.Subscriptions];
//  2. before it passes the request on, it adds what it agrees to send to
//     the acknowledgement with [ListenStream.Acknowledge];
//  3. once [ListenStream.Acknowledged] is closed, it sends with
//     [ListenStream.Notify], until the request's context is done.
//
// The SDK's handler returns at once when the client asked it for nothing
// (only the extension's notifications, say), which ends the stream: the
// middleware then holds the request until it has nothing more to send.
//
// Listen streams are HTTP only: over stdio and in-memory transports,
// ListenStreamFrom returns nil.
type ListenStream struct {
	id   json.RawMessage // the request's JSON-RPC ID
	subs json.RawMessage // params.notifications, as sent

	mu     sync.Mutex
	w      http.ResponseWriter
	ack    map[string]json.RawMessage // fields added to the acknowledgement
	acked  chan struct{}
	seen   bool // the acknowledgement went by
	closed bool // the request was answered: nothing more may be written
}

type listenStreamKey struct{}

// ListenStreamFrom returns the listen stream of the request that ctx
// belongs to, or nil when it is not a subscriptions/listen request served
// over HTTP by [Server.HTTPHandler].
func ListenStreamFrom(ctx context.Context) *ListenStream {
	l, _ := ctx.Value(listenStreamKey{}).(*ListenStream)
	return l
}

// Subscriptions returns the notifications object of the request's params,
// as the client sent it: the SDK reads the fields of SEP-2575
// (toolsListChanged, ...), an extension reads its own (taskIds, ...).
func (l *ListenStream) Subscriptions() json.RawMessage { return l.subs }

// errAcknowledged is the error of Acknowledge once the acknowledgement was sent.
var errAcknowledged = errors.New("mcpkit: the listen stream was already acknowledged")

// Acknowledge adds field, with value marshalled as JSON, to the
// notifications object of the stream's acknowledgement
// (notifications/subscriptions/acknowledged), which tells the client what
// the server agreed to send. Call it before the SDK handles the request,
// which sends the acknowledgement; after that it returns an error.
func (l *ListenStream) Acknowledge(field string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("mcpkit: acknowledging %q: %w", field, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen {
		return errAcknowledged
	}
	if l.ack == nil {
		l.ack = map[string]json.RawMessage{}
	}
	l.ack[field] = b
	return nil
}

// Acknowledged returns a channel closed once the acknowledgement is on the
// stream: notifications sent before it would reach the client first, which
// the protocol forbids, so [ListenStream.Notify] refuses them.
func (l *ListenStream) Acknowledged() <-chan struct{} { return l.acked }

// ErrListenClosed is the error of [ListenStream.Notify] on a stream whose
// request was answered, or whose client went away.
var ErrListenClosed = errors.New("mcpkit: the listen stream is closed")

// Notify sends a notification of method, with params marshalled as a JSON
// object, as one event on the stream. Its _meta carries the listen
// request's ID under [mcp.MetaKeySubscriptionID], as the SDK's own
// notifications do, so that a client with several streams can tell them
// apart. It fails before the acknowledgement, and with [ErrListenClosed]
// once the request was answered. It is safe to call from any goroutine;
// events are written whole, never interleaved with the SDK's.
func (l *ListenStream) Notify(method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("mcpkit: notification %s: %w", method, err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return fmt.Errorf("mcpkit: notification %s: params are not a JSON object", method)
	}
	var meta map[string]json.RawMessage
	if m, ok := obj["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return fmt.Errorf("mcpkit: notification %s: _meta is not a JSON object", method)
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[mcp.MetaKeySubscriptionID] = l.id
	obj["_meta"], _ = json.Marshal(meta)
	msg, err := json.Marshal(struct {
		JSONRPC string                     `json:"jsonrpc"`
		Method  string                     `json:"method"`
		Params  map[string]json.RawMessage `json:"params"`
	}{"2.0", method, obj})
	if err != nil {
		return fmt.Errorf("mcpkit: notification %s: %w", method, err)
	}
	var ev bytes.Buffer
	ev.Grow(len(msg) + 24)
	ev.WriteString("event: message\ndata: ")
	ev.Write(msg)
	ev.WriteString("\n\n")

	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrListenClosed
	case !l.seen:
		return errors.New("mcpkit: notification before the listen stream's acknowledgement")
	}
	if _, err := l.w.Write(ev.Bytes()); err != nil {
		l.closed = true
		return ErrListenClosed
	}
	if f, ok := l.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// close ends writing: the request was answered.
func (l *ListenStream) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// listenWriter is the response writer of a listen request: it serialises
// the SDK's writes with the stream's own, and adds the extension's fields
// to the acknowledgement, the stream's first event.
type listenWriter struct {
	http.ResponseWriter
	l *ListenStream
}

func (w *listenWriter) WriteHeader(status int) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	w.ResponseWriter.WriteHeader(status)
}

// Write writes p, one event as the SDK writes it. The acknowledgement
// gets the fields given to Acknowledge.
func (w *listenWriter) Write(p []byte) (int, error) {
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen && bytes.Contains(p, []byte(`"notifications/subscriptions/acknowledged"`)) {
		l.seen = true
		defer close(l.acked)
		if len(l.ack) > 0 {
			if ev, ok := acknowledging(p, l.ack); ok {
				if _, err := w.ResponseWriter.Write(ev); err != nil {
					return 0, err
				}
				return len(p), nil
			}
		}
	}
	return w.ResponseWriter.Write(p)
}

func (w *listenWriter) Flush() {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *listenWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// acknowledging returns the event ev with fields added to the notifications
// object of the message in its data line, and whether it could.
func acknowledging(ev []byte, fields map[string]json.RawMessage) ([]byte, bool) {
	var out bytes.Buffer
	done := false
	for line := range bytes.Lines(ev) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || done {
			out.Write(line)
			continue
		}
		var msg map[string]json.RawMessage
		var params map[string]json.RawMessage
		var notes map[string]json.RawMessage
		if json.Unmarshal(data, &msg) != nil || json.Unmarshal(msg["params"], &params) != nil ||
			json.Unmarshal(params["notifications"], &notes) != nil {
			return nil, false
		}
		if notes == nil {
			notes = map[string]json.RawMessage{}
		}
		for k, v := range fields {
			notes[k] = v
		}
		params["notifications"], _ = json.Marshal(notes)
		msg["params"], _ = json.Marshal(params)
		b, err := json.Marshal(msg)
		if err != nil {
			return nil, false
		}
		out.WriteString("data: ")
		out.Write(b)
		out.WriteByte('\n')
		done = true
	}
	return out.Bytes(), done
}

// listening returns h, giving each 2026-07-28 subscriptions/listen request
// (told by its Mcp-Method header, which the protocol requires) a
// [ListenStream] in its context. It reads such a request's body, at most
// maxBody bytes, to find its ID and notifications object; other requests
// pass through untouched.
func listening(h http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "subscriptions/listen" {
			h.ServeHTTP(w, r)
			return
		}
		body, ok := readBody(w, r, maxBody)
		if !ok {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Notifications json.RawMessage `json:"notifications"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil || req.Method != "subscriptions/listen" || len(req.ID) == 0 {
			h.ServeHTTP(w, r) // the SDK answers what is wrong with it
			return
		}
		l := &ListenStream{id: req.ID, subs: req.Params.Notifications, acked: make(chan struct{})}
		l.w = w
		lw := &listenWriter{ResponseWriter: w, l: l}
		defer l.close()
		h.ServeHTTP(lw, r.WithContext(context.WithValue(r.Context(), listenStreamKey{}, l)))
	})
}
