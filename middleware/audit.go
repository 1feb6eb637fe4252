package middleware

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit"
)

// An AuditRecord is the durable record of one decision about one call
// (see [mcpkit.Event]).
type AuditRecord struct {
	// Seq numbers the records an [Audit] hands its sink, from 1, with no
	// gap: a gap is a record lost after it was handed on.
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Method    string    `json:"method"`
	// Name is the name the call named; Tool and Version the identity of
	// the tool it reached (empty when it reached none). For a
	// resources/read, Name is the URI read, clipped to 256 bytes: a URI
	// template's variables are in it, and so is any secret a client puts
	// in them (within the clip). Keep secrets out of URIs, or drop them
	// in a sink of your own.
	Name    string `json:"name"`
	Tool    string `json:"tool,omitempty"`
	Version string `json:"version,omitempty"`
	// Prompt is the identity of the prompt a prompts/get reached.
	Prompt string `json:"prompt,omitempty"`
	// Resource is what a resources/read reached: the resource's URI, or
	// the URI template that matched (its text, without the variables).
	Resource string `json:"resource,omitempty"`
	// Arguments are the call's arguments with every redacted value
	// replaced by "[redacted]", or nil when there were none, they were
	// not JSON, the call reached no tool (so no schema says which of
	// them are secret), or (see ArgumentsBytes) they were too large to
	// record.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// InputRequired is set when the call's result asked the client for
	// input (an input_required result: a confirmation, a question), and
	// Answered when the call carried answers to such a request: a
	// confirmed call is recorded twice, asked, then answered.
	InputRequired bool `json:"input_required,omitempty"`
	Answered      bool `json:"answered,omitempty"`
	// ArgumentsBytes is the size of arguments not recorded for their size.
	ArgumentsBytes int     `json:"arguments_bytes,omitempty"`
	Decision       string  `json:"decision"`
	Outcome        string  `json:"outcome,omitempty"`
	Class          string  `json:"class,omitempty"`
	Reason         string  `json:"reason,omitempty"`
	DurationMS     float64 `json:"duration_ms"`
	TraceID        string  `json:"trace_id,omitempty"`
	// Dropped, on a record of decision "dropped", counts the records
	// dropped since the last one handed on, because the queue was full.
	Dropped uint64 `json:"dropped,omitempty"`
	// Prev is the SHA-256, in hex, of the line before this one, when the
	// sink chains its records (see [JSONLinesOptions]).
	Prev string `json:"prev,omitempty"`
}

// DecisionDropped is the decision of the record an [Audit] writes in place
// of the records it dropped.
const DecisionDropped = "dropped"

// An AuditSink stores audit records. An [Audit] calls WriteAudit from one
// goroutine at a time, in Seq order.
type AuditSink interface {
	WriteAudit(ctx context.Context, rec *AuditRecord) error
}

// AuditOptions configures [NewAudit]. A nil *AuditOptions means the
// defaults.
type AuditOptions struct {
	// Queue is how many records wait for the sink at most; 1024 if zero.
	Queue int
	// Wait is how long a call waits for room in a full queue before its
	// record is dropped (and counted: see [Audit.Dropped]); zero drops at
	// once. A call never waits longer, however slow the sink.
	Wait time.Duration
	// RedactNames are argument names whose values are redacted wherever
	// they appear, in objects at any depth ("password", "token"),
	// compared without regard to case (as encoding/json matches members
	// to struct fields). A name a tool's handler knows an argument by
	// counts under the name a transform gave it too (see
	// transform.Spec.Arguments).
	// Whatever the names, values are redacted where the tool's input
	// schema marks them writeOnly or format "password".
	RedactNames []string
	// Redact, if set, returns the arguments to record, after the other
	// rules; nil records none. It must not modify args. Tool is nil for a
	// prompts/get (whose arguments are an object of strings).
	Redact func(tool *mcpkit.Tool, args json.RawMessage) json.RawMessage
	// MaxArgumentBytes bounds the recorded arguments (after redaction);
	// larger ones are left out and their size recorded. 4096 if zero.
	MaxArgumentBytes int
	// Logger hears of the sink's errors; slog.Default() if nil.
	Logger *slog.Logger
}

