package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/transform"
)

// lockedBuffer is a bytes.Buffer safe for a sink's writer and a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// bearerTransport adds a bearer token to each request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// login's schema marks its password writeOnly and, under a $ref, a
// format "password" field of every item of a list.
var loginSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"user":     map[string]any{"type": "string"},
		"password": map[string]any{"type": "string", "writeOnly": true},
		"keys":     map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/key"}},
		"api_key":  map[string]any{"type": "string"},
	},
	"$defs": map[string]any{
		"key": map[string]any{
			"type":       "object",
			"properties": map[string]any{"id": map[string]any{"type": "string"}, "pin": map[string]any{"type": "string", "format": "password"}},
		},
	},
}

// TestAuditTrail: one record per decision, through a real client over
// HTTP on both eras, the 2026-07-28 refusal made before any middleware
// included; the values the schema or the options call secret never reach
// the trail; the trail's chain verifies.
func TestAuditTrail(t *testing.T) {
	for _, version := range []string{mcpkittest.StatelessVersion, mcpkittest.StatefulVersion} {
		t.Run(version, func(t *testing.T) {
			var trail lockedBuffer
			sink := middleware.NewJSONLinesSink(&trail, &middleware.JSONLinesOptions{Chain: true})
			audit := middleware.NewAudit(sink, &middleware.AuditOptions{RedactNames: []string{"api_key"}})
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "audited", Version: "1"}, nil)
			srv.Observe(audit)
			srv.Use(mcpkit.ForTools(mcpkit.Named("drop_table"), mcpkit.RequireScopes("db:admin")))
			ok := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
			for _, tl := range []*mcpkit.Tool{
				{Tool: mcp.Tool{Name: "login", InputSchema: loginSchema}, Handler: ok, Version: "2"},
				{Tool: mcp.Tool{Name: "drop_table", InputSchema: map[string]any{"type": "object"}}, Handler: ok},
			} {
				if err := srv.Add(tl); err != nil {
					t.Fatal(err)
				}
			}
			verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
				return &auth.TokenInfo{UserID: "ada", Scopes: []string{"db:read"}, Expiration: time.Now().Add(time.Hour)}, nil
			}
			ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(srv.HTTPHandler(nil)))
			defer ts.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearerTransport{"t"}}},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			args := map[string]any{"user": "ada", "password": "hunter2-secret", "api_key": "ak-secret",
				"keys": []any{map[string]any{"id": "k1", "pin": "pin-secret"}}}
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "login", Arguments: args}); err != nil || res.IsError {
				t.Fatalf("login: %v %v", res, err)
			}
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "drop_table", Arguments: map[string]any{}}); err == nil {
				t.Fatal("drop_table without db:admin: no error")
			}
			if err := audit.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			text := trail.String()
			for _, secret := range []string{"hunter2-secret", "ak-secret", "pin-secret"} {
				if strings.Contains(text, secret) {
					t.Errorf("the trail holds %q:\n%s", secret, text)
				}
			}
			var recs []middleware.AuditRecord
			for line := range strings.Lines(text) {
				var r middleware.AuditRecord
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			if len(recs) != 2 {
				t.Fatalf("%d records:\n%s", len(recs), text)
			}
			login, refusal := recs[0], recs[1]
			if login.Decision != "served" || login.Outcome != "ok" || login.Tool != "login" || login.Version != "2" ||
				login.Principal == "" || login.Seq != 1 {
				t.Errorf("login's record: %+v", login)
			}
			wantArgs := `{"api_key":"[redacted]","keys":[{"id":"k1","pin":"[redacted]"}],"password":"[redacted]","user":"ada"}`
			if string(login.Arguments) != wantArgs {
				t.Errorf("login's arguments: %s, want %s", login.Arguments, wantArgs)
			}
			if refusal.Decision != "refused" || refusal.Tool != "drop_table" || refusal.Principal != login.Principal ||
				!strings.Contains(refusal.Reason, "db:admin") || refusal.Seq != 2 {
				t.Errorf("drop_table's record: %+v", refusal)
			}
			n, head, err := middleware.VerifyAuditChain(strings.NewReader(text))
			if err != nil || n != 2 || head != sink.Head() {
				t.Errorf("VerifyAuditChain: %d %q %v, head %q", n, head, err, sink.Head())
			}
		})
	}
}

