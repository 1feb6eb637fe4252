package transform

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/visibility"
)

func indexTool(name, version, desc string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: name, Description: desc,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
		Version: version,
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil }),
	}
}

// sameIndex fails unless got and want index the same tools with the same
// documents per word and the same counts.
func sameIndex(t *testing.T, got, want *searchIndex) {
	t.Helper()
	if got.n != want.n {
		t.Fatalf("index of n %d; want n %d", got.n, want.n)
	}
	if got.words != want.words || want.words != len(want.postings) {
		t.Fatalf("%d words; want %d (%d listed)", got.words, want.words, len(want.postings))
	}
	names := func(docs []*document) []string {
		var out []string
		for _, d := range docs {
			out = append(out, fmt.Sprintf("%s@%s %p", d.tool.Name, d.tool.Version, d.tool))
		}
		slices.Sort(out)
		return out
	}
	for term, docs := range want.postings {
		if g, w := names(got.docs(term)), names(docs); !slices.Equal(g, w) {
			t.Fatalf("documents of %q = %v; want %v", term, g, w)
		}
	}
}

// contents returns what idx holds, as text: every word with its
// documents.
func contents(idx *searchIndex) string {
	words := slices.Sorted(maps.Keys(idx.postings))
	for w := range idx.recent {
		if _, ok := idx.postings[w]; !ok {
			words = append(words, w)
		}
	}
	slices.Sort(words)
	var b strings.Builder
	for _, w := range words {
		fmt.Fprintf(&b, "%s:", w)
		for _, doc := range idx.docs(w) {
			fmt.Fprintf(&b, " %p", doc)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestIndexUpdate changes the registry at random, a few changes at a time
// (tools added and removed, a new version of a name, a version removed,
// rules by name and by match, a transform of one name), and checks that
// the index updated with the names mcpkit.Server.ChangedSince reports is
// the index made from scratch, as is the one updated by a walk of the
// served tools; and that a generation that changes no indexed tool keeps
// the index's postings.
func TestIndexUpdate(t *testing.T) {
	ctx := context.Background()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "index"}, nil)
	rules := visibility.New()
	rules.Attach(srv)
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	rng := rand.New(rand.NewPCG(3, 5))
	desc := func() string {
		return fmt.Sprintf("%s the %s of %s.", words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))])
	}
	var live []string
	for i := range 200 {
		name := fmt.Sprintf("tool_%03d", i)
		if err := srv.Add(indexTool(name, "1", desc())); err != nil {
			t.Fatal(err)
		}
		live = append(live, name)
	}
	if err := Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	all := func(*mcpkit.Tool) bool { return true }
	d := &discovery{srv: srv, match: all}
	walker := &discovery{srv: srv, match: all, walk: true}
	d.index(ctx)
	walker.index(ctx)
	var inEffect []*visibility.Rule
	next, incremental := 200, 0
	for round := range 60 {
		for range 1 + rng.IntN(6) {
			switch rng.IntN(8) {
			case 0:
				name := fmt.Sprintf("tool_%03d", next)
				next++
				if err := srv.Add(indexTool(name, "1", desc())); err != nil {
					t.Fatal(err)
				}
				live = append(live, name)
			case 1:
				i := rng.IntN(len(live))
				srv.Remove(live[i])
				live = slices.Delete(live, i, i+1)
			case 2:
				if err := srv.Add(indexTool(live[rng.IntN(len(live))], fmt.Sprint(2+round), desc())); err != nil {
					t.Fatal(err)
				}
			case 3:
				name := live[rng.IntN(len(live))]
				if ts, ok := srv.Lookup(name); ok && ts.Version != "1" {
					srv.RemoveVersion(name, ts.Version)
				}
			case 4:
				r := visibility.DisableNames(live[rng.IntN(len(live))], live[rng.IntN(len(live))])
				rules.Add(r)
				inEffect = append(inEffect, r)
			case 5:
				w := words[rng.IntN(len(words))] + " "
				r := visibility.Disable(func(t *mcpkit.Tool) bool { return strings.HasPrefix(t.Description, w) })
				rules.Add(r)
				inEffect = append(inEffect, r)
			case 6:
				if len(inEffect) > 0 {
					i := rng.IntN(len(inEffect))
					rules.Remove(inEffect[i])
					inEffect = slices.Delete(inEffect, i, i+1)
				}
			case 7:
				target := live[rng.IntN(len(live))]
				word := words[rng.IntN(len(words))]
				if err := srv.Transform(func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
					if t.Name != target {
						return t, nil
					}
					t2 := t.Clone()
					t2.Description += " " + word + " kappa"
					return t2, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		prev := d.idx.Load()
		if _, _, ok := srv.ChangedSince(prev.gen); ok {
			incremental++
		}
		before := contents(prev)
		got := d.index(ctx)
		if after := contents(prev); after != before {
			t.Fatalf("round %d: updating the index changed the index before it", round)
		}
		if got.gen != srv.Generation() {
			t.Fatalf("round %d: index of generation %d; the server is at %d", round, got.gen, srv.Generation())
		}
		fresh := (&discovery{srv: srv, match: all}).index(ctx)
		sameIndex(t, got, fresh)
		sameIndex(t, walker.index(ctx), fresh)
	}
	if incremental < 50 {
		t.Errorf("%d of 60 rounds were updated with the names changed; want nearly all", incremental)
	}

	before := d.index(ctx)
	srv.ProviderChanged("")
	after := d.index(ctx)
	if after.gen == before.gen || fmt.Sprintf("%p %p", after.postings, after.recent) != fmt.Sprintf("%p %p", before.postings, before.recent) {
		t.Errorf("a generation that changed no indexed tool made new postings (or kept the old generation)")
	}
}

// TestSelectBest checks that selectBest puts the best n candidates first,
// in order, and keeps every candidate: the sorted list's first n, with
// ties of score told apart by name.
func TestSelectBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	for round := range 200 {
		cs := make([]candidate, rng.IntN(60))
		for i := range cs {
			cs[i] = candidate{&document{tool: indexTool(fmt.Sprintf("t%03d", i), "", "")}, float64(rng.IntN(8))}
		}
		rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		want := slices.SortedFunc(slices.Values(cs), compareCandidates)
		n := rng.IntN(len(cs) + 1)
		selectBest(cs, n)
		if !slices.Equal(cs[:n], want[:n]) {
			t.Fatalf("round %d: the best %d of %d are not first", round, n, len(cs))
		}
		slices.SortFunc(cs, compareCandidates)
		if !slices.Equal(cs, want) {
			t.Fatalf("round %d: candidates lost or duplicated", round)
		}
	}
}

// FuzzSearchQuery searches a small catalog with any query, registered and
// provided tools together: the words are lower-case letters and digits of
// two or more runes, split as a reading of the whole query rune by rune
// splits them; the terms searched are the query's first distinct words, at
// most MaxQueryWords; and the answer is at most the limit, of tools that
// exist, best first, the same when the query is given twice over.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{"list invoices", "getUserID", "HTTPServer v2", "ÄÖÜ straße", "a b c", "", "\xff\xfe", "x_y-z.w"} {
		f.Add(q, 3)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "fuzz"}, nil)
	for _, name := range []string{"list_invoices", "get_user_id", "http_server_status", "strasse_map"} {
		if err := srv.Add(indexTool(name, "", "Does "+name+".")); err != nil {
			f.Fatal(err)
		}
	}
	srv.AddProvider(fuzzProvider{indexTool("provided_invoices", "", "Lists provided invoices.")})
	if err := Discovery(srv, nil); err != nil {
		f.Fatal(err)
	}
	d := &discovery{srv: srv, match: func(*mcpkit.Tool) bool { return true }, limit: 10, scan: 100}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, query string, limit int) {
		ws := words(query)
		for _, w := range ws {
			if len([]rune(w)) < 2 || w != strings.ToLower(w) {
				t.Fatalf("words(%q) has %q", query, w)
			}
		}
		if want := wordsByRunes(query); !slices.Equal(ws, want) {
			t.Fatalf("words(%q) = %q; read rune by rune: %q", query, ws, want)
		}
		terms := queryTerms(query)
		var distinct []string
		for _, w := range ws {
			if !slices.Contains(distinct, w) && len(distinct) < MaxQueryWords {
				distinct = append(distinct, w)
			}
		}
		if !slices.Equal(terms, distinct) {
			t.Fatalf("queryTerms(%q) = %q; want the first %d distinct words, %q", query, terms, MaxQueryWords, distinct)
		}
		out, err := d.search(ctx, &mcpkit.Request{}, SearchIn{Query: query, Limit: limit})
		if err != nil {
			return // no words: a tool error
		}
		if len(out.Tools) > 10 || limit > 0 && len(out.Tools) > limit {
			t.Fatalf("%d tools for limit %d", len(out.Tools), limit)
		}
		for i, found := range out.Tools {
			if _, _, ok := d.found(ctx, &mcpkit.Request{}, found.Name); !ok {
				t.Fatalf("found %q, which the caller does not reach", found.Name)
			}
			if i > 0 && found.Score > out.Tools[i-1].Score {
				t.Fatalf("not best first: %v", out.Tools)
			}
		}
		twice, err := d.search(ctx, &mcpkit.Request{}, SearchIn{Query: query + " " + query, Limit: limit})
		if err != nil || !slices.Equal(twice.Tools, out.Tools) {
			t.Fatalf("the query twice over found %v, %v; once: %v", twice.Tools, err, out.Tools)
		}
	})
}