// An Audit is an [mcpkit.Observer] that writes one [AuditRecord] per
// decision to a sink, from a queue of its own, so that a slow sink delays
// no call by more than [AuditOptions.Wait]. Attach it with
// [mcpkit.Server.Observe]; call Close on shutdown to write what is queued.
// It records tools/call, prompts/get and resources/read; a
// completion/complete, sent as the user types and changing nothing, is not
// recorded.
type Audit struct {
	sink    AuditSink
	opts    AuditOptions
	names   map[string]bool
	logger  *slog.Logger
	plansMu sync.Mutex
	plans   map[*mcpkit.Tool]*redactPlan // of the tools seen lately (see plan)

	mu     sync.RWMutex // held for reading while sending on queue; for writing to close it
	closed bool
	queue  chan queued
	done   chan struct{}

	dropped atomic.Uint64 // ever
	pending atomic.Uint64 // since the last record handed on
	failed  atomic.Uint64
}

// NewAudit returns an Audit writing to sink, and starts its writer.
func NewAudit(sink AuditSink, opts *AuditOptions) *Audit {
	if sink == nil {
		panic("middleware: NewAudit: nil sink")
	}
	a := &Audit{sink: sink}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.Queue <= 0 {
		a.opts.Queue = 1024
	}
	if a.opts.MaxArgumentBytes <= 0 {
		a.opts.MaxArgumentBytes = 4096
	}
	a.logger = a.opts.Logger
	if a.logger == nil {
		a.logger = slog.Default()
	}
	a.names = make(map[string]bool, len(a.opts.RedactNames))
	for _, n := range a.opts.RedactNames {
		a.names[foldName(n)] = true
	}
	a.queue = make(chan queued, a.opts.Queue)
	a.done = make(chan struct{})
	go a.write()
	return a
}

// Dropped returns how many records the Audit dropped because its queue
// was full (each is also announced in the trail by a record of decision
// "dropped"), and Failed how many its sink failed to write.
func (a *Audit) Dropped() uint64 { return a.dropped.Load() }

// Failed returns how many records the sink failed to write.
func (a *Audit) Failed() uint64 { return a.failed.Load() }

// queued is a record in the queue, with the number of records dropped
// just before it.
type queued struct {
	rec     *AuditRecord
	dropped uint64
}

// Observe queues the record of ev.
func (a *Audit) Observe(ctx context.Context, ev *mcpkit.Event) {
	if ev.Method == "completion/complete" {
		return
	}
	q := queued{rec: a.record(ctx, ev)}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		a.drop()
		return
	}
	q.dropped = a.pending.Swap(0)
	select {
	case a.queue <- q:
		return
	default:
	}
	if a.opts.Wait > 0 {
		t := time.NewTimer(a.opts.Wait)
		defer t.Stop()
		select {
		case a.queue <- q:
			return
		case <-t.C:
		}
	}
	a.pending.Add(q.dropped)
	a.drop()
}

func (a *Audit) drop() {
	a.dropped.Add(1)
	a.pending.Add(1)
}

// Close stops taking records and waits until the queued ones are written,
// or ctx ends. Records of calls after Close are dropped.
func (a *Audit) Close(ctx context.Context) error {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.queue)
	}
	a.mu.Unlock()
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("middleware: audit: %d records not written: %w", len(a.queue), ctx.Err())
	}
}

