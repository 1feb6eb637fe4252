package skills

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// Limits the extension sets on one skill, counted over all its files
// (SKILL.md and nested skills' files included). Hosts must accept skills up to
// these limits and need not accept larger ones, so a set refuses them.
const (
	MaxFiles = 512
	MaxBytes = 16 << 20
)

// Options configures [FromFS] and [New]. A nil *Options means the defaults.
type Options struct {
	// Prefix goes before every skill's path in its URIs: with Prefix
	// "acme", the skill in directory refunds is skill://acme/refunds/SKILL.md.
	// It is slash-separated names, encoded in URIs as file names are.
	// Empty means none.
	Prefix string
}

// FromFS loads every skill in fsys: each directory holding a SKILL.md is a
// skill, and every regular file below it, as fsys lists it, is one of its
// files. It works alike on an embed.FS (which leaves out names starting with
// "." or "_" unless embedded with "all:") and on os.DirFS (for a directory on
// disk, os.Root's FS also keeps later reads from following links out of it).
//
// FromFS reads each file of a skill once, to compute its size and SHA-256
// digest, and keeps neither its bytes nor a handle: [File.Open] opens it again.
// A skill's frontmatter is parsed and kept. Files outside any skill are not
// read.
//
// FromFS refuses the whole set, with an error wrapping [ErrInvalidName],
// [ErrFrontmatter], [ErrLimit] or [ErrPath], when any skill breaks a rule: a
// SKILL.md without YAML frontmatter, a name or description that breaks the
// Agent Skills format, a name other than the directory's, more than [MaxFiles]
// files or [MaxBytes] bytes, or a symbolic link or other irregular file
// inside it. A file whose size changes while it is read is refused with
// [ErrChanged]. Names that need it are percent-encoded in URIs.
func FromFS(fsys fs.FS, opts *Options) (*Set, error) {
	if fsys == nil {
		return nil, errors.New("skills: FromFS: nil fs.FS")
	}
	var files []*source
	var bad []*source
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("skills: reading %s: %w", p, err)
		}
		if p != "." && !validName(d.Name()) {
			return fail(ErrPath, "%q is not a file name", clip(d.Name()))
		}
		if !fs.ValidPath(p) {
			return fail(ErrPath, "%q escapes the root", clip(p))
		}
		switch t := d.Type(); {
		case t.IsDir():
			if d.Name() == skillFile {
				bad = append(bad, &source{path: p, problem: "is a directory"})
			}
		case t&fs.ModeSymlink != 0:
			bad = append(bad, &source{path: p, problem: "is a symbolic link"})
		case !t.IsRegular():
			bad = append(bad, &source{path: p, problem: "is not a regular file"})
		default:
			info, err := d.Info()
			if err != nil {
				return fmt.Errorf("skills: reading %s: %w", p, err)
			}
			files = append(files, &source{path: p, size: info.Size(), fsys: fsys})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return load(files, bad, opts)
}

// A Def is a skill defined in Go rather than read from a file system: the
// skill's path and its files' bytes.
type Def struct {
	// Path is the skill's directory, slash-separated: its last segment is the
	// skill's name, and any segments before it are a prefix of the
	// server's choosing ("acme/billing/refunds").
	Path string
	// Files holds the skill's files by their slash-separated path relative
	// to Path. It must hold "SKILL.md"; a "sub/SKILL.md" in it is a
	// nested skill, as in a directory.
	Files map[string][]byte
}

// New returns a set of skills defined in Go. A set from New behaves as one
// from [FromFS] would on a directory holding the same files, and is checked by
// the same rules; it also refuses a Def without a SKILL.md, paths that are not
// clean and relative ("..", a leading slash, empty segments), and two Defs
// that define one file. New copies the bytes.
func New(defs []Def, opts *Options) (*Set, error) {
	var files []*source
	seen := map[string]bool{}
	for _, d := range defs {
		if err := checkPath(d.Path); err != nil {
			return nil, within(fmt.Sprintf("Def %q", clip(d.Path)), err)
		}
		if _, ok := d.Files[skillFile]; !ok {
			return nil, fail(ErrPath, "Def %q has no %s", clip(d.Path), skillFile)
		}
		for _, rel := range slices.Sorted(maps.Keys(d.Files)) {
			if err := checkPath(rel); err != nil {
				return nil, within(fmt.Sprintf("Def %q", clip(d.Path)), err)
			}
			p := d.Path + "/" + rel
			if seen[p] {
				return nil, fail(ErrPath, "two Defs define %s", clip(p))
			}
			seen[p] = true
			data := slices.Clone(d.Files[rel])
			files = append(files, &source{path: p, size: int64(len(data)), data: data})
		}
	}
	return load(files, nil, opts)
}

// checkPath checks a slash-separated relative path from a Def.
func checkPath(p string) error {
	if p == "." || !fs.ValidPath(p) {
		return fail(ErrPath, "%q is not a clean relative path", clip(p))
	}
	for seg := range strings.SplitSeq(p, "/") {
		if !validName(seg) {
			return fail(ErrPath, "%q is not a file name", clip(seg))
		}
	}
	return nil
}

// validName reports whether name can be one segment of a path: not empty,
// not "." or "..", without a slash or a NUL.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// A source is a file found by FromFS or given to New, before it is read.
type source struct {
	path    string // below the set's root
	size    int64  // as listed; the read is what counts
	fsys    fs.FS  // the file system it is in, or
	data    []byte // its bytes
	problem string // why it cannot be served, for an irregular entry

	file *file        // once read
	fm   *frontmatter // once read, for a SKILL.md
}

