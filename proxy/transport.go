package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os/exec"
	"regexp"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxResponseBytes bounds what the proxy reads of one HTTP response
// or one stdio message of an upstream.
const DefaultMaxResponseBytes = 16 << 20

// ErrResponseTooLarge is the error of a read past [HTTPOptions.MaxResponseBytes]
// or [CommandOptions.MaxMessageBytes].
var ErrResponseTooLarge = errors.New("proxy: upstream response too large")

// HTTPOptions configures [HTTP]. A nil *HTTPOptions means the defaults.
type HTTPOptions struct {
	// Client sends the proxy's requests; nil means [http.DefaultClient].
	// Its Transport may carry the proxy's own credentials for this
	// upstream (an oauth2 transport, mutual TLS).
	Client *http.Client

	// Header is set on every request to the upstream: the proxy's own
	// credentials for it ("Authorization: Bearer <the proxy's token>", an
	// API key). Headers from [Options.Credentials] for a call replace
	// these of the same name.
	Header http.Header

	// MaxResponseBytes bounds each HTTP response body the proxy reads (a
	// JSON answer, or each event of a stream); past it the read fails and
	// the call with it. Zero means DefaultMaxResponseBytes.
	MaxResponseBytes int64

	// MaxRetries is how often the SDK reconnects a broken event stream;
	// zero means the SDK's default, negative never.
	MaxRetries int
}

// HTTP returns a Dial for an upstream served over the streamable HTTP
// transport at endpoint, with the proxy's own credentials (see
// [HTTPOptions]) and, per call, those of [Options.Credentials]. No header
// of the local client's request is sent upstream.
func HTTP(endpoint string, opts *HTTPOptions) Dial {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	base := http.DefaultClient
	if o.Client != nil {
		base = o.Client
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *base
	c.Transport = &roundTripper{header: o.Header.Clone(), limit: o.MaxResponseBytes, next: next}
	return func(context.Context) (mcp.Transport, error) {
		return &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &c, MaxRetries: o.MaxRetries}, nil
	}
}

// roundTripper sets the proxy's headers on each request and bounds each
// response body.
type roundTripper struct {
	header http.Header
	limit  int64
	next   http.RoundTripper
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	call := credentials(req.Context())
	if len(t.header) > 0 || len(call) > 0 {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		for k, vs := range t.header {
			req.Header[k] = vs
		}
		for k, vs := range call {
			req.Header[http.CanonicalHeaderKey(k)] = vs
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if len(call) > 0 && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		// The upstream refuses this caller's credentials: that call fails,
		// not the connection the SDK would end for it.
		if id := requestID(req); id != nil {
			e := &CallerRefusedError{Status: resp.StatusCode, Challenge: clip(resp.Header.Get("WWW-Authenticate"))}
			resp.Body.Close()
			return answer(req, errorMessage(id, e.Error(), refusedMark, e)), nil
		}
	}
	b := &bound{req: req, limit: t.limit}
	switch ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct {
	case "text/event-stream":
		resp.Body = &eventFilter{bound: b, r: bufio.NewReader(resp.Body), body: resp.Body}
	case "application/json":
		resp.Body = b.whole(resp)
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	default:
		resp.Body = &limitedBody{r: resp.Body, left: t.limit}
	}
	return resp, nil
}

// A ResponseTooLargeError reports an answer of the upstream larger than
// the proxy reads ([HTTPOptions.MaxResponseBytes],
// [CommandOptions.MaxMessageBytes]). The call it answered fails with it,
// at once; the other calls on the connection go on. It matches
// [ErrResponseTooLarge] with errors.Is.
type ResponseTooLargeError struct {
	// Size is the answer's size in bytes when it is known (a
	// Content-Length, a line read to its end), or 0 when it is only known
	// to be over Limit.
	Size int64 `json:"size,omitempty"`
	// Limit is the bound, in bytes.
	Limit int64 `json:"limit"`
	// Option names the option that sets the bound.
	Option string `json:"option"`
}

func (e *ResponseTooLargeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("the upstream's answer is %d bytes, over the proxy's limit of %d bytes (%s)", e.Size, e.Limit, e.Option)
	}
	return fmt.Sprintf("the upstream's answer is over the proxy's limit of %d bytes (%s)", e.Limit, e.Option)
}

