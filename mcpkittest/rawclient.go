package mcpkittest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A RawClient sends JSON-RPC requests to a streamable HTTP endpoint as a
// [StatelessVersion] client does, one POST per request, without the SDK's
// client: for methods and results the SDK client does not model (the
// tasks extension's tasks/* methods and its CreateTaskResult, resultType
// "task"), and for requests a conforming client would not send.
//
// Each request carries the headers of the protocol (Content-Type, Accept,
// Mcp-Protocol-Version, Mcp-Method, and Mcp-Name from the params: "name"
// for tools/call and prompts/get, "uri" for resources/read, "taskId" for
// tasks/*) and, in its params' _meta, the protocol version, a client info
// named "mcpkittest", and Capabilities. Token and Header come after these,
// so that they may replace any of them.
//
// A RawClient holds no state between calls: it may be copied, and used by
// several goroutines at once.
type RawClient struct {
	// Endpoint is the MCP endpoint, such as a test [Server]'s URL.
	Endpoint string

	// Token, if not empty, is sent as "Authorization: Bearer <Token>".
	Token string

	// Capabilities are the client capabilities declared in each request's
	// _meta. Nil means none: {}.
	Capabilities map[string]any

	// Header is added to each request, replacing the header of the same
	// name that the RawClient would send: a mismatched Mcp-Name, say. A
	// name with no values removes that header.
	Header http.Header

	// HTTPClient sends the requests. Nil means http.DefaultClient.
	HTTPClient *http.Client
}

// requestID is the ID of every request: a RawClient sends one request per
// POST, and the 2026-07-28 protocol has no session in which IDs must
// differ.
const requestID = 1

// Call sends a request for method with params and returns the result of
// the server's response. Params are not modified: the RawClient sends a
// copy, with the _meta keys above added; if params hold a _meta map, it
// is copied too, and keys it already has are kept, so that a test can send
// another protocol version, say; a _meta of another type is sent as it is.
//
// The server may answer with a JSON body or an event stream; Call reads
// the first response to its request from either. A JSON-RPC error
// response, whatever the HTTP status, is returned as a *[jsonrpc.Error],
// for [errors.As]. Any other failure (of the transport, an HTTP status
// without a JSON-RPC response, a body that holds none) is returned as an
// error that names the method, the HTTP status and the start of the body.
func (c *RawClient) Call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	resp, err := c.post(ctx, method, params)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var seen bytes.Buffer // the start of the body, for errors
	tee := io.TeeReader(resp.Body, &limitedWriter{&seen, 512})
	msg, err := readResponse(resp, tee)
	if msg != nil && msg.Error != nil {
		return nil, msg.Error
	}
	if msg != nil && msg.Result != nil && resp.StatusCode/100 == 2 {
		return msg.Result, nil
	}
	io.Copy(io.Discard, io.LimitReader(tee, 512)) // for the excerpt
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("mcpkittest: %s: HTTP %s: %q", method, resp.Status, clip(seen.Bytes()))
	}
	if err == nil {
		err = errors.New("no response to the request")
	}
	return nil, fmt.Errorf("mcpkittest: %s: HTTP %s: %v: %q", method, resp.Status, err, clip(seen.Bytes()))
}

