package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// A TokenEstimator estimates how many tokens a model reads for a text.
//
// EstimateTokens is called concurrently and many times per cut result (the
// cut is found by bisection), so it should be cheap. It must not decrease
// when text grows: a prefix of a text never costs more than the text.
type TokenEstimator interface {
	EstimateTokens(text string) int
}

// The TokenEstimatorFunc type is an adapter to allow the use of ordinary
// functions as TokenEstimators.
type TokenEstimatorFunc func(text string) int

// EstimateTokens calls f(text).
func (f TokenEstimatorFunc) EstimateTokens(text string) int { return f(text) }

// EstimateTokens is the default [TokenEstimator] of [TokenBudget]: a
// quarter of a token for each ASCII byte, rounded up, and one token for each
// other character (each non-ASCII UTF-8 sequence). It reads text once and
// allocates nothing.
//
// Four ASCII characters to a token is close for English prose and for the
// tokenizers of current models; it underestimates dense ASCII (code, JSON,
// numbers, identifiers, base64 and hex run at 2.5 to 3.5 characters to a
// token, so up to about a third more than estimated) and overestimates
// long common words. One token per other character is close for Chinese
// and Japanese, overestimates accented Latin and Cyrillic text (where a
// token covers several characters), and underestimates emoji and rare
// characters, which take 2 to 4 tokens each. Leave a margin when the
// budget must hold against a client's exact count (20,000 against a limit
// of 25,000, say), or plug in a real tokenizer with [TokenEstimatorFunc].
func EstimateTokens(text string) int { return estimateTokens(text) }

// estimateTokens is EstimateTokens for a string or bytes. It counts
// ASCII bytes (high bit clear) and bytes that start a sequence (the two
// high bits set) eight at a time.
func estimateTokens[T string | []byte](text T) int {
	const high = 0x8080808080808080
	ascii, other := 0, 0
	i := 0
	for ; i+8 <= len(text); i += 8 {
		w := uint64(text[i]) | uint64(text[i+1])<<8 | uint64(text[i+2])<<16 | uint64(text[i+3])<<24 |
			uint64(text[i+4])<<32 | uint64(text[i+5])<<40 | uint64(text[i+6])<<48 | uint64(text[i+7])<<56
		if w&high == 0 {
			ascii += 8
			continue
		}
		ascii += 8 - bits.OnesCount64(w&high)
		other += bits.OnesCount64(w & (w << 1) & high) // bit 6 moved onto bit 7
	}
	for ; i < len(text); i++ {
		switch c := text[i]; {
		case c < utf8.RuneSelf:
			ascii++
		case utf8.RuneStart(c):
			other++
		}
	}
	return (ascii+3)/4 + other
}

// MetaKeyTruncated is the key, in the _meta of a result that [TokenBudget]
// cut, of a [Truncation] recording what was cut. Read it with
// [TruncationOf].
const MetaKeyTruncated = "io.github.mcpkit/truncated"

// A Truncation records how [TokenBudget] cut a result, in estimated tokens.
// It is what the result's _meta holds under [MetaKeyTruncated], and what a
// [TokenBudgetOptions.Hint] is given to word its note.
//
// The text is the text content the model reads: the text blocks or, for a
// result with structured content and no content, the structured content's
// JSON, which the server sends as text. The structured content is measured
// as JSON. The kept sizes leave out the note.
type Truncation struct {
	// Budget is the budget, in tokens.
	Budget int `json:"budgetTokens"`
	// TextTokens and KeptTextTokens are the size of the text content
	// before and after the cut.
	TextTokens     int `json:"textTokens"`
	KeptTextTokens int `json:"keptTextTokens"`
	// TextCut reports that a text block was cut short or left out (a text
	// that repeats the structured content, which follows its trimming, is
	// not counted as cut).
	TextCut bool `json:"textCut,omitempty"`
	// StructuredTokens and KeptStructuredTokens are the size of the
	// structured content before and after the cut; both are zero for a
	// result without structured content and for an error result, whose
	// structured content is kept as it is.
	StructuredTokens     int `json:"structuredTokens,omitempty"`
	KeptStructuredTokens int `json:"keptStructuredTokens,omitempty"`
	// Arrays lists the arrays of the structured content that were
	// trimmed, in the order they were trimmed (largest first).
	Arrays []TrimmedArray `json:"arrays,omitempty"`
	// StructuredDropped reports that the structured content was left out.
	StructuredDropped bool `json:"structuredDropped,omitempty"`
}

