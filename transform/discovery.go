package transform

import (
	"cmp"
	"context"
	"encoding/json"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/schema"
	"github.com/mcpkit/mcpkit/tools"
)

// Names of the meta-tools that [Discovery] adds.
const (
	SearchToolName   = "search_tools"
	DescribeToolName = "describe_tool"
	CallToolName     = "call_tool"
)

// MaxQueryWords is the most words of a search_tools query that count: the
// first distinct ones, in the query's order. A word given again counts
// once, and the words after the first MaxQueryWords distinct ones are not
// read, so that a search costs the same whatever the query's length.
const MaxQueryWords = 32

// DiscoveryOptions configures [Discovery]. A nil *DiscoveryOptions means
// the defaults.
type DiscoveryOptions struct {
	// Match selects the tools that move behind the meta-tools. Nil means
	// every tool but the meta-tools themselves. Tools it does not select
	// stay listed as before.
	Match func(*mcpkit.Tool) bool

	// Limit is the most results a search returns; zero means 10.
	Limit int

	// ProviderScan is the most tools a search reads from a provider (see
	// [mcpkit.Provider]) that does not search its own tools (see
	// [mcpkit.ToolSearcher]): it lists that many of the caller's tools
	// and scores them all. Zero means 1,000; a negative number means such
	// providers are not searched (their tools stay callable through
	// call_tool).
	ProviderScan int
}