// Is reports whether target is [ErrResponseTooLarge].
func (e *ResponseTooLargeError) Is(target error) bool { return target == ErrResponseTooLarge }

// standIn returns the request that takes the place of an upstream's
// request, of ID id, over the bound: the same ID, a method no client
// serves.
func standIn(id json.RawMessage) []byte {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "io.github.mcpkit/proxy.requestTooLarge"})
	return msg
}

// A CallerRefusedError reports that the upstream refused the credentials
// a call carried for its caller ([Options.Credentials]), with HTTP 401 or
// 403: a caller without the scope a tool needs upstream, a token the
// upstream does not accept. Only that call fails, with a fatal tool error
// (the upstream's circuit breaker does not count it), and the connection
// other callers share goes on.
type CallerRefusedError struct {
	Upstream  string `json:"-"`
	Status    int    `json:"status"`              // 401 or 403
	Challenge string `json:"challenge,omitempty"` // the upstream's WWW-Authenticate, clipped
}

func (e *CallerRefusedError) Error() string {
	who := "the upstream"
	if e.Upstream != "" {
		who = fmt.Sprintf("upstream %q", e.Upstream)
	}
	s := fmt.Sprintf("%s refused the caller's credentials: HTTP %d", who, e.Status)
	if e.Challenge != "" {
		s += " (" + e.Challenge + ")"
	}
	return s
}

// refusedMark marks the data of a CallerRefusedError put in place of an
// answer.
const refusedMark = "io.github.mcpkit/proxy.callerRefused"

// callerRefused returns the error of a refusal of a caller's credentials
// put in place of an answer, or nil.
func callerRefused(wire *jsonrpc.Error) *CallerRefusedError {
	var data map[string]*CallerRefusedError
	if !bytes.Contains(wire.Data, []byte(refusedMark)) || json.Unmarshal(wire.Data, &data) != nil {
		return nil
	}
	e := data[refusedMark]
	if e == nil || e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden {
		return nil
	}
	e.Challenge = clip(e.Challenge)
	return e
}

// errorMessage returns a JSON-RPC error message for id, with mark: value
// as its data.
func errorMessage(id json.RawMessage, text, mark string, value any) []byte {
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code":    jsonrpc.CodeInternalError,
			"message": text,
			"data":    map[string]any{mark: value},
		},
	})
	return msg
}

// answer returns an HTTP response to req whose body is the JSON message
// msg.
func answer(req *http.Request, msg []byte) *http.Response {
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(msg)),
		ContentLength: int64(len(msg)),
		Request:       req,
	}
}

// refusalMark marks, in the data of the JSON-RPC error that takes the
// place of an answer over the bound, that the proxy put it there.
const refusalMark = "io.github.mcpkit/proxy.responseTooLarge"

// refusal returns the JSON-RPC error message, for the request id, that
// takes the place of an answer over the bound e.
func refusal(id json.RawMessage, e *ResponseTooLargeError) []byte {
	return errorMessage(id, e.Error(), refusalMark, e)
}

// tooLarge returns the error of a refusal put in place of an answer, or
// nil when wire is another error.
func tooLarge(wire *jsonrpc.Error) *ResponseTooLargeError {
	if wire.Code != jsonrpc.CodeInternalError || !bytes.Contains(wire.Data, []byte(refusalMark)) {
		return nil
	}
	var data map[string]*ResponseTooLargeError
	if json.Unmarshal(wire.Data, &data) != nil || data[refusalMark] == nil {
		return nil
	}
	// Only what the proxy writes: an upstream may send this data too.
	switch e := data[refusalMark]; e.Option {
	case "HTTPOptions.MaxResponseBytes", "CommandOptions.MaxMessageBytes":
		return e
	}
	return nil
}

// bound is the size bound of one HTTP response, and what takes the place
// of an answer over it: a JSON-RPC error for the request's ID, so that
// only the call it answers fails, and the connection, with every other
// call on it, goes on.
type bound struct {
	req   *http.Request
	limit int64
}

