package mcpkit

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures [Server.HTTPHandler]. The zero value, and a nil
// *HTTPOptions, are the defaults: stateless, every request served on its
// own, by any replica.
type HTTPOptions struct {
	// Sessions gives clients of protocol versions before 2026-07-28 a
	// session, as they had before the stateless protocol: a client that
	// sends initialize gets a session ID, and its later requests (those
	// naming the session) are served within it. Requests of 2026-07-28,
	// which has no sessions, and requests of older clients that name no
	// session are still served statelessly, on the same endpoint.
	//
	// Sessions are what older clients need for requests from the server
	// to the client during a call (elicitation, sampling and roots through
	// [Request.Session]) and for notifications outside a call. Their cost:
	// a session lives in one process, so behind a load balancer each
	// client must stick to the replica that holds its session, and an idle
	// session holds a goroutine and buffers until SessionTimeout. Without
	// Sessions, older clients are served statelessly and lose those
	// server-to-client requests; 2026-07-28 clients ask for input with
	// input_required results instead, which work on any replica.
	Sessions bool

	// SessionTimeout closes a session idle for that long; zero means
	// [DefaultSessionTimeout]. It applies only with Sessions.
	SessionTimeout time.Duration

	// KeepHandlersOnDisconnect lets a 2026-07-28 call's handler run on
	// after the client closed the HTTP response stream. By default its
	// context is cancelled then: the 2026-07-28 protocol has no other way
	// to cancel a call, and requires servers to take a closed stream as
	// cancellation.
	KeepHandlersOnDisconnect bool

	// ResourceMetadataURL is the URL of the server's protected resource
	// metadata (RFC 9728), named by the resource_metadata parameter of the
	// challenge that answers a call refused by [RequireScopes] or
	// [RequireToken]; empty leaves the parameter out. Give the same URL to
	// the SDK's auth.RequireBearerToken, for its 401s.
	ResourceMetadataURL string

	// SDK holds the other settings of the SDK's streamable HTTP handler
	// (JSONResponse, MaxRequestBodyBytes, CrossOriginProtection, Logger,
	// EventStore, ...). Its Stateless, SessionTimeout and
	// PropagateRequestCancellation are mcpkit's to set and are ignored.
	SDK *mcp.StreamableHTTPOptions
}

// HTTPHandler returns an [http.Handler] serving the server over the
// streamable HTTP transport, to clients of every protocol version the SDK
// supports, on one endpoint. By default (nil opts) every request is served
// statelessly, so that any replica behind a load balancer can answer any
// request, and a 2026-07-28 call's context is cancelled when its client
// closes the response stream; see [HTTPOptions] for sessions.
func (s *Server) HTTPHandler(opts *HTTPOptions) http.Handler {
	if opts == nil {
		opts = &HTTPOptions{}
	}
	var base mcp.StreamableHTTPOptions
	if opts.SDK != nil {
		base = *opts.SDK
	}
	getServer := func(*http.Request) *mcp.Server { return s.sdk }

	stateless := base
	stateless.Stateless = true
	stateless.SessionTimeout = 0
	stateless.PropagateRequestCancellation = !opts.KeepHandlersOnDisconnect
	maxBody := cmp.Or(base.MaxRequestBodyBytes, mcp.DefaultMaxRequestBodyBytes)
	if !opts.Sessions {
		return s.drainGate(listening(s.holding(mcp.NewStreamableHTTPHandler(getServer, &stateless), opts.ResourceMetadataURL), maxBody))
	}
	stateful := base
	stateful.Stateless = false
	stateful.SessionTimeout = cmp.Or(opts.SessionTimeout, DefaultSessionTimeout)
	stateful.PropagateRequestCancellation = !opts.KeepHandlersOnDisconnect
	return s.drainGate(listening(s.holding(&dispatcher{
		stateful:  mcp.NewStreamableHTTPHandler(getServer, &stateful),
		stateless: mcp.NewStreamableHTTPHandler(getServer, &stateless),
		maxBody:   maxBody,
	}, opts.ResourceMetadataURL), maxBody))
}

// What a call decides that its HTTP response must say instead of what the
// SDK writes for it: a requirement refused the call (RequireScopes: 401 or
// 403 with the authorization spec's challenge), or its Mcp-Param headers
// disagree with its arguments (400, the spec's status for -32020). The
// call records it in the verdict of its HTTP request, and the request's
// response is held until the SDK begins it, then replaced when there is
// one (see holding).

