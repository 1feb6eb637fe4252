package openapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

// maxErrorBody is how much of an error answer's body a tool error shows.
const maxErrorBody = 4 << 10

// A backend is where the calls of one [Document.Tools] go.
type backend struct {
	handler http.Handler
	client  *http.Client
	base    *url.URL
	prepare func(ctx context.Context, call *mcpkit.Request, out *http.Request) error
	max     int64
	now     func() time.Time // for Retry-After dates; nil means time.Now
}

// A param says where one argument goes in the request.
type param struct {
	key     string // the argument's name
	name    string // the parameter's name
	in      string // path, query, header or cookie
	style   string
	explode bool
	json    bool // sent as JSON text (a parameter with content)
}

// An operation is the Handler of one tool.
type operation struct {
	*backend
	name, method, path string
	params             []param
	body               string           // the request body's media type; "" for none
	fields             map[string]field // how a form or multipart body's properties are sent
	accept             string           // the media type of the answer's schema
	schema             json.RawMessage  // the tool's input schema, whose arguments keepGiven records
	wrap               bool             // the structured content is {"result": answer}
}

// A field says how one property of a form or multipart body is sent: what
// the media type's encoding object says of it, and whether it is a file.
type field struct {
	style       string // form, spaceDelimited, pipeDelimited or deepObject; "" when the encoding gives none
	explode     bool
	contentType string // the encoding's contentType, if any
	binary      bool   // a file (format binary): a multipart part of its own, with a filename
}

// An HTTPError is an answer of the API with a status other than 2xx. The
// tool returns it as a [*mcpkit.ToolError]: Retryable for 4xx (the model
// may change its arguments) and for 408, 429, 502, 503 and 504 (the call
// may succeed later), Fatal for other statuses.
type HTTPError struct {
	// Method and Path are the operation's ("GET", "/pets/{petId}").
	Method, Path string
	// StatusCode is the answer's status.
	StatusCode int
	// Body is the start of the answer's body, clipped to 4 KiB.
	Body string
	// RetryAfter is the delay that a 429 or 503 answer's Retry-After
	// header asks for; zero if it gives none.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %v)", e.RetryAfter)
	}
	if e.Body != "" {
		b.WriteString(": " + e.Body)
	}
	return b.String()
}

// ResultMeta puts the Retry-After delay, in milliseconds, in the result's
// _meta under [middleware.MetaKeyRetryAfter], where the rate limiting
// middleware puts its own.
func (e *HTTPError) ResultMeta() mcp.Meta {
	if e.RetryAfter <= 0 {
		return nil
	}
	return mcp.Meta{middleware.MetaKeyRetryAfter: e.RetryAfter.Milliseconds()}
}

// class says whether the model or agent may try again.
func (e *HTTPError) class() mcpkit.ErrorClass {
	switch s := e.StatusCode; {
	case s == http.StatusRequestTimeout, s == http.StatusTooManyRequests, s == http.StatusBadGateway,
		s == http.StatusServiceUnavailable, s == http.StatusGatewayTimeout:
		return mcpkit.Retryable
	case s >= 400 && s < 500:
		return mcpkit.Retryable
	}
	return mcpkit.Fatal
}

// ServeTool builds the operation's request from the call's arguments,
// sends it, and turns the answer into a result.
func (o *operation) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	args := req.Arguments
	if g, ok := ctx.Value(givenKey{}).(*given); ok {
		args = onlyGiven(args, g.args, g.own)
	}
	hreq, err := o.request(ctx, args)
	if err != nil {
		return nil, err
	}
	if o.prepare != nil {
		if err := o.prepare(ctx, req, hreq); err != nil {
			return nil, err
		}
	}
	status, header, body, err := o.send(hreq)
	if err != nil {
		return nil, err
	}
	return o.result(status, header, body)
}

// givenKey is the context key of the arguments as the call gave them,
// before the server filled in the input schema's defaults: a *given.
type givenKey struct{}

// given is what keepGiven records of a call.
type given struct {
	args json.RawMessage
	own  bool // the arguments of the operation's own schema, by its names
}