// A TrimmedArray is an array of a result's structured content that
// [TokenBudget] shortened, keeping its first Kept elements.
type TrimmedArray struct {
	// Pointer locates the array in the structured content, as a JSON
	// Pointer ("/items", "/groups/0/rows"); "" is the structured content
	// itself.
	Pointer string `json:"pointer"`
	// Length is the number of elements the array had, Kept the number it
	// has now.
	Length int `json:"length"`
	Kept   int `json:"kept"`
}

// TruncationOf returns the [Truncation] that a server using [TokenBudget]
// recorded in res, or nil when res records none. It reads the _meta of a
// result as the server built it and as a client decoded it.
func TruncationOf(res *mcp.CallToolResult) *Truncation {
	if res == nil {
		return nil
	}
	switch v := res.Meta[MetaKeyTruncated].(type) {
	case *Truncation:
		return v
	case nil:
		return nil
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		var t Truncation
		if json.Unmarshal(b, &t) != nil {
			return nil
		}
		return &t
	}
}

// A StructuredPolicy says what [TokenBudget] does with structured content
// that does not fit the budget.
type StructuredPolicy int

const (
	// TrimArrays, the default, shortens the arrays of the structured
	// content, the largest first, each by as many trailing elements as it
	// takes, so that the document stays valid JSON and, for a tool with an
	// output schema, still passes that schema (an array is not cut below
	// the length the schema needs, minItems for instance). When trimming
	// every array cannot make the document fit, it falls back to
	// DropStructured.
	TrimArrays StructuredPolicy = iota

	// DropStructured leaves the structured content out and says so in the
	// note. A tool with an output schema must send structured content (the
	// TypeScript SDK's client rejects a result without it), so for such a
	// tool the call is rejected instead, with a retryable
	// [*mcpkit.ToolError] wrapping [ErrResultTooLarge] that tells the
	// model to ask for less.
	DropStructured
)

// TokenBudgetOptions configures [TokenBudget]. A nil *TokenBudgetOptions
// means the defaults.
type TokenBudgetOptions struct {
	// Estimator estimates the tokens of a text. Nil means
	// TokenEstimatorFunc(EstimateTokens).
	Estimator TokenEstimator

	// Hint, if set, returns the note that ends a cut result, telling the
	// model what is missing and how to get it ("480 more items; call
	// again with offset=20"). It is given the request, whose arguments
	// say where this page started, and what was cut. Nil, or an empty
	// note, means the default note, which says what was cut and asks for
	// less. It must not modify t, which the result's _meta records. It is
	// not used for error results, which get a marker (see [TokenBudget]).
	Hint func(req *mcpkit.Request, t *Truncation) string

	// Link, if set, returns a resource link added after the note (for
	// instance to the full output, stored as a resource), or nil for
	// none. Links are not counted against the budget.
	Link func(req *mcpkit.Request, t *Truncation) *mcp.ResourceLink

	// Structured is what to do with structured content that does not fit.
	// The zero value is TrimArrays.
	Structured StructuredPolicy
}

