package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"time"

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
	resp.Body = &limitedBody{r: resp.Body, left: t.limit}
	return resp, nil
}

// CloseIdleConnections lets [http.Client.CloseIdleConnections] reach the
// wrapped transport.
func (t *roundTripper) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

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

// lineLimiter passes bytes through, failing once a line exceeds its limit.
type lineLimiter struct {
	r    *bufio.Reader
	max  int
	line int // bytes of the current line so far
}

func newLineLimiter(r io.Reader, max int) *lineLimiter {
	return &lineLimiter{r: bufio.NewReader(r), max: max}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			l.line = 0
			continue
		}
		l.line++
		if l.line > l.max {
			return 0, ErrResponseTooLarge
		}
	}
	return n, err
}
