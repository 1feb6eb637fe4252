package skills_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/skills"
	"github.com/mcpkit/mcpkit/visibility"
)

// skillsClient registers the extension's methods on a harness's client.
func skillsClient(t testing.TB, caps *mcp.ClientCapabilities) *mcpkittest.Options {
	return &mcpkittest.Options{
		Client: &mcp.ClientOptions{Capabilities: caps},
		ClientSetup: func(c *mcp.Client) {
			if err := mcp.AddSendingCustomMethod[*skills.ListParams, *skills.ListResult](c, skills.MethodList); err != nil {
				t.Fatal(err)
			}
			if err := mcp.AddSendingCustomMethod[*skills.GetParams, *skills.GetResult](c, skills.MethodGet); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func listAll(t *testing.T, cs *mcp.ClientSession) ([]skills.Entry, []*skills.ListResult) {
	t.Helper()
	var entries []skills.Entry
	var pages []*skills.ListResult
	cursor := ""
	for {
		res, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](t.Context(), cs, skills.MethodList, &skills.ListParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list: %v", err)
		}
		entries, pages = append(entries, res.Skills...), append(pages, res)
		if cursor = res.NextCursor; cursor == "" {
			return entries, pages
		}
		if len(pages) > 10 {
			t.Fatal("skills/list does not end")
		}
	}
}

func getSkill(cs *mcp.ClientSession, ctx context.Context, uri string) (*skills.GetResult, error) {
	return mcp.CallCustomMethod[*skills.GetParams, *skills.GetResult](ctx, cs, skills.MethodGet, &skills.GetParams{URI: uri})
}

func isInvalidParams(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams
}

// readChecked reads every file of e through resources/read and checks
// the bytes against the entry's digest and size, as a host does.
func readChecked(t *testing.T, cs *mcp.ClientSession, e skills.Entry) {
	t.Helper()
	for _, r := range e.Resources.Files {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Errorf("read %s: %v", r.URI, err)
			continue
		}
		c := res.Contents[0]
		data := c.Blob
		if c.Text != "" {
			data = []byte(c.Text)
		}
		sum := sha256.Sum256(data)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != r.Digest || int64(len(data)) != r.Size || c.URI != r.URI {
			t.Errorf("read %s: %d bytes, %s; the entry says %d, %s", r.URI, len(data), got, r.Size, r.Digest)
		}
	}
}

// TestServe serves the test skills and checks, through a client of each
// era, what a host does: the extension and the resources capability are
// declared; skills/list, paged, lists every skill as the set's entries;
// skills/get answers each, and -32602 for a URI not served; each
// SKILL.md is in resources/list, named and described from its
// frontmatter, its other files not; every file reads back with its
// digest and size; results carry the TTL and are public.
func TestServe(t *testing.T) {
	set := mustLoad(t, embeddedSkills(t), nil)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "skills", Version: "1"}, nil)
	if err := skills.Serve(srv, set, &skills.ServeOptions{TTL: time.Minute, PageSize: 3}); err != nil {
		t.Fatal(err)
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			ctx, cs := t.Context(), era.Connect(t, srv, skillsClient(t, nil)).Session
			caps := cs.InitializeResult().Capabilities
			if _, ok := caps.Extensions[skills.ExtensionID]; !ok || caps.Resources == nil {
				t.Errorf("capabilities: extensions %v, resources %v; want the extension and resources", caps.Extensions, caps.Resources)
			}
			entries, pages := listAll(t, cs)
			if len(pages) != 2 {
				t.Errorf("%d pages of 3 for 4 skills", len(pages))
			}
			for _, p := range pages {
				if p.ResultType != "complete" || p.TTLMs != 60000 || p.CacheScope != "public" {
					t.Errorf("page: resultType %q, ttlMs %d, cacheScope %q", p.ResultType, p.TTLMs, p.CacheScope)
				}
			}
			var want []skills.Entry
			for _, k := range set.Skills() {
				want = append(want, k.Entry())
			}
			if !reflect.DeepEqual(entries, want) {
				t.Fatalf("skills/list:\n got %+v\nwant %+v", entries, want)
			}
			for _, e := range entries {
				got, err := getSkill(cs, ctx, e.URI)
				if err != nil || !reflect.DeepEqual(got.Skill, e) || got.TTLMs != 60000 || got.CacheScope != "public" || got.ResultType != "complete" {
					t.Errorf("skills/get %s = %+v, %v", e.URI, got, err)
				}
				readChecked(t, cs, e)
			}
			if _, err := getSkill(cs, ctx, "skill://nope/SKILL.md"); !isInvalidParams(err) {
				t.Errorf("skills/get of a skill not served: %v; want -32602", err)
			}
			if _, err := getSkill(cs, ctx, "skill://git-workflow/references/style.md"); !isInvalidParams(err) {
				t.Errorf("skills/get of a file that is no SKILL.md: %v; want -32602", err)
			}
			listed, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range listed.Resources {
				uris = append(uris, r.URI)
				if k, ok := set.Get(r.URI); !ok || r.Name != k.Name() || r.Description != k.Description() || r.MIMEType != "text/markdown" {
					t.Errorf("listed %+v", r)
				}
			}
			if !slices.Equal(uris, wantURIs) {
				t.Errorf("resources/list = %q; want the SKILL.md files %q", uris, wantURIs)
			}
		})
	}
}