// TokenBudget returns a Middleware that keeps the results of the rest of
// the chain within a budget of tokens, as the model reading them would
// count them, estimated by [TokenBudgetOptions.Estimator]. A zero or
// negative budget means no limit: the middleware adds no layer. For a
// budget that differs per tool, select tools with [mcpkit.ForTools].
//
// Clients limit what a tool may return (Claude Code, for one, to 25,000
// tokens by default), and show the model either a result's text content or
// its structured content, depending on the client. So each must fit: the
// text blocks, whose estimates are added up, and the JSON of the
// structured content. (A client that shows both may see up to twice the
// budget.) A result within the
// budget passes unchanged; so do input_required results (SEP-2322), and
// results that cannot be marshalled (the server answers those with an
// error).
//
// A result over the budget is cut into a new result; the handler's, its
// content and its _meta are not modified:
//
//   - Structured content is trimmed or dropped as
//     [TokenBudgetOptions.Structured] says; it is never cut into invalid
//     JSON, nor into a document that fails the tool's output schema.
//   - A text block that repeats the structured content as JSON (as the
//     spec recommends, and as typed tools send it) follows it: it becomes
//     the JSON of what was kept. A result with structured content and no
//     content gets that block, as the server would have added it.
//   - The other text blocks share what is left of the budget: they are
//     kept in order while they fit; the first that does not is cut, and
//     those after it are left out. A text is cut at the end of a line if
//     that keeps at least half of what would fit, else at the end of a
//     word on the same terms, else between two characters; never inside a
//     UTF-8 sequence. Images, audio, resource links and embedded resources
//     are kept, and not counted.
//   - A note ends the text: appended to the block that was cut, after a
//     line break, or as a text block of its own. The default note reads
//     `[truncated to fit 25000 tokens: the text was cut from about 41200
//     to 24950 tokens. Ask for less (a narrower query, a smaller page) to
//     see the rest.]`; [TokenBudgetOptions.Hint] words it per tool, and
//     [TokenBudgetOptions.Link] adds a resource link after it.
//   - The _meta gets a [Truncation] under [MetaKeyTruncated] with the
//     sizes before and after, for clients and for the server's own logs.
//
// The cut result, note included, fits the budget: if the note is too long
// to fit, it is cut too.
//
// Errors are bounded as [ResultSizeLimit] bounds them. A result with
// isError set has its text cut like any other, ending with the marker
// `[truncated: the error was about 30000 tokens, the budget is 25000]`
// instead of a note (the hint and link are for results), and keeps its
// structured content. An error whose text the client would see (a tool
// error, or an internal error when errors are not masked) and that is over
// the budget is cut to it, ending with the same marker, keeping its class
// and its chain for errors.Is and errors.As.
//
// TokenBudget belongs inside [Timeout], like [ResultSizeLimit], which
// should be outside it when both are used so that it bounds the bytes of
// the cut result; and outside the server's validation of structured
// output, so that what it cuts has been validated.
func TokenBudget(tokens int, opts *TokenBudgetOptions) mcpkit.Middleware {
	b := &budget{tokens: tokens, est: TokenEstimatorFunc(EstimateTokens), own: true, schemas: make(map[*mcpkit.Tool]*schema.Validator)}
	if opts != nil {
		b.hint, b.link, b.policy = opts.Hint, opts.Link, opts.Structured
		if opts.Estimator != nil {
			b.est, b.own = opts.Estimator, false
		}
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if tokens <= 0 {
			return next
		}
		return &budgetHandler{b: b, next: next}
	}
}

// budget is the configuration of one TokenBudget, shared by every tool it
// wraps, with the output schemas it compiled.
type budget struct {
	tokens int
	est    TokenEstimator
	own    bool // est is EstimateTokens, which also reads bytes
	hint   func(*mcpkit.Request, *Truncation) string
	link   func(*mcpkit.Request, *Truncation) *mcp.ResourceLink
	policy StructuredPolicy

	mu      sync.Mutex
	schemas map[*mcpkit.Tool]*schema.Validator // nil: cannot be compiled
}

// maxSchemas bounds the schemas a TokenBudget keeps compiled. Tools that
// were replaced stay cached until it is reached; then the cache starts
// afresh.
const maxSchemas = 1024

type budgetHandler struct {
	b    *budget
	next mcpkit.Handler
}

// LayerSettings shows the budget in the server's Pipeline.
func (h *budgetHandler) LayerSettings() []mcpkit.Setting {
	return []mcpkit.Setting{{Name: "tokens", Value: strconv.Itoa(h.b.tokens)}}
}

func (h *budgetHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	res, err := h.next.ServeTool(ctx, req)
	if err != nil {
		return nil, h.b.boundError(err)
	}
	if res == nil || res.InputRequests != nil {
		return res, nil // nothing, or input_required: passed untouched
	}
	return h.b.fit(req, res)
}

// boundError returns err, or an error whose visible text is cut to the
// budget.
func (b *budget) boundError(err error) error {
	return reword(err, func(text string) (string, bool) {
		n := b.est.EstimateTokens(text)
		if n <= b.tokens {
			return "", false
		}
		return b.withNote(text, errorNote(&Truncation{Budget: b.tokens, TextTokens: n})), true
	})
}

// estimate estimates the tokens of the JSON data, without copying it
// into a string for the default estimator.
func (b *budget) estimate(data []byte) int {
	if b.own {
		return estimateTokens(data)
	}
	return b.est.EstimateTokens(string(data))
}

