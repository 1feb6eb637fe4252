package mcpkit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/nameindex"
	"github.com/mcpkit/mcpkit/internal/version"
)

// Add registers tools. Each is checked first: its name (see
// [ValidateToolName]), its handler, and its schemas, which must be JSON
// Schemas that the server's validator can enforce (an input schema of type
// "object", no unknown type, no dangling $ref, no invalid pattern). If any
// tool is invalid, or is already registered under its name and version
// (unless [ServerOptions.ReplaceDuplicates] is set), Add returns an error
// naming it and registers none of them.
//
// Add copies each Tool. Open sessions receive notifications/tools/list_changed.
func (s *Server) Add(tools ...*Tool) error {
	if len(tools) == 0 {
		return nil
	}
	copies := make([]*Tool, len(tools))
	for i, t := range tools {
		if t == nil {
			return fmt.Errorf("mcpkit: Add: tool %d is nil", i)
		}
		if err := t.validate(); err != nil {
			return err
		}
		if err := checkSchemas(t, s.validation, &s.validators); err != nil {
			return err
		}
		copies[i] = t.clone()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[[2]string]bool, len(copies))
	var replaced []*Tool
	for _, t := range copies {
		key := [2]string{t.Name, t.Version}
		if seen[key] {
			return fmt.Errorf("%w: %s appears twice in one Add", ErrDuplicateTool, toolID(t))
		}
		seen[key] = true
		if vs := s.registeredVersions(t.Name); find(vs, t.Version) >= 0 {
			if !s.replace {
				return fmt.Errorf("%w: %s is already registered", ErrDuplicateTool, toolID(t))
			}
			replaced = append(replaced, vs[find(vs, t.Version)])
		}
	}
	if err := s.change(replaced, copies); err != nil {
		for _, t := range copies {
			s.forget(t)
		}
		return err
	}
	for _, t := range replaced {
		s.forget(t)
	}
	return nil
}

// Remove unregisters every version of the tools registered under the
// given names (the names given to Add, before any [CatalogTransform]).
// Names that are not registered are ignored. Open sessions receive
// notifications/tools/list_changed; a call already running finishes, and
// later calls get the unknown-tool error.
func (s *Server) Remove(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf [4]*Tool // the versions of a name or two, without allocating
	removed := buf[:0]
	for _, name := range names {
		removed = append(removed, s.registeredVersions(name)...)
	}
	s.unregister(removed)
}

// RemoveVersion unregisters one version of the tool registered under name
// ("" is the unversioned one) and reports whether it was registered. When
// it was the highest, clients are served the next one from then on; open
// sessions receive notifications/tools/list_changed, since the versions a
// tool lists in its _meta change.
func (s *Server) RemoveVersion(name, version string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.registeredVersions(name)
	i := find(vs, version)
	if i < 0 {
		return false
	}
	s.unregister([]*Tool{vs[i]}) // not vs itself, which change edits
	return true
}

// unregister takes the removed tools out of the registry: a slice that
// is not the versions of a record, which change edits. s.mu is held.
func (s *Server) unregister(removed []*Tool) {
	if len(removed) == 0 {
		return
	}
	if err := s.change(removed, nil); err != nil { // removed shares no array with a record
		// Removing tools cannot make two served tools collide, nor a
		// transform fail: every remaining tool was derived before.
		s.logger.Error("mcpkit: removing tools failed", "error", err)
		return
	}
	for _, t := range removed {
		s.forget(t)
	}
}

// forget drops what the server keeps for t, a tool leaving the registry
// (change dropped its chain), or one that failed to enter it. s.mu is
// held.
func (s *Server) forget(t *Tool) {
	delete(s.derived, t)
}

// A regName is what the registry holds under one name, so that a change
// of a name reads one map entry: the versions registered under it, the
// tools served under it (what the transforms made of registered versions)
// that are enabled, and the chains built for tools served under it, kept
// while they are registered, enabled or not, until the server-wide
// middleware or the transforms change.
type regName struct {
	versions []*Tool // highest first
	group    []*Tool
	chains   []builtChain
}

// A builtChain is the chain built for a served tool.
type builtChain struct {
	tool  *Tool
	chain *chain
}

// registeredVersions returns the versions registered under name, highest first.
// s.mu is held.
func (s *Server) registeredVersions(name string) []*Tool {
	if r := s.reg[name]; r != nil {
		return r.versions
	}
	return nil
}

// group returns the enabled tools served under name. s.mu is held.
func (s *Server) group(name string) []*Tool {
	if r := s.reg[name]; r != nil {
		return r.group
	}
	return nil
}

