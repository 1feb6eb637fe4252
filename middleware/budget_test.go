package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// bytesAsTokens counts a token per byte, so that tests can say exactly what
// fits.
var bytesAsTokens = middleware.TokenEstimatorFunc(func(s string) int { return len(s) })

// texts returns the text of each text block of res.
func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// textTokens adds up the byte counts of res's text blocks.
func textTokens(res *mcp.CallToolResult) int {
	n := 0
	for _, s := range texts(res) {
		n += len(s)
	}
	return n
}

func lines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	return b.String()
}

// items returns {"items": [0, 1, ..., n-1]} as JSON.
func items(n int, extra string) json.RawMessage {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return json.RawMessage(`{"items":[` + strings.Join(parts, ",") + `]` + extra + `}`)
}

func TestTokenBudget(t *testing.T) {
	itemsSchema := func(minItems int) *jsonschema.Schema {
		s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"items": {Type: "array", Items: &jsonschema.Schema{Type: "integer"}},
			"log":   {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			"title": {Type: "string"},
		}}
		if minItems > 0 {
			s.Properties["items"].MinItems = jsonschema.Ptr(minItems)
		}
		return s
	}
	withSchema := func(s *jsonschema.Schema) *mcpkit.Tool {
		tool := newTool("t", nil)
		tool.OutputSchema = s
		return tool
	}
	long := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(60)}}}
	image := &mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}
	short := &middleware.TokenBudgetOptions{Hint: func(*mcpkit.Request, *middleware.Truncation) string { return "[cut]" }}
	tests := []struct {
		name   string
		tokens int
		opts   *middleware.TokenBudgetOptions
		tool   *mcpkit.Tool
		res    *mcp.CallToolResult

		same       bool     // the handler's result is returned as is
		wantTexts  []string // the text blocks
		wantStruct string   // the structured content's JSON, "" for none
		wantTrunc  *middleware.Truncation
		wantErr    error
	}{
		{
			name: "under budget", tokens: 1000, res: long, same: true,
		},
		{
			// The note takes 142 and its line break 1: 20 lines (159
			// without the last line break) would be 2 too many.
			name: "text cut at a line, default note", tokens: 300, res: long,
			wantTexts: []string{lines(19)[:151] + "\n" +
				"[truncated to fit 300 tokens: the text was cut from about 480 to 151 tokens. Ask for less (a narrower query, a smaller page) to see the rest.]"},
			wantTrunc: &middleware.Truncation{Budget: 300, TextTokens: 480, KeptTextTokens: 151, TextCut: true},
		},
		{
			name: "blocks after the cut are left out, other content kept", tokens: 60,
			opts: &middleware.TokenBudgetOptions{Hint: func(*mcpkit.Request, *middleware.Truncation) string { return "[more: page=2]" }},
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "first block"}, image,
				&mcp.TextContent{Text: "second block, which is far too long to fit in what remains"},
				&mcp.TextContent{Text: "third"},
			}},
			wantTexts: []string{"first block", "second block, which is far too\n[more: page=2]"},
			wantTrunc: &middleware.Truncation{Budget: 60, TextTokens: 74, KeptTextTokens: 41, TextCut: true},
		},
		{
			// The note takes 124: 58 items (175) fit, 59 (178) do not.
			name: "arrays trimmed, the mirror follows", tokens: 300,
			res: &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(items(100, ""))}},
				StructuredContent: items(100, ""),
			},
			wantTexts:  []string{string(items(58, "")), "[truncated to fit 300 tokens: /items kept 58 of 100 items. Ask for less (a narrower query, a smaller page) to see the rest.]"},
			wantStruct: string(items(58, "")),
			wantTrunc: &middleware.Truncation{Budget: 300, TextTokens: 301, KeptTextTokens: 175, StructuredTokens: 301, KeptStructuredTokens: 175,
				Arrays: []middleware.TrimmedArray{{Pointer: "/items", Length: 100, Kept: 58}}},
		},
		{
			name: "no content: the text the server would add is the mirror", tokens: 300,
			opts: &middleware.TokenBudgetOptions{Hint: func(_ *mcpkit.Request, t *middleware.Truncation) string {
				return fmt.Sprintf("%d more items: call again with offset=%d", t.Arrays[0].Length-t.Arrays[0].Kept, t.Arrays[0].Kept)
			}},
			res: &mcp.CallToolResult{StructuredContent: items(200, "")},
			// 86 items (259) and their hint (41) fill the budget exactly.
			wantTexts:  []string{string(items(86, "")), "114 more items: call again with offset=86"},
			wantStruct: string(items(86, "")),
			wantTrunc: &middleware.Truncation{Budget: 300, TextTokens: 701, KeptTextTokens: 259, StructuredTokens: 701, KeptStructuredTokens: 259,
				Arrays: []middleware.TrimmedArray{{Pointer: "/items", Length: 200, Kept: 86}}},
		},
		{
			name: "structured content alone over the budget: the text is left as it is", tokens: 100, opts: short,
			res: &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "a summary"}},
				StructuredContent: items(40, ""),
			},
			wantTexts:  []string{"a summary", "[cut]"},
			wantStruct: string(items(33, "")),
			wantTrunc: &middleware.Truncation{Budget: 100, TextTokens: 9, KeptTextTokens: 9, StructuredTokens: 121, KeptStructuredTokens: 100,
				Arrays: []middleware.TrimmedArray{{Pointer: "/items", Length: 40, Kept: 33}}},
		},
		{
			name: "minItems is kept: the next array gives way", tokens: 60, opts: short,
			tool: withSchema(itemsSchema(5)),
			res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "see structured"}},
				StructuredContent: items(40, `,"log":["aaaaaaaaaa","bbbbbbbbbb","cccccccccc","dddddddddd"]`)},
			wantTexts:  []string{"see structured", "[cut]"},
			wantStruct: `{"items":[0,1,2,3,4],"log":["aaaaaaaaaa","bbbbbbbbbb"]}`,
			wantTrunc: &middleware.Truncation{Budget: 60, TextTokens: 14, KeptTextTokens: 14, StructuredTokens: 181, KeptStructuredTokens: 55,
				Arrays: []middleware.TrimmedArray{{Pointer: "/items", Length: 40, Kept: 5}, {Pointer: "/log", Length: 4, Kept: 2}}},
		},
		{
			name: "no schema, nothing to trim: dropped, the mirror cut as text", tokens: 300,
			res: &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: `{"title":"` + strings.Repeat("word ", 100) + `"}`}},
				StructuredContent: json.RawMessage(`{"title":"` + strings.Repeat("word ", 100) + `"}`),
			},
			wantTexts: []string{`{"title":"` + strings.Repeat("word ", 18)[:89] + "\n" +
				"[truncated to fit 300 tokens: the text was cut from about 512 to 99 tokens; the structured content (about 512 tokens) was left out. Ask for less (a narrower query, a smaller page) to see the rest.]"},
			wantTrunc: &middleware.Truncation{Budget: 300, TextTokens: 512, KeptTextTokens: 99, TextCut: true, StructuredTokens: 512, StructuredDropped: true},
		},
		{
			name: "schema, nothing to trim: rejected", tokens: 80, tool: withSchema(itemsSchema(0)),
			res: &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "x"}},
				StructuredContent: json.RawMessage(`{"title":"` + strings.Repeat("word ", 40) + `"}`),
			},
			wantErr: middleware.ErrResultTooLarge,
		},
		{
			name: "schema needing every element: rejected", tokens: 60, tool: withSchema(itemsSchema(40)),
			res:     &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: items(40, "")},
			wantErr: middleware.ErrResultTooLarge,
		},
		{
			name: "DropStructured without a schema", tokens: 200, opts: &middleware.TokenBudgetOptions{Structured: middleware.DropStructured},
			res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a summary"}}, StructuredContent: items(100, "")},
			wantTexts: []string{"a summary",
				"[truncated to fit 200 tokens: the structured content (about 301 tokens) was left out. Ask for less (a narrower query, a smaller page) to see the rest.]"},
			wantTrunc: &middleware.Truncation{Budget: 200, TextTokens: 9, KeptTextTokens: 9, StructuredTokens: 301, StructuredDropped: true},
		},
		{
			name: "DropStructured with a schema", tokens: 100, opts: &middleware.TokenBudgetOptions{Structured: middleware.DropStructured},
			tool:    withSchema(itemsSchema(0)),
			res:     &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a summary"}}, StructuredContent: items(40, "")},
			wantErr: middleware.ErrResultTooLarge,
		},
		{
			name: "link after the note", tokens: 100,
			opts: &middleware.TokenBudgetOptions{Hint: short.Hint, Link: func(*mcpkit.Request, *middleware.Truncation) *mcp.ResourceLink {
				return &mcp.ResourceLink{URI: "file:///out.log", Name: "out.log"}
			}},
			res:       long,
			wantTexts: []string{lines(11)[:87] + "\n[cut]"},
			wantTrunc: &middleware.Truncation{Budget: 100, TextTokens: 480, KeptTextTokens: 87, TextCut: true},
		},
		{
			name: "a note longer than the budget is cut too", tokens: 20, res: long,
			opts:      &middleware.TokenBudgetOptions{Hint: func(*mcpkit.Request, *middleware.Truncation) string { return strings.Repeat("call again ", 10) }},
			wantTexts: []string{"call again call"},
			wantTrunc: &middleware.Truncation{Budget: 20, TextTokens: 480, TextCut: true},
		},
		{
			name: "input_required passes", tokens: 10, same: true,
			res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(20)}}, InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "sure?"}}},
		},
		{
			name: "error result: text cut with the error marker, structured content kept", tokens: 200,
			opts:       &middleware.TokenBudgetOptions{Hint: func(*mcpkit.Request, *middleware.Truncation) string { return "not for errors" }},
			res:        &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: lines(40)}}, StructuredContent: items(100, "")},
			wantTexts:  []string{lines(17)[:135] + "\n[truncated: the error was about 320 tokens, the budget is 200]"},
			wantStruct: string(items(100, "")),
			wantTrunc:  &middleware.Truncation{Budget: 200, TextTokens: 320, KeptTextTokens: 135, TextCut: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &middleware.TokenBudgetOptions{Estimator: bytesAsTokens}
			if tt.opts != nil {
				*opts = *tt.opts
				opts.Estimator = bytesAsTokens
			}
			before, _ := json.Marshal(tt.res)
			h := middleware.TokenBudget(tt.tokens, opts)(mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return tt.res, nil
			}))
			tool := tt.tool
			if tool == nil {
				tool = newTool("t", nil)
			}
			res, err := call(t, h, tool, nil)
			if after, _ := json.Marshal(tt.res); string(after) != string(before) {
				t.Fatalf("the handler's result was modified:\n%s\n%s", before, after)
			}
			if tt.wantErr != nil {
				var te *mcpkit.ToolError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &te) || te.ErrorClass() != mcpkit.Retryable {
					t.Fatalf("got %v, %v; want a retryable tool error wrapping %v", res, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.same {
				if res != tt.res {
					t.Errorf("got a new result, want the handler's")
				}
				return
			}
			if got := texts(res); !equalStrings(got, tt.wantTexts) {
				t.Errorf("texts:\n%q\nwant\n%q", got, tt.wantTexts)
			}
			if n := textTokens(res); n > tt.tokens && !res.IsError {
				t.Errorf("text of %d tokens, over the budget of %d", n, tt.tokens)
			}
			var gotStruct string
			if res.StructuredContent != nil {
				b, _ := json.Marshal(res.StructuredContent)
				gotStruct = string(b)
				if len(b) > tt.tokens && !res.IsError {
					t.Errorf("structured content of %d tokens, over the budget of %d", len(b), tt.tokens)
				}
			}
			if gotStruct != tt.wantStruct {
				t.Errorf("structured content = %s, want %s", gotStruct, tt.wantStruct)
			}
			if got := middleware.TruncationOf(res); mustMarshal(got) != mustMarshal(tt.wantTrunc) {
				t.Errorf("truncation = %s, want %s", mustMarshal(got), mustMarshal(tt.wantTrunc))
			}
			if tt.opts != nil && tt.opts.Link != nil {
				if l, ok := res.Content[len(res.Content)-1].(*mcp.ResourceLink); !ok || l.URI != "file:///out.log" {
					t.Errorf("last content is %#v, want the link", res.Content[len(res.Content)-1])
				}
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTokenBudgetKeepsMeta checks that the result's own _meta is kept, in a
// copy, next to the truncation record.
func TestTokenBudgetKeepsMeta(t *testing.T) {
	meta := mcp.Meta{"com.example/page": 1}
	h := middleware.TokenBudget(50, &middleware.TokenBudgetOptions{Estimator: bytesAsTokens})(mcpkit.HandlerFunc(
		func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(20)}}, Meta: meta}, nil
		}))
	res, err := call(t, h, newTool("t", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta["com.example/page"] != 1 || res.Meta[middleware.MetaKeyTruncated] == nil {
		t.Errorf("meta = %v", res.Meta)
	}
	if len(meta) != 1 {
		t.Errorf("the handler's _meta was modified: %v", meta)
	}
}

// TestTokenBudgetErrors checks that errors are bounded as ResultSizeLimit
// bounds them: a visible text over the budget is cut, keeping its class and
// chain; other errors pass.
func TestTokenBudgetErrors(t *testing.T) {
	sentinel := errors.New("sentinel")
	long := strings.Repeat("error detail ", 100)
	tests := []struct {
		name      string
		err       error
		wantText  string // "" means the error passes unchanged
		wantClass mcpkit.ErrorClass
	}{
		{"short tool error", mcpkit.ToolErrorf("bad input"), "", ""},
		{"long tool error", &mcpkit.ToolError{Err: fmt.Errorf("%s%w", long, sentinel), Class: mcpkit.Fatal},
			"error detail error detail error\n[truncated: the error was about 1308 tokens, the budget is 100]", mcpkit.Fatal},
		{"long internal error", fmt.Errorf("%s%w", long, sentinel), "x", mcpkit.Fatal},
		{"protocol error", mcpkit.NewProtocolError(-32602, long), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := middleware.TokenBudget(100, &middleware.TokenBudgetOptions{Estimator: middleware.TokenEstimatorFunc(func(s string) int { return len(s) })})(
				mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, tt.err }))
			_, err := call(t, h, newTool("t", nil), nil)
			if tt.wantText == "" {
				if err != tt.err {
					t.Errorf("got %v, want the error unchanged", err)
				}
				return
			}
			if !errors.Is(err, sentinel) {
				t.Errorf("the chain is lost: %v", err)
			}
			outcome, class := mcpkit.Classify(nil, err)
			wantOutcome, wantClass := mcpkit.Classify(nil, tt.err)
			if outcome != wantOutcome || class != wantClass {
				t.Errorf("classified %s/%s, want %s/%s", outcome, class, wantOutcome, wantClass)
			}
			visible := err.Error()
			var te *mcpkit.ToolError
			if errors.As(err, &te) {
				visible = te.Error()
			}
			if len(visible) > 100 {
				t.Errorf("visible text of %d bytes, over the budget: %q", len(visible), visible)
			}
			if tt.wantText != "x" && visible != tt.wantText {
				t.Errorf("text = %q, want %q", visible, tt.wantText)
			}
		})
	}
}