// TestServeHidden hides a skill from some callers by a rule over its tag:
// to them it is absent from skills/list, skills/get of it and a read of
// any of its files are -32602, and results are private; other callers see
// it. A nested skill's files carry the tags of the skills around it.
func TestServeHidden(t *testing.T) {
	set := mustLoad(t, embeddedSkills(t), nil)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "skills", Version: "1"}, nil)
	if err := skills.Serve(srv, set, nil); err != nil {
		t.Fatal(err)
	}
	staff := func(_ context.Context, c mcpkit.Caller) bool {
		_, ok := c.ClientCapabilities().Extensions["example.com/staff"]
		return ok
	}
	visibility.New(visibility.Require(func(r *mcpkit.Resource) bool { return r.HasTag(skills.TagPrefix + "pdf-forms") }, staff)).Attach(srv)
	staffCaps := &mcp.ClientCapabilities{}
	staffCaps.AddExtension("example.com/staff", nil)
	hidden, _ := set.Get("skill://pdf-forms/SKILL.md")
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			ctx := t.Context()
			guest := era.Connect(t, srv, skillsClient(t, nil)).Session
			member := era.Connect(t, srv, skillsClient(t, staffCaps)).Session

			entries, pages := listAll(t, guest)
			var uris []string
			for _, e := range entries {
				uris = append(uris, e.URI)
			}
			if want := []string{"skill://acme/billing/refunds/SKILL.md", "skill://git-workflow/SKILL.md"}; !slices.Equal(uris, want) {
				t.Errorf("guest's skills/list = %q; want %q (pdf-forms and the skill nested in it hidden)", uris, want)
			}
			if pages[0].CacheScope != "private" {
				t.Errorf("cacheScope %q under a per-request rule; want private", pages[0].CacheScope)
			}
			for _, uri := range []string{hidden.URI(), "skill://pdf-forms/fill-form/SKILL.md"} {
				if _, err := getSkill(guest, ctx, uri); !isInvalidParams(err) {
					t.Errorf("guest's skills/get %s: %v; want -32602", uri, err)
				}
			}
			for _, f := range hidden.Files() {
				if _, err := guest.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.URI}); !isInvalidParams(err) {
					t.Errorf("guest's read of %s: %v; want -32602", f.URI, err)
				}
			}

			entries, _ = listAll(t, member)
			if len(entries) != len(wantURIs) {
				t.Errorf("member's skills/list has %d skills; want %d", len(entries), len(wantURIs))
			}
			got, err := getSkill(member, ctx, hidden.URI())
			if err != nil || got.CacheScope != "private" {
				t.Fatalf("member's skills/get = %+v, %v; want the skill, private", got, err)
			}
			readChecked(t, member, got.Skill)
		})
	}
}

// TestServeContents: a file is text when its MIME type is textual and its
// bytes UTF-8, a blob otherwise; an empty file is an empty blob.
func TestServeContents(t *testing.T) {
	md := []byte("---\nname: kit\ndescription: A kit.\n---\n")
	set, err := skills.New([]skills.Def{{Path: "kit", Files: map[string][]byte{
		"SKILL.md":   md,
		"logo.png":   {0x89, 'P', 'N', 'G'},
		"latin1.txt": {'c', 'a', 'f', 0xe9},
		"empty.txt":  {},
		"data.json":  []byte(`{"a":1}`),
	}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "skills", Version: "1"}, nil)
	if err := skills.Serve(srv, set, nil); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	for name, text := range map[string]bool{"SKILL.md": true, "logo.png": false, "latin1.txt": false, "empty.txt": false, "data.json": true} {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://kit/" + name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := res.Contents[0]
		if (c.Text != "") != text || !text && c.Blob == nil {
			t.Errorf("%s: text %q, blob %v; want text %v", name, c.Text, c.Blob, text)
		}
	}
}

// TestServeChanged: a file that changed after loading is not served with
// bytes its digest does not match: the read is an internal error.
func TestServeChanged(t *testing.T) {
	fsys := fstest.MapFS{
		"kit/SKILL.md":  {Data: []byte("---\nname: kit\ndescription: A kit.\n---\n")},
		"kit/notes.txt": {Data: []byte("first")},
	}
	set, err := skills.FromFS(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "skills", Version: "1"}, nil)
	if err := skills.Serve(srv, set, nil); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	fsys["kit/notes.txt"] = &fstest.MapFile{Data: []byte("other")}
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://kit/notes.txt"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError {
		t.Errorf("read of a changed file: %v; want -32603", err)
	}
}