// A verdict is what the calls of one HTTP request decided of its response,
// while they are served: a refusal recorded outside a call the request
// carries (by work a call started that runs on, by a task's round that a
// tasks/update started) is not the request's.
type verdict struct {
	mu        sync.Mutex
	session   *mcp.ServerSession      // the session of the request's calls
	calls     int                     // the request's calls being served (see serveRouted)
	challenge *InsufficientScopeError // the first refusal
	fault     bool                    // a header fault
	done      bool                    // the response began: nothing changes it any more
}

type verdictKey struct{}

// verdictOf returns the verdict of the HTTP request of the call ctx belongs
// to, or nil (whose methods do nothing) when there is none.
func verdictOf(ctx context.Context) *verdict {
	v, _ := ctx.Value(verdictKey{}).(*verdict)
	return v
}

// serving marks a call of the request, on session ss, as being served,
// until the function it returns is called.
func (v *verdict) serving(ss *mcp.ServerSession) func() {
	if v == nil {
		return func() {}
	}
	v.mu.Lock()
	v.calls++
	v.session = ss
	v.mu.Unlock()
	return func() {
		v.mu.Lock()
		if v.calls--; v.calls == 0 {
			v.session = nil // work the call started may keep the verdict; not the session
		}
		v.mu.Unlock()
	}
}

// ours reports whether a decision about req is the request's: one of its
// calls is being served, and req belongs to it (a call's requests share its
// session, down every chain it runs; work it starts that outlives it, a
// task's, drops the session, and so does a task's round). v.mu is held.
func (v *verdict) ours(ss *mcp.ServerSession) bool {
	return v.calls > 0 && !v.done && v.session != nil && ss == v.session
}

// refuse records err, the refusal of a call on session ss, as the refusal
// of the request, if it is the first and the call is the request's.
func (v *verdict) refuse(ss *mcp.ServerSession, err *InsufficientScopeError) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.challenge == nil && v.ours(ss) {
		v.challenge = err
	}
}

// headerFault records that the headers of the request disagree with req,
// its call.
func (v *verdict) headerFault(req *Request) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ours(req.Session()) {
		v.fault = true
	}
}

// close ends the verdict as the response begins, and returns what it
// holds then.
func (v *verdict) close() (*InsufficientScopeError, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.done = true
	return v.challenge, v.fault
}

// verdictHeader names, on a request within a session, the verdict of its
// HTTP request in Server.verdicts: the calls of a session run on the
// session's context, not the request's. holding removes any the client
// sent, and its values are random: a client cannot name another's.
const verdictHeader = "Mcpkit-Verdict-Id"

// holding returns h, answering a POST whose call a requirement refused
// with the challenge (see ChallengeHeader), and a 2026-07-28 POST whose
// call failed its Mcp-Param headers with status 400, instead of what the
// SDK writes, as long as the SDK has written nothing before. A 2026-07-28
// call, prompts/get or resources/read that its headers alone refuse (see
// refusedEarly) is answered before the SDK reads it. resourceMetadata, if
// not empty, is the URL of the protected resource metadata that a
// challenge names.
func (s *Server) holding(h http.Handler, resourceMetadata string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		if e, err := s.refusedEarly(r); err != nil {
			s.observeRefusedEarly(r, e, err)
			io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10)) // let the connection be reused
			challengeResponse(w, err, resourceMetadata)
			return
		}
		if isBatch(r) {
			// One status cannot answer several calls: each refusal is its
			// call's result.
			h.ServeHTTP(w, r)
			return
		}
		hw := &heldWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), verdictKey{}, &hw.v))
		if r.Header.Get(sessionIDHeader) != "" || r.Header.Get(verdictHeader) != "" {
			var b [16]byte
			rand.Read(b[:])
			id := hex.EncodeToString(b[:])
			r.Header = r.Header.Clone()
			r.Header.Set(verdictHeader, id)
			s.verdicts.Store(id, &hw.v)
			defer s.verdicts.Delete(id)
		}
		h.ServeHTTP(hw, r)
		hw.finish(resourceMetadata)
	})
}

// isBatch reports whether r, a POST, holds a JSON-RPC batch, which
// protocols before 2025-06-18 allow: it peeks at the body's first byte
// other than white space, and leaves the body as it was.
func isBatch(r *http.Request) bool {
	if v := r.Header.Get(protocolVersionHeader); v != "" && v >= "2025-06-18" {
		return false
	}
	br := bufio.NewReaderSize(r.Body, 64)
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	for i := 1; i <= 64; i++ {
		b, err := br.Peek(i)
		if len(b) < i {
			return false
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
			if err != nil {
				return false
			}
			continue
		default:
			return c == '['
		}
	}
	return false
}

