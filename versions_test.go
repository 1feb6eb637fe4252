package mcpkit_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// versioned returns version ver of the tool "calc", which answers "v"+ver
// and, from version 2 on, requires an integer argument "n".
func versioned(ver string) *mcpkit.Tool {
	tl := tool("calc", reply("v"+ver))
	tl.Version = ver
	if ver >= "2" {
		tl.InputSchema = &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}},
			Required:   []string{"n"},
		}
	}
	return tl
}

// callPinned calls name with _meta pinning ver ("" pins nothing).
func callPinned(ts *mcpkittest.Server, ctx context.Context, name, ver string, args any) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if ver != "" {
		p.Meta = mcp.Meta{mcpkit.MetaKeyVersion: ver}
	}
	return ts.Session.CallTool(ctx, p)
}

func TestVersionPinning(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "pin"}, nil)
		if err := srv.Add(versioned("1.0"), versioned("2.0"), versioned("1.5")); err != nil {
			t.Fatal(err)
		}
		ts := connect(srv)
		ctx := t.Context()

		res, err := callPinned(ts, ctx, "calc", "", map[string]any{"n": 1})
		if err != nil || onlyText(res) != "v2.0" {
			t.Fatalf("unpinned call = %v, %v; want the highest, v2.0", res, err)
		}
		// Version 1.5 has no "n" and an open schema: validated against its
		// own schema, the call passes without n.
		res, err = callPinned(ts, ctx, "calc", "1.5", nil)
		if err != nil || res.IsError || onlyText(res) != "v1.5" {
			t.Fatalf("pinned 1.5 = %+v, %v", res, err)
		}
		// Version 2.0 requires n: the pinned call is validated against 2.0.
		res, err = callPinned(ts, ctx, "calc", "2.0", nil)
		if err != nil || !res.IsError {
			t.Fatalf("pinned 2.0 without n = %+v, %v; want a validation error", res, err)
		}

		_, unknownErr := ts.CallTool(ctx, "never_registered", nil)
		_, pinErr := callPinned(ts, ctx, "calc", "9.9", nil)
		sameUnknown(t, unknownErr, pinErr, "never_registered", "calc")
		_, badPinErr := ts.Session.CallTool(ctx, &mcp.CallToolParams{Name: "calc", Meta: mcp.Meta{mcpkit.MetaKeyVersion: 2}})
		sameUnknown(t, unknownErr, badPinErr, "never_registered", "calc")
	})
}

// sameUnknown checks that got is the unknown-tool error for gotName, with
// the code and text of want, the error for the never-registered wantName.
func sameUnknown(t *testing.T, want, got error, wantName, gotName string) {
	t.Helper()
	var we, ge *jsonrpc.Error
	if !errors.As(want, &we) || !errors.As(got, &ge) {
		t.Fatalf("errors are %v and %v; want JSON-RPC errors", want, got)
	}
	if we.Code != jsonrpc.CodeInvalidParams || ge.Code != we.Code {
		t.Errorf("codes %d and %d, want both %d", we.Code, ge.Code, jsonrpc.CodeInvalidParams)
	}
	if wantText := strings.ReplaceAll(we.Message, wantName, gotName); ge.Message != wantText {
		t.Errorf("message %q, want %q (as for a name never registered)", ge.Message, wantText)
	}
}

func TestListedVersionMeta(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "meta"}, nil)
	plain := tool("plain", reply("p"))
	plain.Meta = mcp.Meta{"owner": "team-a"}
	one := versioned("1.0")
	one.Meta = mcp.Meta{"owner": "team-b"}
	if err := srv.Add(plain, one, versioned("1.10"), versioned("1.9")); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	list, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	if m := byName["plain"].Meta; len(m) != 1 || m["owner"] != "team-a" {
		t.Errorf("unversioned tool's _meta = %v, want only its own", m)
	}
	m := byName["calc"].Meta
	if m[mcpkit.MetaKeyVersion] != "1.10" {
		t.Errorf("calc _meta version = %v, want 1.10", m[mcpkit.MetaKeyVersion])
	}
	vs, _ := m[mcpkit.MetaKeyVersions].([]any)
	if !slices.Equal(vs, []any{"1.10", "1.9", "1.0"}) {
		t.Errorf("calc _meta versions = %v, want [1.10 1.9 1.0]", m[mcpkit.MetaKeyVersions])
	}
	if one.Meta[mcpkit.MetaKeyVersion] != nil || len(one.Meta) != 1 {
		t.Errorf("the registered tool's _meta was modified: %v", one.Meta)
	}
}

func TestRemoveVersion(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "rm"}, nil)
	if err := srv.Add(versioned("1"), versioned("2"), versioned("3")); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	call := func(pin string) string {
		t.Helper()
		res, err := callPinned(ts, t.Context(), "calc", pin, map[string]any{"n": 1})
		if err != nil {
			return "unknown"
		}
		return onlyText(res)
	}
	if !srv.RemoveVersion("calc", "3") {
		t.Fatal("RemoveVersion(calc, 3) = false")
	}
	if srv.RemoveVersion("calc", "3") || srv.RemoveVersion("nope", "") {
		t.Error("RemoveVersion of what is not registered = true")
	}
	if got := call(""); got != "v2" {
		t.Errorf("after removing 3, the call reached %s, want v2", got)
	}
	if got := call("3"); got != "unknown" {
		t.Errorf("pinned to removed 3: %s, want unknown", got)
	}
	if got := call("1"); got != "v1" {
		t.Errorf("pinned to 1: %s", got)
	}
	srv.RemoveVersion("calc", "2")
	srv.RemoveVersion("calc", "1")
	if _, ok := srv.Lookup("calc"); ok || call("") != "unknown" {
		t.Error("calc still served after removing every version")
	}
}

// TestVersionChangesNotify checks that adding or removing a version that
// is not the highest still sends list_changed: the listed tool's _meta
// names its versions.
func TestVersionChangesNotify(t *testing.T) {
	changed := make(chan struct{}, 16)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "lc"}, nil)
	if err := srv.Add(versioned("2")); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no notifications/tools/list_changed after %s", what)
		}
	}
	versions := func() []any {
		t.Helper()
		res, err := ts.Session.ListTools(t.Context(), nil)
		if err != nil || len(res.Tools) != 1 {
			t.Fatalf("tools/list = %v, %v", res, err)
		}
		vs, _ := res.Tools[0].Meta[mcpkit.MetaKeyVersions].([]any)
		return vs
	}
	if err := srv.Add(versioned("1")); err != nil {
		t.Fatal(err)
	}
	wait("adding a lower version")
	if vs := versions(); len(vs) != 2 {
		t.Errorf("versions = %v, want [2 1]", vs)
	}
	srv.RemoveVersion("calc", "1")
	wait("removing a lower version")
	if vs := versions(); len(vs) != 1 {
		t.Errorf("versions = %v, want [2]", vs)
	}
	if err := srv.Add(versioned("1")); err != nil {
		t.Fatal(err)
	}
	wait("adding a lower version again")
	if err := srv.Transform(transform.Versions("", "2")); err != nil {
		t.Fatal(err)
	}
	wait("filtering versions")
	if vs := versions(); len(vs) != 1 || vs[0] != "1" {
		t.Errorf("versions after filtering = %v, want [1]", vs)
	}
}