// Discovery replaces a large catalog with three meta-tools, for clients
// whose models would otherwise spend their context on hundreds of tool
// definitions: search_tools ranks the tools by keywords found in their
// names, descriptions and argument names; describe_tool returns a tool's
// whole definition; call_tool calls a tool by name with arguments. The
// tools Match selects are no longer listed but stay callable, directly and
// through call_tool.
//
// The meta-tools see what the caller sees: a tool hidden from the caller by
// the server's [mcpkit.Visibility] is neither found, nor described, nor
// callable through call_tool, which answers as for a name never
// registered. A call through call_tool runs the tool's whole chain with
// the caller's request, its validation against the tool's own schema
// included; the server-wide middleware thus runs twice, once around
// call_tool and once around the tool.
//
// The tools of the server's providers (see [mcpkit.Provider]) are found
// too, per caller, without being indexed: a search asks each provider
// that implements [mcpkit.ToolSearcher] for its best tools for the query,
// and reads up to ProviderScan tools of each other one. It scores them
// with the same words and weights as the registered tools, and returns the
// best of both, best first. describe_tool and call_tool reach a provided
// tool by its name as a direct call of it does, so it is judged as that
// tool.
//
// A search scores with BM25 over the collection of what the caller
// reaches: the tools with a word of the query that the caller may call,
// and the provided tools found for it. A tool hidden from the caller
// counts in none of the statistics (the number of tools, the tools of
// each word, their average length), so scores say nothing of it. Only the
// first [MaxQueryWords] distinct words of a query count.
//
// Discovery adds a catalog transform to srv (see [mcpkit.Server.Transform])
// and the three tools; it fails if either fails, for instance when a tool
// of the same name is already registered. Search uses an inverted index
// of the registered tools behind the meta-tools. When
// [mcpkit.Server.Generation] moves on, the next search updates the index
// with the names [mcpkit.Server.ChangedSince] reports, in proportion to
// the change; only when the server no longer knows what changed does it
// walk every served tool.
func Discovery(srv *mcpkit.Server, opts *DiscoveryOptions) error {
	if opts == nil {
		opts = &DiscoveryOptions{}
	}
	d := &discovery{srv: srv, match: opts.Match, limit: cmp.Or(opts.Limit, 10), scan: cmp.Or(opts.ProviderScan, 1000)}
	if d.match == nil {
		d.match = func(*mcpkit.Tool) bool { return true }
	}
	// search_tools and describe_tool only read: said so, so that a rule
	// on destructive tools (middleware.Destructive) leaves them alone.
	search, err := tools.NewWithRequest(SearchToolName, d.search, &tools.Options{
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Search the server's tools by keywords; returns the best matches, best first. The first " +
			strconv.Itoa(MaxQueryWords) + " distinct words count. Call describe_tool for a tool's arguments, then call_tool to call it.",
	})
	if err != nil {
		return err
	}
	describe, err := tools.NewWithRequest(DescribeToolName, d.describe, &tools.Options{
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Describe one tool found with search_tools: its description and the JSON Schema of its arguments.",
	})
	if err != nil {
		return err
	}
	call := &mcpkit.Tool{
		Tool: mcp.Tool{
			Name:        CallToolName,
			Description: "Call a tool found with search_tools, with arguments as describe_tool gives them.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","description":"The tool's name."},` +
				// writeOnly: the arguments are the reached tool's, which
				// its own schema judges (an audit trail redacts them by
				// it, in the reached tool's record), not call_tool's.
				`"arguments":{"type":"object","description":"The tool's arguments.","writeOnly":true}},` +
				`"required":["name"],"additionalProperties":false}`),
		},
		Handler: mcpkit.HandlerFunc(d.call),
	}
	meta := []string{SearchToolName, DescribeToolName, CallToolName}
	// Written here rather than with Select, so that the server's report of
	// a misspelt name in Match says it was written in Discovery (a catalog
	// transform is named by the function that made it).
	hide := func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		if slices.Contains(meta, t.Name) || !d.match(t) {
			return t, nil
		}
		t2 := t.Clone()
		t2.Unlisted = true
		return t2, nil
	}
	if err := srv.Transform(hide); err != nil {
		return err
	}
	return srv.Add(search, describe, call)
}

type discovery struct {
	srv   *mcpkit.Server
	match func(*mcpkit.Tool) bool
	limit int
	scan  int

	mu    sync.Mutex // making an index
	idx   atomic.Pointer[searchIndex]
	docs  map[string]*document // of the indexed tools, by name, kept from one index to the next
	walk  bool                 // always walk the served tools, as before ChangedSince: for benchmarks
	walks uint64               // walks of the served tools made (see diff)

	pmu   sync.Mutex
	pdocs map[*mcpkit.Tool]*document // of tools the index does not hold, bounded (maxProvidedDocs)
}

// maxProvidedDocs bounds the documents kept for tools the index does not
// hold (provided tools, other versions), which are made again when the
// same *Tool is seen again: past it, the discovery starts again with none.
const maxProvidedDocs = 4096

// found returns the tool name the caller reaches behind the meta-tools,
// by the server's route: a registered tool or, when the caller sees none of
// that name, a provider's or a mounted server's.
func (d *discovery) found(ctx context.Context, req *mcpkit.Request, name string) (*mcpkit.Tool, mcpkit.Handler, bool) {
	t, h, ok := d.srv.Resolve(ctx, req, name, nil)
	if !ok || !t.Unlisted || !d.match(t) {
		return nil, nil, false
	}
	return t, h, true
}

// SearchIn is the input of search_tools.
type SearchIn struct {
	Query string `json:"query" description:"Keywords: what the tool should do, or words of its name."`
	Limit int    `json:"limit,omitempty" description:"The most results to return." minimum:"1" maximum:"50"`
}

// SearchOut is the result of search_tools.
type SearchOut struct {
	Tools []Found `json:"tools"`
}

// Found is one tool search_tools found.
type Found struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Score       float64 `json:"score"`
}

func (d *discovery) search(ctx context.Context, req *mcpkit.Request, in SearchIn) (SearchOut, error) {
	terms := queryTerms(in.Query)
	if len(terms) == 0 {
		return SearchOut{}, mcpkit.ToolErrorf("query: give one or more keywords")
	}
	limit := d.limit
	if in.Limit > 0 && in.Limit < limit {
		limit = in.Limit
	}
	// Providers are asked for the words that count, not the query as
	// sent, so that their work is bounded as the index's is.
	var provided []*document
	for _, t := range d.srv.SearchProvided(ctx, req, strings.Join(terms, " "), limit, d.scan) {
		if t.Unlisted && d.match(t) {
			provided = append(provided, d.cachedDocument(t))
		}
	}
	return SearchOut{Tools: d.index(ctx).rank(ctx, d, req, terms, limit, provided)}, nil
}

// queryTerms returns the words of query that a search scores: each once,
// the first MaxQueryWords distinct ones, in the query's order. It reads
// query only as far as it needs to.
func queryTerms(query string) []string {
	var terms []string
	for w := range wordSeq(query) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
			if len(terms) == MaxQueryWords {
				break
			}
		}
	}
	return terms
}

// cachedDocument returns the document of t, a tool the index does not
// hold (a provided tool, or another version than the index's), made once
// per *Tool while the bound allows.
func (d *discovery) cachedDocument(t *mcpkit.Tool) *document {
	d.pmu.Lock()
	doc := d.pdocs[t]
	d.pmu.Unlock()
	if doc != nil {
		return doc
	}
	doc = newDocument(t)
	d.pmu.Lock()
	if d.pdocs == nil || len(d.pdocs) >= maxProvidedDocs {
		d.pdocs = make(map[*mcpkit.Tool]*document)
	}
	d.pdocs[t] = doc
	d.pmu.Unlock()
	return doc
}

// DescribeIn is the input of describe_tool.
type DescribeIn struct {
	Name string `json:"name" description:"The tool's name, as search_tools gave it."`
}

// DescribeOut is the result of describe_tool.
type DescribeOut struct {
	Name         string `json:"name"`
	Title        string `json:"title,omitempty"`
	Description  string `json:"description,omitempty"`
	InputSchema  any    `json:"inputSchema"`
	OutputSchema any    `json:"outputSchema,omitempty"`
}

func (d *discovery) describe(ctx context.Context, req *mcpkit.Request, in DescribeIn) (DescribeOut, error) {
	t, _, ok := d.found(ctx, req, in.Name)
	if !ok {
		return DescribeOut{}, unknown(in.Name)
	}
	return DescribeOut{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}, nil
}

func (d *discovery) call(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return nil, mcpkit.ToolErrorf("arguments: %v", err)
	}
	t, h, ok := d.found(ctx, req, in.Name)
	if !ok {
		return nil, unknown(in.Name)
	}
	sub := req.Clone()
	sub.Tool = t
	sub.Arguments = in.Arguments
	if sub.Call != nil && sub.Call.Params != nil {
		sub.Call.Params.Name = t.Name
		sub.Call.Params.Arguments = in.Arguments
	}
	return h.ServeTool(ctx, sub)
}

// unknown is the answer for a name that is not behind the meta-tools, or
// hidden from the caller: the same in both cases.
func unknown(name string) error {
	return mcpkit.ToolErrorf("unknown tool %q: search_tools lists the tools there are", schema.Clip(name))
}

// A document is a tool as search sees it: the words of its name, its
// description and its argument names, with weights.
type document struct {
	tool   *mcpkit.Tool
	terms  map[string]float64 // word -> weighted count
	len    float64
	walked uint64 // the last walk of the served tools that found it (see diff), under discovery.mu
}

// Field weights: a word in the name says most about a tool.
const (
	weightName        = 3
	weightArgument    = 1.5
	weightDescription = 1
)

func newDocument(t *mcpkit.Tool) *document {
	d := &document{tool: t, terms: map[string]float64{}}
	add := func(text string, w float64) {
		for _, word := range words(text) {
			d.terms[word] += w
			d.len += w
		}
	}
	add(t.Name, weightName)
	add(t.Title, weightName)
	add(t.Description, weightDescription)
	for _, arg := range argumentNames(t.InputSchema) {
		add(arg, weightArgument)
	}
	return d
}

// A searchIndex is an inverted index of the tools behind the meta-tools, as
// the server served them at one generation (see mcpkit.Server.Generation),
// whoever calls: the documents of each word, and their number. A search
// looks at the documents of its words only, and asks the server, for
// each, what the caller reaches by that name (see rank). An
// index is never changed once stored: the next one shares what did not
// change with it.
//
// The documents of a word are in recent when a change since postings was
// made touched the word (an empty list: the word has none left), else in
// postings: a change copies recent alone, and folds it into a copy of
// postings only once it has grown to an eighth of it, so that the copies
// cost in proportion to the changes. A change that only adds documents to
// a word appends them to the word's list: the lists an older index holds
// are shorter, and never see what is appended after their end.
type searchIndex struct {
	gen      uint64
	postings map[string][]*document
	recent   map[string][]*document
	words    int // with documents
	n        int
}

// docs returns the documents of term.
func (idx *searchIndex) docs(term string) []*document {
	if ps, ok := idx.recent[term]; ok {
		return ps
	}
	return idx.postings[term]
}

// index returns the index of the server's current generation, making it
// when the generation moved on: an update of the previous index with the
// names the server says changed since (mcpkit.Server.ChangedSince), each
// looked up, so that its work is in proportion to the change. When the
// server no longer knows what changed (a change of every tool, say), it
// walks the served tools' pointers instead, and updates the index with
// those added and removed, or, when many changed, makes a new index in
// which only tools not seen before are read anew. A generation that
// changed no indexed tool (a provider's catalog, say) costs nothing more.
func (d *discovery) index(ctx context.Context) *searchIndex {
	gen := d.srv.Generation()
	if idx := d.idx.Load(); idx != nil && idx.gen == gen {
		return idx
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if idx := d.idx.Load(); idx != nil && idx.gen == gen {
		return idx
	}
	old := d.idx.Load()
	var idx *searchIndex
	if old != nil && !d.walk {
		if names, now, ok := d.srv.ChangedSince(old.gen); ok {
			idx, gen = d.update(old, d.changesOf(names), true), now
		}
	}
	if idx == nil {
		tools := slices.DeleteFunc(d.srv.Callable(ctx, nil), func(t *mcpkit.Tool) bool { return !d.indexed(t) })
		if old != nil {
			idx = d.update(old, d.diff(tools), false)
		}
		if idx == nil {
			idx = d.build(tools)
		}
	}
	idx.gen = gen
	d.idx.Store(idx)
	return idx
}

// indexed reports whether t is a tool the index holds: one behind the
// meta-tools.
func (d *discovery) indexed(t *mcpkit.Tool) bool { return t.Unlisted && d.match(t) }

// A change is what the index holds under one name (nil: nothing) and what
// it should hold.
type change struct {
	was *document
	now *mcpkit.Tool
}

// changesOf returns the changes of the names the server says changed: for
// each, the tool the server serves now under it, looked up. d.mu is held.
func (d *discovery) changesOf(names []string) []change {
	var out []change
	for _, name := range names {
		var now *mcpkit.Tool
		if t, ok := d.srv.Lookup(name); ok && d.indexed(t) {
			now = t
		}
		if was := d.docs[name]; was == nil && now != nil || was != nil && was.tool != now {
			out = append(out, change{was, now})
		}
	}
	return out
}

// diff returns the changes that make the index's documents those of tools,
// all the indexed tools the server serves: a pass over both. d.mu is held.
func (d *discovery) diff(tools []*mcpkit.Tool) []change {
	var out []change
	d.walks++
	found := 0
	for _, t := range tools {
		was := d.docs[t.Name]
		if was != nil {
			was.walked = d.walks
			found++
		}
		if was == nil || was.tool != t {
			out = append(out, change{was, t})
		}
	}
	if found == len(d.docs) {
		return out
	}
	for _, was := range d.docs {
		if was.walked != d.walks {
			out = append(out, change{was, nil})
		}
	}
	return out
}

// build makes the index of tools. d.mu is held.
func (d *discovery) build(tools []*mcpkit.Tool) *searchIndex {
	idx := &searchIndex{postings: map[string][]*document{}}
	docs := make(map[string]*document, len(tools))
	for _, t := range tools {
		doc := d.docs[t.Name]
		if doc == nil || doc.tool != t {
			doc = newDocument(t)
		}
		docs[t.Name] = doc
		idx.n++
		for term := range doc.terms {
			idx.postings[term] = append(idx.postings[term], doc)
		}
	}
	d.docs = docs
	idx.words = len(idx.postings)
	return idx
}

// update returns old with the changes applied: new postings for the words
// of the documents removed and added. Unless all is set, it returns nil
// when the changes are more than a quarter of the index, which is then
// better made again. d.mu is held.
func (d *discovery) update(old *searchIndex, changes []change, all bool) *searchIndex {
	if !all && len(changes) > (old.n+len(changes))/4+16 {
		return nil
	}
	idx := &searchIndex{postings: old.postings, recent: old.recent, words: old.words, n: old.n}
	if len(changes) == 0 {
		return idx
	}
	type touch struct {
		add  []*document
		lost bool // documents of the word were removed
	}
	gone := make(map[*document]bool, len(changes))
	touched := map[string]touch{}
	for _, c := range changes {
		if doc := c.was; doc != nil {
			gone[doc] = true
			idx.n--
			for term := range doc.terms {
				touched[term] = touch{lost: true}
			}
			delete(d.docs, doc.tool.Name)
		}
	}
	for _, c := range changes {
		if c.now == nil {
			continue
		}
		doc := newDocument(c.now)
		idx.n++
		for term := range doc.terms {
			tc := touched[term]
			tc.add = append(tc.add, doc)
			touched[term] = tc
		}
		d.docs[doc.tool.Name] = doc
	}
	idx.recent = make(map[string][]*document, len(old.recent)+len(touched))
	maps.Copy(idx.recent, old.recent)
	for term, tc := range touched {
		cur := old.docs(term)
		var ps []*document
		if tc.lost {
			ps = make([]*document, 0, len(cur)+len(tc.add))
			for _, doc := range cur {
				if !gone[doc] {
					ps = append(ps, doc)
				}
			}
			ps = append(ps, tc.add...)
		} else {
			// cur is the newest index's: no index holds a longer list
			// of its array, so appending in place is safe.
			ps = append(cur, tc.add...)
		}
		switch {
		case len(cur) == 0 && len(ps) > 0:
			idx.words++
		case len(cur) > 0 && len(ps) == 0:
			idx.words--
		}
		idx.recent[term] = ps
	}
	if len(idx.recent) > len(idx.postings)/8+64 {
		postings := maps.Clone(idx.postings)
		for term, ps := range idx.recent {
			if len(ps) == 0 {
				delete(postings, term)
			} else {
				postings[term] = ps
			}
		}
		idx.postings, idx.recent = postings, nil
	}
	return idx
}

// rank scores the tools that have one of terms with BM25 (k1 = 1.2,
// b = 0.75) over the weighted counts, and returns the first limit, best
// first, ties by name. The collection is what the caller reaches: the
// index's documents of the terms whose tools the caller reaches (each
// asked of the server with d.found), and provided, the documents of the
// provided tools the caller reaches that this search found. Its number of
// documents, the documents of each term and the average length are those
// of this collection alone, so that a tool hidden from the caller changes
// no score. A search costs a pass over its terms' documents with a lookup
// of each. A caller who reaches another version of a name than the index
// holds is scored on that version's own words, and that version counts
// only when it has one of the terms.
func (idx *searchIndex) rank(ctx context.Context, d *discovery, req *mcpkit.Request, terms []string, limit int, provided []*document) []Found {
	const k1, b = 1.2, 0.75
	size := len(provided)
	for _, term := range terms {
		size += len(idx.docs(term))
	}
	candidates := make([]candidate, 0, size)
	var elsewhere map[string]bool // names the index's documents resolved to other tools of
	// Each document of the terms once: under the first term it has.
	for k, term := range terms {
	docs:
		for _, doc := range idx.docs(term) {
			for _, earlier := range terms[:k] {
				if doc.terms[earlier] > 0 {
					continue docs
				}
			}
			t, _, ok := d.found(ctx, req, doc.tool.Name)
			if !ok {
				continue
			}
			if t != doc.tool {
				if elsewhere == nil {
					elsewhere = map[string]bool{}
				}
				elsewhere[t.Name] = true
				if doc = d.documentOf(t); !doc.hasAny(terms) {
					continue
				}
			}
			candidates = append(candidates, candidate{doc: doc})
		}
	}
	// SearchProvided leaves out the names of registered tools the caller
	// sees, and finds none twice; a registered tool hidden from the caller
	// resolved, above, to the tool the caller reaches by its name, which
	// may be a provided one found here too: it counts once.
	for _, doc := range provided {
		if !elsewhere[doc.tool.Name] {
			candidates = append(candidates, candidate{doc: doc})
		}
	}

	n, total := float64(len(candidates)), 0.0
	df := make([]float64, len(terms))
	for _, c := range candidates {
		total += c.doc.len
		for i, term := range terms {
			if c.doc.terms[term] > 0 {
				df[i]++
			}
		}
	}
	avgLen := 1.0
	if n > 0 {
		avgLen = max(total/n, 1)
	}
	idf := make([]float64, len(terms))
	for i := range terms {
		idf[i] = math.Log(1 + (n-df[i]+0.5)/(df[i]+0.5))
	}
	for i := range candidates {
		doc := candidates[i].doc
		var s float64
		for j, term := range terms {
			if tf := doc.terms[term]; tf > 0 {
				s += idf[j] * tf * (k1 + 1) / (tf + k1*(1-b+b*doc.len/avgLen))
			}
		}
		candidates[i].score = roundScore(s)
	}
	head := min(len(candidates), limit)
	selectBest(candidates, head)
	found := make([]Found, 0, head)
	for _, c := range candidates[:head] {
		if c.score > 0 {
			found = append(found, Found{Name: c.doc.tool.Name, Description: c.doc.tool.Description, Score: c.score})
		}
	}
	return found
}

// roundScore rounds a score to four significant digits, so that scores
// print short and tools of nearly the same score tie, to be ordered by
// name. Digits, not decimals: in a collection where most tools have the
// query's words, every score is small, and still orders the tools.
func roundScore(s float64) float64 {
	if s <= 0 {
		return 0
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(s)))
	return math.Round(s*scale) / scale
}

// hasAny reports whether doc has one of terms.
func (doc *document) hasAny(terms []string) bool {
	for _, term := range terms {
		if doc.terms[term] > 0 {
			return true
		}
	}
	return false
}

// A candidate is a document a search scores, with its score.
type candidate struct {
	doc   *document
	score float64
}

// compareCandidates orders candidates best first: by score, then by name.
func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return strings.Compare(a.doc.tool.Name, b.doc.tool.Name)
}

// selectBest moves the best n of cs to its front, sorted, leaving the
// others after them in no order: a heap of n whose root is the worst of
// them, which each other candidate better than it replaces. It costs
// O(len(cs) log n) against a sort's O(len(cs) log len(cs)).
func selectBest(cs []candidate, n int) {
	if n <= 0 {
		return
	}
	h := cs[:n]
	// worse reports whether h[i] should be nearer the root than h[j].
	worse := func(i, j int) bool { return compareCandidates(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			w := i
			if l := 2*i + 1; l < n && worse(l, w) {
				w = l
			}
			if r := 2*i + 2; r < n && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := n; i < len(cs); i++ {
		if compareCandidates(cs[i], h[0]) < 0 {
			cs[i], h[0] = h[0], cs[i]
			down(0)
		}
	}
	slices.SortFunc(h, compareCandidates)
}

// documentOf returns t's document: the index's, or the one kept for a
// version the index does not hold.
func (d *discovery) documentOf(t *mcpkit.Tool) *document {
	d.mu.Lock()
	doc := d.docs[t.Name]
	d.mu.Unlock()
	if doc == nil || doc.tool != t {
		doc = d.cachedDocument(t)
	}
	return doc
}

// words splits text into lower-case words at anything that is not a
// letter or a digit, and at camelCase boundaries ("getUserID" is get, user,
// id), dropping words of one letter.
func words(text string) []string {
	return slices.Collect(wordSeq(text))
}

// wordSeq yields the words of text as words splits them, in order, reading
// text only as far as its consumer asks.
func wordSeq(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start, runes := 0, 0 // of the current word: its offset and length in runes
		prev := utf8.RuneError
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			var next rune = utf8.RuneError
			if i+size < len(text) {
				next, _ = utf8.DecodeRuneInString(text[i+size:])
			}
			split := false
			switch {
			case !unicode.IsLetter(r) && !unicode.IsDigit(r):
				split = true
			case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(prev) || unicode.IsLower(next) && unicode.IsUpper(prev)):
				split = true
			}
			if split {
				if runes > 1 && !yield(strings.ToLower(text[start:i])) {
					return
				}
				runes = 0
			}
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if runes == 0 {
					start = i
				}
				runes++
			}
			prev = r
			i += size
		}
		if runes > 1 {
			yield(strings.ToLower(text[start:]))
		}
	}
}

// argumentNames returns the names of the top-level properties of an input
// schema, whatever its Go type.
func argumentNames(schema any) []string {
	data, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
