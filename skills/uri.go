package skills

import (
	"net/url"
	"path"
	"strings"
)

// schemePrefix starts every URI a set serves.
const schemePrefix = "skill://"

// skillFile is the name of the file that makes a directory a skill.
const skillFile = "SKILL.md"

// uriOf returns the skill:// URI of p, a slash-separated path below the set's
// root, under prefix (slash-separated too, possibly empty). Each segment is
// percent-encoded where RFC 3986 requires it; the first segment, which is the
// URI's authority, also has ':' and '@' encoded.
func uriOf(prefix, p string) string {
	if prefix != "" {
		p = prefix + "/" + p
	}
	var b strings.Builder
	b.WriteString(schemePrefix)
	for i, seg := range strings.Split(p, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		escapeSegment(&b, seg, i == 0)
	}
	return b.String()
}

// canonicalURI rewrites uri with its segments encoded as uriOf encodes them,
// so that a client that encodes differently (or not at all) finds the same
// file. It reports false for a URI that is not skill:// or does not decode.
func canonicalURI(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, schemePrefix)
	if !ok || rest == "" {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(uri))
	b.WriteString(schemePrefix)
	for i, seg := range strings.Split(rest, "/") {
		raw, err := url.PathUnescape(seg)
		if err != nil || raw == "" || raw == "." || raw == ".." || strings.Contains(raw, "/") {
			return "", false
		}
		if i > 0 {
			b.WriteByte('/')
		}
		escapeSegment(&b, raw, i == 0)
	}
	return b.String(), true
}

func escapeSegment(b *strings.Builder, seg string, authority bool) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if unreserved(c) || subDelim(c) || !authority && (c == ':' || c == '@') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func subDelim(c byte) bool {
	return strings.IndexByte("!$&'()*+,;=", c) >= 0
}

// mimeTypes maps file extensions to media types, so a set serves the same
// types on every machine (package mime also reads the system's tables).
var mimeTypes = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".txt":      "text/plain",
	".text":     "text/plain",
	".csv":      "text/csv",
	".html":     "text/html",
	".htm":      "text/html",
	".css":      "text/css",
	".xml":      "application/xml",
	".json":     "application/json",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".js":       "text/javascript",
	".mjs":      "text/javascript",
	".ts":       "text/x-typescript",
	".py":       "text/x-python",
	".sh":       "text/x-shellscript",
	".bash":     "text/x-shellscript",
	".go":       "text/x-go",
	".rb":       "text/x-ruby",
	".sql":      "application/sql",
	".svg":      "image/svg+xml",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
	".pdf":      "application/pdf",
	".zip":      "application/zip",
}

// mimeTypeOf returns the media type of the file at p: text/markdown for a
// SKILL.md, by extension (case-insensitive) otherwise, and
// application/octet-stream for an extension the table does not know.
func mimeTypeOf(p string) string {
	name := path.Base(p)
	if name == skillFile {
		return "text/markdown"
	}
	if t, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}
