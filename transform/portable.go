package transform

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/portable"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// A Profile is what one kind of model provider accepts in the input schema
// of a tool that a client hands it: MCP clients pass tool schemas on to the
// model's API, and each API takes its own subset of JSON Schema, refusing
// the whole request (every tool of the session) when one schema strays
// from it. [Portable] rewrites a catalog for a profile; [CheckPortable]
// reports what a catalog breaks.
//
// The package documentation of internal/portable lists each rule with the
// provider documentation or the API error it comes from.
type Profile int

// The profiles.
const (
	// AllProviders is the portable profile, the intersection of the
	// others: what Gemini and OpenAI's strict mode both know, used as
	// both allow it (one type per schema; anyOf alone, never directly in
	// items; enums of strings; no $ref; only the date-time format;
	// Gemini's argument names), with null written
	// {"anyOf": [{...}, {"type": "null"}]}, which every provider and
	// JSON Schema read alike. Its root is never anyOf, oneOf or allOf,
	// which Anthropic refuses too. A schema for AllProviders is accepted
	// as it is by Gemini and by OpenAI and Anthropic in their default
	// modes; OpenAI's strict mode also wants every object closed with
	// additionalProperties: false, which Gemini refuses, so a client
	// that turns strict mode on must be served [OpenAIStrict].
	AllProviders Profile = 1
	// Gemini is the Gemini API's function declarations (Google AI and
	// Vertex AI): an OpenAPI 3.0 subset whose schemas each name one type
	// (or are an anyOf with nothing beside it), with nullable: true for
	// null, no $ref, no additionalProperties, properties on every object
	// below the root, items on every array and no anyOf directly inside
	// items.
	Gemini Profile = 2
	// OpenAIStrict is OpenAI's function calling with "strict": true (and
	// Structured Outputs): every object closed with additionalProperties:
	// false and every property required, an optional one written as a
	// union with null; $ref and recursion allowed; no default, no
	// minLength or maxLength, only its nine string formats.
	OpenAIStrict Profile = 3
)

// String returns the profile's name, "AllProviders", "Gemini" or
// "OpenAIStrict".
func (p Profile) String() string { return portable.Profile(p).String() }

func (p Profile) valid() bool { return portable.Profile(p).Valid() }

// ErrNotPortable is wrapped by the errors of the transforms of [Portable]:
// the tool uses what the profile cannot express.
var ErrNotPortable = errors.New("transform: not portable")

// PortableOptions configures [Portable]. A nil *PortableOptions means the
// defaults.
type PortableOptions struct {
	// RecursionDepth is how many times a profile without $ref
	// (AllProviders, Gemini) writes a recursive schema (a tree) out
	// inside itself. Below that depth, the property that recurses is left
	// out of the listed schema: clients may still send it, and the server
	// checks it against the tool's own schema. Zero or less means 3.
	RecursionDepth int

	// OmitUnsupported leaves out of the listed schema an optional argument
	// (or a property of one) that the profile cannot express, such as one
	// that takes any JSON value for Gemini or a map for OpenAI's strict
	// mode, and an alternative (anyOf) the profile cannot express when
	// others remain, instead of failing. Clients then do not see it; the
	// server still accepts what the tool's schema accepts.
	OmitUnsupported bool

	// Validation is the server's [mcpkit.ServerOptions.Validation]: the
	// checks Portable adds to a tool (see Portable) are made in the
	// tool's own mode, or in this one when the tool has none; none are
	// made in mode mcpkit.NoValidation. The zero value means
	// mcpkit.Strict, the server's default.
	Validation mcpkit.ValidationMode
}

// Portable returns a catalog transform that rewrites the input schema of
// each tool it is given into one that profile p accepts and that admits the
// same calls, as far as p can say so. Give it to [mcpkit.Server.Transform],
// last, so that it rewrites what clients are served:
//
//	err := srv.Transform(transform.Portable(transform.Gemini, nil))
//
// The rewrite is computed once per tool, when the registry changes; the
// tool's own schema is not modified. The derived tool's input schema is a
// json.RawMessage, with the properties in their order (models fill them
// in that order, and OpenAI's strict mode writes them so).
//
// What the server enforces is what the tool's schema says. References are
// inlined (recursion stays a reference for OpenAIStrict, and is written
// out RecursionDepth times for the others); null is written as the
// profile does ("nullable": true for Gemini, a type list for OpenAIStrict,
// anyOf with {"type": "null"} for AllProviders); annotations the provider
// refuses, formats included, are dropped, since the server does not check them
// either (x-mcp-header too: clients of such a tool do not mirror arguments
// into headers). A constraint the profile cannot express (a closed object
// for Gemini, a string's length for OpenAIStrict, an integer enum for
// Gemini, oneOf, if/then/else, ...) is left out of the listed schema and
// still enforced: the derived tool's handler checks each call against the
// tool's own schema, so that a call breaking it fails with the same
// validation error, naming the argument, as before.
// The listed schema may also admit less than the tool's, which is safe: a
// schema that lists properties but no type is written as an object, an
// object is closed for OpenAIStrict, null items are left out where
// AllProviders cannot say them (anyOf directly inside items), recursion
// ends at RecursionDepth.
//
// OpenAIStrict makes every property required, an optional one nullable: a
// model sends "opt": null for an argument it leaves out. The derived tool's
// handler maps such a null back to an absent argument (and the tool's own
// default then applies) before calling the tool, so that the tool gets the
// arguments it got before; where the tool's schema admits null itself, a
// null stays a null. The server checks each call against the strict
// schema, so a call that leaves out a now-required argument fails,
// naming it.
//
// The server's validator reads schemas as JSON Schema, which has no
// nullable keyword. So that a Gemini model may send the null the schema
// offers, a Gemini tool whose schema says nullable is validated by the
// derived tool's handler instead of the server, against the same schema
// read as Gemini reads it, with the same errors, at the same place (inside
// every middleware) and in the tool's own mode (see
// [PortableOptions.Validation]); its structured output is checked too.
// The derived tool's Validation is then mcpkit.NoValidation.
//
// Like every derived tool's, its middleware sees the arguments as the
// client sent them; the tool's handler sees them mapped back, and finds
// the tool's own definition in req.Tool. A tool with Validation
// mcpkit.NoValidation (or on a server with none, as
// [PortableOptions.Validation] says) is rewritten without any check added.
//
// The transform fails, with an error wrapping [ErrNotPortable] that says
// where and why, for a tool whose name p refuses (rename it with [Tool])
// or whose schema holds what p cannot express:
// any JSON value for a profile that needs a type, an array whose items can
// be anything, a map for OpenAIStrict, items of several kinds for Gemini
// and AllProviders,
// a required property that recurses below RecursionDepth, an argument name
// Gemini refuses (see [PortableOptions.OmitUnsupported] for optional ones).
// A Server given such a transform refuses it, naming the tool; [Select]
// applies Portable to some tools only.
//
// Portable panics if p is not one of the profiles.
func Portable(p Profile, opts *PortableOptions) mcpkit.CatalogTransform {
	if !p.valid() {
		panic(fmt.Sprintf("transform: Portable: unknown profile %d", int(p)))
	}
	var o PortableOptions
	if opts != nil {
		o = *opts
	}
	return func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		return portableTool(t, p, &o)
	}
}