// keepGiven is the tool's outermost middleware: it records the arguments
// as given, so that the request sends what the caller gave and no default
// the server filled in. A default says what the API assumes when a value
// is absent; sending it changes what the caller left alone (a partial
// update that clears what it does not name).
//
// A tool derived from this one (transform.Tool, transform.Portable) keeps
// this middleware but is called with arguments of its own schema, which
// its handler maps back to the operation's, renaming them or adding those
// it hides, at the top level only: for such a tool, whose input schema is
// not the operation's, the request keeps every top-level argument the
// handler gets, and leaves out what the call did not give below them.
func (o *operation) keepGiven(next mcpkit.Handler) mcpkit.Handler {
	return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		g := &given{args: req.Arguments, own: true}
		if req.Tool != nil {
			in, ok := req.Tool.InputSchema.(json.RawMessage)
			g.own = ok && bytes.Equal(in, o.schema)
		}
		return next.ServeTool(context.WithValue(ctx, givenKey{}, g), req)
	})
}

// onlyGiven returns the arguments args (validated, perhaps coerced, with
// defaults filled in) without the object members that given, the
// arguments as the call gave them, does not have, at any depth, or below
// the top level only when the two are not by the same names (own is
// false); args comes back as it is when nothing is left out or the two
// cannot be matched.
func onlyGiven(args, given json.RawMessage, own bool) json.RawMessage {
	if bytes.Equal(args, given) {
		return args
	}
	var a, g any
	if json.Unmarshal(given, &g) != nil {
		return args
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if d.Decode(&a) != nil {
		return args
	}
	changed := false
	if own {
		changed = prune(a, g, 0)
	} else if am, ok := a.(map[string]any); ok {
		gm, _ := g.(map[string]any)
		for k, v := range am {
			if gv, ok := gm[k]; ok && prune(v, gv, 1) {
				changed = true
			}
		}
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(a)
	if err != nil {
		return args
	}
	return out
}

// prune deletes, in place, the members of the objects in a that the
// matching objects of g do not have, and reports whether it deleted any.
func prune(a, g any, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	changed := false
	switch a := a.(type) {
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range a {
			gv, given := gm[k]
			if !given {
				delete(a, k)
				changed = true
			} else if prune(v, gv, depth+1) {
				changed = true
			}
		}
	case []any:
		gl, ok := g.([]any)
		if !ok || len(gl) != len(a) {
			return false
		}
		for i := range a {
			if prune(a[i], gl[i], depth+1) {
				changed = true
			}
		}
	}
	return changed
}

// request builds the HTTP request for the arguments args.
func (o *operation) request(ctx context.Context, args json.RawMessage) (*http.Request, error) {
	var vals map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) > 0 && !bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		if err := json.Unmarshal(args, &vals); err != nil {
			return nil, mcpkit.ToolErrorf("arguments: want a JSON object: %v", err)
		}
	}
	// The template is escaped before the values go in, so that the whole
	// path is a valid encoding and is sent as built: a value's %2F stays
	// %2F and never becomes a separator.
	var subst []string // placeholder, value: put in in one pass, never re-read
	var query []string
	var cookies []string
	header := make(http.Header)
	for _, a := range o.params {
		raw, ok := vals[a.key]
		if !ok {
			if a.in == "path" {
				return nil, mcpkit.ToolErrorf("missing path parameter %q", a.key)
			}
			continue
		}
		v, err := decode(raw, a.json)
		if err != nil {
			return nil, mcpkit.ToolErrorf("argument %q: %v", clip(a.key, 80), err)
		}
		switch a.in {
		case "path":
			pv := pathValue(a, v)
			if pv == "" || pv == "." || pv == ".." {
				// The API's router would resolve them, and the call
				// reach another path than its operation's.
				return nil, mcpkit.ToolErrorf("argument %q: a path parameter cannot be empty, \".\" or \"..\"", clip(a.key, 80))
			}
			subst = append(subst, escapedPath("{"+a.name+"}"), pv)
		case "query":
			query = append(query, queryValue(a, v)...)
		case "header":
			hv := simple(v, a.explode, plain)
			if strings.ContainsFunc(hv, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
				return nil, mcpkit.ToolErrorf("argument %q: a header value cannot hold control characters", clip(a.key, 80))
			}
			header.Set(a.name, hv)
		case "cookie":
			// Percent-escaped as a path segment: a cookie does not read
			// a query's "+" as a space.
			cookies = append(cookies, a.name+"="+simple(v, false, url.PathEscape))
		}
	}
	p := strings.NewReplacer(subst...).Replace(escapedPath(o.path))
	u := *o.base
	u.RawPath = strings.TrimSuffix(o.base.EscapedPath(), "/") + p
	var err error
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return nil, mcpkit.ToolErrorf("path %q: %v", clip(u.RawPath, 200), err)
	}
	u.RawQuery = strings.Join(query, "&")

	var body io.Reader
	contentType := o.body
	if raw, ok := vals[bodyKey]; ok && o.body != "" {
		b, ct, err := encodeBody(o.body, o.fields, raw)
		if err != nil {
			return nil, mcpkit.ToolErrorf("argument %q: %v", bodyKey, err)
		}
		body, contentType = bytes.NewReader(b), ct
	}
	hreq, err := http.NewRequestWithContext(ctx, o.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s %s: %w", o.method, o.path, err)
	}
	hreq.Header = header
	if body != nil {
		hreq.Header.Set("Content-Type", contentType)
	}
	if o.accept != "" {
		hreq.Header.Set("Accept", o.accept)
	}
	if len(cookies) > 0 {
		hreq.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	return hreq, nil
}