// underBytes reports whether the text and the structured content each
// have no more bytes than the budget has tokens: the default estimator
// never counts more tokens than bytes, so they fit without counting.
func (b *budget) underBytes(content []mcp.Content, structured []byte) bool {
	if len(structured) > b.tokens {
		return false
	}
	n := 0
	for _, c := range content {
		if tc, ok := c.(*mcp.TextContent); ok {
			if n += len(tc.Text); n > b.tokens {
				return false
			}
		}
	}
	return true
}

// joinNote returns text followed by note on a line of its own.
func joinNote(text, note string) string {
	if text == "" {
		return note
	}
	return text + "\n" + note
}

// withNote returns the longest cut of text that, followed by note on a
// line of its own, fits the budget; or, if the note alone does not, the
// note cut to fit.
func (b *budget) withNote(text, note string) string {
	reserve := b.est.EstimateTokens("\n" + note)
	for range 4 { // estimates of parts need not add up to the whole's
		out := joinNote(cutText(text, b.tokens-reserve, b.est), note)
		over := b.est.EstimateTokens(out) - b.tokens
		if over <= 0 {
			return out
		}
		reserve += over
	}
	return cutText(note, b.tokens, b.est)
}

// textBlock is a text block of a result being cut.
type textBlock struct {
	tc     *mcp.TextContent
	tokens int
	mirror bool // the JSON of the structured content
}

// fit returns res if it fits the budget, or a cut copy of it, or the
// rejection of a result whose structured content cannot be made to fit.
func (b *budget) fit(req *mcpkit.Request, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	structured, ok := structuredJSON(res)
	if !ok {
		return res, nil // the server answers it with an error
	}
	if res.IsError {
		structured = nil // an error's structured content is kept as it is
	}
	if b.own && b.underBytes(res.Content, structured) {
		return res, nil
	}
	textTokens := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			textTokens += b.est.EstimateTokens(tc.Text)
		}
	}
	structTokens := 0
	if structured != nil {
		structTokens = b.estimate(structured)
	}
	if textTokens <= b.tokens && structTokens <= b.tokens {
		return res, nil
	}
	if structured != nil && !json.Valid(structured) {
		return res, nil // the server answers it with an error
	}

	// A result with structured content and no content is sent with the
	// structured content's JSON as its text: that is the text to cut.
	content := res.Content
	if len(content) == 0 && structured != nil {
		content = []mcp.Content{&mcp.TextContent{Text: string(structured)}}
		textTokens = structTokens
	}
	blocks := make([]textBlock, 0, len(content))
	mirrored := false
	for _, c := range content {
		if tc, ok := c.(*mcp.TextContent); ok {
			m := !mirrored && structured != nil && isMirror(tc.Text, structured)
			mirrored = mirrored || m
			blocks = append(blocks, textBlock{tc: tc, tokens: b.est.EstimateTokens(tc.Text), mirror: m})
		}
	}
	hint, note := b.hint, defaultNote
	if res.IsError {
		hint, note = nil, errorNote
	}

	// The note's length depends on the cut, which must leave room for it:
	// a first cut leaves none, and each next one the room the last note
	// was short of. Notes differ in little more than their numbers, so the
	// second cut usually fits.
	var memo struct {
		target int
		kept   []byte
		arrays []TrimmedArray
		ok     bool
	}
	memo.target = -1
	reserve := 0
	for attempt := 0; ; attempt++ {
		tr := &Truncation{Budget: b.tokens, TextTokens: textTokens, StructuredTokens: structTokens}
		kept := structured
		target := b.tokens
		if mirrored {
			target -= reserve // the note shares the text with the mirror
		}
		if structured != nil && structTokens > target {
			if target != memo.target {
				t := &Truncation{}
				memo.kept, memo.ok = b.trim(req.Tool, structured, target, t)
				memo.target, memo.arrays = target, t.Arrays
			}
			kept, tr.Arrays = memo.kept, memo.arrays
			if !memo.ok {
				if b.schemaOf(req.Tool) != nil {
					return nil, reject(ErrResultTooLarge, fmt.Sprintf("tool %q result is about %d tokens, the budget is %d: its structured content cannot be cut to fit; ask for less", req.Tool.Name, max(textTokens, structTokens), b.tokens))
				}
				kept, tr.Arrays, tr.StructuredDropped = nil, nil, true
			}
		}
		if kept != nil {
			tr.KeptStructuredTokens = b.estimate(kept)
		}
		out, cutAt := b.cutContent(content, blocks, kept, b.tokens-reserve, tr)

		var text string
		if hint != nil {
			text = hint(req, tr)
		}
		if text == "" {
			text = note(tr)
		}
		if cutAt >= 0 {
			tc := out[cutAt].(*mcp.TextContent)
			tc.Text = joinNote(tc.Text, text)
		} else {
			cutAt = len(out)
			out = append(out, &mcp.TextContent{Text: text})
		}
		total := 0
		for _, c := range out {
			if tc, ok := c.(*mcp.TextContent); ok {
				total += b.est.EstimateTokens(tc.Text)
			}
		}
		if over := total - b.tokens; over > 0 {
			if attempt < 3 {
				// At least what the note took, since a cut at a line may
				// free more than asked or nothing at all.
				reserve = max(reserve+over, total-tr.KeptTextTokens)
				continue
			}
			// Still too long: the note is cut as well.
			tc := out[cutAt].(*mcp.TextContent)
			tc.Text = cutText(tc.Text, b.est.EstimateTokens(tc.Text)-over, b.est)
		}
		if b.link != nil && !res.IsError {
			if l := b.link(req, tr); l != nil {
				out = append(out, l)
			}
		}
		r := *res
		r.Content = out
		switch {
		case res.IsError:
		case kept == nil:
			r.StructuredContent = nil
		case len(tr.Arrays) > 0:
			r.StructuredContent = json.RawMessage(kept)
		}
		r.Meta = maps.Clone(res.Meta)
		if r.Meta == nil {
			r.Meta = mcp.Meta{}
		}
		r.Meta[MetaKeyTruncated] = tr
		return &r, nil
	}
}