func TestTokenBudgetOff(t *testing.T) {
	h := mcpkit.HandlerFunc(ok)
	for _, n := range []int{0, -1} {
		if got := middleware.TokenBudget(n, nil)(h); fmt.Sprintf("%p", got) != fmt.Sprintf("%p", h) {
			t.Errorf("TokenBudget(%d) added a layer", n)
		}
	}
}

func TestTruncationOf(t *testing.T) {
	tr := &middleware.Truncation{Budget: 10, TextTokens: 20, KeptTextTokens: 5, TextCut: true,
		Arrays: []middleware.TrimmedArray{{Pointer: "/a", Length: 9, Kept: 1}}}
	wire := map[string]any{}
	json.Unmarshal([]byte(mustMarshal(tr)), &wire)
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want *middleware.Truncation
	}{
		{"nil", nil, nil},
		{"none", &mcp.CallToolResult{}, nil},
		{"as built", &mcp.CallToolResult{Meta: mcp.Meta{middleware.MetaKeyTruncated: tr}}, tr},
		{"as decoded", &mcp.CallToolResult{Meta: mcp.Meta{middleware.MetaKeyTruncated: wire}}, tr},
		{"not a record", &mcp.CallToolResult{Meta: mcp.Meta{middleware.MetaKeyTruncated: "cut"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := middleware.TruncationOf(tt.res); mustMarshal(got) != mustMarshal(tt.want) {
				t.Errorf("got %s, want %s", mustMarshal(got), mustMarshal(tt.want))
			}
		})
	}
}