// write hands the queued records to the sink, numbering them, and a
// record of the drops before each record that follows drops.
func (a *Audit) write() {
	defer close(a.done)
	ctx := context.Background()
	var seq uint64
	put := func(rec *AuditRecord) {
		seq++
		rec.Seq = seq
		if err := a.writeOne(ctx, rec); err != nil {
			a.failed.Add(1)
			a.logger.Error("mcpkit: audit sink failed", "seq", rec.Seq, "err", err)
		}
	}
	for q := range a.queue {
		if q.dropped > 0 {
			put(&AuditRecord{Time: q.rec.Time, Decision: DecisionDropped, Dropped: q.dropped})
		}
		put(q.rec)
	}
	if n := a.pending.Swap(0); n > 0 {
		put(&AuditRecord{Time: time.Now(), Decision: DecisionDropped, Dropped: n})
	}
}

// writeOne hands rec to the sink; a panic of the sink is its error, so
// that it costs the record, not the process.
func (a *Audit) writeOne(ctx context.Context, rec *AuditRecord) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("audit sink panicked: %v", v)
		}
	}()
	return a.sink.WriteAudit(ctx, rec)
}

// maxReason bounds the reason a record gives, in bytes, and maxName the
// name it records (the caller's, of any size; a tool's has at most 128).
const (
	maxReason = 512
	maxName   = 256
)

// record returns the record of ev, its arguments redacted.
func (a *Audit) record(ctx context.Context, ev *mcpkit.Event) *AuditRecord {
	rec := &AuditRecord{
		Time:       ev.Start,
		Principal:  ev.Principal,
		Method:     ev.Method,
		Name:       clipText(ev.Name, maxName),
		Decision:   string(ev.Decision),
		Outcome:    string(ev.Outcome),
		Class:      string(ev.Class),
		DurationMS: float64(ev.Duration) / float64(time.Millisecond),
	}
	if ev.Tool != nil {
		id := ev.Tool.ID()
		rec.Tool, rec.Version = id.Name, id.Version
	}
	if ev.Err != nil {
		rec.Reason = clipText(ev.Err.Error(), maxReason)
	}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		rec.TraceID = sc.TraceID().String()
	}
	switch {
	case ev.Prompt != nil:
		rec.Prompt = ev.Prompt.Key()
	case ev.Resource != nil:
		rec.Resource = ev.Resource.Key()
	case ev.Template != nil:
		rec.Resource = ev.Template.Key()
	}
	if ev.Result != nil && len(ev.Result.InputRequests) > 0 {
		rec.InputRequired = true
	}
	if ev.Request != nil && ev.Request.Call != nil && ev.Request.Call.Params != nil && len(ev.Request.Call.Params.InputResponses) > 0 {
		rec.Answered = true
	}
	// A request that reached nothing (unknown, hidden, refused while
	// draining) has no schema to say what in its arguments is secret:
	// they are not recorded.
	var args json.RawMessage
	switch {
	case ev.Request != nil && ev.Tool != nil && len(ev.Request.Arguments) > 0:
		args = a.redact(ev.Tool, ev.Request.Arguments)
	case ev.PromptRequest != nil && ev.Prompt != nil && len(ev.PromptRequest.Arguments) > 0:
		if b, err := json.Marshal(ev.PromptRequest.Arguments); err == nil {
			args = a.redact(nil, b)
		}
	}
	if args != nil {
		if len(args) > a.opts.MaxArgumentBytes {
			rec.ArgumentsBytes = len(args)
		} else {
			rec.Arguments = args
		}
	}
	return rec
}

// clipText returns s cut to at most n bytes, on a rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// redacted replaces a redacted value.
var redacted = json.RawMessage(`"[redacted]"`)

// redact returns args with the values the rules name replaced; args
// themselves are never modified.
func (a *Audit) redact(t *mcpkit.Tool, args json.RawMessage) json.RawMessage {
	var plan *redactPlan
	if t != nil {
		plan = a.plan(t)
	}
	args = redactJSON(args, plan, a.names)
	if args != nil && a.opts.Redact != nil {
		args = a.opts.Redact(t, args)
	}
	return args
}