func portableTool(t *mcpkit.Tool, p Profile, o *PortableOptions) (*mcpkit.Tool, error) {
	if rule := portable.CheckName(t.Name, portable.Profile(p)); rule != "" {
		return nil, fmt.Errorf("%w: %s: tool name %q: %s", ErrNotPortable, p, t.Name, rule)
	}
	in, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: input schema: %v", ErrNotPortable, p, err)
	}
	res, err := portable.Rewrite(in, portable.Profile(p), &portable.Options{Depth: o.RecursionDepth, Omit: o.OmitUnsupported})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: input schema: %w", ErrNotPortable, p, err)
	}
	d := t.Clone()
	d.InputSchema = json.RawMessage(res.Schema)

	mode := t.Validation
	if mode == mcpkit.DefaultValidation {
		mode = o.Validation
	}
	checks := mode != mcpkit.NoValidation
	self := checks && res.Validate != nil
	if !self && (!checks || res.Exact) && res.Plan == nil {
		return d, nil
	}
	h := &portableHandler{parent: t, next: t.Handler, plan: res.Plan, lenient: mode == mcpkit.Lenient}
	compile := func(s any, which string) (*schema.Validator, error) {
		v, err := schema.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s schema: %v", ErrNotPortable, p, which, err)
		}
		return v, nil
	}
	if self {
		if h.in, err = compile(json.RawMessage(res.Validate), "input"); err != nil {
			return nil, err
		}
		if t.OutputSchema != nil {
			if h.out, err = compile(t.OutputSchema, "output"); err != nil {
				return nil, err
			}
		}
		d.Validation = mcpkit.NoValidation
	}
	if checks && !res.Exact {
		if h.orig, err = compile(in, "input"); err != nil {
			return nil, err
		}
	}
	d.Handler = h
	return d, nil
}

// A Problem is one thing a tool's definition does that a [Profile] refuses.
type Problem struct {
	// Tool is the tool's name.
	Tool string
	// Pointer is the JSON Pointer, into the tool's input schema, of the
	// schema at fault: "" for the root, and for a problem with the tool's
	// name.
	Pointer string
	// Rule says what the profile requires there.
	Rule string
}

// String returns the problem as "tool: pointer: rule", with "(root)" for
// the root.
func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "(root)"
	}
	return p.Tool + ": " + ptr + ": " + p.Rule
}

// CheckPortable reports what the given tools do that profile p refuses: a
// name the provider does not take, a schema keyword or shape it rejects.
// It returns nil when p accepts them all, as a test that a catalog stays
// portable wants:
//
//	res, err := session.ListTools(ctx, nil) // what the server lists
//	...
//	for _, pb := range transform.CheckPortable(transform.Gemini, res.Tools...) {
//		t.Error(pb)
//	}
//
// For an [mcpkit.Tool], pass &tool.Tool. Problems come tool by tool, in
// the order given, each tool's in the order of its schema's text.
// CheckPortable panics if p is not one of the profiles.
func CheckPortable(p Profile, tools ...*mcp.Tool) []Problem {
	if !p.valid() {
		panic(fmt.Sprintf("transform: CheckPortable: unknown profile %d", int(p)))
	}
	var probs []Problem
	for _, t := range tools {
		if t == nil {
			continue
		}
		if rule := portable.CheckName(t.Name, portable.Profile(p)); rule != "" {
			probs = append(probs, Problem{Tool: t.Name, Rule: rule})
		}
		data, err := json.Marshal(t.InputSchema)
		if err != nil {
			probs = append(probs, Problem{Tool: t.Name, Rule: "the input schema is not JSON: " + err.Error()})
			continue
		}
		for _, pb := range portable.Check(data, portable.Profile(p)) {
			probs = append(probs, Problem{Tool: t.Name, Pointer: pb.Pointer, Rule: pb.Rule})
		}
	}
	return slices.Clip(probs)
}