// TestVerifyAuditChainFindsTampering: a line removed or edited breaks the
// chain at the line that follows it.
func TestVerifyAuditChainFindsTampering(t *testing.T) {
	var trail bytes.Buffer
	sink := middleware.NewJSONLinesSink(&trail, &middleware.JSONLinesOptions{Chain: true})
	for i := range 4 {
		if err := sink.WriteAudit(t.Context(), &middleware.AuditRecord{Seq: uint64(i + 1), Decision: "served", Name: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.SplitAfter(trail.String(), "\n")
	lines = lines[:len(lines)-1]
	if _, _, err := middleware.VerifyAuditChain(strings.NewReader(strings.Join(lines, ""))); err != nil {
		t.Fatalf("the whole trail: %v", err)
	}
	removed := lines[0] + lines[2] + lines[3]
	if _, _, err := middleware.VerifyAuditChain(strings.NewReader(removed)); !errors.Is(err, middleware.ErrAuditChain) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a line removed: %v", err)
	}
	edited := lines[0] + strings.Replace(lines[1], `"name":"t"`, `"name":"u"`, 1) + lines[2] + lines[3]
	if _, _, err := middleware.VerifyAuditChain(strings.NewReader(edited)); !errors.Is(err, middleware.ErrAuditChain) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a line edited: %v", err)
	}
}

// stuckSink holds every write until released.
type stuckSink struct {
	release chan struct{}
	mu      sync.Mutex
	recs    []middleware.AuditRecord
}

func (s *stuckSink) WriteAudit(_ context.Context, rec *middleware.AuditRecord) error {
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *rec)
	return nil
}

// TestAuditSlowSink: a sink that does not answer delays a call by at most
// Wait; what does not fit in the queue is dropped, counted, and announced
// in the trail by one record, in sequence.
func TestAuditSlowSink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &stuckSink{release: make(chan struct{})}
		audit := middleware.NewAudit(sink, &middleware.AuditOptions{Queue: 2, Wait: time.Second})
		ev := &mcpkit.Event{Decision: mcpkit.DecisionServed, Method: "tools/call", Name: "t", Outcome: mcpkit.OutcomeOK}
		audit.Observe(t.Context(), ev)
		synctest.Wait() // the writer holds the first record, stuck in the sink
		audit.Observe(t.Context(), ev)
		audit.Observe(t.Context(), ev) // the queue is full
		for range 5 {
			start := time.Now()
			audit.Observe(t.Context(), ev)
			if waited := time.Since(start); waited != time.Second {
				t.Errorf("a call waited %v for a full queue, want 1s", waited)
			}
		}
		if n := audit.Dropped(); n != 5 {
			t.Errorf("Dropped() = %d, want 5", n)
		}
		close(sink.release)
		audit.Observe(t.Context(), ev) // the one after the drops
		if err := audit.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range sink.recs {
			got = append(got, r.Decision)
			if r.Seq != uint64(len(got)) {
				t.Errorf("record %d has seq %d", len(got), r.Seq)
			}
		}
		want := "served served served dropped served"
		if strings.Join(got, " ") != want {
			t.Errorf("records: %v, want %s", got, want)
		}
		if r := sink.recs[3]; r.Dropped != 5 {
			t.Errorf("the drop record counts %d", r.Dropped)
		}
	})
}

// TestAuditRedactsRecursiveSchemas: a recursive schema is planned once and
// its secrets found at any depth the arguments reach; arguments deeper
// than the walk goes are not recorded at all.
func TestAuditRedactsRecursiveSchemas(t *testing.T) {
	schema := map[string]any{
		"$ref": "#/$defs/node",
		"$defs": map[string]any{"node": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"secret":   map[string]any{"type": "string", "writeOnly": true},
				"children": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/node"}, map[string]any{"type": "null"}}}},
			},
		}},
	}
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "tree", InputSchema: schema}}
	record := func(args string) middleware.AuditRecord {
		sink := &stuckSink{release: make(chan struct{})}
		close(sink.release)
		audit := middleware.NewAudit(sink, nil)
		audit.Observe(t.Context(), &mcpkit.Event{Decision: mcpkit.DecisionServed, Method: "tools/call", Name: "tree", Tool: tool,
			Request: &mcpkit.Request{Arguments: json.RawMessage(args)}})
		if err := audit.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		return sink.recs[0]
	}
	got := record(`{"secret":"s1","children":[{"secret":"s2","children":[null,{"secret":"s3"}]}]}`)
	want := `{"children":[{"children":[null,{"secret":"[redacted]"}],"secret":"[redacted]"}],"secret":"[redacted]"}`
	if string(got.Arguments) != want {
		t.Errorf("arguments: %s\nwant %s", got.Arguments, want)
	}
	deep := strings.Repeat(`{"children":[`, 100) + `{"secret":"s"}` + strings.Repeat(`]}`, 100)
	if got := record(deep); got.Arguments != nil {
		t.Errorf("arguments past the walk's depth were recorded: %.80s", got.Arguments)
	}
}

