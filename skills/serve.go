package skills

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// TagPrefix begins the tag that [Serve] puts on the resources of a skill:
// the resources of skill "pdf-forms" carry "skill:pdf-forms", so that a
// visibility rule over that tag hides or shows the skill as a whole.
const TagPrefix = "skill:"

// defaultPageSize is the most skills a skills/list page holds when
// [ServeOptions.PageSize] is zero: an entry lists up to MaxFiles files.
const defaultPageSize = 50

// ServeOptions configures [Serve]. A nil *ServeOptions means the defaults.
type ServeOptions struct {
	// TTL is the ttlMs of skills/list and skills/get results: how long a
	// client may keep them. Zero means 0, to be asked again each time.
	TTL time.Duration

	// PageSize is the most skills a skills/list page holds. Zero means 50.
	PageSize int

	// Mounts are the sets that servers mounted into srv (see
	// [mcpkit.Server.Mount]) serve with Serve, by the namespace each is
	// mounted under: their skills are listed and got on srv too, under
	// the URIs the mount serves their files at (skill://namespace/...),
	// and their files are read through the mount, by the rules of both
	// servers. Serve registers no resources for them.
	Mounts map[string]*Set

	// Upstreams serve skills whose files srv reads from another server
	// (a [github.com/mcpkit/mcpkit/proxy.Upstream], say). Each skills/list,
	// and each skills/get of a URI srv does not serve itself, asks every
	// one of them for the caller's skills and serves their entries beside
	// srv's own: srv's own win on a URI both serve, and an earlier
	// upstream over a later one. Every entry and file is still filtered by
	// what the caller may read on srv, and an entry whose URI does not end
	// in /SKILL.md is left out. An upstream that fails is logged and left
	// out of that answer, never an error to the client.
	Upstreams []Upstream

	// Logger receives the failures of Upstreams. Nil means no logging.
	Logger *slog.Logger
}

// An Upstream is a source of skills served by another server, whose files
// the server given to [Serve] reads through (see [ServeOptions.Upstreams]).
type Upstream interface {
	// ListSkills returns the entries of every skill the upstream serves
	// to c, the caller of a skills/list or skills/get, in any order, under
	// the URIs their files are read at. Serve waits for it: it should be
	// bounded in time.
	ListSkills(ctx context.Context, c mcpkit.Caller) ([]Entry, error)
}

// Serve serves set on srv as the Skills extension: every file as a
// resource, read through [File.ReadAll] when asked, and skills/list and
// skills/get answered from set, and declares the extension
// ([ExtensionID], no optional feature) with the resources capability that
// its resources bring. Call it once per server, before serving: a second
// set's skills/list and skills/get would hide the first's.
//
// Each skill's SKILL.md is a listed resource ([Skill.Resource]); its other
// files are Unlisted. Every resource carries [TagPrefix] and the name of
// each skill it belongs to (a nested skill's files belong to the skills
// around it too). A file is read as text when its MIME type is textual
// and its bytes valid UTF-8, as a blob otherwise; a file that changed since
// set was loaded is an internal error (-32603).
//
// The caller's visibility of a skill is that of its SKILL.md resource
// ([mcpkit.Server.ReadsResource]): a skill whose SKILL.md is hidden from
// the caller is absent from skills/list, and skills/get of it is -32602,
// the answer to a URI never served; a file the caller may not read (one
// of a nested skill hidden from it) is left out of the manifests it gets.
// On 2026-07-28 results carry ttlMs
// ([ServeOptions.TTL]) and cacheScope, "private" when a per-request rule
// decides resources.
//
// A server that mounts others serving skills answers for theirs too when
// they are given in [ServeOptions.Mounts], and for skills served further
// away, asked per request, when given [ServeOptions.Upstreams]; set may
// then be nil, for a server with no skills of its own. A result that asked
// an upstream is "private": the upstream was asked on the caller's behalf,
// and may answer each caller otherwise.
func Serve(srv *mcpkit.Server, set *Set, opts *ServeOptions) error {
	if srv == nil || set == nil && (opts == nil || len(opts.Mounts) == 0 && len(opts.Upstreams) == 0) {
		return fmt.Errorf("skills: Serve: nil server or set")
	}
	h := &handler{srv: srv, pageSize: defaultPageSize, logger: slog.New(slog.DiscardHandler)}
	var mounts map[string]*Set
	if opts != nil {
		h.ttl = int(opts.TTL.Milliseconds())
		if opts.PageSize > 0 {
			h.pageSize = opts.PageSize
		}
		mounts = opts.Mounts
		if slices.Contains(opts.Upstreams, nil) {
			return fmt.Errorf("skills: Serve: a nil upstream")
		}
		h.upstreams = slices.Clone(opts.Upstreams)
		if opts.Logger != nil {
			h.logger = opts.Logger
		}
	}
	for ns, m := range mounts {
		if m == nil || mcpkit.ValidateToolName(ns) != nil {
			return fmt.Errorf("skills: Serve: mount %q: a nil set or a namespace that is not a valid tool name", ns)
		}
	}
	h.served = served(set, mounts)
	h.byURI = make(map[string]*servedSkill, len(h.served))
	for i := range h.served {
		h.byURI[h.served[i].uri] = &h.served[i]
	}
	if set != nil {
		if err := srv.AddResources(resources(set)...); err != nil {
			return fmt.Errorf("skills: Serve: %w", err)
		}
	}
	sdk := srv.MCPServer()
	// These handlers only let the methods past the SDK's checks: the
	// middleware answers them, since only it sees the caller's token and
	// headers, which visibility rules read.
	err := mcp.AddReceivingCustomMethod(sdk, MethodList, func(context.Context, *mcp.ServerSession, *ListParams) (*ListResult, error) {
		return nil, errUnreachable
	})
	if err == nil {
		err = mcp.AddReceivingCustomMethod(sdk, MethodGet, func(context.Context, *mcp.ServerSession, *GetParams) (*GetResult, error) {
			return nil, errUnreachable
		})
	}
	if err != nil {
		return fmt.Errorf("skills: Serve: %w", err)
	}
	sdk.AddReceivingMiddleware(h.middleware)
	srv.DeclareExtension(ExtensionID, nil)
	return nil
}

