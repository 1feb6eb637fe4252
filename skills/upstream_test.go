package skills_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/skills"
	"github.com/mcpkit/mcpkit/tools"
)

// upstreamFunc is a skills.Upstream made of a function.
type upstreamFunc func(context.Context, mcpkit.Caller) ([]skills.Entry, error)

func (f upstreamFunc) ListSkills(ctx context.Context, c mcpkit.Caller) ([]skills.Entry, error) {
	return f(ctx, c)
}

// syncBuffer is a log's output, written and read from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func upstreamEntry(uri, description string, files ...string) skills.Entry {
	name := uri[strings.LastIndex(strings.TrimSuffix(uri, "/SKILL.md"), "/")+1 : len(uri)-len("/SKILL.md")]
	fm, _ := json.Marshal(map[string]string{"name": name, "description": description})
	e := skills.Entry{URI: uri, Frontmatter: fm}
	for _, f := range append([]string{uri}, files...) {
		e.Resources.Files = append(e.Resources.Files, skills.Resource{URI: f, Digest: "sha256:" + strings.Repeat("0", 64), Size: 1})
	}
	return e
}

// TestServeUpstreams serves a local skill with those of three upstreams,
// asked per request, and checks through clients of each era: skills/list
// merges them by URI (the local skill wins a URI an upstream serves too,
// an earlier upstream a later one), across pages whose cursor follows a
// URI of another scheme; an entry or file the caller cannot read on the
// local server is left out, and so is an entry that names no SKILL.md;
// an upstream that fails is logged and left out; each upstream is asked
// with the caller; results that asked an upstream are private, a
// skills/get of a local skill is not.
func TestServeUpstreams(t *testing.T) {
	local, err := skills.New([]skills.Def{{Path: "kit", Files: map[string][]byte{"SKILL.md": []byte("---\nname: kit\ndescription: The local kit.\n---\n")}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "local", Version: "1"}, nil)
	// What the upstreams' files would be on srv: the proxy serves them.
	for _, uri := range []string{"github://acme/review/SKILL.md", "skill://zeta/SKILL.md", "skill://kit/notes.txt"} {
		if err := srv.AddResources(tools.TextResource(uri, "f", "text/plain", "x", nil)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var asked []bool // whether each caller the first upstream saw declared example.com/staff
	first := upstreamFunc(func(_ context.Context, c mcpkit.Caller) ([]skills.Entry, error) {
		mu.Lock()
		_, staff := c.ClientCapabilities().Extensions["example.com/staff"]
		asked = append(asked, staff)
		mu.Unlock()
		return []skills.Entry{
			upstreamEntry("skill://zeta/SKILL.md", "The first zeta.", "skill://zeta/unread.txt"),
			upstreamEntry("skill://kit/SKILL.md", "The upstream's kit.", "skill://kit/notes.txt"),
			upstreamEntry("github://acme/review/SKILL.md", "Review."),
			upstreamEntry("skill://unread/SKILL.md", "Not read on srv."),
			upstreamEntry("skill://kit/notes.txt", "No SKILL.md."),
		}, nil
	})
	failing := upstreamFunc(func(context.Context, mcpkit.Caller) ([]skills.Entry, error) {
		return nil, errors.New("upstream down")
	})
	second := upstreamFunc(func(context.Context, mcpkit.Caller) ([]skills.Entry, error) {
		return []skills.Entry{upstreamEntry("skill://zeta/SKILL.md", "The second zeta.")}, nil
	})
	var log syncBuffer
	if err := skills.Serve(srv, local, &skills.ServeOptions{
		Upstreams: []skills.Upstream{first, failing, second},
		PageSize:  1,
		Logger:    slog.New(slog.NewTextHandler(&log, nil)),
	}); err != nil {
		t.Fatal(err)
	}
	staffCaps := &mcp.ClientCapabilities{}
	staffCaps.AddExtension("example.com/staff", nil)
	kit, _ := local.Get("skill://kit/SKILL.md")
	zeta := upstreamEntry("skill://zeta/SKILL.md", "The first zeta.")
	want := []skills.Entry{upstreamEntry("github://acme/review/SKILL.md", "Review."), kit.Entry(), zeta}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			ctx := t.Context()
			mu.Lock()
			asked = nil
			mu.Unlock()
			cs := era.Connect(t, srv, skillsClient(t, staffCaps)).Session
			entries, pages := listAll(t, cs)
			if !equalEntries(entries, want) {
				t.Errorf("skills/list:\n got %s\nwant %s", marshalEntries(entries), marshalEntries(want))
			}
			for _, p := range pages {
				if p.CacheScope != "private" {
					t.Errorf("a page that asked the upstreams is %q; want private", p.CacheScope)
				}
			}
			mu.Lock()
			if len(asked) != len(pages) || slices.Contains(asked, false) {
				t.Errorf("the first upstream was asked %d times for %d pages, with the caller's capabilities: %v", len(asked), len(pages), asked)
			}
			mu.Unlock()
			if !strings.Contains(log.String(), "upstream down") {
				t.Errorf("the failing upstream was not logged: %q", log.String())
			}

			got, err := getSkill(cs, ctx, zeta.URI)
			if err != nil || !equalEntries([]skills.Entry{got.Skill}, []skills.Entry{zeta}) || got.CacheScope != "private" {
				t.Errorf("skills/get of an upstream's skill = %+v, %v; want the first upstream's, private", got, err)
			}
			got, err = getSkill(cs, ctx, kit.URI())
			if err != nil || !equalEntries([]skills.Entry{got.Skill}, []skills.Entry{kit.Entry()}) || got.CacheScope != "public" {
				t.Errorf("skills/get of the local skill = %+v, %v; want the local entry, public", got, err)
			}
			for _, uri := range []string{"skill://unread/SKILL.md", "skill://nope/SKILL.md", "skill://kit/notes.txt"} {
				if _, err := getSkill(cs, ctx, uri); !isInvalidParams(err) {
					t.Errorf("skills/get %s: %v; want -32602", uri, err)
				}
			}
			for _, cursor := range []string{"%%%", base64.RawURLEncoding.EncodeToString([]byte{0xff})} {
				_, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](ctx, cs, skills.MethodList, &skills.ListParams{Cursor: cursor})
				if !isInvalidParams(err) {
					t.Errorf("skills/list after cursor %q: %v; want -32602", cursor, err)
				}
			}
		})
	}
	if err := skills.Serve(mcpkit.NewServer(&mcp.Implementation{Name: "x"}, nil), nil, &skills.ServeOptions{Upstreams: []skills.Upstream{nil}}); err == nil {
		t.Error("Serve with a nil upstream: no error")
	}
}

func marshalEntries(es []skills.Entry) string {
	b, _ := json.Marshal(es)
	return string(b)
}

func equalEntries(a, b []skills.Entry) bool {
	return marshalEntries(a) == marshalEntries(b)
}