// FuzzAuditRedact: whatever the arguments, a record holds valid JSON or
// none, and no value under a name the options redact, or under the
// schema's writeOnly password, survives.
func FuzzAuditRedact(f *testing.F) {
	for _, seed := range []string{
		`{"user":"ada","password":"x","api_key":"y"}`,
		`{"keys":[{"id":"k","pin":"1234"},{"pin":{"nested":"p"}}]}`,
		`{"a":{"api_key":["s",{"api_key":"t"}]}}`,
		`[{"password":"x"}]`,
		`"just a string"`,
		`{"password":`,
		`{"user":"\u0000","password":1e400}`,
	} {
		f.Add([]byte(seed))
	}
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "login", InputSchema: loginSchema}}
	f.Fuzz(func(t *testing.T, args []byte) {
		sink := &stuckSink{release: make(chan struct{})}
		close(sink.release)
		audit := middleware.NewAudit(sink, &middleware.AuditOptions{RedactNames: []string{"api_key"}})
		audit.Observe(context.Background(), &mcpkit.Event{Decision: mcpkit.DecisionServed, Method: "tools/call", Tool: tool,
			Request: &mcpkit.Request{Arguments: args}})
		if err := audit.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := sink.recs[0].Arguments
		if got == nil || !json.Valid(args) {
			return
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(got))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("recorded arguments are not JSON: %q", got)
		}
		var walk func(v any, top bool)
		walk = func(v any, top bool) {
			switch x := v.(type) {
			case map[string]any:
				for k, val := range x {
					if k == "api_key" || (top && k == "password") {
						if val != "[redacted]" {
							t.Fatalf("%s survived: %v in %s", k, val, got)
						}
						continue
					}
					walk(val, false)
				}
			case []any:
				for _, e := range x {
					walk(e, false)
				}
			}
		}
		walk(v, true)
	})
}

// TestAuditPrompts: a prompts/get is recorded with the prompt it reached
// and its arguments, redacted by name.
func TestAuditPrompts(t *testing.T) {
	var trail lockedBuffer
	audit := middleware.NewAudit(middleware.NewJSONLinesSink(&trail, nil), &middleware.AuditOptions{RedactNames: []string{"token"}})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "audited", Version: "1"}, nil)
	srv.Observe(audit)
	if err := srv.AddPrompts(&mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who"}}},
		Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		}),
		Complete: map[string]mcpkit.CompleteFunc{"who": func(context.Context, *mcpkit.CompleteRequest) ([]string, error) {
			return []string{"ada"}, nil
		}},
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A completion (one per keystroke) is heard by observers, not
	// recorded: the trail holds the prompts/get alone.
	if _, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "ada", "token": "tok-secret"}}); err != nil {
		t.Fatal(err)
	}
	if err := audit.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	var rec middleware.AuditRecord
	if err := json.Unmarshal([]byte(trail.String()), &rec); err != nil {
		t.Fatal(err, trail.String())
	}
	if rec.Method != "prompts/get" || rec.Prompt != "greet" || rec.Tool != "" || rec.Decision != "served" ||
		string(rec.Arguments) != `{"token":"[redacted]","who":"ada"}` {
		t.Errorf("record: %+v, arguments %s", rec, rec.Arguments)
	}
}

// TestAuditRedactNamesFollowRenames: a name in RedactNames is the
// argument's, whatever a chain of transforms calls it and whatever case
// the caller writes it in (encoding/json would deliver "PassWord" to a
// field named password).
func TestAuditRedactNamesFollowRenames(t *testing.T) {
	srv, audit, trail := auditedServer(t, &middleware.AuditOptions{RedactNames: []string{"password"}})
	plain := map[string]any{"type": "object", "properties": map[string]any{
		"user": map[string]any{"type": "string"}, "password": map[string]any{"type": "string"},
		"nested": map[string]any{"type": "object"}}}
	var got []string
	base := &mcpkit.Tool{Tool: mcp.Tool{Name: "signin", InputSchema: plain}, Handler: mcpkit.HandlerFunc(
		func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			got = append(got, string(req.Arguments))
			return textResult("ok"), nil
		})}
	once, err := transform.Tool(base, transform.Spec{Name: "signin_once", Arguments: map[string]transform.Arg{"password": {Name: "pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	twice, err := transform.Tool(once, transform.Spec{Name: "signin_twice", Arguments: map[string]transform.Arg{"pw": {Name: "phrase"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(base, once, twice); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"signin_once", map[string]any{"user": "ada", "pw": attackSecret + "1"}},
		{"signin_twice", map[string]any{"user": "ada", "phrase": attackSecret + "2"}},
		{"signin", map[string]any{"user": "ada", "PassWord": attackSecret + "3"}},
		{"signin", map[string]any{"user": "ada", "nested": map[string]any{"PASSWORD": attackSecret + "4"}}},
	}
	for _, c := range calls {
		if res, err := ts.CallTool(t.Context(), c.tool, c.args); err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.tool, res, err)
		}
	}
	// The handler received each secret: the trail is what must not hold them.
	if n := len(got); n != len(calls) || !strings.Contains(got[1], `"password":"`+attackSecret+`2"`) {
		t.Fatalf("the handler received %q", got)
	}
	text, recs := closeTrail(t, audit, trail)
	if strings.Contains(text, attackSecret) {
		t.Errorf("a secret in the trail:\n%s", text)
	}
	if len(recs) != len(calls) {
		t.Fatalf("%d records, want %d", len(recs), len(calls))
	}
	for _, r := range recs {
		if !strings.Contains(string(r.Arguments), `"[redacted]"`) || !strings.Contains(string(r.Arguments), `"ada"`) {
			t.Errorf("%s: arguments %s, want the user kept and the secret redacted", r.Name, r.Arguments)
		}
	}
}