// escapedPath returns the path p as it is sent, escaped.
func escapedPath(p string) string { return (&url.URL{Path: p}).EscapedPath() }

// decode reads an argument's JSON value; a parameter sent as JSON keeps
// its text.
func decode(raw json.RawMessage, asJSON bool) (any, error) {
	if asJSON {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		return b.String(), nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// scalar writes a value that is not serialised by a style: strings as
// they are, numbers as written (but see number), true and false, null as
// nothing, and anything nested deeper as JSON.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return number(v)
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// number writes a JSON number as text for a URL or a form: as written,
// but a whole number written with a fraction or an exponent (2.0, 1e3),
// which the server's validator admits as an integer, is written as an
// integer, as APIs read integers from text. Past 2^53, where a float64
// no longer holds every integer, it stays as written.
func number(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return s
	}
	return strconv.FormatInt(int64(f), 10)
}

func plain(s string) string { return s }

// pairs returns an object's keys and values, sorted by key so that the
// same arguments always make the same request.
func pairs(m map[string]any, esc func(string) string) (keys, vals []string) {
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		keys = append(keys, esc(k))
		vals = append(vals, esc(scalar(m[k])))
	}
	return keys, vals
}

// simple serialises v in the "simple" style (path and header parameters):
// a,b,c for an array; k1,v1,k2,v2 for an object, or k1=v1,k2=v2 exploded.
func simple(v any, explode bool, esc func(string) string) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = esc(scalar(e))
		}
		return strings.Join(parts, ",")
	case map[string]any:
		keys, vals := pairs(v, esc)
		parts := make([]string, 0, 2*len(keys))
		for i := range keys {
			if explode {
				parts = append(parts, keys[i]+"="+vals[i])
			} else {
				parts = append(parts, keys[i], vals[i])
			}
		}
		return strings.Join(parts, ",")
	}
	return esc(scalar(v))
}

// pathValue serialises a path parameter in its style (simple, label or
// matrix), each value escaped for a path segment.
func pathValue(a param, v any) string {
	esc := url.PathEscape
	switch a.style {
	case "label":
		s := simple(v, a.explode, esc)
		if a.explode {
			s = strings.ReplaceAll(s, ",", ".")
		}
		return "." + s
	case "matrix":
		name := esc(a.name)
		switch v := v.(type) {
		case []any:
			if a.explode {
				var b strings.Builder
				for _, e := range v {
					b.WriteString(";" + name + "=" + esc(scalar(e)))
				}
				return b.String()
			}
		case map[string]any:
			if a.explode {
				keys, vals := pairs(v, esc)
				var b strings.Builder
				for i := range keys {
					b.WriteString(";" + keys[i] + "=" + vals[i])
				}
				return b.String()
			}
		}
		return ";" + name + "=" + simple(v, false, esc)
	}
	return simple(v, a.explode, esc)
}

