package openapi

import (
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"
)

// maxNameLen is the longest tool name MCP allows.
const maxNameLen = 128

// toolName returns the tool name for an operation: its operationId, or,
// without one, its method and path ("get_pets_petId" for GET
// /pets/{petId}), made to fit MCP's rules for names: every character
// outside A-Z a-z 0-9 _ - . becomes '_', and a name longer than 128
// characters keeps its first 119 and a hash of the whole.
func toolName(method, path, operationID string) string {
	src := operationID
	if strings.TrimSpace(src) == "" {
		var b strings.Builder
		b.WriteString(strings.ToLower(method))
		for seg := range strings.SplitSeq(path, "/") {
			seg = strings.Trim(seg, "{}")
			if seg != "" {
				b.WriteByte('_')
				b.WriteString(seg)
			}
		}
		src = b.String()
	}
	name := sanitize(src)
	if len(name) > maxNameLen {
		h := fnv.New32a()
		h.Write([]byte(src))
		name = fmt.Sprintf("%s_%08x", name[:maxNameLen-9], h.Sum32())
	}
	return name
}

// sanitize replaces each character that a tool name cannot hold with '_'
// (one per character, not per byte).
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf && validNameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func validNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// uniqueNames gives each operation, in order, its tool name, appending
// "_2", "_3", ... to a name already taken. The caller orders the
// operations deterministically (by path, then method), so that the same
// document always yields the same names.
func uniqueNames(names []string) []string {
	own := make(map[string]bool, len(names)) // every base name, so that a suffixed name never takes one
	for _, n := range names {
		own[n] = true
	}
	used := make(map[string]bool, len(names))
	out := make([]string, len(names))
	for i, n := range names {
		cand := n
		for k := 2; used[cand] || cand != n && own[cand]; k++ {
			suffix := fmt.Sprintf("_%d", k)
			cand = n[:min(len(n), maxNameLen-len(suffix))] + suffix
		}
		used[cand] = true
		out[i] = cand
	}
	return out
}
