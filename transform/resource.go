package transform

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpkit/mcpkit"
)

// ResourceSpec says how a derived resource differs from its parent. The
// zero value of each field keeps what the parent has.
type ResourceSpec struct {
	// URI, Name, Title, Description and MIMEType replace the parent's;
	// "" keeps them. URI must be absolute, with a scheme.
	URI, Name, Title, Description, MIMEType string
	// Tags replace the parent's; nil keeps them, an empty slice clears
	// them.
	Tags []string
	// Meta is merged into the parent's _meta as [Spec.Meta] is.
	Meta mcp.Meta
	// Middleware comes first in the derived resource's middleware,
	// outside the parent's own.
	Middleware []mcpkit.Middleware
}

// Resource returns a resource derived from r: served at its own URI (and
// name, description, ...) by r's handler, which sees the read as one of
// r's URI; the contents it returns for that URI are answered under the
// URI read. The derived resource's Origin is r, so that a rule keyed on
// r's identity ([mcpkit.Resource.Key]) holds for it too.
//
// Resource fails, wrapping [ErrInvalidTool], for a nil resource, one
// without a handler, or a URI without a scheme; [ErrInvalidSpec] for a
// nil middleware or a Meta that is not JSON.
func Resource(r *mcpkit.Resource, spec ResourceSpec) (*mcpkit.Resource, error) {
	if r == nil || r.Handler == nil {
		return nil, fmt.Errorf("%w: nil resource, or one without a handler", ErrInvalidTool)
	}
	uri := cmp.Or(spec.URI, r.URI)
	if scheme, _, ok := strings.Cut(uri, ":"); !ok || scheme == "" || strings.ContainsAny(scheme, "/?#{") {
		return nil, fmt.Errorf("%w: resource URI %q has no scheme", ErrInvalidTool, uri)
	}
	meta, err := targetMeta(r.Meta, spec.Meta, spec.Middleware, r.URI)
	if err != nil {
		return nil, err
	}
	d := &mcpkit.Resource{
		Resource: mcp.Resource{
			Meta:        meta,
			URI:         uri,
			Name:        cmp.Or(spec.Name, r.Name),
			Title:       cmp.Or(spec.Title, r.Title),
			Description: cmp.Or(spec.Description, r.Description),
			MIMEType:    cmp.Or(spec.MIMEType, r.MIMEType),
			Annotations: r.Annotations,
			Size:        r.Size,
			Icons:       copyIcons(r.Icons),
		},
		Handler:    r.Handler,
		Middleware: slices.Concat(spec.Middleware, r.Middleware),
		Tags:       slices.Clone(r.Tags),
		Unlisted:   r.Unlisted,
		Origin:     r,
	}
	if spec.Tags != nil {
		d.Tags = slices.Clone(spec.Tags)
	}
	if uri != r.URI {
		d.Handler = &uriMapper{next: r.Handler, resource: r, uri: func(*mcpkit.ResourceRequest) string { return r.URI }}
	}
	return d, nil
}

// TemplateSpec says how a derived template differs from its parent. The
// zero value of each field keeps what the parent has.
type TemplateSpec struct {
	// URITemplate, Name, Title, Description and MIMEType replace the
	// parent's; "" keeps them. A new URITemplate must have the parent's
	// variables and no others.
	URITemplate, Name, Title, Description, MIMEType string
	// Tags replace the parent's; nil keeps them, an empty slice clears
	// them.
	Tags []string
	// Meta is merged into the parent's _meta as [Spec.Meta] is.
	Meta mcp.Meta
	// Middleware comes first in the derived template's middleware,
	// outside the parent's own.
	Middleware []mcpkit.Middleware
}

