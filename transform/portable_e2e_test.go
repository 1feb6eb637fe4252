package transform_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/transform"
)

// noteIn has an optional pointer (opt), a required nullable field (due),
// an optional field with a default (count), and a struct's closed object.
type noteIn struct {
	Title string  `json:"title" description:"The note's title."`
	Opt   *string `json:"opt,omitempty" description:"A tag, if any."`
	Due   *string `json:"due" nullable:"true" required:"true" format:"date-time" description:"When it is due, or null."`
	Count int     `json:"count,omitempty" default:"1" minimum:"1"`
}

// noteRecorder is a typed tool that records what its handler gets.
type noteRecorder struct {
	mu   sync.Mutex
	in   noteIn
	args string
}

func (r *noteRecorder) tool(t *testing.T) *mcpkit.Tool {
	t.Helper()
	tool, err := tools.NewWithRequest("note", func(_ context.Context, req *mcpkit.Request, in noteIn) (string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.in, r.args = in, string(req.Arguments)
		return "ok", nil
	}, &tools.Options{Description: "Write a note."})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func (r *noteRecorder) got() (noteIn, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.in, r.args
}

func servePortable(t *testing.T, p transform.Profile, tool *mcpkit.Tool) *mcpkittest.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "portable"}, nil)
	if err := srv.Add(tool); err != nil {
		t.Fatal(err)
	}
	if err := srv.Transform(transform.Portable(p, nil)); err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewServer(t, srv, nil)
}

// sameSchema reports whether the listed schema got is the JSON want. The
// SDK's client decodes it into a map, so the order of keys is not
// compared (the package's unit tests compare the bytes).
func sameSchema(t *testing.T, got any, want string) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	return mustMarshal(got) == mustMarshal(w)
}

// call calls the note tool with args (JSON) and returns the text of the
// result and whether it is an error.
func call(t *testing.T, ts *mcpkittest.Server, args string) (string, bool) {
	t.Helper()
	res, err := ts.CallTool(t.Context(), "note", json.RawMessage(args))
	if err != nil {
		t.Fatalf("call %s: %v", args, err)
	}
	return text(t, res), res.IsError
}

func TestPortableOpenAIStrictEndToEnd(t *testing.T) {
	rec := &noteRecorder{}
	ts := servePortable(t, transform.OpenAIStrict, rec.tool(t))

	def := listed(t, ts, "note")
	want := `{"type":"object","properties":{` +
		`"title":{"type":"string","description":"The note's title."},` +
		`"opt":{"type":["string","null"],"description":"A tag, if any."},` +
		`"due":{"type":["string","null"],"description":"When it is due, or null.","format":"date-time"},` +
		`"count":{"type":["integer","null"],"minimum":1}},` +
		`"required":["title","opt","due","count"],"additionalProperties":false}`
	if !sameSchema(t, def.InputSchema, want) {
		t.Errorf("tools/list shows\n%s\nwant\n%s", mustMarshal(def.InputSchema), want)
	}
	if pbs := transform.CheckPortable(transform.OpenAIStrict, def); pbs != nil {
		t.Errorf("the listed tool breaks the profile: %v", pbs)
	}

	// A null for an optional argument reaches the tool as if it were
	// absent: the tool's own default applies, and the tool sees no null.
	if out, isErr := call(t, ts, `{"title":"a","opt":null,"due":null,"count":null}`); isErr {
		t.Fatalf("call with nulls: %s", out)
	}
	in, args := rec.got()
	if in.Opt != nil || in.Due != nil || in.Count != 1 || in.Title != "a" {
		t.Errorf("the tool got %+v", in)
	}
	if args != `{"title":"a","due":null,"count":1}` {
		t.Errorf("the tool got the arguments %s", args)
	}

	// Values pass as they are.
	if out, isErr := call(t, ts, `{"title":"b","opt":"x","due":"2026-01-02T03:04:05Z","count":3}`); isErr {
		t.Fatalf("call with values: %s", out)
	}
	if in, _ := rec.got(); in.Opt == nil || *in.Opt != "x" || in.Due == nil || in.Count != 3 {
		t.Errorf("the tool got %+v", in)
	}

	// A now-required argument left out fails validation, naming it.
	out, isErr := call(t, ts, `{"title":"c","due":null,"count":2}`)
	if !isErr || !strings.Contains(out, "opt") || !strings.HasPrefix(out, "invalid arguments") {
		t.Errorf("call without opt: %q, error %v", out, isErr)
	}

	// What strict mode cannot say is still enforced: count's minimum is
	// there, and so is the tool's closed object.
	if out, isErr := call(t, ts, `{"title":"c","opt":null,"due":null,"count":0}`); !isErr || !strings.Contains(out, "count") {
		t.Errorf("count 0: %q, error %v", out, isErr)
	}
}