// redactJSON returns args with the values that plan (nil: none) and names
// mark secret replaced, and its strings made valid UTF-8; nil when args is
// not JSON or too deep or large to be sure of.
func redactJSON(args json.RawMessage, plan *redactPlan, names map[string]bool) json.RawMessage {
	invalid := !utf8.Valid(args)
	if len(names) == 0 && plan == nil && !invalid {
		return args
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil // not JSON: nothing is shown that may hold a secret
	}
	w := redactWalk{names: names}
	changed := w.value(&v, plan, 0)
	if w.exhausted {
		return nil // too deep or too large to be sure: nothing shown
	}
	if !changed && !invalid {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// maxRedactDepth bounds the walk of arguments and schemas alike, and
// maxRedactVisits the values a walk visits, whatever the plans' branches.
const (
	maxRedactDepth  = 64
	maxRedactVisits = 1 << 14
)

// redactWalk is one walk of a call's arguments.
type redactWalk struct {
	names     map[string]bool
	visits    int
	exhausted bool // the walk stopped short: its result may hold secrets
}

// value redacts, in *v (which the walk owns), the values named by w's
// names and by plan, the schema of *v (nil: none), and reports whether it
// changed anything.
func (w *redactWalk) value(v *any, plan *redactPlan, depth int) bool {
	if depth > maxRedactDepth || w.visits >= maxRedactVisits {
		w.exhausted = true
		return false
	}
	w.visits++
	changed := false
	if plan != nil {
		for _, alt := range plan.alts {
			if w.value(v, alt, depth+1) {
				changed = true
			}
		}
	}
	switch x := (*v).(type) {
	case map[string]any:
		for k, val := range x {
			if _, done := val.(json.RawMessage); done {
				continue // redacted by another branch
			}
			sub := plan.property(k)
			if len(w.names) > 0 && w.names[foldName(k)] || sub.isSecret(0) {
				x[k] = redacted
				changed = true
				continue
			}
			if w.value(&val, sub, depth+1) {
				x[k] = val
				changed = true
			}
		}
	case []any:
		for i := range x {
			if _, done := x[i].(json.RawMessage); done {
				continue
			}
			sub := plan.item(i)
			if sub.isSecret(0) {
				x[i] = redacted
				changed = true
				continue
			}
			if w.value(&x[i], sub, depth+1) {
				changed = true
			}
		}
	}
	return changed
}

// isSecret reports whether p, or a branch of it, marks its whole value
// secret.
func (p *redactPlan) isSecret(depth int) bool {
	if p == nil || depth > 8 {
		return false
	}
	if p.secret {
		return true
	}
	for _, alt := range p.alts {
		if alt.isSecret(depth + 1) {
			return true
		}
	}
	return false
}

// A redactPlan is what a schema says of the values it describes: whether
// they are secret, and the plans of their properties and items.
type redactPlan struct {
	secret     bool
	props      map[string]*redactPlan
	patterns   []patternPlan // of patternProperties: each whose pattern matches applies
	additional *redactPlan   // of a property that no other applies to
	prefix     []*redactPlan // of prefixItems (or items as an array), by index
	items      *redactPlan   // of the items past prefix
	alts       []*redactPlan // of the subschemas of the same value (allOf, if, ...): each applies
}

// A patternPlan is the plan of the properties whose names match re; a
// pattern that does not compile matches every name, so that no secret
// escapes for want of a regexp engine that reads it.
type patternPlan struct {
	re   *regexp.Regexp
	plan *redactPlan
}

// property returns the plan of p's property k, nil when none applies.
func (p *redactPlan) property(k string) *redactPlan {
	if p == nil {
		return nil
	}
	sub := p.props[k]
	matched := sub != nil
	for _, pp := range p.patterns {
		if pp.re != nil && !pp.re.MatchString(k) {
			continue
		}
		matched = true
		if sub == nil {
			sub = pp.plan
		} else {
			sub = &redactPlan{alts: []*redactPlan{sub, pp.plan}}
		}
	}
	if !matched {
		sub = p.additional
	}
	return sub
}

// item returns the plan of p's item i, nil when none applies.
func (p *redactPlan) item(i int) *redactPlan {
	if p == nil {
		return nil
	}
	if i < len(p.prefix) {
		return p.prefix[i]
	}
	return p.items
}

// noPlan is the plan of a schema that marks nothing secret.
var noPlan = &redactPlan{}

// plan returns the plan of t's input schema, nil when it marks nothing
// secret, made once per tool.
func (a *Audit) plan(t *mcpkit.Tool) *redactPlan {
	a.plansMu.Lock()
	p, ok := a.plans[t]
	a.plansMu.Unlock()
	if ok {
		return p
	}
	p = planOf(t.InputSchema)
	if len(a.names) > 0 {
		p = a.renamed(t, p)
	}
	a.plansMu.Lock()
	defer a.plansMu.Unlock()
	if a.plans == nil || len(a.plans) >= maxPlans {
		// Tools come and go: start again rather than keep removed ones.
		a.plans = make(map[*mcpkit.Tool]*redactPlan)
	}
	a.plans[t] = p
	return p
}

// A parentArgument is the handler of a tool derived by transform.Tool that
// renamed arguments: it tells the name the parent knows an argument by.
type parentArgument interface {
	ParentArgument(name string) (string, bool)
}

// renamed returns p with the arguments of t that its lineage renamed from
// a name in RedactNames marked secret too: the rule names the argument,
// whatever a transform calls it now.
func (a *Audit) renamed(t *mcpkit.Tool, p *redactPlan) *redactPlan {
	var secret map[string]*redactPlan
	for _, name := range rootProperties(t.InputSchema) {
		cur, depth := name, 0
		for o := t; o != nil && depth < maxLineage; o, depth = o.Origin, depth+1 {
			pa, ok := o.Handler.(parentArgument)
			if !ok {
				continue
			}
			if parent, ok := pa.ParentArgument(cur); ok {
				cur = parent
				if a.named(cur) {
					if secret == nil {
						secret = make(map[string]*redactPlan)
					}
					secret[name] = &redactPlan{secret: true}
					break
				}
			}
		}
	}
	if secret == nil {
		return p
	}
	own := &redactPlan{props: secret}
	if p == nil {
		return own
	}
	return &redactPlan{alts: []*redactPlan{p, own}}
}

// maxLineage bounds the walk along a tool's origins; real chains have a
// few links.
const maxLineage = 64

// rootProperties returns the names of the properties of schema's root.
func rootProperties(schema any) []string {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(b, &root) != nil {
		return nil
	}
	names := make([]string, 0, len(root.Properties))
	for k := range root.Properties {
		names = append(names, k)
	}
	return names
}

// named reports whether RedactNames names k.
func (a *Audit) named(k string) bool { return a.names[foldName(k)] }

// foldName returns s case-folded: RedactNames match names as
// encoding/json matches a member to a struct field, without regard to
// case, so that "Password" is redacted where "password" is named.
func foldName(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	// Through upper case and back, so that the Kelvin sign and "ſ" fold
	// as encoding/json folds them, to "k" and "s".
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
}

// maxPlans bounds the plans an Audit keeps.
const maxPlans = 4096

// planOf reads schema (any form that marshals to JSON Schema), following
// local $refs, into a plan, or nil when it marks nothing secret.
func planOf(schema any) *redactPlan {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var root map[string]any
	if json.Unmarshal(b, &root) != nil {
		return nil
	}
	pl := planner{root: root, refs: map[string]*redactPlan{}}
	if p := pl.plan(root, 0); p != noPlan {
		return p
	}
	return nil
}

// A planner builds the plan of one schema, each $ref target once: a
// recursive schema gets a cyclic plan, which redactValue's depth bounds.
type planner struct {
	root map[string]any
	refs map[string]*redactPlan
}

// plan returns the plan of s, noPlan when it marks nothing secret.
func (pl *planner) plan(s map[string]any, depth int) *redactPlan {
	if s == nil || depth > maxRedactDepth {
		return noPlan
	}
	var refPlan *redactPlan // what s's $ref leads to, beside s's own keywords
	if ref, ok := s["$ref"].(string); ok {
		refPlan = pl.ref(ref, depth)
	}
	p := &redactPlan{}
	if s["writeOnly"] == true || s["format"] == "password" {
		p.secret = true
		return p
	}
	marks := false
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			if sub, ok := v.(map[string]any); ok {
				if sp := pl.plan(sub, depth+1); sp != noPlan {
					if p.props == nil {
						p.props = map[string]*redactPlan{}
					}
					p.props[k] = sp
					marks = true
				}
			}
		}
	}
	if pats, ok := s["patternProperties"].(map[string]any); ok {
		for pat, v := range pats {
			if sub, ok := v.(map[string]any); ok {
				if sp := pl.plan(sub, depth+1); sp != noPlan {
					re, _ := regexp.Compile(pat) // nil: matches every name
					p.patterns = append(p.patterns, patternPlan{re: re, plan: sp})
					marks = true
				}
			}
		}
	}
	// unevaluatedProperties is taken as additionalProperties: it may
	// apply to fewer names, never to more.
	for _, key := range []string{"additionalProperties", "unevaluatedProperties"} {
		if sub, ok := s[key].(map[string]any); ok && p.additional == nil {
			if sp := pl.plan(sub, depth+1); sp != noPlan {
				p.additional, marks = sp, true
			}
		}
	}
	// Items past the prefix: items (2020-12) or additionalItems (before,
	// when items is the prefix).
	prefix, _ := s["prefixItems"].([]any)
	rest := s["items"]
	if tuple, ok := rest.([]any); ok {
		prefix, rest = tuple, s["additionalItems"]
	}
	for i, v := range prefix {
		sub, _ := v.(map[string]any)
		if sp := pl.plan(sub, depth+1); sp != noPlan {
			if p.prefix == nil {
				p.prefix = make([]*redactPlan, len(prefix))
			}
			p.prefix[i], marks = sp, true
		}
	}
	// unevaluatedItems and contains are taken as items: they may apply
	// to fewer items, never to more.
	for _, sub := range []any{rest, s["unevaluatedItems"], s["contains"]} {
		if sub, ok := sub.(map[string]any); ok && p.items == nil {
			if sp := pl.plan(sub, depth+1); sp != noPlan {
				p.items, marks = sp, true
			}
		}
	}
	// A value that any subschema of the same value marks secret is
	// secret: the branches of a combination, a condition's, a
	// dependency's.
	var same []any
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		branches, _ := s[key].([]any)
		same = append(same, branches...)
	}
	for _, key := range []string{"if", "then", "else"} {
		same = append(same, s[key])
	}
	if deps, ok := s["dependentSchemas"].(map[string]any); ok {
		for _, v := range deps {
			same = append(same, v)
		}
	}
	for _, br := range same {
		if sub, ok := br.(map[string]any); ok {
			if sp := pl.plan(sub, depth+1); sp != noPlan {
				p.alts = append(p.alts, sp)
				marks = true
			}
		}
	}
	if refPlan != nil && refPlan != noPlan {
		if !marks {
			return refPlan
		}
		p.alts = append(p.alts, refPlan)
		marks = true
	}
	if !marks {
		return noPlan
	}
	return p
}

