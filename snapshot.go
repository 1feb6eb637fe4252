package mcpkit

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"iter"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/nameindex"
	"github.com/mcpkit/mcpkit/internal/paramheader"
)

// state is an immutable view of what the server serves, replaced whole by
// each change (see commit). Calls and lists read it without locking.
//
// Its indexes share their parts with the states before it: a change of
// some tools makes a new state in proportion to the change.
type state struct {
	byName  nameindex.Index[*toolName] // every callable registered name, with its enabled versions
	listed  nameindex.Index[*toolName] // the names with a version that may be listed (not Unlisted)
	byID    nameindex.Index[[]*entry]  // the served versions by identity (idKey of Tool.ID), of those served under another name (see identity)
	lister  Lister                     // list middleware around the server's own page; nil when there is none
	targets [numFamilies]*targetIndex  // every enabled registered prompt, resource and template, each one entry

	// templates are the entries of targets[famTemplate] in the order a
	// URI is matched against them (see matchTemplate).
	templates []*entry

	// requiring counts the registered versions whose chains hold a
	// RequireToken layer: without any, no call is refused by its headers
	// (see refusedEarly), and a call costs no lookup for it.
	// readRequiring is the same for resources/read: whether a resource or
	// a template has one (see readRequires).
	requiring     int
	readRequiring bool

	// What a provided tool is served with (see Provider): the sources (the
	// providers and the mounted servers, each with its state as of this
	// state, in the order they were added), the
	// server's catalog transforms, middleware and Visibility as they were
	// when the state was made, and the entries made of provided tools,
	// kept for this state.
	sources    []source
	transforms []CatalogTransform
	use        []Middleware
	visibility Visibility
	provided   *providedCache

	// allowed is the per-request half of the server's Visibility, or nil
	// when what a request sees does not depend on the request.
	allowed func(context.Context, *Tool, Caller) bool

	// allowedTarget is the same for prompts and resources: the
	// per-request half of a TargetVisibility, or nil.
	allowedTarget func(context.Context, Target, Caller) bool
}

// A targetIndex holds prompts by name, resources by URI or templates by
// their text, in the shape the route reads: a toolName of one entry each.
type targetIndex = nameindex.Index[*toolName]

// A family is one index of targets: prompts, resources or templates.
type family uint8

const (
	famPrompt family = iota
	famResource
	famTemplate

	numFamilies = iota
)

// kind returns the kind of f's targets.
func (f family) kind() Kind {
	if f == famPrompt {
		return KindPrompt
	}
	return KindResource
}

// familiesOf returns the families of kind k.
func familiesOf(k Kind) []family {
	switch k {
	case KindPrompt:
		return []family{famPrompt}
	case KindResource:
		return []family{famResource, famTemplate}
	}
	return nil
}

// index returns the names of kind k that st serves by name: tools,
// prompts, or resources by exact URI.
func (st *state) index(k Kind) *nameindex.Index[*toolName] {
	switch k {
	case KindPrompt:
		return st.targets[famPrompt]
	case KindResource:
		return st.targets[famResource]
	}
	return &st.byName
}

// serves reports whether st serves some target of kind k, registered or
// from a source that may serve some.
func (st *state) serves(k Kind) bool {
	for _, f := range familiesOf(k) {
		if st.targets[f].Len() > 0 {
			return true
		}
	}
	for _, src := range st.sources {
		if src.serves(k) {
			return true
		}
	}
	return false
}

// toolName is a registered name clients can call, with its versions.
type toolName struct {
	name     string
	versions []*entry                 // enabled versions, highest first; never empty
	defs     atomic.Pointer[defCache] // definitions listed to callers who see some versions only, made on first need
}

// versionDefs returns n's cache of definitions listed to callers who see
// some versions only, made on first need: most names have one version.
func (n *toolName) versionDefs() *defCache {
	if c := n.defs.Load(); c != nil {
		return c
	}
	n.defs.CompareAndSwap(nil, new(defCache))
	return n.defs.Load()
}

// listable reports whether some version of n may be listed: one that is
// not Unlisted.
func (n *toolName) listable() bool {
	for _, e := range n.versions {
		if !e.tool.Unlisted {
			return true
		}
	}
	return false
}

// entry is a served tool version with its middleware chain built.
type entry struct {
	tool     *Tool             // as listed and as Request.Tool: after transforms, with its version's _meta; nil for other kinds
	target   Target            // the prompt, resource or template, for an entry of another kind than tools
	prompt   *Prompt           // target, for a prompt's entry
	resource *Resource         // target, for a resource's entry
	template *ResourceTemplate // target, for a template's entry
	derived  *Tool             // what the transforms made of the registered or provided tool; the chain was built for it
	chain    *chain
	listed   []string // the versions of the name, highest first, when it has versions
	provided bool     // made of a source's tool, not a registered one
	silent   bool     // a provider's resource whose changes no one announces (see ResourceNotifier)

	// made holds what is made of the definition on first need: most
	// tools of a large catalog are never listed or called, and cost
	// nothing for it. A provided entry has it from the start, for its key.
	made atomic.Pointer[entryMade]
}