var errUnreachable = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "skills: middleware not installed"}

// resources returns the resources that serve set's files, each once.
func resources(set *Set) []*mcpkit.Resource {
	byURI := map[string]*mcpkit.Resource{}
	var out []*mcpkit.Resource
	for _, k := range set.skills {
		for _, f := range k.Files() {
			r, ok := byURI[f.URI]
			if !ok {
				r = &mcpkit.Resource{Resource: *f.Resource(), Handler: fileHandler{f}, Unlisted: true}
				byURI[f.URI] = r
				out = append(out, r)
			}
			r.Tags = append(r.Tags, TagPrefix+k.name)
		}
	}
	for _, k := range set.skills {
		r := byURI[k.uri]
		r.Resource, r.Unlisted = *k.Resource(), false
	}
	return out
}

// fileHandler reads one file of a skill.
type fileHandler struct{ f File }

func (h fileHandler) ServeResource(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	data, err := h.f.ReadAll()
	if err != nil {
		return nil, err
	}
	c := &mcp.ResourceContents{URI: h.f.URI, MIMEType: h.f.MIMEType}
	if len(data) > 0 && textual(h.f.MIMEType) && utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data // never nil: an empty file is an empty blob
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// textual reports whether a file of MIME type mime is text.
func textual(mime string) bool {
	switch mime {
	case "application/json", "application/xml", "application/yaml", "application/toml", "application/sql", "image/svg+xml":
		return true
	}
	return strings.HasPrefix(mime, "text/") || strings.HasSuffix(mime, "+json") || strings.HasSuffix(mime, "+xml")
}

// handler answers skills/list and skills/get on one server.
type handler struct {
	srv       *mcpkit.Server
	served    []servedSkill // by URI
	byURI     map[string]*servedSkill
	upstreams []Upstream
	logger    *slog.Logger
	ttl       int
	pageSize  int
}

// A servedSkill is a skill as the server serves it: its entry, under the
// URIs its server's mount gives it.
type servedSkill struct {
	uri   string // of its SKILL.md, as served
	entry Entry
}

// served returns the skills of set and of the mounted sets, by the URIs
// they are served under.
func served(set *Set, mounts map[string]*Set) []servedSkill {
	var out []servedSkill
	if set != nil {
		for _, k := range set.skills {
			out = append(out, servedSkill{uri: k.uri, entry: k.Entry()})
		}
	}
	for ns, m := range mounts {
		under := func(uri string) string { return schemePrefix + ns + "/" + strings.TrimPrefix(uri, schemePrefix) }
		for _, k := range m.skills {
			e := k.Entry().MapURIs(under)
			out = append(out, servedSkill{uri: e.URI, entry: e})
		}
	}
	slices.SortFunc(out, func(a, b servedSkill) int { return strings.Compare(a.uri, b.uri) })
	// A URI served twice (the server's own skill and a mounted one the
	// mount leaves unreachable) is listed once, as the server's own,
	// which the read of its SKILL.md reaches.
	return slices.CompactFunc(out, func(a, b servedSkill) bool { return a.uri == b.uri })
}

func (h *handler) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case MethodList:
			if r, ok := req.(*mcp.ServerRequest[*ListParams]); ok {
				return h.list(ctx, r)
			}
		case MethodGet:
			if r, ok := req.(*mcp.ServerRequest[*GetParams]); ok {
				return h.get(ctx, r)
			}
		}
		return next(ctx, method, req)
	}
}