// ref returns the plan of the schema ref names. A reference the planner
// cannot follow (not local, or naming nothing) may lead to a secret: its
// values are redacted whole.
func (pl *planner) ref(ref string, depth int) *redactPlan {
	if p, ok := pl.refs[ref]; ok {
		return p
	}
	target := localRef(pl.root, ref)
	if target == nil {
		return secretPlan
	}
	// Until it is known, a reference to ref within ref's own target is a
	// plan filled in below.
	p := &redactPlan{}
	pl.refs[ref] = p
	got := pl.plan(target, depth+1)
	if got == noPlan {
		pl.refs[ref] = noPlan
		return noPlan
	}
	*p = *got
	return p
}

// secretPlan marks a whole value secret.
var secretPlan = &redactPlan{secret: true}

// localRef returns the schema that ref, a local JSON pointer ("#/$defs/x"),
// names in root, or nil.
func localRef(root map[string]any, ref string) map[string]any {
	if ref == "#" {
		return root
	}
	// A fragment is percent-encoded (RFC 6901, section 6): decoded, then
	// read as a pointer.
	frag, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if !strings.HasPrefix(ref, "#/") || err != nil {
		return nil
	}
	var cur any = root
	for _, tok := range splitPointer(frag[1:]) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	m, _ := cur.(map[string]any)
	return m
}

