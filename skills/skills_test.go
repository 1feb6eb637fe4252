package skills_test

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/skills"
)

//go:embed testdata/skills
var embedded embed.FS

func embeddedSkills(t testing.TB) fs.FS {
	t.Helper()
	sub, err := fs.Sub(embedded, "testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func mustLoad(t testing.TB, fsys fs.FS, opts *skills.Options) *skills.Set {
	t.Helper()
	set, err := skills.FromFS(fsys, opts)
	if err != nil {
		t.Fatalf("FromFS: %v", err)
	}
	return set
}

// entries returns the JSON of every entry of set, in order.
func entries(t *testing.T, set *skills.Set) string {
	t.Helper()
	var out []skills.Entry
	for _, k := range set.Skills() {
		out = append(out, k.Entry())
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func uris(set *skills.Set) []string {
	var out []string
	for _, k := range set.Skills() {
		out = append(out, k.URI())
	}
	return out
}

var wantURIs = []string{
	"skill://acme/billing/refunds/SKILL.md",
	"skill://git-workflow/SKILL.md",
	"skill://pdf-forms/SKILL.md",
	"skill://pdf-forms/fill-form/SKILL.md",
}

func TestFromFSDiskAndEmbedAgree(t *testing.T) {
	disk := mustLoad(t, os.DirFS("testdata/skills"), nil)
	emb := mustLoad(t, embeddedSkills(t), nil)

	if got := uris(disk); !slices.Equal(got, wantURIs) {
		t.Errorf("skills from disk = %q, want %q", got, wantURIs)
	}
	if d, e := entries(t, disk), entries(t, emb); d != e {
		t.Errorf("entries differ:\ndisk:  %s\nembed: %s", d, e)
	}
	for _, k := range disk.Skills() {
		for _, f := range k.Files() {
			g, ok := emb.Lookup(f.URI)
			if !ok {
				t.Errorf("embed set has no %s", f.URI)
				continue
			}
			if g.MIMEType != f.MIMEType || g.Size != f.Size || g.Digest != f.Digest {
				t.Errorf("%s: embed %+v, disk %+v", f.URI, g, f)
			}
		}
	}
}

// The extension: each digest is "sha256:" and the lowercase hex SHA-256 of
// the file's raw bytes, and size counts those same bytes.
func TestDigestsAreSHA256OfTheBytes(t *testing.T) {
	set := mustLoad(t, os.DirFS("testdata/skills"), nil)
	format := regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	n := 0
	for _, k := range set.Skills() {
		for _, f := range k.Files() {
			n++
			rel := strings.TrimPrefix(f.URI, "skill://")
			rel = strings.ReplaceAll(rel, "%20", " ")
			raw, err := os.ReadFile(filepath.Join("testdata/skills", filepath.FromSlash(rel)))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(raw)
			if want := "sha256:" + hex.EncodeToString(sum[:]); f.Digest != want {
				t.Errorf("%s: digest %s, want %s", f.URI, f.Digest, want)
			}
			if !format.MatchString(f.Digest) {
				t.Errorf("%s: digest %q is not sha256:<64 lowercase hex>", f.URI, f.Digest)
			}
			if f.Size != int64(len(raw)) {
				t.Errorf("%s: size %d, want %d", f.URI, f.Size, len(raw))
			}
			got, err := f.ReadAll()
			if err != nil || string(got) != string(raw) {
				t.Errorf("%s: ReadAll = %q, %v; want the file's bytes", f.URI, got, err)
			}
		}
	}
	if n != 11 {
		t.Errorf("checked %d files, want 11 (nested skills' files counted in both)", n)
	}
}

// The extension: the frontmatter in an entry is the SKILL.md's frontmatter
// verbatim, every field the author wrote; and the entry's resources list
// every file of the skill once, SKILL.md included.
func TestEntry(t *testing.T) {
	set := mustLoad(t, os.DirFS("testdata/skills"), nil)
	k, ok := set.Get("skill://acme/billing/refunds/SKILL.md")
	if !ok {
		t.Fatal("Get: no refunds skill")
	}
	if k.Name() != "refunds" || k.Description() != "Process a customer's refund request: check eligibility, then answer." {
		t.Errorf("Name, Description = %q, %q", k.Name(), k.Description())
	}
	// Key order as written; the unquoted date stays the text written (JSON
	// has no date), the number is a number.
	const wantFM = `{"name":"refunds","description":"Process a customer's refund request: check eligibility, then answer.","compatibility":"Needs the billing tools of this server.","reviewed":"2026-09-13","max-amount":500}`
	if got := string(k.Frontmatter()); got != wantFM {
		t.Errorf("frontmatter:\n got %s\nwant %s", got, wantFM)
	}
	e := k.Entry()
	var got []string
	for _, r := range e.Resources.Files {
		got = append(got, r.URI)
	}
	want := []string{
		"skill://acme/billing/refunds/SKILL.md",
		"skill://acme/billing/refunds/examples/email.md",
		"skill://acme/billing/refunds/notes/read%20me.txt",
	}
	if !slices.Equal(got, want) {
		t.Errorf("resources = %q, want %q", got, want)
	}

	// A nested skill's files are files of the skill around it too.
	outer, _ := set.Get("skill://pdf-forms/SKILL.md")
	got = nil
	for _, f := range outer.Files() {
		got = append(got, f.URI)
	}
	want = []string{
		"skill://pdf-forms/SKILL.md",
		"skill://pdf-forms/fill-form/SKILL.md",
		"skill://pdf-forms/fill-form/templates/fields.json",
		"skill://pdf-forms/scripts/fields.py",
	}
	if !slices.Equal(got, want) {
		t.Errorf("pdf-forms files = %q, want %q", got, want)
	}
	inner, ok := set.Get("skill://pdf-forms/fill-form/SKILL.md")
	if !ok || inner.Name() != "fill-form" || len(inner.Files()) != 2 {
		t.Errorf("nested skill: %v, %v", inner, ok)
	}

	// Changing the returned entry does not change the set.
	e.Frontmatter[0] = 'x'
	e.Resources.Files[0].URI = "x"
	if string(k.Frontmatter()) != wantFM || k.Entry().Resources.Files[0].URI != want0(k) {
		t.Error("an Entry shares memory with the set")
	}
}

func want0(k *skills.Skill) string { return k.URI() }

func TestLookup(t *testing.T) {
	set := mustLoad(t, os.DirFS("testdata/skills"), nil)
	for _, tc := range []struct {
		uri, mime string
	}{
		{"skill://git-workflow/SKILL.md", "text/markdown"},
		{"skill://git-workflow/references/style.md", "text/markdown"},
		{"skill://pdf-forms/scripts/fields.py", "text/x-python"},
		{"skill://pdf-forms/fill-form/templates/fields.json", "application/json"},
		{"skill://acme/billing/refunds/notes/read%20me.txt", "text/plain"},
		// Decoded and re-encoded: the unencoded and lowercase forms name
		// the same file.
		{"skill://acme/billing/refunds/notes/read me.txt", "text/plain"},
		{"skill://git-workflow/%53KILL.md", "text/markdown"},
	} {
		f, ok := set.Lookup(tc.uri)
		if !ok {
			t.Errorf("Lookup(%q): not found", tc.uri)
			continue
		}
		if f.MIMEType != tc.mime {
			t.Errorf("Lookup(%q).MIMEType = %q, want %q", tc.uri, f.MIMEType, tc.mime)
		}
		if _, err := f.ReadAll(); err != nil {
			t.Errorf("Lookup(%q).ReadAll: %v", tc.uri, err)
		}
	}
	for _, uri := range []string{
		"",
		"skill://",
		"skill://git-workflow",
		"skill://git-workflow/",
		"skill://git-workflow/missing.md",
		"skill://git-workflow/references/../SKILL.md",
		"skill://git-workflow/references%2Fstyle.md",
		"skill://git-workflow/%zz",
		"file://git-workflow/SKILL.md",
		"skill://acme/SKILL.md",
	} {
		if f, ok := set.Lookup(uri); ok {
			t.Errorf("Lookup(%q) = %+v, want not found", uri, f)
		}
	}
	// Get answers only for a skill's SKILL.md.
	for _, uri := range []string{
		"skill://git-workflow/references/style.md",
		"skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md",
		"skill://git-workflow",
	} {
		if _, ok := set.Get(uri); ok {
			t.Errorf("Get(%q) found a skill", uri)
		}
	}
}

func TestResources(t *testing.T) {
	set := mustLoad(t, os.DirFS("testdata/skills"), nil)
	k, _ := set.Get("skill://git-workflow/SKILL.md")
	r := k.Resource()
	// The extension: SKILL.md's resource is text/markdown, named and
	// described from the frontmatter.
	if r.URI != k.URI() || r.Name != "git-workflow" || r.Description != k.Description() || r.MIMEType != "text/markdown" || r.Size != k.Files()[0].Size {
		t.Errorf("Skill.Resource() = %+v", r)
	}
	f, _ := set.Lookup("skill://acme/billing/refunds/notes/read%20me.txt")
	if r := f.Resource(); r.Name != "read me.txt" || r.URI != f.URI || r.MIMEType != "text/plain" || r.Size != f.Size {
		t.Errorf("File.Resource() = %+v", r)
	}
}

func TestPrefix(t *testing.T) {
	set := mustLoad(t, os.DirFS("testdata/skills"), &skills.Options{Prefix: "mounted/team"})
	k, ok := set.Get("skill://mounted/team/git-workflow/SKILL.md")
	if !ok {
		t.Fatalf("no prefixed skill; have %q", uris(set))
	}
	for _, f := range k.Files() {
		if !strings.HasPrefix(f.URI, "skill://mounted/team/git-workflow/") {
			t.Errorf("file URI %s lacks the prefix", f.URI)
		}
	}
	if _, ok := set.Get("skill://git-workflow/SKILL.md"); ok {
		t.Error("the unprefixed URI still answers")
	}
	// The name stays the last segment: the prefix only adds segments before.
	if k.Name() != "git-workflow" {
		t.Errorf("Name() = %q", k.Name())
	}
	for _, bad := range []string{"../x", "/abs", "a//b", "a/", "."} {
		if _, err := skills.FromFS(os.DirFS("testdata/skills"), &skills.Options{Prefix: bad}); !errors.Is(err, skills.ErrPath) {
			t.Errorf("Prefix %q: err = %v, want ErrPath", bad, err)
		}
	}
}

// A first segment (the URI's authority) has ':' and '@' encoded, later
// segments keep them, and other characters are encoded in all.
func TestURIEncoding(t *testing.T) {
	fsys := fstest.MapFS{
		"a:b@c/x/SKILL.md":  {Data: []byte("---\nname: x\ndescription: d\n---\n")},
		"a:b@c/x/é q:@#.md": {Data: []byte("e")},
	}
	set := mustLoad(t, fsys, nil)
	want := []string{"skill://a%3Ab%40c/x/SKILL.md", "skill://a%3Ab%40c/x/%C3%A9%20q:@%23.md"}
	var got []string
	for _, f := range set.Skills()[0].Files() {
		got = append(got, f.URI)
	}
	if !slices.Equal(got, want) {
		t.Errorf("URIs = %q, want %q", got, want)
	}
}

const minimal = "---\nname: %s\ndescription: d\n---\n"

func skillMD(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(strings.Replace(minimal, "%s", name, 1))}
}

func TestRefusals(t *testing.T) {
	many := fstest.MapFS{"big/SKILL.md": skillMD("big")}
	for i := range skills.MaxFiles {
		many[path.Join("big", "f", strings.Repeat("x", 1+i/26)+string(rune('a'+i%26)))] = &fstest.MapFile{}
	}
	large := fstest.MapFS{
		"big/SKILL.md": skillMD("big"),
		"big/a.bin":    {Data: make([]byte, skills.MaxBytes/2)},
		"big/b.bin":    {Data: make([]byte, skills.MaxBytes/2)},
	}
	for _, tc := range []struct {
		name string
		fsys fs.FS
		want error
	}{
		// Agent Skills: the name is 1-64 lowercase letters, digits and
		// hyphens, and must be the skill's directory name.
		{"uppercase name", fstest.MapFS{"Pdf/SKILL.md": skillMD("Pdf")}, skills.ErrInvalidName},
		{"name not the directory", fstest.MapFS{"pdf/SKILL.md": skillMD("docs")}, skills.ErrInvalidName},
		{"name with double hyphen", fstest.MapFS{"a--b/SKILL.md": skillMD("a--b")}, skills.ErrInvalidName},
		{"name too long", fstest.MapFS{strings.Repeat("a", 65) + "/SKILL.md": skillMD(strings.Repeat("a", 65))}, skills.ErrInvalidName},
		{"no name", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\ndescription: d\n---\n")}}, skills.ErrInvalidName},
		{"name not a string", fstest.MapFS{"1/SKILL.md": {Data: []byte("---\nname: 1\ndescription: d\n---\n")}}, skills.ErrInvalidName},
		// SKILL.md must begin with frontmatter holding name and description.
		{"missing description", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\n---\n")}}, skills.ErrFrontmatter},
		{"empty description", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: ''\n---\n")}}, skills.ErrFrontmatter},
		{"no frontmatter", fstest.MapFS{"a/SKILL.md": {Data: []byte("# a\n")}}, skills.ErrFrontmatter},
		{"unclosed frontmatter", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: d\n")}}, skills.ErrFrontmatter},
		{"bad nested skill", fstest.MapFS{"a/SKILL.md": skillMD("a"), "a/b/SKILL.md": skillMD("c")}, skills.ErrInvalidName},
		// The extension's limits: 512 entries and 16 MiB per skill.
		{"too many files", many, skills.ErrLimit},
		{"too large", large, skills.ErrLimit},
		// Paths.
		{"SKILL.md at the root", fstest.MapFS{"SKILL.md": skillMD("x")}, skills.ErrPath},
		{"SKILL.md a directory", fstest.MapFS{"a/SKILL.md/x": {}}, skills.ErrPath},
		{"entry named ..", dotdotFS{fstest.MapFS{"a/SKILL.md": skillMD("a")}}, skills.ErrPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := skills.FromFS(tc.fsys, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("FromFS = %v, %v; want an error wrapping %v", set, err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long: %.100s...", len(err.Error()), err)
			}
		})
	}
}

// The limits are inclusive: exactly 512 files and exactly 16 MiB load.
func TestLimitsInclusive(t *testing.T) {
	md := skillMD("big")
	fsys := fstest.MapFS{
		"big/SKILL.md": md,
		"big/a.bin":    {Data: make([]byte, skills.MaxBytes-len(md.Data))},
	}
	for i := range skills.MaxFiles - 2 {
		fsys[path.Join("big", "f", strings.Repeat("x", 1+i/26)+string(rune('a'+i%26)))] = &fstest.MapFile{}
	}
	set := mustLoad(t, fsys, nil)
	if n := len(set.Skills()[0].Files()); n != skills.MaxFiles {
		t.Errorf("%d files, want %d", n, skills.MaxFiles)
	}
}

// dotdotFS lists an extra entry named ".." in every directory, as a broken or
// hostile fs.FS might.
type dotdotFS struct{ fstest.MapFS }

func (d dotdotFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := d.MapFS.ReadDir(name)
	if err != nil {
		return nil, err
	}
	return append(es, fs.FileInfoToDirEntry(dotdotInfo{})), nil
}

type dotdotInfo struct{ fs.FileInfo }

func (dotdotInfo) Name() string      { return ".." }
func (dotdotInfo) IsDir() bool       { return false }
func (dotdotInfo) Mode() fs.FileMode { return 0 }
func (dotdotInfo) Size() int64       { return 0 }

func TestSymlinksRefused(t *testing.T) {
	for _, tc := range []struct{ name, link string }{
		{"file", "a/outside.md"},
		{"SKILL.md", "b/SKILL.md"},
		{"directory", "a/refs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a/SKILL.md", strings.Replace(minimal, "%s", "a", 1))
			write(t, dir, "b/x.md", "x")
			write(t, dir, "secret.md", "secret")
			if err := os.Symlink(filepath.Join(dir, "secret.md"), filepath.Join(dir, filepath.FromSlash(tc.link))); err != nil {
				t.Skip("no symlinks here:", err)
			}
			if _, err := skills.FromFS(os.DirFS(dir), nil); !errors.Is(err, skills.ErrPath) {
				t.Errorf("FromFS = %v, want ErrPath", err)
			}
		})
	}
	// A link outside every skill is not read, and not refused.
	dir := t.TempDir()
	write(t, dir, "a/SKILL.md", strings.Replace(minimal, "%s", "a", 1))
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Skip(err)
	}
	if _, err := skills.FromFS(os.DirFS(dir), nil); err != nil {
		t.Errorf("a link outside every skill: %v", err)
	}
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file changed on disk after loading is not served as the published one.
func TestChangedFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/SKILL.md", strings.Replace(minimal, "%s", "a", 1))
	write(t, dir, "a/same.md", "1234")
	write(t, dir, "a/grown.md", "1234")
	write(t, dir, "a/shrunk.md", "1234")
	set := mustLoad(t, os.DirFS(dir), nil)
	write(t, dir, "a/same.md", "abcd")
	write(t, dir, "a/grown.md", "12345")
	write(t, dir, "a/shrunk.md", "123")
	for _, name := range []string{"same.md", "grown.md", "shrunk.md"} {
		f, _ := set.Lookup("skill://a/" + name)
		if data, err := f.ReadAll(); !errors.Is(err, skills.ErrChanged) {
			t.Errorf("%s: ReadAll = %q, %v; want ErrChanged", name, data, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "a", "same.md")); err != nil {
		t.Fatal(err)
	}
	f, _ := set.Lookup("skill://a/same.md")
	if _, err := f.ReadAll(); err == nil {
		t.Error("ReadAll of a removed file succeeded")
	}
}

// defsOf reads a directory into Defs, one per skill at its top.
func defsOf(t *testing.T, root string, top ...string) []skills.Def {
	var defs []skills.Def
	for _, dir := range top {
		d := skills.Def{Path: dir, Files: map[string][]byte{}}
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(filepath.Join(root, dir), p)
			d.Files[filepath.ToSlash(rel)] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	return defs
}

func TestNewMatchesFromFS(t *testing.T) {
	defs := defsOf(t, "testdata/skills", "git-workflow", "acme/billing/refunds", "pdf-forms")
	set, err := skills.New(defs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := entries(t, set), entries(t, mustLoad(t, os.DirFS("testdata/skills"), nil)); got != want {
		t.Errorf("New and FromFS differ:\nNew:    %s\nFromFS: %s", got, want)
	}
	// New copied the bytes: changing the caller's slice changes nothing.
	before, _ := set.Lookup("skill://git-workflow/references/style.md")
	defs[0].Files["references/style.md"][0] ^= 1
	data, err := before.ReadAll()
	if err != nil || sha(data) != before.Digest {
		t.Errorf("after the caller's change: %q, %v", data, err)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestNewRefusals(t *testing.T) {
	md := []byte(strings.Replace(minimal, "%s", "a", 1))
	for _, tc := range []struct {
		name string
		defs []skills.Def
		want error
	}{
		{"file path with ..", []skills.Def{{Path: "a", Files: map[string][]byte{"SKILL.md": md, "../b/x": nil}}}, skills.ErrPath},
		{"skill path with ..", []skills.Def{{Path: "x/../a", Files: map[string][]byte{"SKILL.md": md}}}, skills.ErrPath},
		{"absolute file path", []skills.Def{{Path: "a", Files: map[string][]byte{"SKILL.md": md, "/etc/passwd": nil}}}, skills.ErrPath},
		{"empty segment", []skills.Def{{Path: "a", Files: map[string][]byte{"SKILL.md": md, "r//x": nil}}}, skills.ErrPath},
		{"no SKILL.md", []skills.Def{{Path: "a", Files: map[string][]byte{"x.md": nil}}}, skills.ErrPath},
		{"one file twice", []skills.Def{
			{Path: "a", Files: map[string][]byte{"SKILL.md": md, "b/SKILL.md": []byte(strings.Replace(minimal, "%s", "b", 1))}},
			{Path: "a/b", Files: map[string][]byte{"SKILL.md": []byte(strings.Replace(minimal, "%s", "b", 1))}},
		}, skills.ErrPath},
		{"name not the path", []skills.Def{{Path: "b", Files: map[string][]byte{"SKILL.md": md}}}, skills.ErrInvalidName},
		{"too large", []skills.Def{{Path: "a", Files: map[string][]byte{"SKILL.md": md, "x": make([]byte, skills.MaxBytes)}}}, skills.ErrLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := skills.New(tc.defs, nil); !errors.Is(err, tc.want) {
				t.Errorf("New = %v, want %v", err, tc.want)
			}
		})
	}
	// Nested Defs that do not overlap are one nested skill.
	set, err := skills.New([]skills.Def{
		{Path: "a", Files: map[string][]byte{"SKILL.md": md}},
		{Path: "a/b", Files: map[string][]byte{"SKILL.md": []byte(strings.Replace(minimal, "%s", "b", 1)), "x.txt": []byte("x")}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := set.Get("skill://a/SKILL.md"); len(a.Files()) != 3 {
		t.Errorf("outer skill has %d files, want 3", len(a.Files()))
	}
}

// A Set is read by many requests at once.
func TestConcurrentReads(t *testing.T) {
	set := mustLoad(t, embeddedSkills(t), nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, k := range set.Skills() {
				_ = k.Entry()
				for _, f := range k.Files() {
					g, ok := set.Lookup(f.URI)
					if !ok {
						t.Errorf("Lookup(%s) failed", f.URI)
						return
					}
					if _, err := g.ReadAll(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestFromFSNil(t *testing.T) {
	if _, err := skills.FromFS(nil, nil); err == nil {
		t.Error("FromFS(nil) succeeded")
	}
	set, err := skills.FromFS(fstest.MapFS{"README.md": {Data: []byte("no skills")}}, nil)
	if err != nil || len(set.Skills()) != 0 {
		t.Errorf("FromFS of a tree without skills = %v, %v; want an empty set", set, err)
	}
	if _, ok := set.Lookup("skill://README.md"); ok {
		t.Error("a file outside every skill is served")
	}
}