// cutContent returns a copy of content whose text fits room tokens, and
// the index of the block it cut short, or -1. The block that repeats the
// structured content becomes kept, unless kept is nil (the structured
// content is left out), when it is text like any other. It records the
// text kept in tr.
func (b *budget) cutContent(content []mcp.Content, blocks []textBlock, kept []byte, room int, tr *Truncation) ([]mcp.Content, int) {
	for _, t := range blocks {
		if t.mirror && kept != nil {
			room -= tr.KeptStructuredTokens
		}
	}
	out := make([]mcp.Content, 0, len(content)+2)
	cutAt, next := -1, 0
	for _, c := range content {
		if next == len(blocks) || c != mcp.Content(blocks[next].tc) {
			out = append(out, c) // not text: kept, not counted
			continue
		}
		t := blocks[next]
		next++
		switch {
		case t.mirror && kept != nil:
			m := *t.tc
			m.Text = string(kept)
			out = append(out, &m)
			tr.KeptTextTokens += tr.KeptStructuredTokens
		case tr.TextCut:
			// Text after a cut would read as if nothing were missing.
		case t.tokens <= room:
			out = append(out, c)
			room -= t.tokens
			tr.KeptTextTokens += t.tokens
		default:
			tr.TextCut = true
			short := *t.tc
			short.Text = cutText(t.tc.Text, room, b.est)
			tr.KeptTextTokens += b.est.EstimateTokens(short.Text)
			cutAt = len(out)
			out = append(out, &short)
		}
	}
	return out, cutAt
}

// structuredJSON returns the JSON of res's structured content, nil if it
// has none, and false if it cannot be marshalled.
func structuredJSON(res *mcp.CallToolResult) ([]byte, bool) {
	switch sc := res.StructuredContent.(type) {
	case nil:
		return nil, true
	case json.RawMessage:
		return sc, true // checked if it must be cut
	default:
		data, err := json.Marshal(sc)
		return data, err == nil
	}
}

// isMirror reports whether text is the JSON of the structured content,
// byte for byte or once both are compacted.
func isMirror(text string, structured []byte) bool {
	if text == string(structured) {
		return true
	}
	t := strings.TrimLeft(text, " \t\r\n")
	if t == "" || t[0] != '{' && t[0] != '[' {
		return false
	}
	var a, c bytes.Buffer
	if json.Compact(&a, []byte(text)) != nil || json.Compact(&c, structured) != nil {
		return false
	}
	return bytes.Equal(a.Bytes(), c.Bytes())
}