// refusal returns the error message that takes the place of an answer
// over the bound, or nil when the request has no single ID to answer (a
// notification, a batch, the event stream of a GET).
func (b *bound) refusal(size int64) []byte {
	id := requestID(b.req)
	if id == nil {
		return nil
	}
	return refusal(id, &ResponseTooLargeError{Size: size, Limit: b.limit, Option: "HTTPOptions.MaxResponseBytes"})
}

// whole reads a JSON answer within the bound. Over it, the answer is
// replaced by its refusal or, when there is none, fails past the bound.
func (b *bound) whole(resp *http.Response) io.ReadCloser {
	if resp.ContentLength > b.limit {
		if msg := b.refusal(resp.ContentLength); msg != nil {
			resp.Body.Close()
			return io.NopCloser(bytes.NewReader(msg))
		}
		return &limitedBody{r: resp.Body, left: b.limit}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, b.limit+1))
	switch {
	case err != nil:
		resp.Body.Close()
		return io.NopCloser(io.MultiReader(bytes.NewReader(data), errReader{err}))
	case int64(len(data)) <= b.limit:
		resp.Body.Close()
		return io.NopCloser(bytes.NewReader(data))
	}
	if msg := b.refusal(0); msg != nil {
		resp.Body.Close()
		return io.NopCloser(bytes.NewReader(msg))
	}
	return &limitedBody{r: readCloser{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}, left: b.limit}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

type readCloser struct {
	io.Reader
	io.Closer
}

// requestID returns the JSON-RPC ID of the request req carries, or nil
// when it carries no single request.
func requestID(req *http.Request) json.RawMessage {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.NewDecoder(body).Decode(&msg) != nil || msg.Method == "" || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil
	}
	return msg.ID
}

// A message's kind, as far as the start of it tells.
const (
	unknownKind = iota
	answerKind  // a response: result or error
	askingKind  // a request or a notification: method
)

// kindOf tells from head, the start of a JSON-RPC message (possibly cut
// short), whether it is an answer or a request or notification, by the
// first of "result", "error" and "method" among its top-level keys, and
// returns the ID when it comes before that key.
//
// An answer over the bound is replaced by its refusal; a request, by a
// request of the same ID for a method no client has (see standIn), which
// the proxy's client answers "method not found", so that the upstream's
// request fails at once rather than waits; a notification is dropped.
func kindOf(head []byte) (kind int, id json.RawMessage) {
	d := json.NewDecoder(bytes.NewReader(head))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return unknownKind, nil
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return unknownKind, nil
		}
		key, _ := t.(string)
		switch key {
		case "result", "error":
			return answerKind, id
		case "method":
			return askingKind, id
		}
		var v json.RawMessage
		if d.Decode(&v) != nil {
			return unknownKind, nil
		}
		if key == "id" {
			id = v
		}
	}
	return unknownKind, nil
}

// eventData returns the data of an event, its data lines joined.
func eventData(event []byte) []byte {
	var data []byte
	for _, line := range bytes.SplitAfter(event, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			rest = bytes.TrimPrefix(rest, []byte(" "))
			data = append(data, bytes.TrimRight(rest, "\r\n")...)
		}
	}
	return data
}

// eventFilter passes an event stream through event by event. An event
// over the bound is left out: when it is the answer of the stream's
// request, its refusal takes its place and the stream ends (the answer is
// the last event the request waits for); any other is dropped. On the
// stream of a forwarded call, progress under another call's token is
// dropped too: an upstream speaks to each call of its own; the progress
// passed on is counted for its call (see progressRoute).
type eventFilter struct {
	*bound
	r    *bufio.Reader
	body io.Closer

	event    []byte // the event read so far, while within the bound
	head     []byte // the start of an event over the bound
	tail     []byte // and its end
	size     int64  // its size, counted on over the bound
	midLine  bool   // the last chunk read did not end its line
	out      []byte // what to pass on next
	finished bool
}

// eventHead is how much of an event over the bound is kept to tell what it
// is.
const eventHead = 512

