// Package apps serves tools of MCP Apps (SEP-1865, the extension
// io.modelcontextprotocol/ui): tools whose results a host renders with an
// HTML view, a ui:// resource, and tools that only such a view calls.
//
// A view is a resource of MIME type [MIMEType]: [View.Resource] makes one
// to add with [mcpkit.Server.AddResources], its _meta.ui (content security
// policy, permissions) on every read. A tool says which view renders it in
// _meta.ui: [SetTool] writes it, and [Tool] reads it (the deprecated flat
// key "ui/resourceUri" included).
// The extension's _meta travels with the tool through transforms, mounts
// and proxies as all of a tool's _meta does.
//
// A tool whose visibility is ["app"] is for the view alone: a host that
// shows no views has no use for it, and its model must never see it. The
// [Rule] hides such tools from every request whose client did not declare
// the extension (with the MIME type [MIMEType]): absent from tools/list,
// and answered as unknown when called, as any hidden tool.
//
//	rules := visibility.New(apps.Rule())
//	rules.Attach(srv)
package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/visibility"
)

const (
	// Extension is the identifier of MCP Apps, under which clients and
	// servers declare it in their capabilities' extensions.
	Extension = "io.modelcontextprotocol/ui"
	// MIMEType is the MIME type of an HTML view.
	MIMEType = "text/html;profile=mcp-app"
	// Scheme is the URI scheme of views: their URIs start with "ui://".
	Scheme = "ui"

	// legacyKey is the deprecated flat _meta key of a tool's view.
	legacyKey = "ui/resourceUri"
)

// Who a tool is for, in [ToolUI.Visibility].
const (
	// Model: the tool is listed to the host's model, and it may call it.
	Model = "model"
	// App: a view of this server may call the tool.
	App = "app"
)

// ToolUI is what a tool's _meta.ui says.
type ToolUI struct {
	// ResourceURI is the ui:// resource whose view renders the tool's
	// results; "" for none.
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility says who may call the tool: [Model], [App] or both;
	// nil means both.
	Visibility []string `json:"visibility,omitempty"`
}

// ErrInvalid is returned by [SetTool] for a ToolUI the extension does not
// allow.
var ErrInvalid = errors.New("apps: invalid _meta.ui")

// SetTool writes ui into t's _meta.ui, replacing what was there (and the
// deprecated flat key), on a copy of t's _meta, so that a map t shares with
// other tools is not changed. Call it before the tool is added. It refuses
// (with [ErrInvalid]) a ResourceURI that is not a ui:// URI, an empty
// Visibility list, a visibility other than [Model] and [App], and a tool
// that neither has a view nor is for one.
func SetTool(t *mcpkit.Tool, ui ToolUI) error {
	if ui.ResourceURI != "" && !strings.HasPrefix(ui.ResourceURI, Scheme+"://") {
		return fmt.Errorf("%w: tool %q: resourceUri %q does not start with %s://", ErrInvalid, t.Name, ui.ResourceURI, Scheme)
	}
	if ui.Visibility != nil && len(ui.Visibility) == 0 {
		return fmt.Errorf("%w: tool %q: an empty visibility list: no one could call it", ErrInvalid, t.Name)
	}
	for _, v := range ui.Visibility {
		if v != Model && v != App {
			return fmt.Errorf("%w: tool %q: visibility %q: want %q or %q", ErrInvalid, t.Name, v, Model, App)
		}
	}
	if ui.ResourceURI == "" && !slices.Contains(ui.Visibility, App) {
		return fmt.Errorf("%w: tool %q: no resourceUri, and not callable by a view", ErrInvalid, t.Name)
	}
	m := maps.Clone(t.Meta)
	if m == nil {
		m = mcp.Meta{}
	}
	delete(m, legacyKey)
	entry := map[string]any{}
	if ui.ResourceURI != "" {
		entry["resourceUri"] = ui.ResourceURI
	}
	if ui.Visibility != nil {
		entry["visibility"] = slices.Clone(ui.Visibility)
	}
	m["ui"] = entry
	t.Meta = m
	return nil
}

// Tool returns what t's _meta says of its view, and whether it says
// anything: _meta.ui, or else the deprecated flat key "ui/resourceUri".
// A _meta.ui of the wrong shape reads as nothing.
func Tool(t *mcpkit.Tool) (ToolUI, bool) {
	if t == nil || t.Meta == nil {
		return ToolUI{}, false
	}
	if raw, ok := t.Meta["ui"]; ok {
		b, err := json.Marshal(raw)
		if err != nil {
			return ToolUI{}, false
		}
		var ui ToolUI
		if json.Unmarshal(b, &ui) != nil {
			return ToolUI{}, false
		}
		return ui, true
	}
	if uri, ok := t.Meta[legacyKey].(string); ok {
		return ToolUI{ResourceURI: uri}, true
	}
	return ToolUI{}, false
}

// AppOnly is a match function that selects the tools for views alone:
// those whose _meta.ui visibility holds [App] and not [Model].
func AppOnly(t *mcpkit.Tool) bool {
	ui, ok := Tool(t)
	return ok && ui.Visibility != nil && !slices.Contains(ui.Visibility, Model) && slices.Contains(ui.Visibility, App)
}

// Supported reports whether a client with capabilities caps shows views:
// it declared the extension, listing [MIMEType] among its mimeTypes. Types
// are compared as media types, not as text: the case of the type and of
// parameter names, blanks around ";" and a quoted profile are all one
// type ("Text/HTML; Profile=\"mcp-app\""), and other parameters (a
// charset) do not matter.
func Supported(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	raw, ok := caps.Extensions[Extension]
	if !ok {
		return false
	}
	if settings, ok := raw.(map[string]any); ok {
		if types, ok := settings["mimeTypes"].([]any); ok {
			// As decoded from the wire: read without encoding it again.
			return slices.ContainsFunc(types, func(v any) bool {
				s, ok := v.(string)
				return ok && isViewType(s)
			})
		}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	var settings struct {
		MIMETypes []string `json:"mimeTypes"`
	}
	return json.Unmarshal(b, &settings) == nil && slices.ContainsFunc(settings.MIMETypes, isViewType)
}

// isViewType reports whether the MIME type s is [MIMEType]: text/html with
// the profile mcp-app, as media types compare.
func isViewType(s string) bool {
	if s == MIMEType {
		return true
	}
	typ, params, err := mime.ParseMediaType(s)
	return err == nil && typ == "text/html" && params["profile"] == "mcp-app"
}

// ShowsViews is a [visibility.Predicate] that holds for the requests whose
// client shows views (see [Supported]).
func ShowsViews(_ context.Context, c mcpkit.Caller) bool {
	return Supported(c.ClientCapabilities())
}

// Rule returns a visibility rule that hides the tools for views alone
// ([AppOnly]) from the requests whose client shows no views
// ([ShowsViews]). Tools with a view that the model may call stay
// everyone's: a client without views gets their text content.
func Rule() *visibility.Rule {
	return visibility.Require(AppOnly, ShowsViews)
}