// defaultNote words what tr records.
func defaultNote(tr *Truncation) string {
	var parts []string
	if tr.TextCut {
		parts = append(parts, fmt.Sprintf("the text was cut from about %d to %d tokens", tr.TextTokens, tr.KeptTextTokens))
	}
	for _, a := range tr.Arrays {
		where := "the structured content"
		if a.Pointer != "" {
			where = a.Pointer
		}
		parts = append(parts, fmt.Sprintf("%s kept %d of %d items", where, a.Kept, a.Length))
	}
	if tr.StructuredDropped {
		parts = append(parts, fmt.Sprintf("the structured content (about %d tokens) was left out", tr.StructuredTokens))
	}
	return fmt.Sprintf("[truncated to fit %d tokens: %s. Ask for less (a narrower query, a smaller page) to see the rest.]", tr.Budget, strings.Join(parts, "; "))
}

// errorNote words the cut of an error's text, as [ResultSizeLimit] does.
func errorNote(tr *Truncation) string {
	return fmt.Sprintf("[truncated: the error was about %d tokens, the budget is %d]", tr.TextTokens, tr.Budget)
}

// cutText returns the longest prefix of s estimated at no more than room
// tokens, ending at a line break if that keeps at least half of it, else
// at a space on the same terms, else at a character boundary. The line
// break or space itself is left out.
func cutText(s string, room int, est TokenEstimator) string {
	if room <= 0 {
		return ""
	}
	if est.EstimateTokens(s) <= room {
		return s
	}
	// The longest prefix that fits: est(s[:lo]) <= room < est(s[:hi]).
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if est.EstimateTokens(s[:mid]) <= room {
			lo = mid
		} else {
			hi = mid
		}
	}
	for lo > 0 && !utf8.RuneStart(s[lo]) {
		lo-- // never inside a UTF-8 sequence
	}
	// The character after the prefix counts: a prefix followed by a line
	// break ends at a line. Est(s) > room, so there is one.
	p := s[:lo+1]
	if i := strings.LastIndexByte(p, '\n'); i >= 0 && i >= lo/2 {
		return strings.TrimRight(p[:i], "\r")
	}
	if i := strings.LastIndexAny(p, " \t"); i >= 0 && i >= lo/2 {
		return strings.TrimRight(p[:i], " \t")
	}
	return s[:lo]
}