// splitPointer splits the tokens of a JSON pointer without its leading
// slash, unescaping ~1 and ~0.
func splitPointer(p string) []string {
	var toks []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			tok := p[start:i]
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			toks = append(toks, tok)
			start = i + 1
		}
	}
	return toks
}

// JSONLinesOptions configures [NewJSONLinesSink].
type JSONLinesOptions struct {
	// Chain, if set, gives each record the SHA-256 of the line before it
	// (Prev), so that a line removed or edited later breaks the chain
	// where it was ([VerifyAuditChain] finds it). Keep [JSONLinesSink.Head]
	// somewhere else to detect the removal of the last lines too.
	Chain bool
	// Sync, if set, is called after each line, for instance
	// (*os.File).Sync, so that a record is durable before the next.
	Sync func() error
	// Prev, with Chain, is the hash of the last line of the trail the
	// sink appends to: what [VerifyAuditChain] returned for it, or the
	// [JSONLinesSink.Head] of the process before. The first record names
	// it, so that the chain runs on across restarts. It must be a SHA-256
	// in hexadecimal: otherwise every write fails, with [ErrAuditChain].
	Prev string
}

// A JSONLinesSink is an [AuditSink] writing one JSON object per line.
type JSONLinesSink struct {
	mu    sync.Mutex
	w     io.Writer
	opts  JSONLinesOptions
	head  [sha256.Size]byte
	wrote bool
	torn  bool // the writer's last bytes are a line cut short
	buf   bytes.Buffer

	badPrev error // JSONLinesOptions.Prev cannot be read: no record is written
}