// TestTokenBudgetEndToEnd checks what a client sees: a text tool cut with
// its hint and the record in _meta, a typed tool whose output schema the
// trimmed structured content still passes (the server validates it, the
// client gets it), and a per-tool budget given with ForTools.
func TestTokenBudgetEndToEnd(t *testing.T) {
	type row struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	type page struct {
		Rows  []row `json:"rows"`
		Total int   `json:"total"`
	}
	rows := make([]row, 300)
	for i := range rows {
		rows[i] = row{ID: i, Name: fmt.Sprintf("row number %d", i)}
	}
	rowsJSON, _ := json.Marshal(page{Rows: rows, Total: len(rows)})
	outSchema := &jsonschema.Schema{Type: "object", Required: []string{"rows", "total"}, Properties: map[string]*jsonschema.Schema{
		"rows": {Type: "array", MinItems: jsonschema.Ptr(1), Items: &jsonschema.Schema{Type: "object", Required: []string{"id", "name"},
			Properties: map[string]*jsonschema.Schema{"id": {Type: "integer"}, "name": {Type: "string"}}}},
		"total": {Type: "integer"},
	}}
	typed := &mcpkit.Tool{Tool: mcp.Tool{Name: "rows", InputSchema: objectSchema, OutputSchema: outSchema},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(rowsJSON)}}, StructuredContent: json.RawMessage(rowsJSON)}, nil
		})}
	logs := newTool("logs", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(strings.Repeat("a log line with some words in it\n", 2000)), nil
	})
	small := newTool("small", ok)
	hint := func(req *mcpkit.Request, t *middleware.Truncation) string {
		if len(t.Arrays) > 0 {
			a := t.Arrays[0]
			return fmt.Sprintf("%d more rows; call again with offset=%d", a.Length-a.Kept, a.Kept)
		}
		return "more lines: call again with since=<the last line>"
	}
	srv := newServer(t, []mcpkit.Middleware{
		mcpkit.ForTools(mcpkit.Named("logs"), middleware.TokenBudget(1000, &middleware.TokenBudgetOptions{Hint: hint})),
		mcpkit.ForTools(mcpkit.Not(mcpkit.Named("logs")), middleware.TokenBudget(2000, &middleware.TokenBudgetOptions{Hint: hint})),
	}, typed, logs, small)
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		ts := connect(srv)

		res, err := ts.CallTool(t.Context(), "logs", nil)
		if err != nil || res.IsError {
			t.Fatalf("logs: %v, %+v", err, res)
		}
		text := resultText(t, res)
		if !strings.HasSuffix(text, "words in it\nmore lines: call again with since=<the last line>") || middleware.EstimateTokens(text) > 1000 {
			t.Errorf("logs: got %d tokens ending %q", middleware.EstimateTokens(text), text[max(0, len(text)-80):])
		}
		tr := middleware.TruncationOf(res)
		if tr == nil || tr.Budget != 1000 || !tr.TextCut || tr.TextTokens != middleware.EstimateTokens(strings.Repeat("a log line with some words in it\n", 2000)) {
			t.Errorf("logs: truncation %+v", tr)
		}

		res, err = ts.CallTool(t.Context(), "rows", nil)
		if err != nil || res.IsError {
			t.Fatalf("rows: %v, %+v", err, res)
		}
		var got page
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		tr = middleware.TruncationOf(res)
		if tr == nil || len(tr.Arrays) != 1 || tr.Arrays[0].Pointer != "/rows" || tr.Arrays[0].Kept != len(got.Rows) || got.Total != 300 {
			t.Fatalf("rows: %d rows, truncation %+v", len(got.Rows), tr)
		}
		if len(got.Rows) == 0 || len(got.Rows) >= 300 || middleware.EstimateTokens(string(b)) > 2000 {
			t.Errorf("rows: kept %d rows, %d tokens", len(got.Rows), middleware.EstimateTokens(string(b)))
		}
		all := texts(res)
		if len(all) != 2 || all[0] != string(b) || all[1] != fmt.Sprintf("%d more rows; call again with offset=%d", 300-len(got.Rows), len(got.Rows)) {
			t.Errorf("rows: texts %q", all)
		}

		res, err = ts.CallTool(t.Context(), "small", nil)
		if err != nil || resultText(t, res) != "ok" || res.Meta[middleware.MetaKeyTruncated] != nil {
			t.Errorf("small: %v, %+v", err, res)
		}
	})
}