// post sends the request for method with params and returns the server's
// response, whose body the caller closes.
func (c *RawClient) post(ctx context.Context, method string, params map[string]any) (*http.Response, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": requestID, "method": method, "params": c.params(params)})
	if err != nil {
		return nil, fmt.Errorf("mcpkittest: %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("mcpkittest: %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", StatelessVersion)
	req.Header.Set("Mcp-Method", method)
	if name := routingName(method, params); name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, vs := range c.Header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mcpkittest: %s: %w", method, err)
	}
	return resp, nil
}

// Stream sends a request for method with params, as Call does, and returns
// the server's answer as a stream of JSON-RPC messages: for requests whose
// answer is a long-lived event stream, such as subscriptions/listen, and
// for tests that look at the notifications sent before a response. The
// server must answer 200 with an event stream or a JSON body; anything else
// is an error that names the status and the start of the body.
func (c *RawClient) Stream(ctx context.Context, method string, params map[string]any) (*RawStream, error) {
	resp, err := c.post(ctx, method, params)
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" && ct != "application/json" {
		defer resp.Body.Close()
		var seen bytes.Buffer
		io.Copy(&limitedWriter{&seen, 512}, io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("mcpkittest: %s: HTTP %s, Content-Type %q: %q", method, resp.Status, ct, clip(seen.Bytes()))
	}
	return &RawStream{body: resp.Body, r: bufio.NewReader(resp.Body), json: ct == "application/json"}, nil
}

// A RawStream is the answer to a [RawClient.Stream] request: the JSON-RPC
// messages of an event stream (or the one message of a JSON body), in the
// order the server sent them. It is not safe for concurrent use.
type RawStream struct {
	body io.Closer
	r    *bufio.Reader
	json bool // the body is one JSON message
	done bool
}

// Next returns the next message, io.EOF at the end of the stream, or the
// error that ended it (such as the request's context ending).
func (s *RawStream) Next() (json.RawMessage, error) {
	if s.done {
		return nil, io.EOF
	}
	if s.json {
		s.done = true
		var msg json.RawMessage
		if err := json.NewDecoder(s.r).Decode(&msg); err != nil {
			return nil, err
		}
		return msg, nil
	}
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil && (err != io.EOF || line == "") {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			if field, value, _ := strings.Cut(line, ":"); field == "data" {
				data = append(data, strings.TrimPrefix(value, " "))
			}
			continue
		}
		if msg := strings.Join(data, "\n"); strings.TrimSpace(msg) != "" {
			return json.RawMessage(msg), nil
		}
		data = data[:0] // a priming event, without data
	}
}

// Close ends the stream: the server sees the client go away.
func (s *RawStream) Close() error { return s.body.Close() }

// params returns a copy of p with the _meta of a 2026-07-28 request.
func (c *RawClient) params(p map[string]any) map[string]any {
	out := maps.Clone(p)
	if out == nil {
		out = map[string]any{}
	}
	meta := map[string]any{}
	switch m := out["_meta"].(type) {
	case map[string]any:
		meta = maps.Clone(m)
	case nil:
	default:
		return out // the caller's own _meta, whatever it is, goes as it is
	}
	caps := c.Capabilities
	if caps == nil {
		caps = map[string]any{}
	}
	for k, v := range map[string]any{
		mcp.MetaKeyProtocolVersion:    StatelessVersion,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "mcpkittest", "version": "1"},
		mcp.MetaKeyClientCapabilities: caps,
	} {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	out["_meta"] = meta
	return out
}

// routingName returns the Mcp-Name header of a request (SEP-2243, and
// SEP-2663 for tasks), or "" if it has none.
func routingName(method string, params map[string]any) string {
	var key string
	switch {
	case method == "tools/call", method == "prompts/get":
		key = "name"
	case method == "resources/read":
		key = "uri"
	case strings.HasPrefix(method, "tasks/"):
		key = "taskId"
	default:
		return ""
	}
	name, _ := params[key].(string)
	return name
}

// A wireResponse is a JSON-RPC message as far as Call reads it.
type wireResponse struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// answers reports whether m is a response to Call's request: one with its
// ID, or an error with a null ID, which answers a request the server
// could not read far enough to learn its ID.
func (m *wireResponse) answers() bool {
	if m.Method != "" {
		return false
	}
	id := string(bytes.TrimSpace(m.ID))
	return id == fmt.Sprint(requestID) || m.Error != nil && (id == "" || id == "null")
}

// readResponse returns the response to Call's request in body, a JSON
// message or an event stream, or nil if it holds none.
func readResponse(resp *http.Response, body io.Reader) (*wireResponse, error) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var msg wireResponse
		if err := json.NewDecoder(body).Decode(&msg); err != nil {
			return nil, err
		}
		if !msg.answers() {
			return nil, nil
		}
		return &msg, nil
	case "text/event-stream":
		return readEvents(body)
	}
	if ct == "" {
		return nil, errors.New("no Content-Type")
	}
	return nil, fmt.Errorf("unexpected Content-Type %q", ct)
}

// readEvents reads server-sent events until one holds the response to
// Call's request, skipping the others (notifications, priming events).
func readEvents(body io.Reader) (*wireResponse, error) {
	st := &RawStream{r: bufio.NewReader(body)}
	for {
		raw, err := st.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return nil, err
		}
		var msg wireResponse
		if json.Unmarshal(raw, &msg) == nil && msg.answers() {
			return &msg, nil
		}
	}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	buf *bytes.Buffer
	n   int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.n - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// clip returns the start of a body, for an error message.
func clip(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
