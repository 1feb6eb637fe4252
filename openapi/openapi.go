package openapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// Errors of building tools.
var (
	// ErrNoBackend is returned by [Document.Tools] when the options name
	// neither a Handler nor a Client, or both.
	ErrNoBackend = errors.New("openapi: set exactly one of Options.Handler and Options.Client")
	// ErrBaseURL is returned by [Document.Tools] for a BaseURL that is not
	// an absolute http or https URL (a Client needs one).
	ErrBaseURL = errors.New("openapi: invalid base URL")
	// ErrSwagger2 is returned by [Load] for a Swagger 2.0 (OpenAPI 2.0)
	// document: convert it to OpenAPI 3 first, as its text says.
	ErrSwagger2 = errors.New("openapi: a Swagger 2.0 document; convert it to OpenAPI 3 first: " +
		"openapi2conv.ToV3 of github.com/getkin/kin-openapi converts a parsed openapi2.T, as does the swagger2openapi command")
	// ErrDegraded is matched by what [Options.OnDegrade] is told: a tool
	// that is served with less than its operation says.
	ErrDegraded = errors.New("openapi: served with less than the document says")
)

// DefaultMaxInputSchemaBytes is the size an input schema is trimmed to
// when [Options.MaxInputSchemaBytes] is zero: enough for Kubernetes'
// Deployment to keep the structure of its pod spec (without the
// descriptions of its components).
const DefaultMaxInputSchemaBytes = 16 << 10

// DefaultMaxOutputSchemaBytes is the size an output schema is trimmed to
// when [Options.MaxOutputSchemaBytes] is zero.
const DefaultMaxOutputSchemaBytes = 8 << 10

// DefaultMaxResponseBytes is the largest answer a tool reads from the API
// when [Options.MaxResponseBytes] is zero.
const DefaultMaxResponseBytes = 1 << 20

// MetaKeyOperation is the key, in the _meta of each tool's definition, of
// the operation it calls: an object with "method", "path" and, when the
// document gives one, "operationId".
const MetaKeyOperation = "io.github.mcpkit/openapiOperation"

// A Document is a parsed OpenAPI 3.0 or 3.1 document. Make one with
// [Load]; it is not safe for concurrent use, and the tools it builds are.
type Document struct {
	doc  *openapi3.T
	conv *converter
	ops  []*Operation // sorted by path, then method
}

// An Operation is one operation of a document: what [Options.Filter]
// sees.
type Operation struct {
	// Method is the HTTP method, in upper case ("GET").
	Method string
	// Path is the path template as the document writes it ("/pets/{petId}").
	Path string
	// OperationID is the document's operationId, or "".
	OperationID string
	// Tags are the operation's tags.
	Tags []string
	// Summary and Description are the operation's texts.
	Summary, Description string
	// Deprecated is true for an operation marked deprecated.
	Deprecated bool
	// Name is the name of the operation's tool. It is decided over the
	// whole document, so that it does not depend on the operations
	// selected with it.
	Name string

	item *openapi3.PathItem
	op   *openapi3.Operation
	// itemAt is where the path item is written, as a JSON Pointer: under
	// its path or, for a $ref that several paths may share, where that
	// points (see locate); shared is true then.
	itemAt string
	shared bool
}

// Load parses an OpenAPI 3.0 or 3.1 document, in JSON or YAML. It
// resolves the $refs inside the document and refuses those to other
// documents: nothing is fetched, from the network or from files.
func Load(data []byte) (d *Document, err error) {
	defer func() {
		// The parser is not ours: a document that makes it panic is an
		// invalid document, not a crash.
		if v := recover(); v != nil {
			d, err = nil, fmt.Errorf("openapi: cannot parse the document: %s", clip(fmt.Sprint(v), 200))
		}
	}()
	loader := openapi3.NewLoader() // external refs are refused by default
	doc, err := loader.LoadFromData(data)
	if (err != nil || doc.OpenAPI == "") && isSwagger2(data) {
		return nil, ErrSwagger2
	}
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		return nil, fmt.Errorf("openapi: version %q: want an OpenAPI 3.0 or 3.1 document", clip(doc.OpenAPI, 40))
	}
	fix(doc)
	d = &Document{doc: doc, conv: newConverter(doc)}
	if doc.Paths != nil {
		for _, p := range doc.Paths.Keys() {
			item := followPaths(doc, doc.Paths.Value(p))
			if item == nil {
				continue
			}
			for m, op := range item.Operations() {
				if op == nil {
					continue
				}
				d.ops = append(d.ops, &Operation{
					Method: strings.ToUpper(m), Path: p, OperationID: op.OperationID,
					Tags: slices.Clone(op.Tags), Summary: op.Summary, Description: op.Description,
					Deprecated: op.Deprecated, item: item, op: op,
				})
			}
		}
	}
	slices.SortFunc(d.ops, func(a, b *Operation) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Method, b.Method))
	})
	names := make([]string, len(d.ops))
	for i, op := range d.ops {
		names[i] = toolName(op.Method, op.Path, op.OperationID)
	}
	for i, name := range uniqueNames(names) {
		d.ops[i].Name = name
	}
	d.locate()
	return d, nil
}

