package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// A forwarded call's progress: the proxy asks the upstream for progress
// under a token of its own, random so that no upstream can name another
// call's, and passes what comes under it to the local call.
//
// The SDK's client hands a notification to its handler after reading it,
// in a queue of its own, while it gives the call its answer as soon as it
// reads that: the last report before an answer may reach the handler
// after the call returned, when the local call has answered already. So
// the transports count the progress notifications they pass on for each
// token, and a call waits, briefly, until as many were reported.
type progressRoute struct {
	token   string
	ctx     context.Context                   // the local call's
	session atomic.Pointer[mcp.ClientSession] // the session the call went on
	seen    atomic.Int64                      // notifications the transport passed on
	done    atomic.Int64                      // notifications the handler finished with
	wake    chan struct{}                     // signalled when done moves
}

// progressRoutes are the routes of the calls in flight, by token, for all
// the Upstreams of the process: transports find them by token.
var progressRoutes sync.Map // string -> *progressRoute

// callKey carries a forwarded call's *progressRoute (nil when the call
// asked for no progress) in the context its requests are sent with, so
// that the HTTP transport knows a stream that answers a forwarded call.
type callKey struct{}

type callMark struct{ route *progressRoute }

// openProgress returns a new route for the local call ctx, registered.
func openProgress(ctx context.Context) *progressRoute {
	var b [16]byte
	rand.Read(b[:])
	r := &progressRoute{token: tokenPrefix + hex.EncodeToString(b[:]), ctx: ctx, wake: make(chan struct{}, 1)}
	progressRoutes.Store(r.token, r)
	return r
}

const tokenPrefix = "mcpkit-proxy-"

// drainBound is the longest a call waits for the reports of its
// notifications after its answer.
const drainBound = time.Second

// close waits until the notifications passed on for r were handled, at
// most drainBound, and unregisters r.
func (r *progressRoute) close() {
	defer progressRoutes.Delete(r.token)
	if r.done.Load() >= r.seen.Load() {
		return
	}
	t := time.NewTimer(drainBound)
	defer t.Stop()
	for r.done.Load() < r.seen.Load() {
		select {
		case <-r.wake:
		case <-t.C:
			return
		}
	}
}

// passed counts a notification a transport passed on under token.
func passedProgress(token string) {
	if r, ok := progressRoutes.Load(token); ok {
		r.(*progressRoute).seen.Add(1)
	}
}

var progressTokenRE = regexp.MustCompile(`^"progressToken":"(` + tokenPrefix + `[0-9a-f]{32})"$`)

// proxyProgressToken returns the token of the proxy's that msg carries
// when msg is a well-formed notifications/progress message (one the SDK
// hands to its handler: no ID, a number for progress), or "".
func proxyProgressToken(msg []byte) string {
	if !bytes.Contains(msg, []byte(tokenPrefix)) || !bytes.Contains(msg, []byte(`"notifications/progress"`)) {
		return ""
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID != nil || m.Method != "notifications/progress" {
		return ""
	}
	return progressParamsToken(m.Params)
}

// progressParamsToken returns the proxy's token in params, the params of
// a progress notification, when they are well formed, or "".
func progressParamsToken(params []byte) string {
	var p struct {
		Token    any      `json:"progressToken"`
		Progress *float64 `json:"progress"`
	}
	if json.Unmarshal(params, &p) != nil || p.Progress == nil {
		return ""
	}
	token, _ := p.Token.(string)
	if !progressTokenRE.MatchString(`"progressToken":"` + token + `"`) {
		return ""
	}
	return token
}

// onProgress reports the upstream's progress of a forwarded call on the
// local call, which the proxy's token names, when it came on the session
// the call went on.
func (u *Upstream) onProgress(_ context.Context, n *mcp.ProgressNotificationClientRequest) {
	if n == nil || n.Params == nil {
		return
	}
	token, ok := n.Params.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := progressRoutes.Load(token)
	if !ok {
		return
	}
	r := v.(*progressRoute)
	if s := r.session.Load(); s == nil || n.Session == s {
		mcpkit.ReportProgress(r.ctx, n.Params.Progress, n.Params.Total, n.Params.Message)
	}
	r.done.Add(1)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// countingTransport counts, for the transports whose messages the proxy
// does not see as bytes (in memory, stdio, any other but streamable HTTP,
// whose events eventFilter counts), the progress notifications it reads
// under the proxy's tokens.
type countingTransport struct{ mcp.Transport }

func (t countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Connection: c}, nil
}

type countingConn struct{ mcp.Connection }

func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "notifications/progress" {
		if token := progressParamsToken(r.Params); token != "" {
			passedProgress(token)
		}
	}
	return msg, err
}

// SessionID returns the session ID of the connection it wraps, if any.
func (c *countingConn) SessionID() string {
	if s, ok := c.Connection.(interface{ SessionID() string }); ok {
		return s.SessionID()
	}
	return ""
}