// queryValue serialises a query parameter in its style (form,
// spaceDelimited, pipeDelimited or deepObject) as name=value pairs.
func queryValue(a param, v any) []string {
	esc := url.QueryEscape
	name := esc(a.name)
	if a.style == "deepObject" {
		// As form bodies send it, at any depth: k[a][b]=1, k[0]=x.
		var out []string
		deepPairs(a.name, v, func(k, v string) { out = append(out, esc(k)+"="+esc(v)) })
		return out
	}
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = esc(scalar(e))
		}
		switch {
		case a.style == "spaceDelimited" && !a.explode:
			return []string{name + "=" + strings.Join(parts, "%20")}
		case a.style == "pipeDelimited" && !a.explode:
			return []string{name + "=" + strings.Join(parts, "|")}
		case a.explode:
			out := make([]string, len(parts))
			for i, p := range parts {
				out[i] = name + "=" + p
			}
			return out
		}
		return []string{name + "=" + strings.Join(parts, ",")}
	case map[string]any:
		keys, vals := pairs(v, esc)
		var out []string
		switch {
		case a.explode:
			for i := range keys {
				out = append(out, keys[i]+"="+vals[i])
			}
		default:
			return []string{name + "=" + simple(v, false, esc)}
		}
		return out
	}
	return []string{name + "=" + esc(scalar(v))}
}

// Media types of request bodies other than JSON.
const (
	formMedia      = "application/x-www-form-urlencoded"
	multipartMedia = "multipart/form-data"
)

// encodeBody writes the body argument in the operation's media type, and
// returns it with the Content-Type that says so.
func encodeBody(media string, fields map[string]field, raw json.RawMessage) ([]byte, string, error) {
	if media != formMedia && media != multipartMedia {
		var b bytes.Buffer
		err := json.Compact(&b, raw)
		return b.Bytes(), media, err
	}
	v, err := decode(raw, false)
	if err != nil {
		return nil, "", err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("a %s body must be an object", media)
	}
	if media == multipartMedia {
		return encodeMultipart(m, fields)
	}
	return []byte(encodeForm(m, fields)), media, nil
}

// encodeForm writes a form body. Each property is sent as its field's
// style says (form by default, exploded: k=a&k=b for an array;
// deepObject: k[a]=1&k[b][0]=2, nested to any depth), and one whose
// encoding gives no style by its type: a scalar as its text, an array as
// one pair per element, an object as JSON text.
func encodeForm(m map[string]any, fields map[string]field) string {
	var pairs []string
	add := func(k, v string) { pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(v)) }
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val, f := m[k], fields[k]
		switch {
		case f.style == "deepObject":
			deepPairs(k, val, add)
		case f.style != "":
			pairs = append(pairs, queryValue(param{name: k, style: f.style, explode: f.explode}, val)...)
		default:
			if arr, ok := val.([]any); ok {
				for _, e := range arr {
					add(k, scalar(e))
				}
				continue
			}
			add(k, scalar(val))
		}
	}
	return strings.Join(pairs, "&")
}

// deepPairs adds the pairs of v under key in the deepObject style as APIs
// read it at any depth: k[a]=1 for an object's property, k[0]=x for an
// array's element (indexed, so that the elements of an array of objects
// stay apart), k=v for a scalar.
func deepPairs(key string, v any, add func(k, v string)) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			deepPairs(key+"["+k+"]", v[k], add)
		}
	case []any:
		for i, e := range v {
			deepPairs(key+"["+strconv.Itoa(i)+"]", e, add)
		}
	default:
		add(key, scalar(v))
	}
}

// encodeMultipart writes a multipart/form-data body: one part per
// property (per element, for an array), a file's text as a file part
// named after its property, an object as JSON, a scalar as text, unless
// the field's encoding says another content type or the deepObject style
// (whose pairs are then parts of their own).
func encodeMultipart(m map[string]any, fields map[string]field) ([]byte, string, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part := func(name, filename, contentType, value string) error {
		h := make(textproto.MIMEHeader)
		disp := "form-data; name=" + strconv.Quote(name)
		if filename != "" {
			disp += "; filename=" + strconv.Quote(filename)
		}
		h.Set("Content-Disposition", disp)
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		pw, err := w.CreatePart(h)
		if err == nil {
			_, err = io.WriteString(pw, value)
		}
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f := fields[k]
		var err error
		one := func(v any) {
			if err != nil {
				return
			}
			switch {
			case f.binary:
				err = part(k, k, cmp.Or(f.contentType, "application/octet-stream"), scalar(v))
			case f.contentType != "":
				if _, isString := v.(string); !isString || strings.Contains(f.contentType, "json") {
					b, _ := json.Marshal(v)
					err = part(k, "", f.contentType, string(b))
					return
				}
				err = part(k, "", f.contentType, scalar(v))
			default:
				switch v.(type) {
				case map[string]any, []any:
					b, _ := json.Marshal(v)
					err = part(k, "", "application/json", string(b))
				default:
					err = part(k, "", "", scalar(v))
				}
			}
		}
		val := m[k]
		arr, isArray := val.([]any)
		_, isObject := val.(map[string]any)
		switch {
		case f.style == "deepObject" && (isArray || isObject):
			deepPairs(k, val, func(name, v string) {
				if err == nil {
					err = part(name, "", "", v)
				}
			})
		case isArray:
			for _, e := range arr {
				one(e)
			}
		default:
			one(val)
		}
		if err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), w.FormDataContentType(), nil
}