// locate sets where each operation's path item is written: the schemas
// of its parameters serve each of its operations, and the schemas of a
// path item that paths refer to with a $ref (as OpenAPI 3.1 allows) serve
// its operations under each path; sharedSchema names them by where they
// are. A $ref with fields beside it (an operation, parameters) is taken as
// written under its path, since the fields may replace what it points to.
func (d *Document) locate() {
	for _, op := range d.ops {
		op.itemAt = "/paths/" + pointerToken(op.Path)
		if ptr := refPointer(op.item.Ref); ptr != "" && onlyRef(op.item) {
			op.itemAt, op.shared = ptr, true
		}
	}
}

// followPaths returns item, or, for a path item that is only a $ref to
// another path's item (as OpenAPI 3.1 allows) which the parser left empty
// when that one is a $ref too, the item the chain of $refs ends at: its
// operations are served under each path that refers to it.
func followPaths(doc *openapi3.T, item *openapi3.PathItem) *openapi3.PathItem {
	for range 8 { // a chain is followed a few links, not forever
		if item == nil || item.Ref == "" || len(item.Operations()) > 0 {
			return item
		}
		tok, ok := strings.CutPrefix(refPointer(item.Ref), "/paths/")
		if !ok || strings.Contains(tok, "/") {
			return item
		}
		next := doc.Paths.Value(strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
		if next == nil || next == item {
			return item
		}
		item = next
	}
	return item
}

// onlyRef reports whether the path item, a $ref, has nothing beside it
// but texts and extensions.
func onlyRef(item *openapi3.PathItem) bool {
	data, err := json.Marshal(item)
	var m map[string]json.RawMessage
	if err != nil || json.Unmarshal(data, &m) != nil {
		return false
	}
	for k := range m {
		if k != "$ref" && k != "summary" && k != "description" && !strings.HasPrefix(k, "x-") {
			return false
		}
	}
	return true
}

// sharedAt returns the JSON Pointer of a parameter, request body or
// response that tools share: the one its $ref ref points to, or inline
// (where it is written, "" when one tool has it alone).
func sharedAt(ref, inline string) string {
	if ref != "" {
		return refPointer(ref)
	}
	return inline
}

// isSwagger2 reports whether data, JSON or YAML, is a Swagger 2.0
// document: its top level says swagger: "2.0" (or 2.0, a number, as
// hand-written documents do), perhaps after a byte order mark, perhaps
// with a YAML comment after it.
func isSwagger2(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		var top struct {
			Swagger any `json:"swagger"`
		}
		return json.Unmarshal(t, &top) == nil && (top.Swagger == "2.0" || top.Swagger == 2.0)
	}
	for line := range bytes.Lines(data) {
		v, ok := bytes.CutPrefix(line, []byte("swagger:"))
		if ok {
			v, _, _ = bytes.Cut(v, []byte(" #"))
			return string(bytes.Trim(bytes.TrimSpace(v), `"'`)) == "2.0"
		}
	}
	return false
}

// Operations returns the document's operations, sorted by path and then
// by method.
func (d *Document) Operations() []Operation {
	out := make([]Operation, len(d.ops))
	for i, op := range d.ops {
		out[i] = *op
		out[i].Tags = slices.Clone(op.Tags)
	}
	return out
}