// list answers one skills/list: the page after the cursor of the skills
// whose SKILL.md the caller may read.
func (h *handler) list(ctx context.Context, req *mcp.ServerRequest[*ListParams]) (*ListResult, error) {
	var after string
	if req.Params != nil && req.Params.Cursor != "" {
		// A cursor is the URI of a page's last skill, of any scheme when
		// an upstream serves it.
		raw, err := base64.RawURLEncoding.DecodeString(req.Params.Cursor)
		if err != nil || len(raw) == 0 || !utf8.Valid(raw) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
		}
		after = string(raw)
	}
	all := h.served
	anyPrivate := false
	if len(h.upstreams) > 0 {
		all, anyPrivate = h.merged(ctx, req), true
	}
	i, _ := slices.BinarySearchFunc(all, after, func(k servedSkill, uri string) int { return strings.Compare(k.uri, uri) })
	res := &ListResult{Skills: []Entry{}}
	for ; i < len(all); i++ {
		k := all[i]
		if k.uri == after {
			continue
		}
		reads, private := h.srv.ReadsResource(ctx, req, k.uri)
		anyPrivate = anyPrivate || private
		if !reads {
			continue
		}
		if len(res.Skills) == h.pageSize {
			res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(res.Skills[len(res.Skills)-1].URI))
			break
		}
		res.Skills = append(res.Skills, h.entry(ctx, req, &all[i]))
	}
	res.Cacheable = h.cacheable(anyPrivate)
	return res, nil
}

// get answers one skills/get: an unknown skill, and one whose SKILL.md the
// caller may not read, alike.
func (h *handler) get(ctx context.Context, req *mcp.ServerRequest[*GetParams]) (*GetResult, error) {
	if req.Params == nil || req.Params.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/get requires params.uri"}
	}
	k, ok := h.byURI[req.Params.URI]
	var private bool
	if !ok && len(h.upstreams) > 0 {
		k, private = h.upstreamSkill(ctx, req, req.Params.URI), true
		ok = k != nil
	}
	if ok {
		var p bool
		ok, p = h.srv.ReadsResource(ctx, req, k.uri)
		private = private || p
	}
	if !ok {
		data, _ := json.Marshal(map[string]string{"uri": clip(req.Params.URI)})
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Skill not found", Data: data}
	}
	return &GetResult{Cacheable: h.cacheable(private), Skill: h.entry(ctx, req, k)}, nil
}

// ask returns what each upstream answers the caller of req, in the order
// of the upstreams: nil for one that failed, which is logged.
func (h *handler) ask(ctx context.Context, req mcp.Request) [][]Entry {
	c := mcpkit.CallerOf(req)
	lists := make([][]Entry, len(h.upstreams))
	var wg sync.WaitGroup
	for i, u := range h.upstreams {
		wg.Go(func() {
			entries, err := u.ListSkills(ctx, c)
			if err != nil {
				h.logger.Warn("skills: an upstream's skills are left out", "upstream", i, "error", err)
				return
			}
			lists[i] = entries
		})
	}
	wg.Wait()
	return lists
}

// merged returns the skills srv serves and those the upstreams serve the
// caller of req, by URI: a URI that srv serves is srv's skill, one that
// two upstreams serve the earlier one's.
func (h *handler) merged(ctx context.Context, req mcp.Request) []servedSkill {
	lists := h.ask(ctx, req)
	n := len(h.served)
	for _, l := range lists {
		n += len(l)
	}
	out := make([]servedSkill, len(h.served), n)
	copy(out, h.served)
	seen := map[string]bool{}
	for _, l := range lists {
		for _, e := range l {
			if _, own := h.byURI[e.URI]; own || seen[e.URI] || !isSkillURI(e.URI) {
				continue
			}
			seen[e.URI] = true
			out = append(out, servedSkill{uri: e.URI, entry: e})
		}
	}
	slices.SortFunc(out, func(a, b servedSkill) int { return strings.Compare(a.uri, b.uri) })
	return out
}

// isSkillURI reports whether uri names a SKILL.md, as the URI of every
// skill does, whatever its scheme.
func isSkillURI(uri string) bool { return strings.HasSuffix(uri, "/SKILL.md") }

// upstreamSkill returns the skill at uri that the earliest upstream to
// serve it serves the caller of req, or nil.
func (h *handler) upstreamSkill(ctx context.Context, req mcp.Request, uri string) *servedSkill {
	if !isSkillURI(uri) {
		return nil
	}
	for _, l := range h.ask(ctx, req) {
		for _, e := range l {
			if e.URI == uri {
				return &servedSkill{uri: uri, entry: e}
			}
		}
	}
	return nil
}

// entry returns k's entry as the caller of req sees it: without the files
// it may not read (those of a skill nested in k and hidden from it, say),
// whose URIs, sizes and digests are not its to know.
func (h *handler) entry(ctx context.Context, req mcp.Request, k *servedSkill) Entry {
	e := k.entry
	files := make([]Resource, 0, len(e.Resources.Files))
	for _, f := range e.Resources.Files {
		if reads, _ := h.srv.ReadsResource(ctx, req, f.URI); reads {
			files = append(files, f)
		}
	}
	e.Resources.Files = files
	return e
}

func (h *handler) cacheable(private bool) mcp.Cacheable {
	c := mcp.Cacheable{TTLMs: h.ttl, CacheScope: "public"}
	if private {
		c.CacheScope = "private"
	}
	return c
}