// entryMade is what an entry makes of its definition, each once, and
// the key of a provided entry.
type entryMade struct {
	key        *Tool  // see entry.key
	targetKey  Target // for a provided target: the target that stands for its definition, if not its own (see fingerprint)
	legacyOnce sync.Once
	legacy     *mcp.Tool // the definition for clients that need objects

	wireOnce sync.Once
	wire     *mcp.Tool // the definition as listed, its schemas as JSON text

	paramsOnce sync.Once
	params     []paramheader.Param // the arguments its input schema mirrors into headers

	printOnce sync.Once
	print     uint64 // the digest of its definition, for an entry without a key
}

// lazy returns what e makes of its definition, allocated on first need.
func (e *entry) lazy() *entryMade {
	if m := e.made.Load(); m != nil {
		return m
	}
	e.made.CompareAndSwap(nil, new(entryMade))
	return e.made.Load()
}

// newProvided returns the entry of a tool a source provides, whose key
// is key (see entry.key).
func newProvided(d, key *Tool, c *chain) *entry {
	e := &entry{tool: d, derived: d, chain: c, provided: true}
	e.made.Store(&entryMade{key: key})
	return e
}

// key returns what stands for e's definition in listeners' digests (see
// fingerprint): its derived tool, for a registered version; a mounted
// server's key; or nil for a Provider's tool.
func (e *entry) key() *Tool {
	if !e.provided {
		return e.derived
	}
	return e.lazy().key
}

// fingerprint returns what stands for e's definition in the digests of
// what listeners see (see Server.view): its key's pointer, which is the
// same as long as the definition is, or, for a Provider's tool (which a
// Provider may make anew for each request), a digest of the definition.
func (e *entry) fingerprint(seed maphash.Seed) uint64 {
	if e.target != nil {
		if e.provided {
			if k := e.lazy().targetKey; k != nil {
				return maphash.Comparable(seed, k)
			}
		}
		return maphash.Comparable(seed, e.target)
	}
	if k := e.key(); k != nil {
		return maphash.Comparable(seed, k)
	}
	m := e.lazy()
	m.printOnce.Do(func() {
		data, err := json.Marshal(&e.tool.Tool)
		if err != nil {
			data = []byte(e.tool.Name)
		}
		m.print = maphash.Bytes(seed, data)
	})
	return m.print
}

// unlisted reports whether e is kept out of lists.
func (e *entry) unlisted() bool {
	switch {
	case e.prompt != nil:
		return e.prompt.Unlisted
	case e.resource != nil:
		return e.resource.Unlisted
	case e.template != nil:
		return e.template.Unlisted
	}
	return e.tool.Unlisted
}

// paramHeaders returns the arguments e's input schema mirrors into HTTP
// headers, read once.
func (e *entry) paramHeaders() []paramheader.Param {
	m := e.lazy()
	m.paramsOnce.Do(func() { m.params = paramheader.Of(e.tool.InputSchema) })
	return m.params
}

// servedName is the name e is served under: a tool's or a prompt's name,
// a resource's URI, a template's URI template.
func (e *entry) servedName() string {
	switch {
	case e.prompt != nil:
		return e.prompt.Name
	case e.resource != nil:
		return e.resource.URI
	case e.template != nil:
		return e.template.URITemplate
	}
	return e.tool.Name
}

// newTargetEntry returns the entry of t, a prompt, resource or template,
// served by c.
func newTargetEntry(t Target, c *chain) *entry {
	e := &entry{target: t, chain: c}
	switch t := t.(type) {
	case *Prompt:
		e.prompt = t
	case *Resource:
		e.resource = t
	case *ResourceTemplate:
		e.template = t
	}
	return e
}

// chain is a built middleware chain.
type chain struct {
	handler  Handler
	prompt   PromptHandler   // for a prompt's chain, instead of handler
	resource ResourceHandler // for a resource's or a template's chain, instead of handler
	layers   []Layer         // for Server.Pipeline
	require  []*requirement  // the RequireToken layers, outermost first (see refusedEarly)
	named    []namedUse      // the tool names its ForTools selections were written with (see judgeNames)
}

// defCache keeps, for a name, the definitions listed to callers who see
// some of its versions only, by the set of versions they see (a bit per
// version, for names of up to 64 versions).
type defCache struct {
	mu sync.Mutex
	m  map[uint64]*Tool
}

func (c *defCache) get(set uint64) *Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[set]
}

func (c *defCache) put(set uint64, t *Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[uint64]*Tool)
	}
	c.m[set] = t
}

// identity yields the served versions whose identity is id: those served
// under id's name, found by that name, and those served under another (an
// alias, a name a transform gave), which byID holds. Most tools are served
// under their own name, and cost byID nothing.
func (st *state) identity(id ToolID) iter.Seq[*entry] {
	return func(yield func(*entry) bool) {
		if n, ok := st.byName.Get(id.Name); ok {
			for _, e := range n.versions {
				if e.derived.ID() == id && !yield(e) {
					return
				}
			}
		}
		es, _ := st.byID.Get(idKey(id))
		for _, e := range es {
			if !yield(e) {
				return
			}
		}
	}
}

// aliasKey returns the key in state.byID of e, a registered version, when
// it is served under a name other than its identity's (see identity).
func aliasKey(e *entry) (string, bool) {
	id := e.derived.ID()
	if id.Name == e.derived.Name {
		return "", false
	}
	return idKey(id), true
}

// idKey is the key of an identity in state.byID: its name alone when it
// has no version (and the name no NUL), which costs nothing to make.
func idKey(id ToolID) string {
	if id.Version == "" && strings.IndexByte(id.Name, 0) < 0 {
		return id.Name
	}
	return id.Name + "\x00" + id.Version
}