// NewJSONLinesSink returns a sink writing records to w, one per line.
func NewJSONLinesSink(w io.Writer, opts *JSONLinesOptions) *JSONLinesSink {
	j := &JSONLinesSink{w: w}
	if opts != nil {
		j.opts = *opts
	}
	if j.opts.Chain && j.opts.Prev != "" {
		if b, err := hex.DecodeString(j.opts.Prev); err == nil && len(b) == sha256.Size {
			j.head, j.wrote = [sha256.Size]byte(b), true
		} else {
			j.badPrev = fmt.Errorf("%w: JSONLinesOptions.Prev %q is not a SHA-256 in hexadecimal", ErrAuditChain, clipText(j.opts.Prev, 80))
		}
	}
	return j
}

// WriteAudit writes rec as one line.
func (j *JSONLinesSink) WriteAudit(_ context.Context, rec *AuditRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.badPrev != nil {
		return j.badPrev
	}
	if j.opts.Chain && j.wrote {
		rec.Prev = hex.EncodeToString(j.head[:])
	}
	j.buf.Reset()
	if j.torn {
		// A write cut short (a full disk) left part of a line: end it,
		// so that it costs its own record only, not this one too.
		j.buf.WriteByte('\n')
	}
	start := j.buf.Len()
	enc := json.NewEncoder(&j.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return err
	}
	b := j.buf.Bytes()
	n, err := j.w.Write(b)
	if n > 0 {
		j.torn = b[min(n, len(b))-1] != '\n'
	}
	if err != nil {
		return err
	}
	j.head = sha256.Sum256(b[start:])
	j.wrote = true
	if j.opts.Sync != nil {
		return j.opts.Sync()
	}
	return nil
}