// send serves req with the Handler or sends it with the Client, and
// reads at most max+1 bytes of the answer's body.
func (o *operation) send(req *http.Request) (int, http.Header, []byte, error) {
	if o.handler != nil {
		// What a server's handler may count on: a RequestURI, a non-nil Body.
		req.RequestURI = req.URL.RequestURI()
		if req.Body == nil {
			req.Body = http.NoBody
		}
		w := &capture{header: make(http.Header), limit: int(o.max) + 1}
		o.handler.ServeHTTP(w, req)
		if w.status == 0 {
			w.status = http.StatusOK
		}
		return w.status, w.header, w.body, nil
	}
	resp, err := o.client.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return 0, nil, nil, ctxErr
		}
		// The API could not be reached: the call may succeed later.
		return 0, nil, nil, mcpkit.NewToolError(fmt.Errorf("%s %s: %w", o.method, o.path, err), mcpkit.Retryable)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, o.max+1))
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return 0, nil, nil, ctxErr
		}
		return 0, nil, nil, mcpkit.NewToolError(fmt.Errorf("%s %s: reading the answer: %w", o.method, o.path, err), mcpkit.Retryable)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// result turns the API's answer into the tool's result.
func (o *operation) result(status int, header http.Header, body []byte) (*mcp.CallToolResult, error) {
	if status < 200 || status > 299 {
		e := &HTTPError{Method: o.method, Path: o.path, StatusCode: status, Body: clip(string(body), maxErrorBody)}
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			e.RetryAfter = retryAfter(header.Get("Retry-After"), o.now)
		}
		return nil, mcpkit.NewToolError(e, e.class())
	}
	if int64(len(body)) > o.max {
		return nil, mcpkit.NewToolError(fmt.Errorf("%s %s: the answer is longer than %d bytes", o.method, o.path, o.max), mcpkit.Fatal)
	}
	res := &mcp.CallToolResult{}
	ct := header.Get("Content-Type")
	if isJSON(ct) || o.accept != "" || ct == "" {
		// RFC 8259 lets a parser ignore a byte order mark, which some
		// APIs put before their JSON.
		body = bytes.TrimPrefix(body, []byte("\ufeff"))
	}
	switch {
	case len(body) == 0:
		res.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))}}
		return res, nil
	case isJSON(ct) || (ct == "" || o.accept != "") && json.Valid(body):
		// A tool with an output schema reads JSON whatever the answer's
		// type says (text/plain, as some frameworks send by default): it
		// must send structured content.
		if !json.Valid(body) {
			return nil, mcpkit.NewToolError(fmt.Errorf("%s %s: the answer is not valid JSON: %s", o.method, o.path, clip(string(body), 200)), mcpkit.Fatal)
		}
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(body)}}
		if o.accept != "" {
			if o.wrap {
				res.StructuredContent = json.RawMessage(`{"` + resultKey + `":` + string(body) + `}`)
			} else {
				res.StructuredContent = json.RawMessage(body)
			}
		}
	case utf8.Valid(body):
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(body)}}
	default:
		res.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("HTTP %d: %d bytes of %s", status, len(body), clip(ct, 100))}}
	}
	return res, nil
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now func() time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, 86400)) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if now == nil {
		now = time.Now
	}
	return max(0, min(t.Sub(now()), 24*time.Hour)).Round(time.Second)
}

// A capture is the ResponseWriter an in-process Handler answers into. It
// keeps at most limit bytes of the body and drops the rest.
type capture struct {
	header http.Header
	status int
	body   []byte
	limit  int
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if room := c.limit - len(c.body); room > 0 {
		c.body = append(c.body, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// clip returns s cut to at most n bytes at a character boundary, with
// "..." when it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
