package mcpkit

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The registry of the kinds other than tools: prompts by name, resources
// by URI, templates by their text. Each family is kept alike: one entry
// per key, its chain built once, enabled by the Visibility when the
// registry or the rules change, and every change committed (see commit)
// with the keys it changed.

// addTargets registers ts, of family f, checked and copied, under their
// keys: none of them if one is registered already (unless duplicates
// replace) or appears twice. dup is the error of a duplicate, op the
// method's name for its text.
func (s *Server) addTargets(f family, ts []Target, dup error, op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	reg := s.registry[f]
	seen := make(map[string]bool, len(ts))
	for _, t := range ts {
		key := servedKey(t)
		if seen[key] {
			return fmt.Errorf("%w: %q appears twice in one %s", dup, key, op)
		}
		seen[key] = true
		if _, ok := reg[key]; ok && !s.replace {
			return fmt.Errorf("%w: %q is already registered", dup, key)
		}
	}
	keys := make([]string, 0, len(ts))
	for _, t := range ts {
		key := servedKey(t)
		if old, ok := reg[key]; ok {
			delete(s.builtTargets, old)
		}
		reg[key] = t
		keys = append(keys, key)
	}
	s.changeTargets(f, keys)
	return nil
}

// servedKey returns the key t is served under: a prompt's name, a
// resource's URI, a template's text (its own, where Key is its origin's).
func servedKey(t Target) string {
	switch t := t.(type) {
	case *Prompt:
		return t.Name
	case *Resource:
		return t.URI
	case *ResourceTemplate:
		return t.URITemplate
	}
	return t.Key()
}

// removeTargets unregisters the targets of family f under keys; keys not
// registered are ignored.
func (s *Server) removeTargets(f family, keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reg := s.registry[f]
	var gone []string
	for _, key := range keys {
		if t, ok := reg[key]; ok {
			delete(s.builtTargets, t)
			delete(reg, key)
			gone = append(gone, key)
		}
	}
	if len(gone) > 0 {
		s.changeTargets(f, gone)
	}
}

// changeTargets makes the state in which the targets of family f under
// keys are served as the registry has them, and commits it. s.mu is held.
func (s *Server) changeTargets(f family, keys []string) {
	next := *s.state.Load()
	var c change
	next.targets[f], c.targets[f.kind()] = s.targetIndex(f, next.targets[f], keys)
	if f == famTemplate {
		next.templates = matchOrder(next.targets[f])
	}
	next.readRequiring = next.readRequires()
	s.commit(&next, c)
}

// readRequires reports whether a resource or a template of st has a
// RequireToken layer in its chain: else no resources/read is refused by
// its headers (see refusedEarly). It costs a pass over them, once per
// change of the targets.
func (st *state) readRequires() bool {
	for _, f := range familiesOf(KindResource) {
		for n := range st.targets[f].All() {
			if len(n.versions[0].chain.require) > 0 {
				return true
			}
		}
	}
	return false
}

// reindexTargets makes st's targets of every family served as the
// registry, the Visibility and the middleware have them: those under keys,
// or every one when keys is nil. It returns the keys that changed, by
// kind. s.mu is held.
func (s *Server) reindexTargets(st *state, keys []string) [numKinds][]string {
	var changed [numKinds][]string
	for f := range family(numFamilies) {
		was := st.targets[f]
		var c []string
		st.targets[f], c = s.targetIndex(f, was, keys)
		changed[f.kind()] = append(changed[f.kind()], c...)
		if f == famTemplate && st.targets[f] != was {
			// Entries are made anew for new chains too, unchanged
			// definitions and all.
			st.templates = matchOrder(st.targets[f])
		}
	}
	st.readRequiring = st.readRequires()
	return changed
}

// targetIndex returns idx with the targets of family f under keys (every
// one, registered or in idx, when keys is nil) served as the registry and
// the server's Visibility and middleware have them, and the keys whose
// definition as served changed. Entries that did not change are kept.
// s.mu is held.
func (s *Server) targetIndex(f family, idx *targetIndex, keys []string) (*targetIndex, []string) {
	reg := s.registry[f]
	if keys == nil {
		all := map[string]bool{}
		for n := range idx.All() {
			all[n.name] = true
		}
		for key := range reg {
			all[key] = true
		}
		keys = slices.Sorted(maps.Keys(all))
	}
	tv, _ := s.visibility.(TargetVisibility)
	var changed []string
	for _, key := range keys {
		var was Target
		if n, ok := idx.Get(key); ok {
			was = n.versions[0].target
		}
		t := reg[key]
		if t != nil && tv != nil && !tv.EnabledTarget(t) {
			t = nil
		}
		if t == nil {
			if was != nil {
				idx = idx.Without(key)
				changed = append(changed, key)
			}
			continue
		}
		c := s.builtTargets[t]
		if c == nil {
			c = buildTargetChain(t, s.use)
			s.builtTargets[t] = c
		}
		if n, ok := idx.Get(key); ok && n.versions[0].target == t && n.versions[0].chain == c {
			continue
		}
		idx = idx.With(key, &toolName{name: key, versions: []*entry{newTargetEntry(t, c)}})
		if was != t {
			changed = append(changed, key)
		}
	}
	return idx, changed
}

// targetPipeline returns the layers of the chain of the target of family
// f under key, and whether it is served.
func (st *state) targetPipeline(f family, key string) ([]Layer, bool) {
	n, ok := st.targets[f].Get(key)
	if !ok {
		return nil, false
	}
	return slices.Clone(n.versions[0].chain.layers), true
}

// matchOrder returns the templates of idx in the order a URI is matched
// against them: the longest literal prefix first, then by their text.
func matchOrder(idx *targetIndex) []*entry {
	out := make([]*entry, 0, idx.Len())
	for n := range idx.All() {
		out = append(out, n.versions[0])
	}
	slices.SortFunc(out, func(a, b *entry) int {
		if c := cmp.Compare(len(b.template.literal), len(a.template.literal)); c != 0 {
			return c
		}
		return strings.Compare(a.template.URITemplate, b.template.URITemplate)
	})
	return out
}