// Head returns the SHA-256, in hex, of the last line written, or "".
func (j *JSONLinesSink) Head() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.wrote {
		return ""
	}
	return hex.EncodeToString(j.head[:])
}

// ErrAuditChain is the error [VerifyAuditChain] wraps when a record does
// not follow the one before it.
var ErrAuditChain = errors.New("middleware: audit chain broken")

// VerifyAuditChain reads a chained JSON-lines trail from r and checks that
// each line names the hash of the line before it and that the records are
// numbered without a gap: each from the one before, or from 1 again where
// another Audit (a process restarted, whose sink had
// [JSONLinesOptions.Prev]) went on with the chain. It returns the number of records and the hash of
// the last line (compare it with a [JSONLinesSink.Head] kept elsewhere),
// or an error wrapping ErrAuditChain naming the first line at fault.
func VerifyAuditChain(r io.Reader) (n int, head string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var prev string
	var seq uint64
	for sc.Scan() {
		line := sc.Bytes()
		n++
		var rec struct {
			Seq  uint64 `json:"seq"`
			Prev string `json:"prev"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return n, "", fmt.Errorf("%w: line %d is not a record: %v", ErrAuditChain, n, err)
		}
		if rec.Prev != prev {
			return n, "", fmt.Errorf("%w: line %d does not follow the line before it", ErrAuditChain, n)
		}
		if n > 1 && rec.Seq != seq+1 && rec.Seq != 1 {
			return n, "", fmt.Errorf("%w: line %d is record %d after record %d", ErrAuditChain, n, rec.Seq, seq)
		}
		seq = rec.Seq
		sum := sha256.Sum256(append(line, '\n'))
		prev = hex.EncodeToString(sum[:])
	}
	if err := sc.Err(); err != nil {
		return n, "", err
	}
	return n, prev, nil
}

// A SlogSink is an [AuditSink] writing each record as a log record,
// message "mcp.audit", at level Info (Warn for refusals and failures).
type SlogSink struct{ logger *slog.Logger }

// NewSlogSink returns a sink writing to logger.
func NewSlogSink(logger *slog.Logger) *SlogSink { return &SlogSink{logger: logger} }

// WriteAudit logs rec.
func (s *SlogSink) WriteAudit(ctx context.Context, rec *AuditRecord) error {
	level := slog.LevelInfo
	if rec.Decision != string(mcpkit.DecisionServed) || (rec.Outcome != "" && rec.Outcome != string(mcpkit.OutcomeOK)) {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.Uint64("seq", rec.Seq),
		slog.String("decision", rec.Decision),
		slog.String("principal", rec.Principal),
		slog.String("name", rec.Name),
	}
	add := func(k, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(k, v))
		}
	}
	add("tool", rec.Tool)
	add("version", rec.Version)
	add("prompt", rec.Prompt)
	add("resource", rec.Resource)
	add("outcome", rec.Outcome)
	add("class", rec.Class)
	add("reason", rec.Reason)
	add("trace_id", rec.TraceID)
	if rec.Arguments != nil {
		attrs = append(attrs, slog.String("arguments", string(rec.Arguments)))
	}
	if rec.Dropped > 0 {
		attrs = append(attrs, slog.Uint64("dropped", rec.Dropped))
	}
	if rec.InputRequired {
		attrs = append(attrs, slog.Bool("input_required", true))
	}
	if rec.Answered {
		attrs = append(attrs, slog.Bool("answered", true))
	}
	attrs = append(attrs, slog.Float64("duration_ms", rec.DurationMS))
	s.logger.LogAttrs(ctx, level, "mcp.audit", attrs...)
	return nil
}