// record returns the record of name, made when there is none. s.mu is
// held.
func (s *Server) record(name string) *regName {
	r := s.reg[name]
	if r == nil {
		r = &regName{}
		s.reg[name] = r
	}
	return r
}

// tidy deletes r, the record of name, when it holds nothing. s.mu is held.
func (s *Server) tidy(name string, r *regName) {
	if len(r.versions) == 0 && len(r.group) == 0 && len(r.chains) == 0 {
		delete(s.reg, name)
	}
}

// chainOf returns the chain built for d, or nil.
func (r *regName) chainOf(d *Tool) *chain {
	for _, bc := range r.chains {
		if bc.tool == d {
			return bc.chain
		}
	}
	return nil
}

// dropChain drops the chain built for d, if any.
func (r *regName) dropChain(d *Tool) {
	r.chains = slices.DeleteFunc(r.chains, func(bc builtChain) bool { return bc.tool == d })
}

// anyChain reports whether a chain is built for a registered tool. s.mu
// is held.
func (s *Server) anyChain() bool {
	for _, r := range s.reg {
		if len(r.chains) > 0 {
			return true
		}
	}
	return false
}

// takeChains empties every record of its chains and returns them, by
// name. s.mu is held.
func (s *Server) takeChains() map[string][]builtChain {
	taken := make(map[string][]builtChain)
	for name, r := range s.reg {
		if len(r.chains) > 0 {
			taken[name], r.chains = r.chains, nil
		}
	}
	return taken
}

// toolID names t in messages: "add", or "add" version "2" when it has one.
func toolID(t *Tool) string {
	if t.Version == "" {
		return fmt.Sprintf("%q", t.Name)
	}
	return fmt.Sprintf("%q version %q", t.Name, t.Version)
}

// find returns the index of the tool with version ver in vs, or -1.
func find(vs []*Tool, ver string) int {
	return slices.IndexFunc(vs, func(t *Tool) bool { return t.Version == ver })
}

// apply builds the state of the registry from scratch and, when that
// succeeds, brings the records' groups in line with it. It is for changes
// that concern every tool (transforms, middleware, visibility); changes of
// some tools go through change. s.mu is held.
func (s *Server) apply() error {
	st, groups, servedAs, err := s.build()
	if err != nil {
		return err
	}
	old := s.state.Load()
	names := make([]string, 0, old.byName.Len()+st.byName.Len())
	for n := range old.byName.All() {
		names = append(names, n.name)
	}
	for n := range st.byName.All() {
		if _, ok := old.byName.Get(n.name); !ok {
			names = append(names, n.name)
		}
	}
	for name := range groups {
		s.record(name)
	}
	for name, r := range s.reg {
		r.group = groups[name]
		s.tidy(name, r)
	}
	s.servedAs = servedAs
	s.lineage = nil
	for _, r := range s.reg {
		for _, t := range r.versions {
			if d := s.derivationOf(t).tool; d != nil {
				s.markEnabled(t, slices.Contains(groups[d.Name], d))
				s.indexLineage(t, d, true)
			}
		}
	}
	s.commit(st, change{names: names})
	return nil
}

// markEnabled records whether what the transforms made of t is enabled (in
// its record's group). s.mu is held.
func (s *Server) markEnabled(t *Tool, on bool) {
	dv := s.derivationOf(t)
	dv.enabled = on
	s.setDerivation(t, dv)
}

// republish rebuilds the state after a change of middleware, transforms or
// visibility. s.mu is held.
func (s *Server) republish() {
	if err := s.apply(); err != nil {
		s.logger.Error("mcpkit: rebuilding the tool registry failed", "error", err)
	}
}

