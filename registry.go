package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	checks := make([]*checker, len(tools))
	for i, t := range tools {
		if t == nil {
			return fmt.Errorf("mcpkit: Add: tool %d is nil", i)
		}
		if err := t.validate(); err != nil {
			return err
		}
		if err := checkWithSDK(&t.Tool); err != nil {
			return err
		}
		c, err := compileChecker(t, s.validation)
		if err != nil {
			return err
		}
		copies[i], checks[i] = t.clone(), c
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[[2]string]bool, len(copies))
	for _, t := range copies {
		key := [2]string{t.Name, t.Version}
		if seen[key] {
			return fmt.Errorf("%w: %s appears twice in one Add", ErrDuplicateTool, toolID(t))
		}
		seen[key] = true
		if !s.replace && find(s.versions[t.Name], t.Version) >= 0 {
			return fmt.Errorf("%w: %s is already registered", ErrDuplicateTool, toolID(t))
		}
	}
	versions := maps.Clone(s.versions)
	var replaced []*Tool
	for i, t := range copies {
		vs := slices.Clone(versions[t.Name])
		if j := find(vs, t.Version); j >= 0 {
			replaced = append(replaced, vs[j])
			vs = slices.Delete(vs, j, j+1)
		}
		vs = append(vs, t)
		slices.SortFunc(vs, func(a, b *Tool) int { return version.Compare(b.Version, a.Version) })
		versions[t.Name] = vs
		s.checks[t] = checks[i]
	}
	if err := s.apply(versions); err != nil {
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
	versions := maps.Clone(s.versions)
	var removed []*Tool
	for _, name := range names {
		removed = append(removed, versions[name]...)
		delete(versions, name)
	}
	s.unregister(versions, removed)
}

// RemoveVersion unregisters one version of the tool registered under name
// ("" is the unversioned one) and reports whether it was registered. When
// it was the highest, clients are served the next one from then on; open
// sessions receive notifications/tools/list_changed, since the versions a
// tool lists in its _meta change.
func (s *Server) RemoveVersion(name, version string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.versions[name]
	i := find(vs, version)
	if i < 0 {
		return false
	}
	versions := maps.Clone(s.versions)
	if len(vs) == 1 {
		delete(versions, name)
	} else {
		versions[name] = slices.Delete(slices.Clone(vs), i, i+1)
	}
	s.unregister(versions, vs[i:i+1])
	return true
}

// unregister makes versions, which lacks the removed tools, the registry.
// s.mu is held.
func (s *Server) unregister(versions map[string][]*Tool, removed []*Tool) {
	if len(removed) == 0 {
		return
	}
	if err := s.apply(versions); err != nil {
		// Removing tools cannot make two served tools collide, nor a
		// transform fail: every remaining tool was derived before.
		s.logger.Error("mcpkit: removing tools failed", "error", err)
		return
	}
	for _, t := range removed {
		s.forget(t)
	}
}

// forget drops what the server keeps for t, a tool leaving the registry.
// s.mu is held.
func (s *Server) forget(t *Tool) {
	if d, ok := s.derived[t]; ok && d.tool != nil && d.tool != t {
		delete(s.built, d.tool)
		delete(s.checks, d.tool)
	}
	delete(s.derived, t)
	delete(s.built, t)
	delete(s.checks, t)
}

// Tools returns the tools that tools/list shows when no per-request
// [Visibility] is in effect: the highest enabled version of each name,
// after transforms, sorted by name. The Tools are shared and must not be
// modified.
func (s *Server) Tools() []*Tool {
	return slices.Clone(s.state.Load().tools)
}

// Lookup returns the tool served under name (after transforms, the highest
// enabled version), if any. The Tool is shared and must not be modified.
func (s *Server) Lookup(name string) (*Tool, bool) {
	n, ok := s.state.Load().byName[name]
	if !ok {
		return nil, false
	}
	return n.versions[0].tool, true
}