// wordsByRunes is words as it was first written, over the query's runes:
// the reference that words is checked against.
func wordsByRunes(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 1 {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// TestQueryTerms checks that a search scores each word of its query once,
// and at most MaxQueryWords of them, whatever the query's length: one
// word repeated 20,000 times is one term, and a query of 1,000 distinct
// words is its first MaxQueryWords.
func TestQueryTerms(t *testing.T) {
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf("w%03d", i)
	}
	tests := []struct {
		name, query string
		want        []string
	}{
		{"one word repeated", strings.Repeat("invoices ", 20_000), []string{"invoices"}},
		{"cases of one word", "Invoices INVOICES invoices", []string{"invoices"}},
		{"in the query's order", "list invoices list export invoices", []string{"list", "invoices", "export"}},
		{"distinct words beyond the cap", strings.Join(many, " "), many[:MaxQueryWords]},
		{"repeated beyond the cap", strings.Repeat(strings.Join(many[:40], " ")+" ", 500), many[:MaxQueryWords]},
		{"no words", "a b c", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := queryTerms(tt.query); !slices.Equal(got, tt.want) {
				t.Errorf("queryTerms = %q (%d terms); want %q", got, len(got), tt.want)
			}
		})
	}
}

// fuzzProvider provides one tool to everyone, and searches nothing.
type fuzzProvider struct{ t *mcpkit.Tool }

func (p fuzzProvider) ListTools(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Tool, error) {
	if p.t.Name > after {
		return []*mcpkit.Tool{p.t}, nil
	}
	return nil, nil
}

func (p fuzzProvider) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if name == p.t.Name {
		return p.t, nil
	}
	return nil, nil
}