func TestPortableGeminiEndToEnd(t *testing.T) {
	rec := &noteRecorder{}
	ts := servePortable(t, transform.Gemini, rec.tool(t))

	def := listed(t, ts, "note")
	want := `{"type":"object","properties":{` +
		`"title":{"type":"string","description":"The note's title."},` +
		`"opt":{"type":"string","description":"A tag, if any."},` +
		`"due":{"type":"string","nullable":true,"description":"When it is due, or null.","format":"date-time"},` +
		`"count":{"type":"integer","default":1,"minimum":1}},` +
		`"required":["title","due"]}`
	if !sameSchema(t, def.InputSchema, want) {
		t.Errorf("tools/list shows\n%s\nwant\n%s", mustMarshal(def.InputSchema), want)
	}
	if pbs := transform.CheckPortable(transform.Gemini, def); pbs != nil {
		t.Errorf("the listed tool breaks the profile: %v", pbs)
	}

	// The null the schema offers is accepted (the server's validator
	// alone would refuse it: JSON Schema has no nullable), and the default
	// applies to a missing count.
	if out, isErr := call(t, ts, `{"title":"a","due":null}`); isErr {
		t.Fatalf("call with due null: %s", out)
	}
	in, args := rec.got()
	if in.Due != nil || in.Opt != nil || in.Count != 1 {
		t.Errorf("the tool got %+v", in)
	}
	if args != `{"title":"a","due":null,"count":1}` {
		t.Errorf("the tool got the arguments %s", args)
	}

	// A required argument left out fails, naming it.
	out, isErr := call(t, ts, `{"title":"a"}`)
	if !isErr || !strings.Contains(out, "due") || !strings.HasPrefix(out, "invalid arguments") {
		t.Errorf("call without due: %q, error %v", out, isErr)
	}
	// opt is not nullable in the tool's schema, nor in the listed one.
	if out, isErr := call(t, ts, `{"title":"a","due":null,"opt":null}`); !isErr || !strings.Contains(out, "opt") {
		t.Errorf("opt null: %q, error %v", out, isErr)
	}
	// Gemini cannot say that the object is closed: the server still
	// refuses an argument the tool does not have.
	if out, isErr := call(t, ts, `{"title":"a","due":null,"extra":1}`); !isErr || !strings.Contains(out, "extra") {
		t.Errorf("extra argument: %q, error %v", out, isErr)
	}
}

func TestPortableAllProvidersEndToEnd(t *testing.T) {
	rec := &noteRecorder{}
	ts := servePortable(t, transform.AllProviders, rec.tool(t))

	def := listed(t, ts, "note")
	want := `{"type":"object","properties":{` +
		`"title":{"type":"string","description":"The note's title."},` +
		`"opt":{"type":"string","description":"A tag, if any."},` +
		`"due":{"anyOf":[{"type":"string","description":"When it is due, or null.","format":"date-time"},{"type":"null"}]},` +
		`"count":{"type":"integer","minimum":1}},` +
		`"required":["title","due"]}`
	if !sameSchema(t, def.InputSchema, want) {
		t.Errorf("tools/list shows\n%s\nwant\n%s", mustMarshal(def.InputSchema), want)
	}
	for _, p := range []transform.Profile{transform.AllProviders, transform.Gemini} {
		if pbs := transform.CheckPortable(p, def); pbs != nil {
			t.Errorf("the listed tool breaks %v: %v", p, pbs)
		}
	}

	if out, isErr := call(t, ts, `{"title":"a","due":null}`); isErr {
		t.Fatalf("call with due null: %s", out)
	}
	if in, args := rec.got(); in.Due != nil || in.Count != 1 || args != `{"title":"a","due":null,"count":1}` {
		t.Errorf("the tool got %+v from %s", in, args)
	}
	if out, isErr := call(t, ts, `{"title":"a"}`); !isErr || !strings.Contains(out, "due") {
		t.Errorf("call without due: %q, error %v", out, isErr)
	}
}