// Handler returns the full chain that serves calls to name (server-wide
// middleware, the tool's own, validation and the handler), and whether name
// is served. It lets tests and adapters call a tool without a transport;
// the Go error the chain returns is not mapped onto the wire, and no
// per-request [Visibility] is applied.
func (s *Server) Handler(name string) (Handler, bool) {
	n, ok := s.state.Load().byName[name]
	if !ok {
		return nil, false
	}
	return n.versions[0].handler, true
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

// apply builds the state of the registry versions and, when that
// succeeds, makes versions the registry and brings the SDK's tools in line.
// s.mu is held.
func (s *Server) apply(versions map[string][]*Tool) error {
	st, err := s.build(versions)
	if err != nil {
		return err
	}
	s.versions = versions
	s.publish(st)
	return nil
}

// republish rebuilds the state after a change of middleware, transforms or
// visibility. s.mu is held.
func (s *Server) republish() {
	if err := s.apply(s.versions); err != nil {
		s.logger.Error("mcpkit: rebuilding the tool registry failed", "error", err)
	}
}

// publish makes st the state that calls and lists read, and brings the
// SDK's tools in line: a name no longer served is unregistered, a name
// whose served definition changed is (re)registered. The SDK then sends
// notifications/tools/list_changed, which reaches the listeners that the
// change concerns (see review), and the other replicas hear of it (see
// [Server.ShareChanges]). s.mu is held.
func (s *Server) publish(st *state) {
	old := s.state.Swap(st)
	// removed and added are the SDK's changes; changed are the names with
	// other versions or definitions, which a caller that does not see the
	// highest version may see change.
	var removed, added, changed []string
	for name, o := range old.byName {
		n, ok := st.byName[name]
		if !ok {
			removed = append(removed, name)
		}
		if !ok || !slices.Equal(o.versions, n.versions) {
			changed = append(changed, name)
		}
	}
	for name, n := range st.byName {
		o, ok := old.byName[name]
		if !ok {
			changed = append(changed, name)
		}
		if !ok || o.versions[0] != n.versions[0] {
			added = append(added, name)
		}
	}
	listed := len(removed) > 0 || len(added) > 0
	// The listeners are marked before the SDK is told, so that its
	// notification finds them marked.
	told := s.review(old, st, changed, listed)
	if len(removed) > 0 {
		s.sdk.RemoveTools(removed...)
	}
	for _, name := range added {
		// The SDK gets a copy of the served definition without its input
		// schema (sdkDefinition): mcpkit checks the Mcp-Param headers once
		// visibility has chosen the version a call reaches. Re-registering
		// a name whose definition changed has the SDK send list_changed.
		def := sdkDefinition(st.byName[name].versions[0].tool.Tool)
		s.sdk.AddTool(&def, s.sdkHandler(name))
	}
	if told && !listed {
		s.forceListChanged()
	}
	if len(changed) > 0 {
		s.shareChange()
	}
}

// build computes the state of the registry versions: every version through
// the transforms, the enabled ones grouped by the name they are served
// under, each with its chain. Entries that did not change are taken over
// from the current state, so their caches survive. s.mu is held.
func (s *Server) build(versions map[string][]*Tool) (*state, error) {
	names := slices.Sorted(maps.Keys(versions))
	servedAs := make(map[[2]string]*Tool)
	groups := make(map[string][]*Tool)
	for _, name := range names {
		for _, t := range versions[name] {
			d, err := s.derive(t)
			if err != nil {
				return nil, err
			}
			if d == nil {
				continue
			}
			key := [2]string{d.Name, d.Version}
			if prev, ok := servedAs[key]; ok {
				return nil, fmt.Errorf("%w: %s and %s would both be served as %s", ErrDuplicateTool, toolID(prev), toolID(t), toolID(d))
			}
			servedAs[key] = t
			if s.visibility != nil && !s.visibility.Enabled(d) {
				continue
			}
			groups[d.Name] = append(groups[d.Name], d)
		}
	}

	old := s.state.Load()
	st := &state{byName: make(map[string]*toolName, len(groups)), byID: make(map[ToolID][]*entry)}
	for name, ds := range groups {
		slices.SortFunc(ds, func(a, b *Tool) int { return version.Compare(b.Version, a.Version) })
		n := &toolName{name: name, versions: make([]*entry, len(ds))}
		listed := versionList(ds)
		for i, d := range ds {
			e := s.entry(old, d, listed)
			n.versions[i] = e
			id := d.ID()
			st.byID[id] = append(st.byID[id], e)
		}
		st.byName[name] = n
		st.names = append(st.names, n)
	}
	slices.SortFunc(st.names, func(a, b *toolName) int { return strings.Compare(a.name, b.name) })
	for _, n := range st.names {
		if t := n.versions[0].tool; !t.Unlisted {
			st.tools = append(st.tools, t)
		}
	}
	if s.visibility != nil && s.visibility.PerRequest() {
		st.allowed = s.visibility.Allowed
	}
	if len(s.listUse) > 0 {
		base := ListerFunc(func(ctx context.Context, req *ListRequest) ([]*Tool, error) {
			if st.allowed == nil {
				return st.tools, nil
			}
			return st.visible(ctx, req, "", -1), nil
		})
		st.lister = ChainList(s.listUse...)(base)
	}
	return st, nil
}

// entry returns the entry serving d, a version among those listed, reusing
// the current state's entry when nothing it depends on changed.
func (s *Server) entry(old *state, d *Tool, listed []string) *entry {
	c := s.built[d]
	if c == nil {
		c = &chain{}
		c.handler, c.layers = buildChain(d, s.use, s.checks[d])
		s.built[d] = c
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
	if n := old.byName[d.Name]; n != nil {
		for _, e := range n.versions {
			if e.derived == d && e.chain == c && slices.Equal(e.listed, listed) {
				return e
			}
		}
	}
	e := &entry{tool: d, derived: d, chain: c, handler: c.handler, layers: c.layers, listed: listed}
	if listed != nil {
		e.tool = withVersionMeta(d, listed)
	}
	return e
}

// CheckTool reports whether [Server.Add] would accept t on its own (that
// is, leaving aside the tools already registered): its name, its handler,
// and its schemas, which must be JSON Schemas that the server's validator
// can enforce, with annotations the SDK accepts (x-mcp-header, say). Code
// that builds tools (package transform, tests) uses it to fail where the
// tool is made, with the error Add would give.
func CheckTool(t *Tool) error {
	if t == nil {
		return fmt.Errorf("mcpkit: CheckTool: nil tool")
	}
	if err := t.validate(); err != nil {
		return err
	}
	if err := checkWithSDK(&t.Tool); err != nil {
		return err
	}
	_, err := compileChecker(t, Strict)
	return err
}

// checkWithSDK runs the SDK's own checks of a definition (those that would
// panic in mcp.Server.AddTool, such as parameter header annotations) on a
// scratch server, so that Add reports them as errors instead.
func checkWithSDK(def *mcp.Tool) (err error) {
	scratch := mcp.NewServer(&mcp.Implementation{Name: "mcpkit-check"}, nil)
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: tool %q: %v", ErrInvalidSchema, def.Name, v)
		}
	}()
	d := *def
	scratch.AddTool(&d, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("unreachable")
	})
	return nil
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
