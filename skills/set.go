package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"path"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Set is the skills loaded by [FromFS] or [New]: their entries for
// skills/list and skills/get, and their files for resources/read. A Set is
// immutable and safe for concurrent use.
type Set struct {
	skills []*Skill          // by path
	byURI  map[string]*Skill // by the URI of the skill's SKILL.md
	files  map[string]*file  // by URI
}

// Skills returns the set's skills, ordered by URI.
func (s *Set) Skills() []*Skill {
	return slices.Clone(s.skills)
}

// Get returns the skill whose SKILL.md is at uri, as skills/get names it. It
// reports false for any other URI, which skills/get answers with -32602.
func (s *Set) Get(uri string) (*Skill, bool) {
	if k, ok := s.byURI[uri]; ok {
		return k, true
	}
	if c, ok := canonicalURI(uri); ok {
		k, ok := s.byURI[c]
		return k, ok
	}
	return nil, false
}

// Lookup returns the file at uri, for resources/read: a SKILL.md or any other
// file of a skill. URIs are matched after percent-decoding, so a client that
// encodes a segment differently finds the same file. It reports false for a
// URI the set does not serve.
func (s *Set) Lookup(uri string) (File, bool) {
	f, ok := s.files[uri]
	if !ok {
		var c string
		if c, ok = canonicalURI(uri); ok {
			f, ok = s.files[c]
		}
	}
	if !ok {
		return File{}, false
	}
	return f.public(), true
}

// A Skill is one skill of a [Set]: a directory holding a SKILL.md, with every
// file below it (nested skills' files included, as the extension requires).
type Skill struct {
	name, description string
	uri               string
	frontmatter       json.RawMessage
	files             []*file // SKILL.md first, then by URI
}

// Name returns the skill's name, from its frontmatter; it is also the last
// segment of its path.
func (k *Skill) Name() string { return k.name }

// Description returns the description from the skill's frontmatter.
func (k *Skill) Description() string { return k.description }

// URI returns the URI of the skill's SKILL.md, which identifies the skill.
func (k *Skill) URI() string { return k.uri }

// Frontmatter returns the frontmatter of the skill's SKILL.md as a JSON
// object, every field the author wrote in the order written.
func (k *Skill) Frontmatter() json.RawMessage { return slices.Clone(k.frontmatter) }

// Files returns the skill's files, its SKILL.md first, then by URI.
func (k *Skill) Files() []File {
	out := make([]File, len(k.files))
	for i, f := range k.files {
		out[i] = f.public()
	}
	return out
}

// Entry returns the skill's entry for skills/list and skills/get: its URI,
// frontmatter, and the URI, digest and size of every file.
func (k *Skill) Entry() Entry {
	e := Entry{
		URI:         k.uri,
		Frontmatter: k.Frontmatter(),
		Resources:   Manifest{Files: make([]Resource, len(k.files))},
	}
	for i, f := range k.files {
		e.Resources.Files[i] = Resource{URI: f.uri, Digest: f.digestString(), Size: f.size}
	}
	return e
}

// Resource returns the resource that lists the skill's SKILL.md, named and
// described from its frontmatter, as the extension recommends.
func (k *Skill) Resource() *mcp.Resource {
	r := k.files[0].public().Resource()
	r.Name = k.name
	r.Description = k.description
	return r
}

// A File is a file of a skill, as [Set.Lookup] and [Skill.Files] return it.
// Its contents are not held in memory: [File.Open] reads them when asked.
type File struct {
	// URI is the file's skill:// URI.
	URI string
	// MIMEType is text/markdown for a SKILL.md, and by extension
	// otherwise (application/octet-stream when unknown).
	MIMEType string
	// Size is the file's length in bytes.
	Size int64
	// Digest is "sha256:" and the SHA-256 of the file's bytes in lowercase
	// hex, as the extension publishes it.
	Digest string

	f *file
}

// Open returns a reader of the file's bytes. The reader checks them against
// Size and Digest as it goes: if they differ (the file changed after
// loading), a Read returns an error wrapping [ErrChanged], at the latest
// where the bytes end. Bytes read before that error are not verified;
// [File.ReadAll] returns nothing unverified.
func (f File) Open() (io.ReadCloser, error) {
	if f.f == nil {
		return nil, fmt.Errorf("skills: Open of a File that no Set returned")
	}
	return f.f.open()
}

// ReadAll returns the file's bytes, verified against Size and Digest; an
// error wraps [ErrChanged] when they differ.
func (f File) ReadAll() ([]byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := bytes.NewBuffer(make([]byte, 0, f.Size+1))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Resource returns a resource describing the file: its URI, its name (the
// last segment of its path), MIME type and size.
func (f File) Resource() *mcp.Resource {
	name := ""
	if f.f != nil {
		name = path.Base(f.f.path)
	}
	return &mcp.Resource{URI: f.URI, Name: name, MIMEType: f.MIMEType, Size: f.Size}
}

// file is a file of a set, shared by every skill that holds it.
type file struct {
	path     string // below the set's root
	uri      string
	mimeType string
	size     int64
	digest   [sha256.Size]byte
	data     []byte                        // the bytes, for skills from Go
	openFS   func() (io.ReadCloser, error) // otherwise
}

func (f *file) public() File {
	return File{URI: f.uri, MIMEType: f.mimeType, Size: f.size, Digest: f.digestString(), f: f}
}

func (f *file) digestString() string {
	return "sha256:" + hex.EncodeToString(f.digest[:])
}

func (f *file) open() (io.ReadCloser, error) {
	if f.openFS == nil {
		return io.NopCloser(bytes.NewReader(f.data)), nil
	}
	r, err := f.openFS()
	if err != nil {
		return nil, fmt.Errorf("skills: opening %s: %w", f.uri, err)
	}
	return &verifier{r: r, f: f, h: sha256.New()}, nil
}

// verifier reads a file and fails when its bytes are not the ones loaded.
type verifier struct {
	r io.ReadCloser
	f *file
	h hash.Hash
	n int64
}

func (v *verifier) Read(p []byte) (int, error) {
	// Never read more than one byte past the size: enough to see that the
	// file grew, without reading all of it.
	if limit := v.f.size + 1 - v.n; int64(len(p)) > limit {
		p = p[:limit]
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.f.size {
		return n, v.changed()
	}
	if err == io.EOF && (v.n != v.f.size || !bytes.Equal(v.h.Sum(nil), v.f.digest[:])) {
		return n, v.changed()
	}
	return n, err
}

func (v *verifier) changed() error {
	return fmt.Errorf("%w: %s", ErrChanged, v.f.uri)
}

func (v *verifier) Close() error { return v.r.Close() }
