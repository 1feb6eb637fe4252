package mcpkit

import (
	"context"
	"errors"
	"fmt"
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
		if !s.replace && s.find(t.Name, t.Version) >= 0 {
			return fmt.Errorf("%w: %s is already registered", ErrDuplicateTool, toolID(t))
		}
	}
	changed := make(map[string]bool)
	for i, t := range copies {
		vs := s.versions[t.Name]
		if j := s.find(t.Name, t.Version); j >= 0 {
			s.forget(vs[j])
			vs = slices.Delete(vs, j, j+1)
		}
		vs = append(vs, t)
		slices.SortStableFunc(vs, func(a, b *Tool) int { return version.Compare(b.Version, a.Version) })
		s.versions[t.Name] = vs
		s.checks[t] = checks[i]
		changed[t.Name] = true
	}
	s.commit(changed, nil)
	return nil
}

// Remove unregisters every version of the named tools. Names that are not
// registered are ignored. Open sessions receive
// notifications/tools/list_changed; a call already running finishes, and
// later calls get the unknown-tool error.
func (s *Server) Remove(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var removed []string
	for _, name := range names {
		vs, ok := s.versions[name]
		if !ok {
			continue
		}
		for _, t := range vs {
			s.forget(t)
		}
		delete(s.versions, name)
		removed = append(removed, name)
	}
	if len(removed) > 0 {
		s.commit(nil, removed)
	}
}

// forget drops what the server keeps for t. s.mu is held.
func (s *Server) forget(t *Tool) {
	delete(s.built, t)
	delete(s.checks, t)
}

// Tools returns the tools the server serves (the highest version of each
// name), sorted by name. The Tools are shared and must not be modified.
func (s *Server) Tools() []*Tool {
	return slices.Clone(s.state.Load().tools)
}

// Lookup returns the tool served under name, if any. The Tool is shared and
// must not be modified.
func (s *Server) Lookup(name string) (*Tool, bool) {
	e, ok := s.state.Load().byName[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Handler returns the full chain that serves calls to name (server-wide
// middleware, the tool's own, validation and the handler), and whether name
// is served. It lets tests and adapters call a tool without a transport;
// the Go error the chain returns is not mapped onto the wire.
func (s *Server) Handler(name string) (Handler, bool) {
	e, ok := s.state.Load().byName[name]
	if !ok {
		return nil, false
	}
	return e.handler, true
}

// toolID names t in messages: "add", or "add" version "2" when it has one.
func toolID(t *Tool) string {
	if t.Version == "" {
		return fmt.Sprintf("%q", t.Name)
	}
	return fmt.Sprintf("%q version %q", t.Name, t.Version)
}

// find returns the index of name@ver in s.versions[name], or -1.
func (s *Server) find(name, ver string) int {
	return slices.IndexFunc(s.versions[name], func(t *Tool) bool { return t.Version == ver })
}

// commit publishes the registry and brings the SDK's tools in line with it:
// names in changed are (re)registered, names in removed are unregistered.
// The SDK sends notifications/tools/list_changed for both. s.mu is held.
func (s *Server) commit(changed map[string]bool, removed []string) {
	old := s.state.Load()
	st := s.publish()
	if len(removed) > 0 {
		s.sdk.RemoveTools(removed...)
	}
	for name := range changed {
		e := st.byName[name]
		if prev := old.byName[name]; prev != nil && prev.tool == e.tool {
			continue // a lower version changed; the served one did not
		}
		def := e.tool.Tool // the SDK keeps a pointer: give it its own copy
		s.sdk.AddTool(&def, s.sdkHandler(name))
	}
}

// publish builds and stores a new state from the registry. s.mu is held.
func (s *Server) publish() *state {
	st := &state{byName: make(map[string]*entry, len(s.versions))}
	for name, vs := range s.versions {
		t := vs[0] // highest version
		e, ok := s.built[t]
		if !ok {
			e = &entry{tool: t}
			e.handler, e.layers = buildChain(t, s.use, s.checks[t])
			s.built[t] = e
		}
		st.byName[name] = e
		st.tools = append(st.tools, t)
	}
	slices.SortFunc(st.tools, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	tools := st.tools
	base := ListerFunc(func(context.Context, *ListRequest) ([]*Tool, error) { return tools, nil })
	st.lister = ChainList(s.listUse...)(base)
	s.state.Store(st)
	return st
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
