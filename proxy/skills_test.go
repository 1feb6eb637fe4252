package proxy_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/skills"
	"github.com/mcpkit/mcpkit/visibility"
)

func skillMD(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n\nDo it well.\n")}
}

// upstreamSkills are the upstream's skills: pdf-forms (and the skill
// nested in it) only for the X-Team staff, acme/billing/refunds for all,
// hidden by the local server, and tie, which the local server serves too.
var upstreamSkills = fstest.MapFS{
	"git-workflow/SKILL.md":            skillMD("git-workflow"),
	"git-workflow/references/style.md": {Data: []byte("# Commit style\n\nShort subject lines.\n")},
	"pdf-forms/SKILL.md":               skillMD("pdf-forms"),
	"pdf-forms/logo.png":               {Data: []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe}},
	"pdf-forms/fill-form/SKILL.md":     skillMD("fill-form"),
	"pdf-forms/fill-form/steps.txt":    {Data: []byte("1. open\n2. fill\n")},
	"acme/billing/refunds/SKILL.md":    skillMD("refunds"),
	"acme/billing/refunds/policy.md":   {Data: []byte("Refund within 30 days.\n")},
	"tie/SKILL.md":                     skillMD("tie"),
}

// newSkillsUpstream serves upstreamSkills over streamable HTTP, in pages
// of 2, with pdf-forms hidden from callers whose X-Team is not staff. It
// returns the set, the URL and a func that takes the upstream down.
func newSkillsUpstream(t *testing.T, sessions bool) (*skills.Set, string, func()) {
	t.Helper()
	set, err := skills.FromFS(upstreamSkills, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "skilled", Version: "1"}, nil)
	if err := skills.Serve(srv, set, &skills.ServeOptions{PageSize: 2}); err != nil {
		t.Fatal(err)
	}
	staff := func(_ context.Context, c mcpkit.Caller) bool { return c.Header().Get("X-Team") == "staff" }
	visibility.New(visibility.Require(func(r *mcpkit.Resource) bool { return r.HasTag(skills.TagPrefix + "pdf-forms") }, staff)).Attach(srv)
	ts := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: sessions}))
	t.Cleanup(ts.Close)
	return set, ts.URL, func() { ts.Listener.Close(); ts.CloseClientConnections() }
}

// staffCaller reports whether a local caller declared the example.com/staff
// extension, which both eras' clients carry.
func staffCaller(c mcpkit.Caller) bool {
	if c == nil || c.ClientCapabilities() == nil {
		return false
	}
	_, ok := c.ClientCapabilities().Extensions["example.com/staff"]
	return ok
}

// skillsClientOptions registers the extension's methods on a harness's
// client.
func skillsClientOptions(t testing.TB, caps *mcp.ClientCapabilities) *mcpkittest.Options {
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

// listSkills lists every page of skills/list, and fails the test on an
// error or a page that is not private.
func listSkills(t *testing.T, cs *mcp.ClientSession) []skills.Entry {
	t.Helper()
	var all []skills.Entry
	cursor := ""
	for range 20 {
		res, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](t.Context(), cs, skills.MethodList, &skills.ListParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list: %v", err)
		}
		if res.CacheScope != "private" {
			t.Errorf("a skills/list page that asked the upstream is %q; want private", res.CacheScope)
		}
		all = append(all, res.Skills...)
		if cursor = res.NextCursor; cursor == "" {
			return all
		}
	}
	t.Fatal("skills/list does not end")
	return nil
}

func getSkill(ctx context.Context, cs *mcp.ClientSession, uri string) (*skills.GetResult, error) {
	return mcp.CallCustomMethod[*skills.GetParams, *skills.GetResult](ctx, cs, skills.MethodGet, &skills.GetParams{URI: uri})
}

func invalidParams(err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams
}

// readSkill reads every file of e through cs and checks it against the
// entry's digest and size, as a host does.
func readSkill(t *testing.T, cs *mcp.ClientSession, e skills.Entry) {
	t.Helper()
	for _, f := range e.Resources.Files {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: f.URI})
		if err != nil {
			t.Errorf("read %s: %v", f.URI, err)
			continue
		}
		c := res.Contents[0]
		data := c.Blob
		if c.Text != "" {
			data = []byte(c.Text)
		}
		sum := sha256.Sum256(data)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != f.Digest || int64(len(data)) != f.Size || c.URI != f.URI {
			t.Errorf("read %s: %d bytes, %s; the entry says %d, %s", f.URI, len(data), got, f.Size, f.Digest)
		}
	}
}

