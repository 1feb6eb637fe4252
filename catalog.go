package mcpkit

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// A CatalogTransform rewrites the server's catalog: it is given every
// registered tool, every version, and returns the tool to serve in its
// place (t itself, or a changed copy: a new name, description or schema),
// or nil to leave t out. It must not modify t; [Tool.Clone] makes a copy
// to change.
//
// The transforms of a Server run when its registry changes, once per tool,
// never per request: with transforms in effect, tools/list and tools/call
// cost what they cost without. Package transform has the common ones
// (namespaces, version ranges) and the selection of the tools a transform
// applies to.
type CatalogTransform func(t *Tool) (*Tool, error)

// Transform appends transforms to the server's catalog transforms, which
// run in order: the first is given each registered tool, the second what
// the first returned, and so on. What the last returns is what clients
// list, call and have validated: a tool renamed by a transform is called
// by its new name, and a changed input schema is the one its arguments
// are checked against.
//
// In the order of a tools/list, transforms come first, then [Visibility],
// then the choice of the highest version of each name, then the list
// middleware.
//
// Transform checks what the transforms make of every registered tool, as
// [Server.Add] checks a tool, and fails without changing anything if a
// transform returns an error, makes an invalid tool, or serves two tools
// under the same name and version. Later calls to Add apply the transforms
// to the new tools and fail in the same cases. Open sessions receive
// notifications/tools/list_changed. Transform panics if a transform is nil.
func (s *Server) Transform(ts ...CatalogTransform) error {
	for i, t := range ts {
		if t == nil {
			panic(fmt.Sprintf("mcpkit: Transform: transform %d is nil", i))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	transforms, derived := s.transforms, s.derived
	chains := s.takeChains()
	s.transforms = append(slices.Clone(transforms), ts...)
	s.derived = make(map[*Tool]derivation)
	if err := s.apply(); err != nil {
		s.transforms, s.derived = transforms, derived
		for name, cs := range chains {
			s.record(name).chains = cs
		}
		return err
	}
	return nil
}

// derivation is what the transforms made of a registered tool.
type derivation struct {
	tool    *Tool // nil when a transform left the tool out
	err     error
	enabled bool // tool is in its record's group: the Visibility enables it
}

// derive returns what the transforms make of t, a registered tool, checked
// and with its schemas compiled; nil when a transform leaves t out. The
// result is remembered until the transforms change. s.mu is held.
func (s *Server) derive(t *Tool) (*Tool, error) {
	if d, ok := s.derived[t]; ok {
		return d.tool, d.err
	}
	if len(s.transforms) == 0 {
		return t, nil // served as itself: see derivationOf
	}
	d, err := s.transform(t)
	s.derived[t] = derivation{tool: d, err: err}
	return d, err
}

// derivationOf returns what the transforms made of t, a registered
// version, and whether it is enabled. Without transforms, s.derived holds
// nothing for a tool that is enabled, most tools of a large registry: it
// is served as itself. s.mu is held.
func (s *Server) derivationOf(t *Tool) derivation {
	if dv, ok := s.derived[t]; ok {
		return dv
	}
	if len(s.transforms) == 0 {
		return derivation{tool: t, enabled: true}
	}
	return derivation{}
}

// setDerivation records dv as what the transforms made of t, a registered
// version (see derivationOf). s.mu is held.
func (s *Server) setDerivation(t *Tool, dv derivation) {
	if len(s.transforms) == 0 && dv.tool == t && dv.err == nil && dv.enabled {
		delete(s.derived, t)
		return
	}
	s.derived[t] = dv
}

// servedBy returns the registered version served under the name and
// version of key, or nil. Without transforms, each is served as itself,
// and s.servedAs holds nothing. s.mu is held.
func (s *Server) servedBy(key [2]string) *Tool {
	if len(s.transforms) > 0 {
		return s.servedAs[key]
	}
	vs := s.registeredVersions(key[0])
	if i := find(vs, key[1]); i >= 0 {
		return vs[i]
	}
	return nil
}

func (s *Server) transform(t *Tool) (*Tool, error) {
	d, err := applyTransforms(s.transforms, t)
	if err != nil || d == nil || d == t {
		return d, err
	}
	if sameValue(d.InputSchema, t.InputSchema) && sameValue(d.OutputSchema, t.OutputSchema) && d.Validation == t.Validation {
		return d, nil // the schemas Add checked
	}
	if err := checkSchemas(d, s.validation, &s.validators); err != nil {
		return nil, fmt.Errorf("mcpkit: tool %s as transformed: %w", toolID(t), err)
	}
	return d, nil
}

// applyTransforms returns what the transforms ts make of t, checked; nil
// when one of them leaves t out. What they make of t derives from it: its
// Origin is t, on a copy of its own, since a transform may share what it
// returns.
func applyTransforms(ts []CatalogTransform, t *Tool) (*Tool, error) {
	d := t
	for i, tr := range ts {
		next, err := tr(d)
		if err != nil {
			return nil, fmt.Errorf("mcpkit: transform %d of tool %s: %w", i, toolID(t), err)
		}
		if next == nil {
			return nil, nil
		}
		d = next
	}
	if d == t {
		return t, nil
	}
	if d.Origin != t {
		d = d.clone()
		d.Origin = t
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("mcpkit: tool %s as transformed: %w", toolID(t), err)
	}
	return d, nil
}

// sameValue reports whether a and b are the same schema value: the same
// pointer, map or slice, or equal otherwise. It never panics on values
// that == cannot compare.
func sameValue(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !va.IsValid() || !vb.IsValid() {
		return va.IsValid() == vb.IsValid()
	}
	if va.Type() != vb.Type() {
		return false
	}
	switch va.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		return va.Pointer() == vb.Pointer() && (va.Kind() != reflect.Slice || va.Len() == vb.Len())
	}
	if va.Type().Comparable() {
		return a == b
	}
	return false
}

// Clone returns a copy of t to change, for a [CatalogTransform] or before a
// second [Server.Add]: its slices (Middleware, Tags, Icons) and its _meta
// are its own; its schemas, annotations and handler are shared, since
// neither mcpkit nor a well-behaved transform modifies them in place.
func (t *Tool) Clone() *Tool {
	t2 := t.clone()
	t2.Meta = maps.Clone(t.Meta)
	return t2
}
