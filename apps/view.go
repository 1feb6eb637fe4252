package apps

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// A View describes an HTML view: the ui:// resource a host renders a
// tool's results with.
type View struct {
	// URI is where the view is read; it starts with "ui://".
	URI string
	// Name, Title and Description are what resources/list shows.
	Name, Title, Description string
	// HTML is the view, a whole HTML5 document.
	HTML string
	// CSP lists the origins the view needs to reach; nil means none (the
	// host's restrictive default).
	CSP *CSP
	// Permissions are the browser features the view asks for; a host may
	// refuse them.
	Permissions *Permissions
	// Domain asks the host for a dedicated origin for the view, in the
	// host's own format; "" leaves it to the host.
	Domain string
	// PrefersBorder, if set, asks the host for a visible border and
	// background (true) or none (false).
	PrefersBorder *bool
	// Unlisted keeps the view out of resources/list (hosts find views
	// through their tools' _meta.ui); resources/read still serves it.
	Unlisted bool
	// Tags go into the resource, for the server's rules.
	Tags []string
}

// CSP is a view's content security policy, as origins per directive.
type CSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`  // fetch, XHR, WebSocket
	ResourceDomains []string `json:"resourceDomains,omitempty"` // scripts, images, styles, fonts, media
	FrameDomains    []string `json:"frameDomains,omitempty"`    // nested iframes
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`  // the document's base URI
}

// Permissions are the browser features a view asks for.
type Permissions struct {
	Camera, Microphone, Geolocation, ClipboardWrite bool
}

// Resource returns the view as a resource to add to a server
// ([mcpkit.Server.AddResources]): of MIME type [MIMEType], its every read
// answering the HTML with the view's _meta.ui (csp, permissions, domain,
// prefersBorder). It refuses a URI that is not ui:// and an empty HTML.
func (v *View) Resource() (*mcpkit.Resource, error) {
	if !strings.HasPrefix(v.URI, Scheme+"://") || len(v.URI) == len(Scheme+"://") {
		return nil, fmt.Errorf("%w: view %q: its URI must start with %s:// and name something", ErrInvalid, v.URI, Scheme)
	}
	if v.HTML == "" {
		return nil, fmt.Errorf("%w: view %q: no HTML", ErrInvalid, v.URI)
	}
	ui := map[string]any{}
	if v.CSP != nil {
		ui["csp"] = v.CSP
	}
	if p := v.Permissions; p != nil {
		perms := map[string]any{}
		for name, on := range map[string]bool{"camera": p.Camera, "microphone": p.Microphone, "geolocation": p.Geolocation, "clipboardWrite": p.ClipboardWrite} {
			if on {
				perms[name] = map[string]any{}
			}
		}
		ui["permissions"] = perms
	}
	if v.Domain != "" {
		ui["domain"] = v.Domain
	}
	if v.PrefersBorder != nil {
		ui["prefersBorder"] = *v.PrefersBorder
	}
	var meta mcp.Meta
	if len(ui) > 0 {
		meta = mcp.Meta{"ui": ui}
	}
	uri, html := v.URI, v.HTML
	return &mcpkit.Resource{
		Resource: mcp.Resource{
			URI: uri, Name: v.Name, Title: v.Title, Description: v.Description,
			MIMEType: MIMEType, Size: int64(len(html)), Meta: meta,
		},
		Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: MIMEType, Text: html, Meta: meta}}}, nil
		}),
		Unlisted: v.Unlisted,
		Tags:     append([]string(nil), v.Tags...),
	}, nil
}
