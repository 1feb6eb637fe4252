package mcpkit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	schema2 "github.com/mcpkit/mcpkit/internal/schema"
)

// Arguments that a tool's input schema mirrors into HTTP headers (the
// x-mcp-header annotation, SEP-2243, protocol 2026-07-28) are checked by
// mcpkit, not by the SDK: the SDK checks them in its HTTP layer, before any
// handler, so that a call to a tool hidden from the caller would be
// answered "header mismatch" instead of "unknown tool", and would cost the
// SDK's pass over the tool's schema. The Server gives the SDK each tool
// without its schema (sdkDefinition) and checks the headers of a call once
// visibility has chosen the version it reaches.

// paramHeader is one argument mirrored into an HTTP header.
type paramHeader struct {
	header string   // the full header name: "Mcp-Param-Region"
	path   []string // the argument, as property names from the root
}

// paramHeadersOf returns the arguments schema mirrors into headers, read
// from its JSON (nested properties included), or nil.
func paramHeadersOf(schema any) []paramHeader {
	data, err := json.Marshal(schema)
	if err != nil || !bytes.Contains(data, []byte(`"x-mcp-header"`)) {
		return nil
	}
	type node struct {
		Header     json.RawMessage  `json:"x-mcp-header"`
		Properties map[string]*node `json:"properties"`
	}
	var root node
	if json.Unmarshal(data, &root) != nil {
		return nil
	}
	var out []paramHeader
	var walk func(props map[string]*node, prefix []string)
	walk = func(props map[string]*node, prefix []string) {
		for name, n := range props {
			if n == nil {
				continue
			}
			path := append(append([]string(nil), prefix...), name)
			var h string
			if json.Unmarshal(n.Header, &h) == nil && h != "" {
				out = append(out, paramHeader{header: "Mcp-Param-" + h, path: path})
			}
			walk(n.Properties, path)
		}
	}
	walk(root.Properties, nil)
	return out
}

// checkHeaderAnnotations reports what is wrong with the x-mcp-header
// annotations of an input schema, as SEP-2243 constrains them: on a
// property (at any depth) of type string, integer or boolean (a type array,
// even with "null", is refused: clients would not mirror it), naming an
// HTTP header (a token), no two alike but for case. A client refuses a
// tool whose annotations break these rules, so Add does.
func checkHeaderAnnotations(schema any) error {
	data, err := json.Marshal(schema)
	if err != nil || !bytes.Contains(data, []byte(`"x-mcp-header"`)) {
		return nil
	}
	type node struct {
		Type       json.RawMessage  `json:"type"`
		Header     json.RawMessage  `json:"x-mcp-header"`
		Properties map[string]*node `json:"properties"`
	}
	var root node
	if err := json.Unmarshal(data, &root); err != nil {
		return nil // checkSchema reports what is not an object
	}
	seen := map[string]string{}
	var walk func(props map[string]*node, prefix string) error
	walk = func(props map[string]*node, prefix string) error {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			n, path := props[name], prefix+name
			if n == nil {
				continue
			}
			if n.Header != nil {
				var typ, h string
				if json.Unmarshal(n.Type, &typ) != nil || typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("property %q: x-mcp-header is only for an argument of type string, integer or boolean, not %s", path, schema2.Clip(string(n.Type)))
				}
				if json.Unmarshal(n.Header, &h) != nil || h == "" {
					return fmt.Errorf("property %q: x-mcp-header is empty or not a string", path)
				}
				if i := strings.IndexFunc(h, func(r rune) bool { return r > 0x7e || !isTokenChar(byte(r)) }); i >= 0 {
					return fmt.Errorf("property %q: x-mcp-header %q is not an HTTP header name: it has %q", path, schema2.Clip(h), []rune(h[i:])[0])
				}
				if other, dup := seen[strings.ToLower(h)]; dup {
					return fmt.Errorf("property %q: x-mcp-header %q names the header of %q too (header names ignore case)", path, h, other)
				}
				seen[strings.ToLower(h)] = path
			}
			if err := walk(n.Properties, path+"."); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root.Properties, "")
}

// isTokenChar reports whether c may appear in an HTTP field name (RFC 9110
// tchar).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// sdkDefinition returns the definition of def that the SDK server keeps: it
// routes calls by name and lists nothing (mcpkit answers tools/list), so
// its input schema is the least the SDK accepts. Then the SDK finds no
// argument to check in a header (mcpkit checks them) and its per-call pass
// over the schema costs nothing, whatever the tool's schema holds.
func sdkDefinition(def mcp.Tool) mcp.Tool {
	def.InputSchema = &jsonschema.Schema{Type: "object"} // checked without a round trip through JSON
	return def
}

