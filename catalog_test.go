package mcpkit_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestTransformRewritesWhatIsValidated checks that a catalog transform's
// schema is the one clients list and calls are validated against.
func TestTransformRewritesWhatIsValidated(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "tr"}, nil)
	if err := srv.Add(tool("t", reply("ok"))); err != nil {
		t.Fatal(err)
	}
	strict := &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"id": {Type: "integer"}},
		Required:   []string{"id"},
	}
	var runs atomic.Int32
	err := srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
		runs.Add(1)
		t2 := tl.Clone()
		t2.InputSchema = strict
		return t2, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.CallTool(t.Context(), "t", map[string]any{"id": "seven"})
	if err != nil || !res.IsError || !strings.Contains(onlyText(res), "id") {
		t.Errorf("call with a string id = %+v, %v; want the transformed schema's validation error", res, err)
	}
	res, err = ts.CallTool(t.Context(), "t", map[string]any{"id": 7})
	if err != nil || res.IsError {
		t.Errorf("valid call = %+v, %v", res, err)
	}
	list, _ := ts.Session.ListTools(t.Context(), nil)
	if s, ok := list.Tools[0].InputSchema.(map[string]any); !ok || s["required"] == nil {
		t.Errorf("listed schema = %v, want the transformed one", list.Tools[0].InputSchema)
	}
	// Transforms run when the registry changes, never per request.
	before := runs.Load()
	for range 5 {
		ts.CallTool(t.Context(), "t", map[string]any{"id": 1})
		ts.Session.ListTools(t.Context(), nil)
	}
	if runs.Load() != before {
		t.Errorf("the transform ran %d times during calls and lists", runs.Load()-before)
	}
}

func TestTransformErrors(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "tr"}, nil)
	if err := srv.Add(tool("t", reply("ok"))); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := srv.Transform(func(*mcpkit.Tool) (*mcpkit.Tool, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
	badSchema := func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
		t2 := tl.Clone()
		t2.InputSchema = map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "strng"}}}
		return t2, nil
	}
	if err := srv.Transform(badSchema); !errors.Is(err, mcpkit.ErrInvalidSchema) {
		t.Errorf("err = %v, want ErrInvalidSchema", err)
	}
	badHeader := func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
		t2 := tl.Clone()
		t2.InputSchema = map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "object", "x-mcp-header": "A"}}}
		return t2, nil
	}
	if err := srv.Transform(badHeader); !errors.Is(err, mcpkit.ErrInvalidSchema) {
		t.Errorf("x-mcp-header on an object: err = %v, want ErrInvalidSchema", err)
	}
	// Add of a tool that the transforms refuse fails and adds nothing.
	if err := srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
		if tl.Name == "refused" {
			return nil, boom
		}
		return tl, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(tool("fine", reply("")), tool("refused", reply(""))); !errors.Is(err, boom) {
		t.Errorf("Add: err = %v, want boom", err)
	}
	if _, ok := srv.Lookup("fine"); ok {
		t.Error("a refused Add registered some of its tools")
	}
}