// Options configures [Document.Tools]. Selection fields combine with AND;
// an empty one selects every operation.
type Options struct {
	// Tags selects the operations that have at least one of these tags.
	Tags []string
	// Methods selects the operations of these HTTP methods (any case).
	Methods []string
	// Paths selects the operations whose path template matches one of
	// these patterns, in the syntax of [path.Match]: "/pets/*" matches
	// "/pets/{petId}" and not "/pets/{petId}/photos".
	Paths []string
	// OperationIDs selects the operations with these operationIds.
	OperationIDs []string
	// Filter, if set, selects among the operations the fields above let
	// through.
	Filter func(op *Operation) bool

	// Handler, if set, serves the calls in process: the API's own router.
	// Requests reach it without a network, with the tool call's context.
	Handler http.Handler
	// Client, if set, sends the calls over HTTP to BaseURL.
	Client *http.Client
	// BaseURL is prefixed to every operation's path: required with
	// Client ("https://api.example.com/v1"); with Handler, only its path
	// counts, and it may be empty.
	BaseURL string

	// Prepare, if set, is called with each request to the API before it
	// is sent, to add credentials or headers of your own. The request
	// carries only what the operation's parameters and body put in it:
	// nothing of the MCP request, whose headers and bearer token are never
	// forwarded. call is the tool call being served (its TokenInfo says
	// who the caller is, for a per-caller credential). An error stops the
	// call and is returned as the tool's error.
	Prepare func(ctx context.Context, call *mcpkit.Request, out *http.Request) error

	// MaxResponseBytes bounds the answer read from the API; a longer one
	// fails the call. Zero means [DefaultMaxResponseBytes].
	MaxResponseBytes int64

	// NoOutputSchema leaves the tools without output schemas, for an API
	// whose answers do not keep to its document: every structured answer
	// of a tool with an output schema is validated against it.
	NoOutputSchema bool

	// MaxInputSchemaBytes bounds the JSON of each input schema. Past it,
	// the schema gives up, while it is still too long: the descriptions of
	// the components reached through more than one $ref; those of every
	// component and of nested properties; then the components reached
	// through the most $refs, which become {} (any value), a level at a
	// time. The server validates the schema it advertises, so whatever is
	// left out is neither said nor checked (the API still checks it). A
	// schema that operations share (written in components/requestBodies,
	// parameters or responses, in a path item's parameters, or in a path
	// item that paths refer to with a $ref) is an entry of $defs, cut as a
	// component schema is, unless it is short; one written in the
	// operation itself is never cut, and may pass the limit ([Options.OnDegrade]
	// is told). Zero means
	// [DefaultMaxInputSchemaBytes]; a negative value, no limit.
	MaxInputSchemaBytes int

	// MaxOutputSchemaBytes bounds the JSON of each output schema, as
	// MaxInputSchemaBytes bounds input schemas. Zero means
	// [DefaultMaxOutputSchemaBytes]; a negative value, no limit.
	MaxOutputSchemaBytes int

	// OnSkip, if set, is told about each selected operation that cannot be
	// served as a tool (a required request body that is neither JSON nor
	// a form, a $ref that is not followed, a schema the server's validator
	// refuses), and why. Without it such operations make Tools fail.
	OnSkip func(op *Operation, err error)

	// OnDegrade, if set, is told about each tool that is served with less
	// than its operation says, once per reason: a pattern that Go's regexp
	// cannot compile (lookahead, backreferences) is not checked, a schema
	// is trimmed to MaxInputSchemaBytes or MaxOutputSchemaBytes (or stays
	// past it, when what the operation writes itself is longer), an
	// operation whose 2xx answers do not all have JSON of one schema has no
	// output schema. The error matches
	// [ErrDegraded]. The tool is served either way.
	OnDegrade func(op *Operation, err error)
}

// selects reports whether o selects op; Filter sees a copy.
func (o *Options) selects(op *Operation) bool {
	if len(o.Tags) > 0 && !slices.ContainsFunc(op.Tags, func(t string) bool { return slices.Contains(o.Tags, t) }) {
		return false
	}
	if len(o.Methods) > 0 && !slices.ContainsFunc(o.Methods, func(m string) bool { return strings.EqualFold(m, op.Method) }) {
		return false
	}
	if len(o.Paths) > 0 && !slices.ContainsFunc(o.Paths, func(p string) bool { ok, _ := path.Match(p, op.Path); return ok }) {
		return false
	}
	if len(o.OperationIDs) > 0 && !slices.Contains(o.OperationIDs, op.OperationID) {
		return false
	}
	if o.Filter == nil {
		return true
	}
	cp := *op
	cp.Tags = slices.Clone(op.Tags)
	return o.Filter(&cp)
}

