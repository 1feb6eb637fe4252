package apps_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

func tool(name string) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})}
}

// withUI returns tool(name) with ui in its _meta.
func withUI(t *testing.T, name string, ui apps.ToolUI) *mcpkit.Tool {
	t.Helper()
	x := tool(name)
	if err := apps.SetTool(x, ui); err != nil {
		t.Fatal(err)
	}
	return x
}

// viewer is the capabilities of a host that shows views.
func viewer() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(apps.Extension, map[string]any{"mimeTypes": []string{apps.MIMEType}})
	return caps
}

// TestAppOnlyToolsForViewers: a tool for views alone is listed and called
// only by a client that declared the extension with the HTML MIME type; to
// any other it is a tool never registered. A tool with a view that the
// model may call is everyone's, and its _meta.ui reaches every client
// unchanged, also through a transform that renames it.
func TestAppOnlyToolsForViewers(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "apps"}, nil)
			weather := withUI(t, "weather", apps.ToolUI{ResourceURI: "ui://weather/dashboard"})
			renamed, err := transform.Tool(weather, transform.Spec{Name: "forecast"})
			if err != nil {
				t.Fatal(err)
			}
			refresh := withUI(t, "refresh", apps.ToolUI{ResourceURI: "ui://weather/dashboard", Visibility: []string{apps.App}})
			if err := srv.Add(weather, renamed, refresh, tool("plain")); err != nil {
				t.Fatal(err)
			}
			visibility.New(apps.Rule()).Attach(srv)

			other := &mcp.ClientCapabilities{}
			other.AddExtension(apps.Extension, map[string]any{"mimeTypes": []string{"text/uri-list"}})
			clients := map[string]*mcp.ClientCapabilities{"viewer": viewer(), "plain": nil, "other views": other}
			for who, caps := range clients {
				cs := era.Connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{Capabilities: caps}}).Session
				res, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, x := range res.Tools {
					names = append(names, x.Name)
					if x.Name == "weather" || x.Name == "forecast" {
						if ui, ok := x.Meta["ui"].(map[string]any); !ok || ui["resourceUri"] != "ui://weather/dashboard" {
							t.Errorf("%s: %s's _meta: %v", who, x.Name, x.Meta)
						}
					}
				}
				want := "forecast,plain,weather"
				if who == "viewer" {
					want = "forecast,plain,refresh,weather"
				}
				if got := strings.Join(names, ","); got != want {
					t.Errorf("%s lists %s, want %s", who, got, want)
				}
				_, callErr := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "refresh"})
				var werr *jsonrpc.Error
				switch {
				case who == "viewer" && callErr != nil:
					t.Errorf("the viewer calls refresh: %v", callErr)
				case who != "viewer" && (!errors.As(callErr, &werr) || werr.Message != `unknown tool "refresh"`):
					t.Errorf("%s calls refresh: %v, want unknown tool", who, callErr)
				}
			}
		})
	}
}