// Template returns a template derived from t: its own text (say
// "docs://v2/{page}" for "docs://{page}"), name, description, ..., served
// by t's handler, which sees each read as the URI t's text makes of the
// variables decoded (a read of docs://v2/intro reaches it as docs://intro,
// with the same Params); contents returned for that URI are answered
// under the URI read. t's completers serve the derived template. The
// derived template's Origin is t, so that a rule keyed on t's identity
// holds for it too.
//
// Template fails, wrapping [ErrInvalidTool], for a nil template, one
// without a handler, a text that is not a URI template or whose
// variables are not t's; [ErrInvalidSpec] for a nil middleware or a Meta
// that is not JSON.
func Template(t *mcpkit.ResourceTemplate, spec TemplateSpec) (*mcpkit.ResourceTemplate, error) {
	if t == nil || t.Handler == nil {
		return nil, fmt.Errorf("%w: nil template, or one without a handler", ErrInvalidTool)
	}
	parent, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return nil, fmt.Errorf("%w: template %q: %v", ErrInvalidTool, t.URITemplate, err)
	}
	text := cmp.Or(spec.URITemplate, t.URITemplate)
	if text != t.URITemplate {
		own, err := uritemplate.New(text)
		if err != nil {
			return nil, fmt.Errorf("%w: template %q: %v", ErrInvalidTool, text, err)
		}
		pv, ov := slices.Sorted(slices.Values(parent.Varnames())), slices.Sorted(slices.Values(own.Varnames()))
		if pv, ov = slices.Compact(pv), slices.Compact(ov); !slices.Equal(pv, ov) {
			return nil, fmt.Errorf("%w: template %q has the variables %q; %q has %q", ErrInvalidTool, text, ov, t.URITemplate, pv)
		}
	}
	meta, err := targetMeta(t.Meta, spec.Meta, spec.Middleware, t.URITemplate)
	if err != nil {
		return nil, err
	}
	d := &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{
			Meta:        meta,
			URITemplate: text,
			Name:        cmp.Or(spec.Name, t.Name),
			Title:       cmp.Or(spec.Title, t.Title),
			Description: cmp.Or(spec.Description, t.Description),
			MIMEType:    cmp.Or(spec.MIMEType, t.MIMEType),
			Annotations: t.Annotations,
			Icons:       copyIcons(t.Icons),
		},
		Handler:    t.Handler,
		Middleware: slices.Concat(spec.Middleware, t.Middleware),
		Complete:   maps.Clone(t.Complete),
		Tags:       slices.Clone(t.Tags),
		Unlisted:   t.Unlisted,
		Origin:     t,
	}
	if spec.Tags != nil {
		d.Tags = slices.Clone(spec.Tags)
	}
	if text != t.URITemplate {
		d.Handler = &templateMapper{uriMapper{next: t.Handler, template: t, uri: func(req *mcpkit.ResourceRequest) string {
			vals := uritemplate.Values{}
			for k, v := range req.Params {
				vals.Set(k, uritemplate.String(v))
			}
			uri, err := parent.Expand(vals)
			if err != nil {
				return req.URI
			}
			return uri
		}}}
	}
	return d, nil
}

// targetMeta returns the _meta of a derived resource or template, and
// checks its middleware.
func targetMeta(parent, add mcp.Meta, mw []mcpkit.Middleware, key string) (mcp.Meta, error) {
	for i, m := range mw {
		if m == nil {
			return nil, fmt.Errorf("%w: %q: middleware %d is nil", ErrInvalidSpec, key, i)
		}
	}
	meta, err := copyMeta(parent)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: _meta: %v", ErrInvalidTool, key, err)
	}
	if err := mergeMeta(meta, add); err != nil {
		return nil, fmt.Errorf("%w: %q: Meta: %v", ErrInvalidSpec, key, err)
	}
	return meta, nil
}

// A uriMapper serves a derived resource (template) with its parent's
// handler: the read is the parent's URI's, and contents for that URI are
// answered under the URI read.
type uriMapper struct {
	next     mcpkit.ResourceHandler
	resource *mcpkit.Resource         // the parent resource, or nil
	template *mcpkit.ResourceTemplate // the parent template, or nil
	uri      func(*mcpkit.ResourceRequest) string
}

// A templateMapper is the uriMapper of a template (a type of its own, so
// that the pipeline names it).
type templateMapper struct{ uriMapper }

func (m *uriMapper) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	pr := *req
	if m.resource != nil {
		pr.Resource = m.resource
	}
	if m.template != nil {
		pr.Template = m.template
	}
	return mcpkit.ReadAt(ctx, m.next, &pr, m.uri(req))
}