func entryURIs(es []skills.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.URI)
	}
	return out
}

func sameEntries(a, b []skills.Entry) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// lockedBuffer is a log's output, written and read from several
// goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSkillsThroughProxy serves an upstream's skills through a local
// server that has skills of its own, for upstreams and local clients of
// each era: skills/list (paged at both ends) has the upstream's entries,
// as the upstream serves them, beside the local ones (the local skill wins
// the URI both serve); skills/get answers each; every file, listed or not
// upstream, reads back through the proxy with its digest and size. A skill
// the upstream hides from the caller's credentials and one a local rule
// on its URIs hides are absent, and skills/get of them is -32602. An
// upstream that is down leaves the local skills listed.
func TestSkillsThroughProxy(t *testing.T) {
	local, err := skills.New([]skills.Def{
		{Path: "local-notes", Files: map[string][]byte{"SKILL.md": []byte("---\nname: local-notes\ndescription: Local notes.\n---\n"), "notes.txt": []byte("local\n")}},
		{Path: "tie", Files: map[string][]byte{"SKILL.md": []byte("---\nname: tie\ndescription: The local tie.\n---\n")}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	staffCaps := &mcp.ClientCapabilities{}
	staffCaps.AddExtension("example.com/staff", nil)
	for _, ue := range upstreamEras {
		for _, era := range mcpkittest.Eras() {
			t.Run("upstream "+ue.version+"/client "+era.Name, func(t *testing.T) {
				ctx := t.Context()
				set, url, down := newSkillsUpstream(t, ue.sessions)
				var log lockedBuffer
				logger := slog.New(slog.NewTextHandler(&log, nil))
				up := newProxy(t, proxy.HTTP(url, &proxy.HTTPOptions{Header: http.Header{"X-Team": {"staff"}}, MaxRetries: -1}), &proxy.Options{
					ProtocolVersion: ue.version,
					NoBreaker:       true,
					Logger:          logger,
					TargetCredentials: func(_ context.Context, c mcpkit.Caller, _ mcpkit.Target) (http.Header, error) {
						if staffCaller(c) {
							return http.Header{"X-Team": {"staff"}}, nil
						}
						return http.Header{"X-Team": {"guest"}}, nil
					},
				})
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "local", Version: "1"}, nil)
				up.AddTo(srv)
				if err := skills.Serve(srv, local, &skills.ServeOptions{Upstreams: []skills.Upstream{up}, PageSize: 2, Logger: logger}); err != nil {
					t.Fatal(err)
				}
				visibility.New(visibility.Disable(func(r *mcpkit.Resource) bool { return strings.HasPrefix(r.URI, "skill://acme/") })).Attach(srv)

				entry := func(s *skills.Set, uri string) skills.Entry {
					k, ok := s.Get(uri)
					if !ok {
						t.Fatalf("no skill %s", uri)
					}
					return k.Entry()
				}
				want := []skills.Entry{
					entry(set, "skill://git-workflow/SKILL.md"),
					entry(local, "skill://local-notes/SKILL.md"),
					entry(set, "skill://pdf-forms/SKILL.md"),
					entry(set, "skill://pdf-forms/fill-form/SKILL.md"),
					entry(local, "skill://tie/SKILL.md"),
				}
				member := era.Connect(t, srv, skillsClientOptions(t, staffCaps)).Session
				entries := listSkills(t, member)
				if !sameEntries(entries, want) {
					t.Fatalf("member's skills/list = %q; want %q, as served", entryURIs(entries), entryURIs(want))
				}
				for _, e := range entries {
					got, err := getSkill(ctx, member, e.URI)
					if err != nil || !sameEntries([]skills.Entry{got.Skill}, []skills.Entry{e}) {
						t.Errorf("member's skills/get %s = %+v, %v", e.URI, got, err)
					}
					readSkill(t, member, e)
				}

				guest := era.Connect(t, srv, skillsClientOptions(t, nil)).Session
				entries = listSkills(t, guest)
				if want := []skills.Entry{want[0], want[1], want[4]}; !sameEntries(entries, want) {
					t.Errorf("guest's skills/list = %q; want %q", entryURIs(entries), entryURIs(want))
				}
				for _, uri := range []string{"skill://pdf-forms/SKILL.md", "skill://pdf-forms/fill-form/SKILL.md", "skill://acme/billing/refunds/SKILL.md"} {
					if _, err := getSkill(ctx, guest, uri); !invalidParams(err) {
						t.Errorf("guest's skills/get %s: %v; want -32602", uri, err)
					}
				}
				if _, err := getSkill(ctx, member, "skill://acme/billing/refunds/SKILL.md"); !invalidParams(err) {
					t.Errorf("member's skills/get of the skill hidden locally: %v; want -32602", err)
				}
				for _, uri := range []string{"skill://pdf-forms/logo.png", "skill://acme/billing/refunds/policy.md"} {
					if _, err := guest.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); !invalidParams(err) {
						t.Errorf("guest's read of %s: %v; want -32602", uri, err)
					}
				}

				down()
				entries = listSkills(t, member)
				if want := []skills.Entry{want[1], want[4]}; !sameEntries(entries, want) {
					t.Errorf("with the upstream down, skills/list = %q; want the local skills %q", entryURIs(entries), entryURIs(want))
				}
				if _, err := getSkill(ctx, member, "skill://git-workflow/SKILL.md"); !invalidParams(err) {
					t.Errorf("with the upstream down, skills/get of its skill: %v; want -32602", err)
				}
				if !strings.Contains(log.String(), "skills are left out") {
					t.Errorf("the upstream's failure was not logged: %s", log.String())
				}
			})
		}
	}
}