func TestSetTool(t *testing.T) {
	shared := mcp.Meta{"keep": 1}
	x := tool("x")
	x.Meta = shared
	x.Meta["ui/resourceUri"] = "ui://old"
	if err := apps.SetTool(x, apps.ToolUI{ResourceURI: "ui://new", Visibility: []string{apps.Model, apps.App}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := shared["ui"]; ok {
		t.Error("SetTool changed the map the tool shared")
	}
	ui, ok := apps.Tool(x)
	if !ok || ui.ResourceURI != "ui://new" || !slices.Equal(ui.Visibility, []string{"model", "app"}) || x.Meta["keep"] != 1 {
		t.Errorf("read back %+v %v from %v", ui, ok, x.Meta)
	}
	if _, ok := x.Meta["ui/resourceUri"]; ok {
		t.Error("the deprecated flat key is kept beside _meta.ui")
	}
	legacy := tool("legacy")
	legacy.Meta = mcp.Meta{"ui/resourceUri": "ui://flat"}
	if ui, ok := apps.Tool(legacy); !ok || ui.ResourceURI != "ui://flat" {
		t.Errorf("the flat key reads %+v %v", ui, ok)
	}
	for name, ui := range map[string]apps.ToolUI{
		"not ui://":        {ResourceURI: "https://x/y"},
		"empty visibility": {ResourceURI: "ui://x", Visibility: []string{}},
		"unknown audience": {ResourceURI: "ui://x", Visibility: []string{"user"}},
		"nothing for apps": {Visibility: []string{apps.Model}},
	} {
		if err := apps.SetTool(tool("y"), ui); !errors.Is(err, apps.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if apps.Supported(nil) || apps.Supported(&mcp.ClientCapabilities{}) || !apps.Supported(viewer()) {
		t.Error("Supported")
	}
	odd := &mcp.ClientCapabilities{Extensions: map[string]any{apps.Extension: struct {
		MIMETypes []string `json:"mimeTypes"`
	}{[]string{apps.MIMEType}}}}
	if !apps.Supported(odd) {
		t.Error("settings given as a Go struct are not read")
	}
}

// TestRoutesKeepUI: a tool's _meta.ui reaches the client through a proxy
// unchanged, and through a mount naming the view as the mount serves it
// (the namespace after "ui://"), and the tool for views alone is hidden by
// the front server's rule on either route, from a client that shows no
// views, while a viewer calls it.
func TestRoutesKeepUI(t *testing.T) {
	backend := func() *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "weather"}, nil)
		if err := srv.Add(withUI(t, "weather", apps.ToolUI{ResourceURI: "ui://weather/dashboard"}),
			withUI(t, "refresh", apps.ToolUI{ResourceURI: "ui://weather/dashboard", Visibility: []string{apps.App}})); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	mounted := mcpkit.NewServer(&mcp.Implementation{Name: "front"}, nil)
	if _, err := mounted.Mount("wx", backend()); err != nil {
		t.Fatal(err)
	}
	remote := backend()
	up, err := proxy.New(t.Context(), func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := remote.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}, &proxy.Options{Prefix: "wx_"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	proxied := mcpkit.NewServer(&mcp.Implementation{Name: "front"}, nil)
	up.AddTo(proxied)
	for route, srv := range map[string]*mcpkit.Server{"mount": mounted, "proxy": proxied} {
		visibility.New(apps.Rule()).Attach(srv)
		for _, era := range mcpkittest.Eras() {
			for who, caps := range map[string]*mcp.ClientCapabilities{"viewer": viewer(), "plain": nil} {
				cs := era.Connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{Capabilities: caps}}).Session
				res, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, x := range res.Tools {
					names = append(names, x.Name)
					view := "ui://weather/dashboard"
					if route == "mount" {
						view = "ui://wx/weather/dashboard"
					}
					if ui, ok := apps.Tool(&mcpkit.Tool{Tool: *x}); !ok || ui.ResourceURI != view {
						t.Errorf("%s %s %s: %s's _meta %v", route, era.Name, who, x.Name, x.Meta)
					}
				}
				want := "wx_weather"
				if who == "viewer" {
					want = "wx_refresh,wx_weather"
				}
				if got := strings.Join(names, ","); got != want {
					t.Errorf("%s %s: %s lists %s, want %s", route, era.Name, who, got, want)
				}
				_, callErr := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wx_refresh"})
				if (callErr == nil) != (who == "viewer") {
					t.Errorf("%s %s: %s calls wx_refresh: %v", route, era.Name, who, callErr)
				}
			}
		}
	}
}

// TestViewServed: a host that lists a tool finds its view's URI in
// _meta.ui and reads it: the HTML, of the MCP Apps MIME type, with the
// view's _meta.ui (its CSP, permissions, border), on both eras.
func TestViewServed(t *testing.T) {
	border := true
	view := &apps.View{URI: "ui://weather/dashboard", Name: "dashboard", HTML: "<!DOCTYPE html><html><body>sunny</body></html>",
		CSP:         &apps.CSP{ConnectDomains: []string{"https://api.example.com"}},
		Permissions: &apps.Permissions{Geolocation: true}, PrefersBorder: &border}
	res, err := view.Resource()
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "apps"}, nil)
	if err := srv.AddResources(res); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(withUI(t, "weather", apps.ToolUI{ResourceURI: view.URI})); err != nil {
		t.Fatal(err)
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{Capabilities: viewer()}}).Session
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(list.Tools) != 1 {
				t.Fatalf("%v %v", list, err)
			}
			ui, ok := apps.Tool(&mcpkit.Tool{Tool: *list.Tools[0]})
			if !ok {
				t.Fatalf("no _meta.ui: %v", list.Tools[0].Meta)
			}
			read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: ui.ResourceURI})
			if err != nil {
				t.Fatal(err)
			}
			c := read.Contents[0]
			if c.URI != view.URI || c.MIMEType != apps.MIMEType || c.Text != view.HTML {
				t.Errorf("read %+v", c)
			}
			got, _ := json.Marshal(c.Meta)
			want := `{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"permissions":{"geolocation":{}},"prefersBorder":true}}`
			if string(got) != want {
				t.Errorf("_meta %s\nwant %s", got, want)
			}
			var listed []string
			for r, err := range cs.Resources(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, r.URI+" "+r.MIMEType)
			}
			if len(listed) != 1 || listed[0] != view.URI+" "+apps.MIMEType {
				t.Errorf("resources/list: %q", listed)
			}
		})
	}
	for _, bad := range []*apps.View{{URI: "https://x/y", HTML: "<html></html>"}, {URI: "ui://", HTML: "<html></html>"}, {URI: "ui://x"}} {
		if _, err := bad.Resource(); !errors.Is(err, apps.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestSupportedComparesMediaTypes: a client's MIME type is the view type
// when it parses to text/html with profile mcp-app, however it is spelt,
// both as decoded from the wire and as given in Go; another type or
// profile is not.
func TestSupportedComparesMediaTypes(t *testing.T) {
	for _, tt := range []struct {
		typ  string
		want bool
	}{
		{"text/html;profile=mcp-app", true},
		{"text/html; profile=mcp-app", true},
		{`text/html;profile="mcp-app"`, true},
		{`Text/HTML; Profile="mcp-app"`, true},
		{"text/html; charset=utf-8; profile=mcp-app", true},
		{"text/html", false},
		{"text/html;profile=mcp-app-v2", false},
		{"text/html;profile=MCP-APP", false},
		{"text/plain;profile=mcp-app", false},
		{"text/html;profile=", false},
		{"text/html;;profile=mcp-app=", false},
		{"", false},
	} {
		wire := &mcp.ClientCapabilities{Extensions: map[string]any{apps.Extension: map[string]any{"mimeTypes": []any{"text/plain", tt.typ}}}}
		if got := apps.Supported(wire); got != tt.want {
			t.Errorf("%q as decoded from the wire: Supported = %v, want %v", tt.typ, got, tt.want)
		}
		caps := &mcp.ClientCapabilities{}
		caps.AddExtension(apps.Extension, map[string]any{"mimeTypes": []string{tt.typ}})
		if got := apps.Supported(caps); got != tt.want {
			t.Errorf("%q given in Go: Supported = %v, want %v", tt.typ, got, tt.want)
		}
	}
	notText := &mcp.ClientCapabilities{Extensions: map[string]any{apps.Extension: map[string]any{"mimeTypes": []any{42, nil}}}}
	if apps.Supported(notText) {
		t.Error("types that are not strings are taken for the view type")
	}
}
