package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/skills"
)

// keys returns the member names of a JSON object, sorted.
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The field names are the extension's schema: ListSkillsResult {skills,
// nextCursor, resultType, ttlMs, cacheScope}, GetSkillResult {skill, ...},
// Skill {uri, frontmatter, resources}, SkillResource {uri, digest, size}.
func TestWireFieldNames(t *testing.T) {
	set := mustLoad(t, os.DirFS("testdata/skills"), nil)
	k, _ := set.Get("skill://git-workflow/SKILL.md")

	list, err := json.Marshal(&skills.ListResult{Skills: []skills.Entry{k.Entry()}, NextCursor: "c", Cacheable: mcp.Cacheable{TTLMs: 300000}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(t, list), []string{"cacheScope", "nextCursor", "resultType", "skills", "ttlMs"}; !slices.Equal(got, want) {
		t.Errorf("ListResult members %q, want %q", got, want)
	}
	var l struct {
		ResultType string            `json:"resultType"`
		TTLMs      int               `json:"ttlMs"`
		CacheScope string            `json:"cacheScope"`
		Skills     []json.RawMessage `json:"skills"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		t.Fatal(err)
	}
	// resultType MUST be "complete"; ttlMs and cacheScope are REQUIRED.
	if l.ResultType != "complete" || l.TTLMs != 300000 || l.CacheScope != "public" {
		t.Errorf("resultType, ttlMs, cacheScope = %q, %d, %q", l.ResultType, l.TTLMs, l.CacheScope)
	}
	if got, want := keys(t, l.Skills[0]), []string{"frontmatter", "resources", "uri"}; !slices.Equal(got, want) {
		t.Errorf("entry members %q, want %q", got, want)
	}
	var e struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(l.Skills[0], &e); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(t, e.Resources[0]), []string{"digest", "size", "uri"}; !slices.Equal(got, want) {
		t.Errorf("resource members %q, want %q", got, want)
	}

	get, err := json.Marshal(skills.GetResult{Skill: k.Entry(), Cacheable: mcp.Cacheable{CacheScope: "private"}})
	if err != nil {
		t.Fatal(err)
	}
	// No cursor on skills/get.
	if got, want := keys(t, get), []string{"cacheScope", "resultType", "skill", "ttlMs"}; !slices.Equal(got, want) {
		t.Errorf("GetResult members %q, want %q", got, want)
	}
	var g skills.GetResult
	if err := json.Unmarshal(get, &g); err != nil {
		t.Fatal(err)
	}
	if g.ResultType != "complete" || g.CacheScope != "private" || !reflect.DeepEqual(g.Skill, k.Entry()) {
		t.Errorf("GetResult round trip: %+v", g)
	}

	// An empty page is an empty array, not null.
	empty, _ := json.Marshal(skills.ListResult{})
	if want := `{"resultType":"complete","ttlMs":0,"cacheScope":"public","skills":[]}`; string(empty) != want {
		t.Errorf("empty ListResult = %s, want %s", empty, want)
	}
}

// resources is an array of files or the string "dynamic"; any other value
// makes the entry invalid.
func TestManifestJSON(t *testing.T) {
	for _, tc := range []struct {
		m    skills.Manifest
		want string
	}{
		{skills.Manifest{Dynamic: true}, `"dynamic"`},
		{skills.Manifest{}, `[]`},
		{skills.Manifest{Files: []skills.Resource{{URI: "skill://a/SKILL.md", Digest: "sha256:00", Size: 1}}}, `[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":1}]`},
	} {
		b, err := json.Marshal(tc.m)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.m, b, err, tc.want)
		}
		var back skills.Manifest
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("Unmarshal(%s): %v", b, err)
		}
		if back.Dynamic != tc.m.Dynamic || len(back.Files) != len(tc.m.Files) {
			t.Errorf("round trip of %s = %+v", b, back)
		}
	}
	for _, bad := range []string{`"static"`, `null`, `{}`, `1`, `[1]`} {
		var m skills.Manifest
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", bad, m)
		}
	}
}

// The wire types plug into the SDK's custom methods as they are: a server
// answers skills/list and skills/get from a Set, and an SDK client reads the
// entries back, equal to the set's.
func TestWireThroughSDK(t *testing.T) {
	ctx := context.Background()
	set := mustLoad(t, embeddedSkills(t), nil)

	srv := mcp.NewServer(&mcp.Implementation{Name: "skills", Version: "1"}, nil)
	err := mcp.AddReceivingCustomMethod(srv, skills.MethodList, func(ctx context.Context, _ *mcp.ServerSession, p *skills.ListParams) (*skills.ListResult, error) {
		res := &skills.ListResult{Cacheable: mcp.Cacheable{TTLMs: 60000}}
		for _, k := range set.Skills() {
			res.Skills = append(res.Skills, k.Entry())
		}
		return res, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = mcp.AddReceivingCustomMethod(srv, skills.MethodGet, func(ctx context.Context, _ *mcp.ServerSession, p *skills.GetParams) (*skills.GetResult, error) {
		k, ok := set.Get(p.URI)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "No skill is served at " + p.URI}
		}
		return &skills.GetResult{Skill: k.Entry()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*skills.ListParams, *skills.ListResult](client, skills.MethodList); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skills.GetParams, *skills.GetResult](client, skills.MethodGet); err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	list, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](ctx, cs, skills.MethodList, &skills.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if list.ResultType != "complete" || list.TTLMs != 60000 || list.CacheScope != "public" || len(list.Skills) != len(wantURIs) {
		t.Fatalf("skills/list = %+v", list)
	}
	for i, k := range set.Skills() {
		if !reflect.DeepEqual(list.Skills[i], k.Entry()) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, list.Skills[i], k.Entry())
		}
	}
	got, err := mcp.CallCustomMethod[*skills.GetParams, *skills.GetResult](ctx, cs, skills.MethodGet, &skills.GetParams{URI: "skill://pdf-forms/SKILL.md"})
	if err != nil || got.Skill.URI != "skill://pdf-forms/SKILL.md" || len(got.Skill.Resources.Files) != 4 {
		t.Errorf("skills/get = %+v, %v", got, err)
	}
	// The extension: skills/get on a URI not served is -32602.
	_, err = mcp.CallCustomMethod[*skills.GetParams, *skills.GetResult](ctx, cs, skills.MethodGet, &skills.GetParams{URI: "skill://nope/SKILL.md"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("skills/get of an unknown skill: %v, want -32602", err)
	}
}

func TestEntryMapURIs(t *testing.T) {
	set := mustLoad(t, embeddedSkills(t), nil)
	k, _ := set.Get("skill://git-workflow/SKILL.md")
	e := k.Entry()
	mounted := e.MapURIs(func(uri string) string { return "skill://child/" + uri[len("skill://"):] })
	if mounted.URI != "skill://child/git-workflow/SKILL.md" || mounted.Resources.Files[1].URI != "skill://child/git-workflow/references/style.md" {
		t.Errorf("MapURIs = %+v", mounted)
	}
	if e.URI != k.URI() || e.Resources.Files[1].URI != "skill://git-workflow/references/style.md" {
		t.Errorf("MapURIs changed its receiver: %+v", e)
	}
	if d := (skills.Entry{Resources: skills.Manifest{Dynamic: true}}).MapURIs(func(s string) string { return s }); !d.Resources.Dynamic {
		t.Error("MapURIs lost Dynamic")
	}
}