// change takes the tools removed out of the registry and puts the tools
// added in, with work in proportion to the change, not to the registry:
// each added tool is derived and checked against what is served, then the
// names they are served under, and only those, are built again into a new
// state that shares the rest with the current one. It fails, changing
// nothing, when a transform fails on an added tool or two tools would be
// served under one name and version. s.mu is held.
func (s *Server) change(removed, added []*Tool) error {
	var leaving map[*Tool]bool // read only when tools arrive
	if len(added) > 0 && len(removed) > 0 {
		leaving = make(map[*Tool]bool, len(removed))
		for _, t := range removed {
			leaving[t] = true
		}
	}
	type arrival struct{ t, d *Tool }
	arrivals := make([]arrival, 0, len(added))
	claimed := make(map[[2]string]*Tool, len(added))
	for _, t := range added {
		d, err := s.derive(t)
		if err != nil {
			return err
		}
		if d != nil {
			key := [2]string{d.Name, d.Version}
			prev := claimed[key]
			if p := s.servedBy(key); prev == nil && p != nil && !leaving[p] {
				prev = p
			}
			if prev != nil {
				return fmt.Errorf("%w: %s and %s would both be served as %s", ErrDuplicateTool, toolID(prev), toolID(t), toolID(d))
			}
			claimed[key] = t
		}
		arrivals = append(arrivals, arrival{t, d})
	}

	names := make([]string, 0, len(removed)+len(added)) // the names served that the change affects
	for _, t := range removed {
		r := s.reg[t.Name]
		if r == nil {
			continue
		}
		r.versions = slices.DeleteFunc(r.versions, func(v *Tool) bool { return v == t })
		d := s.derivationOf(t).tool
		if d == nil {
			s.tidy(t.Name, r)
			continue
		}
		key := [2]string{d.Name, d.Version}
		if s.servedAs[key] == t {
			delete(s.servedAs, key)
		}
		s.indexLineage(t, d, false)
		served := r // the record of the name d is served under
		if d.Name != t.Name {
			served = s.record(d.Name)
		}
		served.group = slices.DeleteFunc(served.group, func(x *Tool) bool { return x == d })
		served.dropChain(d)
		s.tidy(d.Name, served)
		if served != r {
			s.tidy(t.Name, r)
		}
		names = append(names, d.Name)
	}
	for _, a := range arrivals {
		r := s.record(a.t.Name)
		r.versions = append(r.versions, a.t)
		slices.SortFunc(r.versions, func(a, b *Tool) int { return version.Compare(b.Version, a.Version) })
		if a.d == nil {
			continue
		}
		if len(s.transforms) > 0 {
			s.servedAs[[2]string{a.d.Name, a.d.Version}] = a.t
		}
		s.indexLineage(a.t, a.d, true)
		on := s.visibility == nil || s.visibility.Enabled(a.d)
		if on {
			served := r
			if a.d.Name != a.t.Name {
				served = s.record(a.d.Name)
			}
			served.group = append(served.group, a.d)
		}
		s.markEnabled(a.t, on)
		names = append(names, a.d.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	st, changed := s.update(names)
	s.commit(st, change{names: names, changed: changed, compared: true})
	return nil
}

// indexLineage adds t, a registered version that the transforms made into
// d, to s.lineage (or, when add is false, takes it out) under each name in
// d's lineage other than t's own: RefreshTools finds the tools a name
// selects there and in the records. Most tools have no such name (no
// transform renamed them, no origin), and cost nothing here. s.mu is held.
func (s *Server) indexLineage(t, d *Tool, add bool) {
	var names [4]string // the few names of a real lineage, without allocating
	others := names[:0]
	for o, i := d, 0; o != nil && i <= maxOrigins; o, i = o.Origin, i+1 {
		if o.Name != t.Name && !slices.Contains(others, o.Name) {
			others = append(others, o.Name)
		}
	}
	for _, name := range others {
		if add {
			if s.lineage == nil {
				s.lineage = make(map[string][]*Tool)
			}
			s.lineage[name] = append(s.lineage[name], t)
			continue
		}
		if ts := slices.DeleteFunc(s.lineage[name], func(x *Tool) bool { return x == t }); len(ts) == 0 {
			delete(s.lineage, name)
		} else {
			s.lineage[name] = ts
		}
	}
}

// update returns the current state with the names given built again from
// the records' groups; everything else it shares with the current state. It returns
// too those of the names whose versions changed (see sameVersions): names
// itself when they all did. s.mu is held.
func (s *Server) update(names []string) (*state, []string) {
	old := s.state.Load()
	if len(names) > 64 && 4*len(names) > old.byName.Len() {
		// A change of much of the registry (a large batch Add): one pass
		// over it costs less than a copied chunk per name.
		st := s.rebuild(old, names)
		return st, changedNames(old, st, names)
	}
	st := &state{byName: old.byName, listed: old.listed, byID: old.byID, targets: old.targets, templates: old.templates, readRequiring: old.readRequiring, sources: old.sources, provided: old.provided, requiring: old.requiring}
	gone := make(map[*entry]bool)
	fresh := make(map[string][]*entry)
	ids := make(map[string]bool)
	changed, all := names, true // all: every name so far changed
	for i, name := range names {
		n := s.nameState(old, name, s.group(name))
		var o *toolName
		if n == nil {
			o, _ = st.byName.Delete(name)
			st.listed.Delete(name)
		} else {
			o, _ = st.byName.Put(name, n)
			if n.listable() {
				st.listed.Put(name, n)
			} else {
				st.listed.Delete(name)
			}
		}
		if same := sameVersions(o, n); same && all {
			changed, all = slices.Clone(names[:i]), false
		} else if !same && !all {
			changed = append(changed, name)
		}
		if o != nil {
			for _, e := range o.versions {
				gone[e] = true
				if k, ok := aliasKey(e); ok {
					ids[k] = true
				}
				if len(e.chain.require) > 0 {
					st.requiring--
				}
			}
		}
		if n == nil {
			continue
		}
		for j, e := range n.versions {
			if k, ok := aliasKey(e); ok {
				fresh[k] = appendEntry(fresh[k], n.versions, j)
				ids[k] = true
			}
			if len(e.chain.require) > 0 {
				st.requiring++
			}
		}
	}
	for k := range ids {
		cur, _ := st.byID.Get(k)
		next := fresh[k]
		if len(cur) > 0 {
			next = append(slices.DeleteFunc(slices.Clone(cur), func(e *entry) bool { return gone[e] }), next...)
		}
		if len(next) == 0 {
			st.byID.Delete(k)
		} else {
			st.byID.Put(k, next)
		}
	}
	s.finish(st)
	return st, changed
}

// changedNames returns those of the names whose versions differ between
// the states old and st (see sameVersions).
func changedNames(old, st *state, names []string) []string {
	var changed []string
	for _, name := range names {
		o, _ := old.byName.Get(name)
		n, _ := st.byName.Get(name)
		if !sameVersions(o, n) {
			changed = append(changed, name)
		}
	}
	return changed
}

// rebuild returns the current state with the names given built again from
// the records' groups, making its indexes anew: for changes of a large part of the
// registry. s.mu is held.
func (s *Server) rebuild(old *state, names []string) *state {
	affected := make(map[string]bool, len(names))
	for _, name := range names {
		affected[name] = true
	}
	all := make([]*toolName, 0, old.byName.Len()+len(names))
	for n := range old.byName.All() {
		if !affected[n.name] {
			all = append(all, n)
		}
	}
	for _, name := range names {
		if n := s.nameState(old, name, s.group(name)); n != nil {
			all = append(all, n)
		}
	}
	slices.SortFunc(all, func(a, b *toolName) int { return strings.Compare(a.name, b.name) })
	st := indexed(all)
	st.sources, st.provided, st.targets, st.templates = old.sources, old.provided, old.targets, old.templates
	st.readRequiring = old.readRequiring
	s.finish(st)
	return st
}

// appendEntry returns es with versions[j] appended. An identity has one
// entry as a rule: es is then a view of versions, which costs nothing,
// and cannot be appended to in place.
func appendEntry(es, versions []*entry, j int) []*entry {
	if es == nil {
		return versions[j : j+1 : j+1]
	}
	return append(es, versions[j])
}

// indexed returns a state of the names all, sorted by name, with its
// indexes made from scratch.
func indexed(all []*toolName) *state {
	names := make([]string, len(all))
	var listedNames []string
	var listed []*toolName
	byID := make(map[string][]*entry)
	requiring := 0
	for i, n := range all {
		names[i] = n.name
		if n.listable() {
			listedNames = append(listedNames, n.name)
			listed = append(listed, n)
		}
		for j, e := range n.versions {
			if k, ok := aliasKey(e); ok {
				byID[k] = appendEntry(byID[k], n.versions, j)
			}
			if len(e.chain.require) > 0 {
				requiring++
			}
		}
	}
	ids := slices.Sorted(maps.Keys(byID))
	entries := make([][]*entry, len(ids))
	for i, k := range ids {
		entries[i] = byID[k]
	}
	return &state{byName: nameindex.Build(names, all), listed: nameindex.Build(listedNames, listed), byID: nameindex.Build(ids, entries), requiring: requiring}
}

// nameState returns the state of name, served as the tools ds (nil when
// there are none), reusing old's entries that did not change.
func (s *Server) nameState(old *state, name string, ds []*Tool) *toolName {
	if len(ds) == 0 {
		return nil
	}
	ds = slices.Clone(ds)
	slices.SortFunc(ds, func(a, b *Tool) int { return version.Compare(b.Version, a.Version) })
	n := &toolName{name: name, versions: make([]*entry, len(ds))}
	listed := versionList(ds)
	for i, d := range ds {
		n.versions[i] = s.entry(old, d, listed)
	}
	return n
}

// build computes the state of the registry versions from scratch: every
// version through the transforms, the enabled ones grouped by the name they
// are served under, each with its chain, and the groups and the served
// names and versions it was made of. Entries that did not change are taken
// over from the current state, so their caches survive. s.mu is held.
func (s *Server) build() (*state, map[string][]*Tool, map[[2]string]*Tool, error) {
	servedAs := make(map[[2]string]*Tool)
	groups := make(map[string][]*Tool)
	for _, name := range slices.Sorted(maps.Keys(s.reg)) {
		for _, t := range s.reg[name].versions {
			d, err := s.derive(t)
			if err != nil {
				return nil, nil, nil, err
			}
			if d == nil {
				continue
			}
			if len(s.transforms) > 0 { // else each is served as itself, as registered: see servedBy
				key := [2]string{d.Name, d.Version}
				if prev, ok := servedAs[key]; ok {
					return nil, nil, nil, fmt.Errorf("%w: %s and %s would both be served as %s", ErrDuplicateTool, toolID(prev), toolID(t), toolID(d))
				}
				servedAs[key] = t
			}
			if s.visibility != nil && !s.visibility.Enabled(d) {
				continue
			}
			groups[d.Name] = append(groups[d.Name], d)
		}
	}

	old := s.state.Load()
	names := slices.Sorted(maps.Keys(groups))
	all := make([]*toolName, len(names))
	for i, name := range names {
		all[i] = s.nameState(old, name, groups[name])
	}
	st := indexed(all)
	st.sources = old.sources
	// The chains of the other kinds are built with the same middleware.
	st.targets, st.templates, st.readRequiring = old.targets, old.templates, old.readRequiring
	s.reindexTargets(st, nil)
	s.finish(st)
	return st, groups, servedAs, nil
}

// entry returns the entry serving d, a version among those listed, reusing
// the current state's entry when nothing it depends on changed.
func (s *Server) entry(old *state, d *Tool, listed []string) *entry {
	r := s.record(d.Name)
	c := r.chainOf(d)
	if c == nil {
		c = compact(buildChain(d, s.use, newChecker(d, s.validation, &s.validators)))
		s.shareLayers(c)
		r.chains = append(r.chains, builtChain{d, c})
		s.noteChain(c)
		for _, m := range moot(c.layers) {
			in, out := c.layers[m.inner], c.layers[m.outer]
			args := []any{"tool", d.Name}
			if d.Version != "" {
				args = append(args, "version", d.Version)
			}
			args = append(args, "layer", in.Name, "from", in.From, "value", settingValue(in, m.setting),
				"outer", out.Name, "outerFrom", out.From, "outerValue", settingValue(out, m.setting))
			s.logger.Warn("mcpkit: a layer can never take effect: a layer outside it has a lower "+m.setting, args...)
		}
	}
	if n, ok := old.byName.Get(d.Name); ok {
		for _, e := range n.versions {
			if e.derived == d && e.chain == c && slices.Equal(e.listed, listed) {
				return e
			}
		}
	}
	e := &entry{tool: d, derived: d, chain: c, listed: listed}
	if listed != nil {
		e.tool = withVersionMeta(d, listed)
	}
	return e
}

// compact drops from c what only building it needed, since every
// registered tool keeps its chain: the label of the outermost layer (see
// boundHandler), for which there is no layer further out.
func compact(c *chain) *chain {
	if b, ok := c.handler.(boundHandler); ok {
		c.handler = b.next
	}
	return c
}

// shareLayers has c list its layers with the same list as the other
// chains of one layer alike (the validation of arguments, as a rule),
// which no one modifies. s.mu is held.
func (s *Server) shareLayers(c *chain) {
	if len(c.layers) != 1 || c.layers[0].Settings != nil {
		return
	}
	l, shared := c.layers[0], s.oneLayer
	if shared == nil {
		s.oneLayer = c.layers
	} else if l.Name == shared[0].Name && l.From == shared[0].From && l.Skipped == shared[0].Skipped && shared[0].Settings == nil {
		c.layers = shared
	}
}

// CheckTool reports whether [Server.Add] would accept t on its own (that
// is, leaving aside the tools already registered): its name, its handler,
// and its schemas, which must be JSON Schemas that the server's validator
// can enforce, with valid x-mcp-header annotations. Code
// that builds tools (package transform, tests) uses it to fail where the
// tool is made, with the error Add would give.
func CheckTool(t *Tool) error {
	if t == nil {
		return fmt.Errorf("mcpkit: CheckTool: nil tool")
	}
	if err := t.validate(); err != nil {
		return err
	}
	return checkSchemas(t, Strict, nil)
}

// settingValue returns the value of l's setting called name.
func settingValue(l Layer, name string) string {
	for _, st := range l.Settings {
		if st.Name == name {
			return st.Value
		}
	}
	return ""
}