// TestAuditRedactsThroughAnyRef: a $ref whose fragment is percent-encoded
// (a $defs name with a space) is followed; a keyword beside a $ref counts
// (writeOnly next to it); and a value whose $ref cannot be followed is
// redacted whole, since it may hold a secret.
func TestAuditRedactsThroughAnyRef(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"body":    map[string]any{"$ref": "#/$defs/shared%20body"},
			"token":   map[string]any{"$ref": "#/$defs/str", "writeOnly": true},
			"remote":  map[string]any{"$ref": "https://example.com/schema.json"},
			"missing": map[string]any{"$ref": "#/$defs/nowhere"},
			"plain":   map[string]any{"$ref": "#/$defs/str"},
		},
		"$defs": map[string]any{
			"shared body": map[string]any{"type": "object", "properties": map[string]any{"pw": map[string]any{"type": "string", "format": "password"}}},
			"str":         map[string]any{"type": "string"},
		},
	}
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: schema}}
	sink := &stuckSink{release: make(chan struct{})}
	close(sink.release)
	audit := middleware.NewAudit(sink, nil)
	args := `{"body":{"pw":"s1","user":"ada"},"token":"s2","remote":{"k":"s3"},"missing":"s4","plain":"shown"}`
	audit.Observe(t.Context(), &mcpkit.Event{Decision: mcpkit.DecisionServed, Method: "tools/call", Name: "t", Tool: tool,
		Request: &mcpkit.Request{Arguments: json.RawMessage(args)}})
	if err := audit.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := `{"body":{"pw":"[redacted]","user":"ada"},"missing":"[redacted]","plain":"shown","remote":"[redacted]","token":"[redacted]"}`
	if got := string(sink.recs[0].Arguments); got != want {
		t.Errorf("arguments: %s\nwant %s", got, want)
	}
}

// TestAuditReads: a resources/read is recorded on both eras with the URI
// read, clipped, and the resource or template it reached; an unknown URI
// with none; a refusal with its reason.
func TestAuditReads(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			var trail lockedBuffer
			audit := middleware.NewAudit(middleware.NewJSONLinesSink(&trail, nil), nil)
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "audited", Version: "1"}, nil)
			srv.Observe(audit)
			read := mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "x"}}}, nil
			})
			if err := srv.AddResources(
				&mcpkit.Resource{Resource: mcp.Resource{URI: "docs://a", Name: "a"}, Handler: read},
				&mcpkit.Resource{Resource: mcp.Resource{URI: "docs://admin", Name: "admin"}, Handler: read,
					Middleware: []mcpkit.Middleware{mcpkit.RequireScopes("admin")}},
			); err != nil {
				t.Fatal(err)
			}
			tpl, err := tools.NewTemplate("notes://{id}", func(_ context.Context, req *mcpkit.ResourceRequest, p struct {
				ID string `json:"id"`
			}) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: p.ID}}}, nil
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.AddResourceTemplates(tpl); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, srv, nil).Session
			long := "notes://" + strings.Repeat("n", 400)
			for _, uri := range []string{"docs://a", long, "docs://nosuch", "docs://admin"} {
				cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			}
			if err := audit.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			var got []string
			for line := range strings.Lines(trail.String()) {
				var rec middleware.AuditRecord
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err, line)
				}
				if rec.Method != "resources/read" {
					t.Errorf("method %q", rec.Method)
				}
				name := rec.Name
				if len(name) > 40 {
					name = fmt.Sprintf("%s…(%d bytes)", name[:12], len(name))
				}
				got = append(got, fmt.Sprintf("%s %s %s %s", rec.Decision, name, rec.Resource, rec.Reason))
			}
			want := []string{
				"served docs://a docs://a ",
				"served notes://nnnn…(259 bytes) notes://{id} ",
				"unknown docs://nosuch  Resource not found",
				`refused docs://admin docs://admin resource "docs://admin" requires authorization with scope "admin"`,
			}
			if !slices.Equal(got, want) {
				t.Errorf("records:\n got %q\nwant %q", got, want)
			}
		})
	}
}
