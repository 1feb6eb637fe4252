package skills

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Method names and the extension's identifier, as the Skills extension
// (SEP-2640) defines them.
const (
	// ExtensionID names the extension in a server's
	// capabilities.extensions; its value is a settings object ({} when the
	// server implements no optional feature).
	ExtensionID = "io.modelcontextprotocol/skills"
	// MethodList lists skills; a server that declares the extension must
	// implement it.
	MethodList = "skills/list"
	// MethodGet returns one skill by the URI of its SKILL.md; a server
	// that declares the extension must implement it.
	MethodGet = "skills/get"
)

// ResultTypeComplete is the resultType of every skills/list and skills/get
// result.
const ResultTypeComplete = "complete"

// An Entry describes one skill on the wire (the extension's Skill): in
// skills/list and skills/get alike.
type Entry struct {
	// URI is the URI of the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md's YAML frontmatter as a JSON object,
	// verbatim: name, description and every other field the author wrote.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources lists the skill's files, or says the skill is dynamic.
	Resources Manifest `json:"resources"`
}

// MapURIs returns a copy of e with f applied to its URI and to every file's
// URI: what a mount or a proxy that rewrites URIs does to an entry. The
// frontmatter is shared with e, not copied.
func (e Entry) MapURIs(f func(uri string) string) Entry {
	out := Entry{URI: f(e.URI), Frontmatter: e.Frontmatter, Resources: Manifest{Dynamic: e.Resources.Dynamic}}
	if e.Resources.Files != nil {
		out.Resources.Files = make([]Resource, len(e.Resources.Files))
		for i, r := range e.Resources.Files {
			r.URI = f(r.URI)
			out.Resources.Files[i] = r
		}
	}
	return out
}

// A Manifest is an entry's resources: every file of the skill with its digest
// and size, or, for a skill whose content is generated, the string "dynamic".
type Manifest struct {
	// Dynamic marks a skill whose files have no stable digests; Files is
	// then empty.
	Dynamic bool
	// Files lists every file of the skill once, its SKILL.md included.
	Files []Resource
}

// A Resource is one file of a skill in an [Entry] (the extension's
// SkillResource).
type Resource struct {
	// URI is the file's URI, readable with resources/read.
	URI string `json:"uri"`
	// Digest is "sha256:" and 64 lowercase hex digits: the SHA-256 of the
	// file's bytes.
	Digest string `json:"digest"`
	// Size is the length of the file's bytes.
	Size int64 `json:"size"`
}

const dynamic = "dynamic"

// MarshalJSON encodes the manifest as an array, empty rather than null, or as
// the string "dynamic".
func (m Manifest) MarshalJSON() ([]byte, error) {
	if m.Dynamic {
		return json.Marshal(dynamic)
	}
	if m.Files == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(m.Files)
}

// UnmarshalJSON decodes an array of resources or the string "dynamic", and
// refuses anything else (the extension says a host must not load such an
// entry).
func (m *Manifest) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if s != dynamic {
			return errors.New(`skills: resources is neither an array nor "dynamic"`)
		}
		*m = Manifest{Dynamic: true}
		return nil
	}
	if len(data) == 0 || data[0] != '[' {
		return errors.New(`skills: resources is neither an array nor "dynamic"`)
	}
	var files []Resource
	if err := json.Unmarshal(data, &files); err != nil {
		return err
	}
	*m = Manifest{Files: files}
	return nil
}

// ListParams are the params of skills/list.
type ListParams struct {
	mcp.ParamsBase
	// Cursor is where the page starts: a previous result's NextCursor.
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is the result of skills/list. It fits
// mcp.AddReceivingCustomMethod as is.
type ListResult struct {
	mcp.ResultBase
	// ResultType is always "complete"; empty is sent as "complete".
	ResultType string `json:"resultType"`
	// TTLMs and CacheScope: required from protocol 2026-07-28; an empty
	// CacheScope is sent as "public".
	mcp.Cacheable
	// Skills is a page of entries; never sent as null.
	Skills []Entry `json:"skills"`
	// NextCursor, if not empty, asks for the next page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// GetParams are the params of skills/get.
type GetParams struct {
	mcp.ParamsBase
	// URI is the URI of the skill's SKILL.md.
	URI string `json:"uri"`
}

// GetResult is the result of skills/get. It fits mcp.AddReceivingCustomMethod
// as is.
type GetResult struct {
	mcp.ResultBase
	// ResultType is always "complete"; empty is sent as "complete".
	ResultType string `json:"resultType"`
	// TTLMs and CacheScope: required from protocol 2026-07-28; an empty
	// CacheScope is sent as "public".
	mcp.Cacheable
	// Skill is the requested skill's entry.
	Skill Entry `json:"skill"`
}

// MarshalJSON fills in what the extension requires: resultType "complete",
// a cacheScope, a skills array.
func (r ListResult) MarshalJSON() ([]byte, error) {
	type plain ListResult
	c := plain(r)
	c.ResultType = orComplete(c.ResultType)
	if c.CacheScope == "" {
		c.CacheScope = "public"
	}
	if c.Skills == nil {
		c.Skills = []Entry{}
	}
	return json.Marshal(&c)
}

// MarshalJSON fills in what the extension requires: resultType "complete"
// and a cacheScope.
func (r GetResult) MarshalJSON() ([]byte, error) {
	type plain GetResult
	c := plain(r)
	c.ResultType = orComplete(c.ResultType)
	if c.CacheScope == "" {
		c.CacheScope = "public"
	}
	return json.Marshal(&c)
}

func orComplete(t string) string {
	if t == "" {
		return ResultTypeComplete
	}
	return t
}