func (f *eventFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.finished {
			return 0, io.EOF
		}
		chunk, err := f.r.ReadSlice('\n')
		blank := !f.midLine && (len(chunk) == 1 || len(chunk) == 2 && chunk[0] == '\r') && chunk[len(chunk)-1] == '\n'
		f.midLine = err == bufio.ErrBufferFull
		f.size += int64(len(chunk))
		switch {
		case f.size <= f.limit:
			f.event = append(f.event, chunk...)
		case f.head == nil:
			whole := append(f.event, chunk...)
			f.head = append([]byte(nil), whole[:min(len(whole), eventHead)]...)
			f.tail = append(f.tail[:0], whole[max(0, len(whole)-idWindow):]...)
			f.event = f.event[:0]
		default:
			f.tail = append(f.tail, chunk...)
			f.tail = f.tail[max(0, len(f.tail)-idWindow):]
		}
		if blank {
			f.endEvent()
		}
		switch {
		case err == nil, err == bufio.ErrBufferFull:
		case err == io.EOF:
			// An event the stream ends in the middle of is not dispatched
			// (as the event stream format says), but an answer over the
			// bound is refused all the same.
			if f.size > f.limit {
				f.endEvent()
			}
			f.event, f.head, f.tail, f.size = f.event[:0], nil, f.tail[:0], 0
			f.finished = true
		default:
			return 0, err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// endEvent passes the event read on, or what takes its place.
func (f *eventFilter) endEvent() {
	defer func() { f.event, f.head, f.tail, f.size = f.event[:0], nil, f.tail[:0], 0 }()
	if f.size > f.limit {
		kind, id := kindOf(eventData(f.head))
		if id == nil && kind == askingKind {
			// An ID after the method (as the TypeScript SDK writes it).
			if m := tailID.FindSubmatch(bytes.TrimRight(f.tail, "\r\n")); m != nil {
				id = json.RawMessage(m[1])
			}
		}
		switch {
		case kind == answerKind:
			if msg := f.refusal(0); msg != nil {
				f.out = append(f.out, "event: message\ndata: "...)
				f.out = append(f.out, msg...)
				f.out = append(f.out, "\n\n"...)
				f.finished = true
			}
		case kind == askingKind && id != nil:
			f.out = append(f.out, "event: message\ndata: "...)
			f.out = append(f.out, standIn(id)...)
			f.out = append(f.out, "\n\n"...)
		}
		return
	}
	if token := proxyProgressToken(eventData(f.event)); token != "" {
		mark, ours := f.req.Context().Value(callKey{}).(callMark)
		if ours && (mark.route == nil || mark.route.token != token) {
			return // another call's progress on this call's stream
		}
		passedProgress(token)
	}
	f.out = append(f.out, f.event...)
}

func (f *eventFilter) Close() error { return f.body.Close() }

// limitedBody fails a read past its limit, instead of returning a short
// body that would parse as something else.
type limitedBody struct {
	r    io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, ErrResponseTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left <= 0 && err == nil {
		// More may follow: a read that finds none ends cleanly.
		var one [1]byte
		if m, _ := b.r.Read(one[:]); m > 0 {
			return n, ErrResponseTooLarge
		}
		return n, io.EOF
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.r.Close() }

// CommandOptions configures [Command]. A nil *CommandOptions means the
// defaults.
type CommandOptions struct {
	// MaxMessageBytes bounds each message (one line) the proxy reads from
	// the command's standard output; past it the connection fails. Zero
	// means DefaultMaxResponseBytes.
	MaxMessageBytes int
}

// Command returns a Dial that starts the command newCmd returns, a new
// one for each connection, and speaks MCP with it over its standard input
// and output, as [mcp.CommandTransport] does, with each message it reads
// bounded (see [CommandOptions]). The command's standard error is left as
// newCmd set it.
func Command(newCmd func() *exec.Cmd, opts *CommandOptions) Dial {
	limit := DefaultMaxResponseBytes
	if opts != nil && opts.MaxMessageBytes > 0 {
		limit = opts.MaxMessageBytes
	}
	return func(ctx context.Context) (mcp.Transport, error) {
		cmd := newCmd()
		if cmd == nil {
			return nil, errors.New("proxy: Command: no command")
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, fmt.Errorf("proxy: Command: %w", err)
		}
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, fmt.Errorf("proxy: Command: %w", err)
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("proxy: Command: %w", err)
		}
		return &mcp.IOTransport{Reader: &process{lines: newLineLimiter(out, limit), cmd: cmd, stdin: in, stdout: out}, Writer: in}, nil
	}
}

// process is a command's standard output, read with each line bounded.
// Closing it closes the command's standard input, which tells an MCP
// server on stdio to exit, and waits for it to; a command still running
// after exitGrace is killed.
type process struct {
	lines  io.Reader
	cmd    *exec.Cmd
	stdin  io.Closer
	stdout io.Closer
}

const exitGrace = 5 * time.Second

func (p *process) Read(b []byte) (int, error) { return p.lines.Read(b) }

func (p *process) Close() error {
	p.stdin.Close()
	exited := make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(exitGrace):
		p.cmd.Process.Kill()
		<-exited
	}
	return nil
}

// lineLimiter passes the lines of a stdio upstream through, each within
// its limit. A longer line is left out: when it is an answer whose ID can
// be read at its start or its end (where SDKs write it), a JSON-RPC error
// for that ID saying the size and the limit takes its place, so that its
// call fails at once; otherwise it is dropped. The connection, with every
// other call on it, goes on.
type lineLimiter struct {
	r   *bufio.Reader
	max int

	line    []byte // the line read so far, while within the limit
	size    int    // its size, counted on past the limit
	over    bool   // the line is past the limit
	head    []byte // the first idWindow bytes of a line past the limit
	tail    []byte // its last idWindow bytes
	out     []byte // what to pass on next
	readErr error  // the error that ended the input
}

// idWindow is how much of the start and of the end of a line past the
// limit is kept to find its ID.
const idWindow = 256

func newLineLimiter(r io.Reader, max int) *lineLimiter {
	return &lineLimiter{r: bufio.NewReader(r), max: max}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if l.readErr != nil {
			return 0, l.readErr
		}
		chunk, err := l.r.ReadSlice('\n')
		body := bytes.TrimSuffix(chunk, []byte("\n"))
		l.size += len(body)
		switch {
		case l.size <= l.max:
			l.line = append(l.line, chunk...)
		case !l.over:
			// Just past the limit: keep the ends, forget the rest.
			l.over = true
			whole := append(l.line, body...)
			l.head = append(l.head[:0], whole[:min(len(whole), idWindow)]...)
			l.tail = append(l.tail[:0], whole[max(0, len(whole)-idWindow):]...)
			l.line = l.line[:0]
		default:
			l.tail = append(l.tail, body...)
			l.tail = l.tail[max(0, len(l.tail)-idWindow):]
		}
		switch {
		case err == bufio.ErrBufferFull:
		case err == nil:
			l.endLine()
		default:
			l.endLine()
			l.readErr = err
		}
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// endLine passes the line read on, or what takes its place.
func (l *lineLimiter) endLine() {
	defer func() { l.line, l.over, l.size = l.line[:0], false, 0 }()
	if !l.over {
		l.out = append(l.out, l.line...)
		return
	}
	kind, id := kindOf(l.head)
	if kind == unknownKind && headAnswer.Match(l.head) {
		kind = answerKind // keys the decoder could not read past, but an answer
	}
	if id == nil && kind != unknownKind {
		if m := tailID.FindSubmatch(l.tail); m != nil {
			id = json.RawMessage(m[1])
		}
	}
	switch {
	case id == nil: // a notification, or no telling: dropped
	case kind == answerKind:
		e := &ResponseTooLargeError{Size: int64(l.size), Limit: int64(l.max), Option: "CommandOptions.MaxMessageBytes"}
		l.out = append(append(l.out, refusal(id, e)...), '\n')
	case kind == askingKind:
		l.out = append(append(l.out, standIn(id)...), '\n')
	}
}

var (
	headAnswer = regexp.MustCompile(`^\s*\{\s*"(result|error)"\s*:`)
	tailID     = regexp.MustCompile(`[,{]\s*"id"\s*:\s*(-?[0-9]{1,20}|"[^"\\]{0,128}")\s*\}\s*\r?$`)
)