// withVerdict returns ctx with the verdict of the HTTP request req came
// in. A call of a session runs on the session's context, which may hold
// the verdict of the request that opened the session: its own is found by
// the header holding gave its request.
func (s *Server) withVerdict(ctx context.Context, h http.Header) context.Context {
	if id := h.Get(verdictHeader); id != "" {
		if v, ok := s.verdicts.Load(id); ok {
			return context.WithValue(ctx, verdictKey{}, v)
		}
	}
	return ctx
}

// heldWriter passes a response through, unless the verdict of its request
// says otherwise before the response begins: then it holds what the SDK
// writes, for finish to replace.
type heldWriter struct {
	http.ResponseWriter
	v         verdict
	started   bool
	challenge *InsufficientScopeError // held for a challenge
	fault     bool                    // held for a header fault
	body      bytes.Buffer            // what the SDK wrote of a header fault
}

func (w *heldWriter) begin(status int) {
	if w.started {
		return
	}
	w.started = true
	challenge, fault := w.v.close()
	if status == http.StatusOK {
		switch {
		case challenge != nil:
			w.challenge = challenge
			return
		case fault:
			w.fault = true
			return
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *heldWriter) held() bool { return w.challenge != nil || w.fault }

func (w *heldWriter) WriteHeader(status int) { w.begin(status) }

func (w *heldWriter) Write(p []byte) (int, error) {
	w.begin(http.StatusOK)
	switch {
	case w.challenge != nil:
		return len(p), nil
	case w.fault:
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes what passes through; a held response waits for finish.
func (w *heldWriter) Flush() {
	if w.held() {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		w.begin(http.StatusOK)
		if !w.held() {
			f.Flush()
		}
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *heldWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish sends the response held: the challenge, or the JSON-RPC message
// that the SDK wrote for a header fault, with status 400 (an event stream
// holds it in its first event's data lines).
func (w *heldWriter) finish(resourceMetadata string) {
	w.v.close()
	switch {
	case w.challenge != nil:
		challengeResponse(w.ResponseWriter, w.challenge, resourceMetadata)
	case w.fault:
		body := w.body.Bytes()
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			var data [][]byte
			for line := range bytes.Lines(body) {
				line = bytes.TrimRight(line, "\r\n")
				if len(line) == 0 && len(data) > 0 {
					break // the end of the first event
				}
				if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
					data = append(data, bytes.TrimPrefix(d, []byte(" ")))
				}
			}
			body = bytes.Join(data, []byte("\n"))
		}
		hdr := w.Header()
		hdr.Set("Content-Type", "application/json")
		hdr.Del("Content-Length")
		w.ResponseWriter.WriteHeader(http.StatusBadRequest)
		w.ResponseWriter.Write(body)
	}
}

// dispatcher sends each request to the stateful or the stateless handler,
// both serving the same SDK server: requests within a session, and
// initialize requests that open one, to the stateful one; the rest (every
// 2026-07-28 request, and older requests outside a session) to the
// stateless one.
type dispatcher struct {
	stateful, stateless http.Handler
	maxBody             int64
}

const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	statelessVersion      = "2026-07-28" // the first protocol version without sessions
)

func (d *dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Header.Get(sessionIDHeader) != "":
		d.stateful.ServeHTTP(w, r)
	case r.Header.Get(protocolVersionHeader) >= statelessVersion:
		d.stateless.ServeHTTP(w, r) // the protocol has no sessions
	case r.Method != http.MethodPost:
		// GET and DELETE mean something only within a session; the
		// stateful handler answers them as the SDK does.
		d.stateful.ServeHTTP(w, r)
	default:
		body, ok := readBody(w, r, d.maxBody)
		if !ok {
			return
		}
		if opensSession(body) {
			d.stateful.ServeHTTP(w, r)
			return
		}
		d.stateless.ServeHTTP(w, r)
	}
}

// opensSession reports whether body, a JSON-RPC message or batch, holds an
// initialize request.
func opensSession(body []byte) bool {
	if !bytes.Contains(body, []byte(`"initialize"`)) {
		return false // the common case, without parsing
	}
	type message struct {
		Method string `json:"method"`
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) > 0 && body[0] == '[' {
		var batch []message
		if json.Unmarshal(body, &batch) != nil {
			return false
		}
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
		return false
	}
	var m message
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// readBody reads r's body, at most maxBody bytes, and puts it back for the
// handler after. It answers the request itself (413 for a body too large,
// 400 for one it could not read) and returns false when it cannot.
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "reading the request body failed", http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}