// Tools returns one tool per selected operation, in the order of
// [Document.Operations]. Each is named after its operationId, made to fit
// MCP's rules for names (every character outside A-Z a-z 0-9 _ - .
// becomes '_'; a name past 128 characters is cut and ends with a hash of
// the whole); an operation without one is named after its method and path
// ("get_pets_petId"). Names that collide get "_2", "_3", ... in that
// order, over the whole document: an operation's tool has the same name
// ([Operation.Name]) whichever operations are selected with it. The
// tool's arguments are the operation's path, query, header and
// cookie parameters by name, and its JSON, form or multipart request body
// as the argument "body"; see the package documentation for the schemas
// and errors. Each tool is registered on a server of Tools' own before it
// is returned: one that a server would refuse is reported to
// [Options.OnSkip] instead.
func (d *Document) Tools(opts *Options) ([]*mcpkit.Tool, error) {
	if opts == nil {
		opts = &Options{}
	}
	be, err := newBackend(opts)
	if err != nil {
		return nil, err
	}
	var tools []*mcpkit.Tool
	// Each tool is registered on a server of Tools' own, so that a tool
	// the caller's server would refuse is skipped here, with its reason,
	// instead of failing the caller's Add of them all.
	check := mcpkit.NewServer(&mcp.Implementation{Name: "openapi-check"}, nil)
	for _, op := range d.ops {
		if !opts.selects(op) {
			continue
		}
		t, notes, err := d.tool(op, be, opts)
		if err == nil {
			err = check.Add(t)
		}
		if err != nil {
			err = fmt.Errorf("openapi: %s %s: %w", op.Method, clip(op.Path, 200), err)
			if opts.OnSkip == nil {
				return nil, err
			}
			opts.OnSkip(op, err)
			continue
		}
		if opts.OnDegrade != nil {
			for _, n := range notes {
				opts.OnDegrade(op, fmt.Errorf("openapi: %s %s: %w", op.Method, clip(op.Path, 200), n))
			}
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// ignoredHeaders are the header parameters the OpenAPI specification says
// to ignore: the request's content negotiation and credentials are not
// the model's to choose.
var ignoredHeaders = []string{"Accept", "Content-Type", "Authorization"}

// tool builds the tool of one operation, and says what its schemas leave
// out of the document's.
func (d *Document) tool(op *Operation, be *backend, opts *Options) (t *mcpkit.Tool, notes []error, err error) {
	defer func() {
		// The schemas are marshalled by the parser's code: a document
		// that makes it panic is an operation that cannot be served.
		if v := recover(); v != nil {
			t, notes, err = nil, nil, fmt.Errorf("cannot convert: %s", clip(fmt.Sprint(v), 200))
		}
	}()
	call := &operation{backend: be, name: op.Name, method: op.Method, path: op.Path}
	props := make(map[string]any)
	var required []string
	refs := make(map[string]bool)
	// noted adds the notes of one part of the operation, once each.
	noted := func(part string, ns []error) {
		for _, n := range ns {
			n = fmt.Errorf("%s: %w", part, n)
			if !slices.ContainsFunc(notes, func(e error) bool { return e.Error() == n.Error() }) {
				notes = append(notes, n)
			}
		}
	}

	for _, p := range parameters(op) {
		if p.In == openapi3.ParameterInHeader && slices.ContainsFunc(ignoredHeaders, func(h string) bool { return strings.EqualFold(h, p.Name) }) {
			continue
		}
		arg := param{name: p.Name, in: p.In}
		sr, at := p.Schema, p.schemaAt("")
		if sr == nil {
			if mt, media := jsonMedia(p.Content); mt != nil {
				sr, at, arg.json = mt.Schema, p.schemaAt(media), true
			}
		}
		s, ns, err := d.conv.sharedSchema(sr, at, input, refs)
		if err != nil {
			return nil, nil, fmt.Errorf("parameter %q: %w", clip(p.Name, 80), err)
		}
		noted(fmt.Sprintf("parameter %q", clip(p.Name, 80)), ns)
		annotate(s, p.Description, p.Deprecated)
		sm, err := p.SerializationMethod()
		if err != nil {
			return nil, nil, fmt.Errorf("parameter %q: %w", clip(p.Name, 80), err)
		}
		arg.style, arg.explode = sm.Style, sm.Explode
		arg.key = freeKey(props, p.Name, p.In)
		props[arg.key] = s
		if p.Required || p.In == openapi3.ParameterInPath {
			required = append(required, arg.key)
		}
		call.params = append(call.params, arg)
	}

	if rb := op.op.RequestBody; rb != nil && rb.Value != nil {
		mt, media := jsonMedia(rb.Value.Content)
		for _, other := range []string{formMedia, multipartMedia} {
			if f := rb.Value.Content[other]; mt == nil && f != nil {
				mt, media = f, other
				call.fields = fields(f)
			}
		}
		switch {
		case mt != nil:
			var at string
			if shared := sharedAt(op.op.RequestBody.Ref, op.within("/requestBody")); shared != "" {
				at = shared + "/content/" + pointerToken(media) + "/schema"
			}
			s, ns, err := d.conv.sharedSchema(mt.Schema, at, input, refs)
			if err != nil {
				return nil, nil, fmt.Errorf("request body: %w", err)
			}
			noted("request body", ns)
			annotate(s, rb.Value.Description, false)
			props[bodyKey] = s
			if rb.Value.Required {
				required = append(required, bodyKey)
			}
			call.body = media
		case rb.Value.Required:
			return nil, nil, fmt.Errorf("request body: required, and no JSON, form or multipart media type among %s (with Options.OnSkip set, Tools skips such operations and builds the others)", clip(strings.Join(mediaTypes(rb.Value.Content), ", "), 200))
		}
	}

	in := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		in["required"] = required
	}
	var out map[string]any
	outRefs := make(map[string]bool)
	if !opts.NoOutputSchema {
		if s, media, ns, err := d.output(op, outRefs); err != nil {
			return nil, nil, fmt.Errorf("response: %w", err)
		} else if noted("response", ns); s != nil {
			call.accept = media
			if m, ok := s.(map[string]any); ok && m["type"] == "object" {
				out = m
			} else if d.conv.isObjectSchema(s) {
				out = map[string]any{"type": "object", "allOf": []any{s}}
			} else {
				call.wrap = true
				out = map[string]any{"type": "object", "properties": map[string]any{resultKey: s}, "required": []string{resultKey}}
			}
		}
	}
	// Each schema is a document of its own, with the $defs it needs,
	// fitted to its limit.
	inJSON, ns, err := d.conv.fit(in, refs, input, limit{cmp.Or(opts.MaxInputSchemaBytes, DefaultMaxInputSchemaBytes), "MaxInputSchemaBytes"})
	if err != nil {
		return nil, nil, err
	}
	noted("input schema", ns)
	call.schema = inJSON
	var outJSON []byte
	if out != nil {
		outJSON, ns, err = d.conv.fit(out, outRefs, output, limit{cmp.Or(opts.MaxOutputSchemaBytes, DefaultMaxOutputSchemaBytes), "MaxOutputSchemaBytes"})
		if err != nil {
			return nil, nil, fmt.Errorf("response: %w", err)
		}
		noted("output schema", ns)
	}

	t = &mcpkit.Tool{
		Tool: mcp.Tool{
			Name:        op.Name,
			Title:       op.Summary,
			Description: describe(op),
			InputSchema: json.RawMessage(inJSON),
			Annotations: annotations(op.Method),
			Meta:        mcp.Meta{MetaKeyOperation: opMeta(op)},
		},
		Handler:    call,
		Middleware: []mcpkit.Middleware{call.keepGiven},
		Tags:       slices.Clone(op.Tags),
	}
	if out != nil {
		t.OutputSchema = json.RawMessage(outJSON)
	}
	return t, notes, nil
}

// The argument names that are not parameters.
const (
	bodyKey   = "body"   // the request body
	resultKey = "result" // a non-object answer, in the structured content
)

// A sharedParam is a parameter of an operation and, when operations share
// it (a $ref, or its path item's), the JSON Pointer of where it is in the
// document; "" for the operation's own.
type sharedParam struct {
	*openapi3.Parameter
	at string
}

// schemaAt returns the JSON Pointer of the schema of p, or of its media
// type media, when p is shared; "" when it is not.
func (p sharedParam) schemaAt(media string) string {
	switch {
	case p.at == "":
		return ""
	case media == "":
		return p.at + "/schema"
	}
	return p.at + "/content/" + pointerToken(media) + "/schema"
}

// within returns the JSON Pointer of the place ptr in the operation when
// paths share it (see Document.locate), or "".
func (op *Operation) within(ptr string) string {
	if !op.shared {
		return ""
	}
	return op.itemAt + "/" + strings.ToLower(op.Method) + ptr
}

// parameters returns the operation's parameters: those of its path item,
// replaced by the operation's own of the same name and location.
func parameters(op *Operation) []sharedParam {
	var out []sharedParam
	own := func(p *openapi3.Parameter) bool {
		for _, q := range op.op.Parameters {
			if q != nil && q.Value != nil && q.Value.Name == p.Name && q.Value.In == p.In {
				return true
			}
		}
		return false
	}
	for i, p := range op.item.Parameters {
		if p != nil && p.Value != nil && !own(p.Value) {
			out = append(out, sharedParam{p.Value, sharedAt(p.Ref, op.itemAt+"/parameters/"+strconv.Itoa(i))})
		}
	}
	for i, p := range op.op.Parameters {
		if p != nil && p.Value != nil {
			out = append(out, sharedParam{p.Value, sharedAt(p.Ref, op.within("/parameters/"+strconv.Itoa(i)))})
		}
	}
	return out
}

// freeKey returns the argument name of a parameter: its own name, unless
// that is taken (by a parameter of the same name elsewhere, or by "body"),
// then "<in>.<name>", then that with a number.
func freeKey(props map[string]any, name, in string) string {
	if _, taken := props[name]; !taken && name != bodyKey {
		return name
	}
	key := in + "." + name
	for i := 2; ; i++ {
		if _, taken := props[key]; !taken && key != bodyKey {
			return key
		}
		key = in + "." + name + "." + strconv.Itoa(i)
	}
}

// annotate adds a description and the deprecated flag to a converted
// schema, which is the caller's own copy, when it has none.
func annotate(s any, desc string, deprecated bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	if _, has := m["description"]; !has && desc != "" {
		m["description"] = desc
	}
	if deprecated {
		m["deprecated"] = true
	}
}

// fields returns how the properties of a form or multipart body are sent:
// the media type's encoding object, and which properties are files.
func fields(mt *openapi3.MediaType) map[string]field {
	out := make(map[string]field)
	for name, e := range mt.Encoding {
		if e == nil {
			continue
		}
		f := field{contentType: e.ContentType}
		if e.Style != "" || e.Explode != nil {
			sm := e.SerializationMethod()
			f.style, f.explode = sm.Style, sm.Explode
		}
		out[name] = f
	}
	if mt.Schema == nil || mt.Schema.Value == nil {
		return out
	}
	for _, part := range append(openapi3.SchemaRefs{mt.Schema}, mt.Schema.Value.AllOf...) {
		if part == nil || part.Value == nil {
			continue
		}
		for name, p := range part.Value.Properties {
			if p == nil || p.Value == nil {
				continue
			}
			if s := p.Value; isFile(s) || s.Items != nil && s.Items.Value != nil && isFile(s.Items.Value) {
				f := out[name]
				f.binary = true
				out[name] = f
			}
		}
	}
	return out
}

// isFile reports whether a schema describes a file's content rather than
// text: format binary (OpenAPI 3.0) or a contentMediaType (3.1).
func isFile(s *openapi3.Schema) bool {
	return s.Format == "binary" || s.ContentMediaType != "" && s.ContentEncoding == ""
}

// jsonMedia returns the JSON media type of content, preferring
// application/json to the other JSON types (application/problem+json,
// ...), and its name.
func jsonMedia(content openapi3.Content) (*openapi3.MediaType, string) {
	if mt := content.Get("application/json"); mt != nil {
		return mt, "application/json"
	}
	types := mediaTypes(content)
	for _, name := range types {
		if isJSON(name) {
			return content[name], name
		}
	}
	return nil, ""
}

func mediaTypes(content openapi3.Content) []string {
	out := make([]string, 0, len(content))
	for name := range content {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// isJSON reports whether the media type is JSON: application/json or a
// +json type, parameters ignored.
func isJSON(media string) bool {
	mt, _, err := mime.ParseMediaType(media)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// output returns the converted schema of the operation's first 2xx
// response with a JSON body ("200" before "201", codes before "2XX"), its
// media type and the conversion's notes; nil if there is none, or if the
// 2xx responses do not all answer JSON of that one schema: another
// answer, without a JSON body (GitHub's secrets answer 201 with an object
// when they create and 204 when they update) or with JSON of another
// schema (its deployments answer 201 with the deployment, 202 with a
// message), would fail the output schema, and a call the API served would
// be an error.
func (d *Document) output(op *Operation, refs map[string]bool) (any, string, []error, error) {
	if op.op.Responses == nil {
		return nil, "", nil, nil
	}
	var codes []string
	for code := range op.op.Responses.Map() {
		if len(code) == 3 && code[0] == '2' {
			codes = append(codes, code)
		}
	}
	slices.Sort(codes) // digits sort before "X": "200" < "201" < "2XX"
	var (
		bare   []string // the codes whose answers have no JSON body
		shaped []string // those whose answers have a JSON schema
		first  *openapi3.SchemaRef
	)
	for _, code := range codes {
		r := op.op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		switch mt, _ := jsonMedia(r.Value.Content); {
		case mt == nil:
			bare = append(bare, code)
		case mt.Schema != nil:
			if first == nil {
				first = mt.Schema
			} else if !sameSchema(first, mt.Schema) {
				return nil, "", []error{degraded("no output schema: its %s and %s answers have different schemas, and one would fail the other's", shaped[0], code)}, nil
			}
			shaped = append(shaped, code)
		}
	}
	if len(bare) > 0 && len(shaped) > 0 {
		return nil, "", []error{degraded("no output schema: its %s answer has no JSON body, and an answer without structured content would fail the output schema", strings.Join(bare, ", "))}, nil
	}
	for _, code := range codes {
		r := op.op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		mt, media := jsonMedia(r.Value.Content)
		if mt == nil || mt.Schema == nil {
			continue
		}
		var at string
		if shared := sharedAt(r.Ref, op.within("/responses/"+pointerToken(code))); shared != "" {
			at = shared + "/content/" + pointerToken(media) + "/schema"
		}
		s, notes, err := d.conv.sharedSchema(mt.Schema, at, output, refs)
		return s, media, notes, err
	}
	return nil, "", nil, nil
}

// sameSchema reports whether two response schemas are one: the same $ref,
// or the same parsed schema.
func sameSchema(a, b *openapi3.SchemaRef) bool {
	if a.Ref != "" || b.Ref != "" {
		return a.Ref == b.Ref
	}
	return a.Value == b.Value
}

func describe(op *Operation) string {
	switch {
	case op.Summary == "":
		return op.Description
	case op.Description == "" || strings.HasPrefix(op.Description, op.Summary):
		return op.Summary
	}
	return op.Summary + "\n\n" + op.Description
}

// annotations gives the hints HTTP's method semantics imply.
func annotations(method string) *mcp.ToolAnnotations {
	yes, no := true, false
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &yes}
	case http.MethodPut:
		return &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: &yes}
	case http.MethodDelete:
		return &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &yes, OpenWorldHint: &yes}
	}
	return &mcp.ToolAnnotations{OpenWorldHint: &yes}
}

func opMeta(op *Operation) map[string]any {
	m := map[string]any{"method": op.Method, "path": op.Path}
	if op.OperationID != "" {
		m["operationId"] = op.OperationID
	}
	return m
}

// newBackend checks where calls go.
func newBackend(opts *Options) (*backend, error) {
	if (opts.Handler == nil) == (opts.Client == nil) {
		return nil, ErrNoBackend
	}
	be := &backend{handler: opts.Handler, client: opts.Client, prepare: opts.Prepare, max: opts.MaxResponseBytes}
	if be.max <= 0 {
		be.max = DefaultMaxResponseBytes
	}
	base, err := url.Parse(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBaseURL, clip(opts.BaseURL, 200), err)
	}
	if opts.Client != nil && (base.Scheme != "http" && base.Scheme != "https" || base.Host == "") {
		return nil, fmt.Errorf("%w %q: a Client needs an absolute http or https URL", ErrBaseURL, clip(opts.BaseURL, 200))
	}
	if base.Host == "" {
		base.Scheme, base.Host = "http", "localhost"
	}
	base.RawQuery, base.Fragment = "", ""
	be.base = base
	return be, nil
}