// schemaOf returns the compiled output schema of tool, or nil when it has
// none, it cannot be compiled, or the tool does not validate.
func (b *budget) schemaOf(tool *mcpkit.Tool) *schema.Validator {
	if tool.OutputSchema == nil || tool.Validation == mcpkit.NoValidation {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.schemas[tool]; ok {
		return v
	}
	if len(b.schemas) >= maxSchemas {
		clear(b.schemas)
	}
	v, err := schema.Compile(tool.OutputSchema)
	if err != nil {
		v = nil // a tool the server accepted has a schema that compiles
	}
	b.schemas[tool] = v
	return v
}

// maxTrims bounds the arrays trimmed in one result, so that a document of
// many small arrays does not cost a pass per array.
const maxTrims = 64

// trim shortens the arrays of doc, the largest first, until the document
// is estimated at target tokens or less, and records each array it trims in
// tr. With the tool's output schema, a document that passes it is only ever
// replaced by one that passes it too. It reports false if the document
// cannot be made to fit, or if the policy is not to trim.
func (b *budget) trim(tool *mcpkit.Tool, doc []byte, target int, tr *Truncation) ([]byte, bool) {
	if b.policy != TrimArrays || target <= 0 {
		return nil, false
	}
	fits := func(d []byte) bool { return b.estimate(d) <= target }
	v := b.schemaOf(tool)
	if v != nil && v.Validate(doc) != nil {
		v = nil // nothing to keep: the tool's output did not pass as it was
	}
	valid := func(d []byte) bool { return v == nil || v.Validate(d) == nil }
	done := make(map[string]bool)
	for range maxTrims {
		if fits(doc) {
			return doc, true
		}
		var a *jsonArray
		arrays := scanArrays(doc)
		for i := range arrays {
			c := &arrays[i]
			if !done[c.ptr] && len(c.ends) > 0 && (a == nil || c.close-c.open > a.close-a.open) {
				a = c
			}
		}
		if a == nil {
			return nil, false
		}
		done[a.ptr] = true
		// The most elements that fit (none, if even the empty array does
		// not); then, if the schema wants more, the fewest that pass it:
		// with all n, the document passes.
		n := len(a.ends)
		k := 0
		if fits(a.cut(doc, 0)) {
			lo, hi := 0, n // cut(lo) fits, cut(hi) (doc) does not
			for hi-lo > 1 {
				mid := int(uint(lo+hi) >> 1)
				if fits(a.cut(doc, mid)) {
					lo = mid
				} else {
					hi = mid
				}
			}
			k = lo
		}
		if !valid(a.cut(doc, k)) {
			lo, hi := k, n // cut(lo) fails, cut(hi) passes
			for hi-lo > 1 {
				mid := int(uint(lo+hi) >> 1)
				if valid(a.cut(doc, mid)) {
					hi = mid
				} else {
					lo = mid
				}
			}
			k = hi
		}
		if k == n {
			continue // the schema needs every element
		}
		doc = a.cut(doc, k)
		tr.Arrays = append(tr.Arrays, TrimmedArray{Pointer: a.ptr, Length: n, Kept: k})
	}
	if fits(doc) {
		return doc, true
	}
	return nil, false
}

// A jsonArray is an array in a JSON document.
type jsonArray struct {
	ptr   string // its JSON Pointer
	open  int    // the offset of its '['
	close int    // the offset of its ']'
	ends  []int  // the offset just after each element
}

// cut returns a copy of doc in which a keeps its first k elements.
func (a *jsonArray) cut(doc []byte, k int) []byte {
	from := a.open + 1
	if k > 0 {
		from = a.ends[k-1]
	}
	out := make([]byte, 0, from+len(doc)-a.close)
	out = append(out, doc[:from]...)
	return append(out, doc[a.close:]...)
}

// scanArrays returns the arrays of doc, which must be valid JSON, in the
// order they open.
func scanArrays(doc []byte) []jsonArray {
	s := &arrayScanner{d: doc}
	s.value(0)
	return s.out
}

type arrayScanner struct {
	d    []byte
	out  []jsonArray
	path []pathSeg
}

// A pathSeg is a step of the path to the value being scanned: a member's
// name, as written in the document, or an element's index.
type pathSeg struct {
	key   []byte // nil for an index
	index int
}

func (s *arrayScanner) space(i int) int {
	for i < len(s.d) && (s.d[i] == ' ' || s.d[i] == '\t' || s.d[i] == '\n' || s.d[i] == '\r') {
		i++
	}
	return i
}

// value scans the value at i and returns the offset just after it.
func (s *arrayScanner) value(i int) int {
	i = s.space(i)
	switch s.d[i] {
	case '{':
		i = s.space(i + 1)
		if s.d[i] == '}' {
			return i + 1
		}
		for {
			end := s.str(i)
			s.path = append(s.path, pathSeg{key: s.d[i:end]})
			i = s.space(end) + 1 // the colon
			i = s.space(s.value(i))
			s.path = s.path[:len(s.path)-1]
			if s.d[i] == '}' {
				return i + 1
			}
			i = s.space(i + 1) // the comma
		}
	case '[':
		idx := len(s.out)
		s.out = append(s.out, jsonArray{ptr: s.pointer(), open: i})
		i = s.space(i + 1)
		if s.d[i] == ']' {
			s.out[idx].close = i
			return i + 1
		}
		for k := 0; ; k++ {
			s.path = append(s.path, pathSeg{index: k})
			end := s.value(i)
			s.path = s.path[:len(s.path)-1]
			s.out[idx].ends = append(s.out[idx].ends, end)
			i = s.space(end)
			if s.d[i] == ']' {
				s.out[idx].close = i
				return i + 1
			}
			i = i + 1 // the comma
		}
	case '"':
		return s.str(i)
	default: // a number, true, false or null
		for i < len(s.d) && !strings.ContainsRune(",]} \t\r\n", rune(s.d[i])) {
			i++
		}
		return i
	}
}

// str returns the offset just after the string that starts at i.
func (s *arrayScanner) str(i int) int {
	for i++; s.d[i] != '"'; i++ {
		if s.d[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// pointer returns the JSON Pointer of the value being scanned.
func (s *arrayScanner) pointer() string {
	var b strings.Builder
	for _, seg := range s.path {
		b.WriteByte('/')
		if seg.key == nil {
			fmt.Fprint(&b, seg.index)
			continue
		}
		var name string
		if json.Unmarshal(seg.key, &name) != nil {
			name = string(seg.key[1 : len(seg.key)-1])
		}
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
