package mcpkit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
		return listening(s.answeringChallenges(answeringHeaderFaults(mcp.NewStreamableHTTPHandler(getServer, &stateless)), opts.ResourceMetadataURL), maxBody)
	}
	stateful := base
	stateful.Stateless = false
	stateful.SessionTimeout = cmp.Or(opts.SessionTimeout, DefaultSessionTimeout)
	stateful.PropagateRequestCancellation = !opts.KeepHandlersOnDisconnect
	return listening(s.answeringChallenges(answeringHeaderFaults(&dispatcher{
		stateful:  mcp.NewStreamableHTTPHandler(getServer, &stateful),
		stateless: mcp.NewStreamableHTTPHandler(getServer, &stateless),
		maxBody:   maxBody,
	}), opts.ResourceMetadataURL), maxBody)
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