// TestSkillFiles: an upstream that declares the Skills extension has its
// resources below the directory of each of its SKILL.md served, listed or
// not, but no URI with a dot segment, a query or nothing after the
// directory; an upstream that does not declare it has none, and is never
// asked for skills/list.
func TestSkillFiles(t *testing.T) {
	_, url, _ := newSkillsUpstream(t, false)
	up := newProxy(t, proxy.HTTP(url, &proxy.HTTPOptions{Header: http.Header{"X-Team": {"staff"}}}), nil)
	ctx := t.Context()
	for uri, served := range map[string]bool{
		"skill://git-workflow/SKILL.md":                         true,
		"skill://git-workflow/references/style.md":              true,
		"skill://pdf-forms/fill-form/steps.txt":                 true,
		"skill://git-workflow/anything/else.txt":                true, // the upstream answers for it
		"skill://git-workflow/":                                 false,
		"skill://git-workflow//x":                               false,
		"skill://git-workflow/../acme/billing/refunds/SKILL.md": false,
		"skill://git-workflow/%2e%2e/acme/x":                    false,
		"skill://git-workflow/a%2F..%2F..%2Facme/x":             false,
		"skill://git-workflow/a%5C..%5Cx":                       false,
		"skill://git-workflow/./style.md":                       false,
		"skill://git-workflow/style.md?x=1":                     false,
		"skill://nope/style.md":                                 false,
		"skill://git-workflowx/style.md":                        false,
	} {
		if r, _ := up.LookupResource(ctx, nil, uri); (r != nil) != served {
			t.Errorf("LookupResource(%q) = %v; want served %v", uri, r, served)
		}
	}
	r1, _ := up.LookupResource(ctx, nil, "skill://git-workflow/references/style.md")
	r2, _ := up.LookupResource(ctx, nil, "skill://git-workflow/references/style.md")
	if r1 != r2 {
		t.Error("two lookups of a skill's file made two resources")
	}

	k := newKindsUpstream(t, false, false)
	if err := k.srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "skill://x/SKILL.md", Name: "x"},
		Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "skill://x/SKILL.md", Text: "x"}}}, nil
		})}); err != nil {
		t.Fatal(err)
	}
	plain := newProxy(t, proxy.HTTP(k.url, nil), nil)
	if r, _ := plain.LookupResource(ctx, nil, "skill://x/SKILL.md"); r == nil {
		t.Fatal("the SKILL.md of an upstream without the extension is not served")
	}
	if r, _ := plain.LookupResource(ctx, nil, "skill://x/notes.txt"); r != nil {
		t.Error("an upstream without the Skills extension has a skill's file served")
	}
	if entries, err := plain.ListSkills(ctx, nil); entries != nil || err != nil || k.count(skills.MethodList) != 0 {
		t.Errorf("ListSkills of an upstream without the extension = %v, %v, with %d skills/list", entries, err, k.count(skills.MethodList))
	}
}