// checkParamHeaders reports, as the JSON-RPC error -32020 the spec gives,
// how the Mcp-Param headers of an HTTP request disagree with the arguments
// of its call: a header for an argument that is absent or null, no header
// for one that is present, a header that is not the argument's value (as a
// string, boolean or integer, in plain text or as =?base64?...?=). Values
// are never echoed.
func checkParamHeaders(header http.Header, args json.RawMessage, headers []paramHeader) *jsonrpc.Error {
	var obj map[string]json.RawMessage
	if len(args) > 0 && json.Unmarshal(args, &obj) != nil {
		obj = nil
	}
	for _, p := range headers {
		got := header.Values(p.header)
		arg, ok := lookupArg(obj, p.path)
		name := strings.Join(p.path, ".")
		switch {
		case !ok || string(arg) == "null":
			if len(got) > 0 {
				return mismatch("%s was sent for the argument %q, which is absent or null", p.header, name)
			}
		case len(got) == 0:
			return mismatch("%s is missing for the argument %q", p.header, name)
		case len(got) > 1:
			return mismatch("%s was sent more than once", p.header)
		default:
			value, ok := decodeParamHeader(got[0])
			if !ok {
				return mismatch("%s is not valid Base64 inside =?base64?...?=", p.header)
			}
			if !paramValueIs(value, arg) {
				return mismatch("%s does not match the argument %q", p.header, name)
			}
		}
	}
	return nil
}

func mismatch(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "header mismatch: " + fmt.Sprintf(format, args...)}
}

// lookupArg returns the value at path in the arguments obj.
func lookupArg(obj map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	v, ok := obj[path[0]]
	for _, name := range path[1:] {
		if !ok {
			return nil, false
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(v, &inner) != nil {
			return nil, false
		}
		v, ok = inner[name]
	}
	return v, ok
}

// decodeParamHeader returns the value a header carries: the text inside
// =?base64?...?= decoded (padding required), or the header as it is.
func decodeParamHeader(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v, true // not the encoded form: a literal
	}
	b, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// paramValueIs reports whether the header text v is the argument arg: the
// same string, "true" or "false" for a boolean, the same integer for an
// integer (within ±2^53-1, as JSON numbers are exact there). Other JSON
// values are never mirrored, so never match.
func paramValueIs(v string, arg json.RawMessage) bool {
	var x any
	if json.Unmarshal(arg, &x) != nil {
		return false
	}
	const maxSafe = 1<<53 - 1
	switch x := x.(type) {
	case string:
		return v == x
	case bool:
		return v == strconv.FormatBool(x)
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > maxSafe {
			return false
		}
		h, err := strconv.ParseFloat(v, 64)
		return err == nil && h == x
	}
	return false
}

// headerFault marks the HTTP request of a call that failed its Mcp-Param
// headers, so that [Server.HTTPHandler] answers it with status 400, as the
// spec asks, instead of the 200 of an ordinary JSON-RPC error.
type headerFault struct{ set atomic.Bool }

type headerFaultKey struct{}

// markHeaderFault records that the call of ctx failed its headers.
func markHeaderFault(ctx context.Context) {
	if f, ok := ctx.Value(headerFaultKey{}).(*headerFault); ok {
		f.set.Store(true)
	}
}

// answeringHeaderFaults returns h, answering with status 400 the requests
// whose call failed its Mcp-Param headers. The SDK has written nothing when
// the call fails: the writer then holds what the SDK writes (one JSON-RPC
// error, as JSON or as one event) and sends it as a JSON body with status
// 400. Other requests pass through, with one allocation more.
func answeringHeaderFaults(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(protocolVersionHeader) < statelessVersion {
			h.ServeHTTP(w, r)
			return
		}
		fw := &faultWriter{ResponseWriter: w}
		h.ServeHTTP(fw, r.WithContext(context.WithValue(r.Context(), headerFaultKey{}, &fw.fault)))
		fw.finish()
	})
}

// faultWriter passes a response through, unless the call's headers failed
// before the response began: then it holds it, for finish to send as 400.
type faultWriter struct {
	http.ResponseWriter
	fault   headerFault
	started bool
	held    bool
	body    bytes.Buffer
}

func (w *faultWriter) begin(status int) {
	if w.started {
		return
	}
	w.started = true
	if w.fault.set.Load() && status == http.StatusOK {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *faultWriter) WriteHeader(status int) { w.begin(status) }

func (w *faultWriter) Write(p []byte) (int, error) {
	w.begin(http.StatusOK)
	if w.held {
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes what passes through; a held response waits for finish.
func (w *faultWriter) Flush() {
	if w.held {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		w.begin(http.StatusOK)
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *faultWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish sends a held response: the JSON-RPC message it holds, with status
// 400. An event stream holds it in its first event's data lines.
func (w *faultWriter) finish() {
	if !w.held {
		return
	}
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