func (s *source) open() (io.ReadCloser, error) {
	if s.fsys == nil {
		return io.NopCloser(bytes.NewReader(s.data)), nil
	}
	return s.fsys.Open(s.path)
}

// load groups files into skills, checks them and builds the set.
func load(files, bad []*source, opts *Options) (*Set, error) {
	var prefix string
	if opts != nil && opts.Prefix != "" {
		if err := checkPath(opts.Prefix); err != nil {
			return nil, within("Options.Prefix", err)
		}
		prefix = opts.Prefix
	}

	// Every directory holding an entry named SKILL.md is a skill; an
	// irregular SKILL.md makes one too, so that it is refused below.
	dirs := map[string][]*source{}
	for _, s := range slices.Concat(files, bad) {
		if path.Base(s.path) == skillFile {
			dir := path.Dir(s.path)
			if dir == "." {
				return nil, fail(ErrPath, "%s is at the root; a skill is a directory named after it", skillFile)
			}
			dirs[dir] = nil
		}
	}
	for _, s := range bad {
		if dir, ok := enclosing(dirs, s.path); ok {
			return nil, fail(ErrPath, "%s in skill %s %s", clip(s.path), clip(dir), s.problem)
		}
	}
	for _, s := range files {
		for dir := path.Dir(s.path); dir != "."; dir = path.Dir(dir) {
			if members, ok := dirs[dir]; ok {
				dirs[dir] = append(members, s)
			}
		}
	}

	// Limits first, on the listed sizes, so nothing is read for a skill
	// that will be refused.
	order := slices.Sorted(maps.Keys(dirs))
	for _, dir := range order {
		members := dirs[dir]
		if len(members) > MaxFiles {
			return nil, fail(ErrLimit, "skill %s has %d files; at most %d are allowed", clip(dir), len(members), MaxFiles)
		}
		var total int64
		for _, s := range members {
			total += s.size
		}
		if total > MaxBytes {
			return nil, fail(ErrLimit, "skill %s has %d bytes; at most %d are allowed", clip(dir), total, MaxBytes)
		}
	}

	set := &Set{byURI: map[string]*Skill{}, files: map[string]*file{}}
	for _, dir := range order {
		k, err := set.skill(dir, dirs[dir], prefix)
		if err != nil {
			return nil, err
		}
		set.skills = append(set.skills, k)
		set.byURI[k.uri] = k
	}
	slices.SortFunc(set.skills, func(a, b *Skill) int { return strings.Compare(a.uri, b.uri) })
	return set, nil
}

// enclosing returns the innermost skill directory that p is in.
func enclosing(dirs map[string][]*source, p string) (string, bool) {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if _, ok := dirs[dir]; ok {
			return dir, true
		}
	}
	return "", false
}

// skill builds the skill in dir, reading those of its files that no other
// skill has read yet.
func (set *Set) skill(dir string, members []*source, prefix string) (*Skill, error) {
	var manifest *source
	for _, s := range members {
		if s.file == nil {
			if err := read(s, prefix); err != nil {
				return nil, err
			}
			set.files[s.file.uri] = s.file
		}
		if s.path == dir+"/"+skillFile {
			manifest = s
		}
	}
	fm := manifest.fm
	if base := path.Base(dir); fm.name != base {
		return nil, fail(ErrInvalidName, "skill %s is named %q in its frontmatter; the name must be the directory's, %q", clip(dir), clip(fm.name), clip(base))
	}

	k := &Skill{
		name:        fm.name,
		description: fm.description,
		uri:         manifest.file.uri,
		frontmatter: fm.json,
	}
	for _, s := range members {
		k.files = append(k.files, s.file)
	}
	slices.SortFunc(k.files, func(a, b *file) int {
		switch {
		case a == manifest.file:
			return -1
		case b == manifest.file:
			return 1
		}
		return strings.Compare(a.uri, b.uri)
	})
	return k, nil
}

// read reads s once, computing its size and digest, and parses its
// frontmatter if it is a SKILL.md. It reads at most MaxBytes+1 bytes: a file
// that grew past the limit since it was listed is refused without reading the
// rest.
func read(s *source, prefix string) error {
	f := &file{path: s.path, uri: uriOf(prefix, s.path), mimeType: mimeTypeOf(s.path)}
	r, err := s.open()
	if err != nil {
		return fmt.Errorf("skills: reading %s: %w", s.path, err)
	}
	defer r.Close()
	h := sha256.New()
	var w io.Writer = h
	var keep bytes.Buffer
	isManifest := path.Base(s.path) == skillFile
	if isManifest {
		w = io.MultiWriter(h, &keep)
	}
	n, err := io.Copy(w, io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return fmt.Errorf("skills: reading %s: %w", s.path, err)
	}
	if n > MaxBytes {
		return fail(ErrLimit, "%s has more than %d bytes", clip(s.path), MaxBytes)
	}
	if n != s.size && s.fsys != nil {
		return fail(ErrChanged, "%s was listed with %d bytes and read with %d", clip(s.path), s.size, n)
	}
	if isManifest {
		if s.fm, err = parseFrontmatter(keep.Bytes()); err != nil {
			return within("skill "+clip(path.Dir(s.path)), err)
		}
	}
	f.size = n
	h.Sum(f.digest[:0])
	if s.fsys != nil {
		fsys, p := s.fsys, s.path
		f.openFS = func() (io.ReadCloser, error) { return fsys.Open(p) }
	} else {
		f.data = s.data
	}
	s.file = f
	return nil
}
