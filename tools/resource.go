package tools

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpkit/mcpkit"
)

// ResourceOptions configures a resource built by [TextResource] or
// [BlobResource]. A nil *ResourceOptions means the defaults.
type ResourceOptions struct {
	// Title, Description, Icons, Annotations and Meta go into the
	// resource's MCP definition as they are.
	Title       string
	Description string
	Icons       []mcp.Icon
	Annotations *mcp.Annotations
	Meta        mcp.Meta

	// Tags, Middleware and Unlisted go into the [mcpkit.Resource].
	Tags       []string
	Middleware []mcpkit.Middleware
	Unlisted   bool
}

// TextResource returns a resource at uri, called name, whose every read
// answers text, of MIME type mimeType. Its size is the length of text.
func TextResource(uri, name, mimeType, text string, opts *ResourceOptions) *mcpkit.Resource {
	return fixedResource(uri, name, mimeType, int64(len(text)), opts, func(c *mcp.ResourceContents) { c.Text = text })
}

// BlobResource returns a resource at uri, called name, whose every read
// answers blob, of MIME type mimeType (base64 on the wire). Its size is
// the length of blob, which the resource keeps: the caller must not
// modify it afterwards.
func BlobResource(uri, name, mimeType string, blob []byte, opts *ResourceOptions) *mcpkit.Resource {
	return fixedResource(uri, name, mimeType, int64(len(blob)), opts, func(c *mcp.ResourceContents) { c.Blob = blob })
}

// fixedResource is a resource that always answers the same contents, set
// by fill.
func fixedResource(uri, name, mimeType string, size int64, opts *ResourceOptions, fill func(*mcp.ResourceContents)) *mcpkit.Resource {
	if opts == nil {
		opts = &ResourceOptions{}
	}
	return &mcpkit.Resource{
		Resource: mcp.Resource{
			URI:         uri,
			Name:        name,
			Title:       opts.Title,
			Description: opts.Description,
			MIMEType:    mimeType,
			Size:        size,
			Icons:       opts.Icons,
			Annotations: opts.Annotations,
			Meta:        opts.Meta,
		},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			c := &mcp.ResourceContents{URI: req.URI, MIMEType: mimeType}
			fill(c)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
		}),
		Middleware: opts.Middleware,
		Tags:       opts.Tags,
		Unlisted:   opts.Unlisted,
	}
}

// TemplateOptions configures a template built by [NewTemplate]. A nil
// *TemplateOptions means the defaults.
type TemplateOptions struct {
	// Name is the template's name; the template's text when empty.
	Name string

	// Title, Description, MIMEType, Icons, Annotations and Meta go into
	// the template's MCP definition as they are.
	Title       string
	Description string
	MIMEType    string
	Icons       []mcp.Icon
	Annotations *mcp.Annotations
	Meta        mcp.Meta

	// Tags, Middleware, Unlisted and Complete go into the
	// [mcpkit.ResourceTemplate]; Complete is keyed by variable name (see
	// [CompleteFrom]).
	Tags       []string
	Middleware []mcpkit.Middleware
	Unlisted   bool
	Complete   map[string]mcpkit.CompleteFunc
}

// NewTemplate returns a template of the URIs uriTemplate matches (RFC
// 6570), whose handler decodes the variables of the URI read into a P and
// calls fn.
//
// P must be a struct (or a pointer to one) with a field for every
// variable of the template, named as encoding/json names it (a json tag),
// each a string, a type whose pointer implements
// [encoding.TextUnmarshaler], or a pointer to either, as for
// [NewPrompt]'s arguments. A value its field cannot decode is answered
// -32602, naming the variable. A reserved expansion ({+path}) may hold
// "/" and "..": never map its value onto a file path.
//
// NewTemplate returns an error for a template that does not compile, a
// nil fn, or a P without a field for some variable.
func NewTemplate[P any](uriTemplate string, fn func(ctx context.Context, req *mcpkit.ResourceRequest, params P) (*mcp.ReadResourceResult, error), opts *TemplateOptions) (*mcpkit.ResourceTemplate, error) {
	if opts == nil {
		opts = &TemplateOptions{}
	}
	tmpl, err := uritemplate.New(uriTemplate)
	if err != nil {
		return nil, fmt.Errorf("tools: template %q: %w", uriTemplate, err)
	}
	if fn == nil {
		return nil, fmt.Errorf("tools: template %q: nil function", uriTemplate)
	}
	fields, err := promptFields(reflect.TypeFor[P]())
	if err != nil {
		return nil, fmt.Errorf("tools: template %q: %w", uriTemplate, err)
	}
	for _, v := range tmpl.Varnames() {
		if !slices.ContainsFunc(fields, func(f promptField) bool { return f.name == v }) {
			return nil, fmt.Errorf("tools: template %q: %v has no field for the variable %q", uriTemplate, reflect.TypeFor[P](), v)
		}
	}
	for i := range fields {
		// A variable the URI does not carry is left zero: whether it is
		// required is the template's to say, by matching.
		fields[i].required = false
	}
	name := opts.Name
	if name == "" {
		name = uriTemplate
	}
	return &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{
			URITemplate: uriTemplate,
			Name:        name,
			Title:       opts.Title,
			Description: opts.Description,
			MIMEType:    opts.MIMEType,
			Icons:       opts.Icons,
			Annotations: opts.Annotations,
			Meta:        opts.Meta,
		},
		Handler:    &templateHandler[P]{fn: fn, fields: fields},
		Middleware: opts.Middleware,
		Tags:       opts.Tags,
		Unlisted:   opts.Unlisted,
		Complete:   opts.Complete,
	}, nil
}

// MustTemplate returns t, and panics if err is not nil, as [Must] does
// for tools.
func MustTemplate(t *mcpkit.ResourceTemplate, err error) *mcpkit.ResourceTemplate {
	if err != nil {
		panic(err)
	}
	return t
}

// templateHandler is the handler of a template built by NewTemplate.
type templateHandler[P any] struct {
	fn     func(context.Context, *mcpkit.ResourceRequest, P) (*mcp.ReadResourceResult, error)
	fields []promptField
}

func (h *templateHandler[P]) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	var p P
	if err := decodeStrings(&p, h.fields, req.Params, "parameter"); err != nil {
		return nil, err
	}
	return h.fn(ctx, req, p)
}