func TestUnlistedToolIsCallable(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "u"}, nil)
	old := tool("old_name", reply("old"))
	old.Unlisted = true
	if err := srv.Add(old, tool("new_name", reply("new"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	list, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "new_name" {
		t.Errorf("tools/list = %v, %v; want only new_name", list, err)
	}
	res, err := ts.CallTool(t.Context(), "old_name", nil)
	if err != nil || onlyText(res) != "old" {
		t.Errorf("calling the unlisted tool = %v, %v", res, err)
	}
}

// byHeader is a Visibility that hides the tools tagged "secret" from
// requests without an X-Role: admin header, and disables the tools tagged
// "off".
type byHeader struct{ perRequest bool }

func (v byHeader) Enabled(t *mcpkit.Tool) bool { return !t.HasTag("off") }
func (v byHeader) PerRequest() bool            { return v.perRequest }
func (v byHeader) Allowed(_ context.Context, t *mcpkit.Tool, c mcpkit.Caller) bool {
	return !t.HasTag("secret") || c.Header().Get("X-Role") == "admin"
}

func TestVisibilityHook(t *testing.T) {
	newServer := func() *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "vis"}, nil)
		secret2 := tool("calc", reply("v2 secret"))
		secret2.Version, secret2.Tags = "2", []string{"secret"}
		public1 := tool("calc", reply("v1"))
		public1.Version = "1"
		off := tool("off", reply("off"))
		off.Tags = []string{"off"}
		vault := tool("vault", reply("vault"))
		vault.Tags = []string{"secret"}
		if err := srv.Add(secret2, public1, off, vault, tool("open", reply("open"))); err != nil {
			t.Fatal(err)
		}
		srv.SetVisibility(byHeader{perRequest: true})
		return srv
	}
	for _, role := range []string{"admin", "guest"} {
		t.Run(role, func(t *testing.T) {
			ts := mcpkittest.NewStatelessServer(t, newServer(), &mcpkittest.Options{Header: http.Header{"X-Role": {role}}})
			list, err := ts.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				v, _ := tl.Meta[mcpkit.MetaKeyVersion].(string)
				names = append(names, tl.Name+"@"+v)
			}
			want := map[string]string{"admin": "calc@2,open@,vault@", "guest": "calc@1,open@"}[role]
			if got := strings.Join(names, ","); got != want {
				t.Errorf("tools/list = %s, want %s", got, want)
			}
			if list.CacheScope != "private" {
				t.Errorf("cacheScope = %q, want private: the list depends on who asks", list.CacheScope)
			}
			_, unknown := ts.CallTool(t.Context(), "never_registered", nil)
			_, offErr := ts.CallTool(t.Context(), "off", nil)
			sameUnknown(t, unknown, offErr, "never_registered", "off")
			res, err := ts.CallTool(t.Context(), "calc", nil)
			if role == "admin" && onlyText(res) != "v2 secret" || role == "guest" && onlyText(res) != "v1" {
				t.Errorf("calc reached %v, %v", res, err)
			}
			_, pinErr := callPinned(ts, t.Context(), "calc", "2", nil)
			_, vaultErr := ts.CallTool(t.Context(), "vault", nil)
			if role == "guest" {
				sameUnknown(t, unknown, pinErr, "never_registered", "calc")
				sameUnknown(t, unknown, vaultErr, "never_registered", "vault")
			} else if pinErr != nil || vaultErr != nil {
				t.Errorf("admin: pinned %v, vault %v", pinErr, vaultErr)
			}
		})
	}
}

func TestListCacheScope(t *testing.T) {
	opts := &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = 60000 },
	}}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "cache"}, opts)
	if err := srv.Add(tool("t", reply(""))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	scope := func() (string, int) {
		t.Helper()
		// A new client each time: the SDK client honours ttlMs.
		cs, err := ts.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return list.CacheScope, list.TTLMs
	}
	if s, ttl := scope(); s != "public" || ttl != 60000 {
		t.Errorf("without visibility: cacheScope %q, ttlMs %d; want public, 60000 (SetCacheable's)", s, ttl)
	}
	srv.SetVisibility(byHeader{perRequest: false})
	if s, _ := scope(); s != "public" {
		t.Errorf("with global visibility only: cacheScope %q, want public", s)
	}
	srv.SetVisibility(byHeader{perRequest: true})
	if s, ttl := scope(); s != "private" || ttl != 60000 {
		t.Errorf("with a per-request predicate: cacheScope %q, ttlMs %d; want private, 60000", s, ttl)
	}
	srv.SetVisibility(nil)
	if s, _ := scope(); s != "public" {
		t.Errorf("after removing the visibility: cacheScope %q, want public", s)
	}
}

// TestToolsAddedToTheSDKServer checks that a tool added through
// MCPServer is listed next to the mcpkit tools, though tools/list reads
// the SDK's list only once MCPServer has been called.
func TestToolsAddedToTheSDKServer(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "foreign"}, nil)
	if err := srv.Add(tool("a_kit", reply("kit"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	srv.MCPServer().AddTool(&mcp.Tool{Name: "b_native", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("native"), nil
	})
	list, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "a_kit,b_native" {
		t.Errorf("tools/list = %s", got)
	}
}
