package tools_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// serve registers ts on a new server and connects a client in memory.
func serve(t *testing.T, ts ...*mcpkit.Tool) *mcpkittest.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "tools-test"}, nil)
	if err := srv.Add(ts...); err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewInMemoryServer(t, srv, nil)
}

// wire returns res as the client received it, re-encoded as generic JSON.
func wire(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	var g any
	json.Unmarshal(gb, &g)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", gb, want)
	}
}

func call(t *testing.T, ts *mcpkittest.Server, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := ts.CallTool(t.Context(), name, args)
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

type AddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type Person struct {
	Name  string `json:"name"`
	Age   int    `json:"age"`
	Email string `json:"email"`
}

// TestFastMCPResultShapes checks the Go counterparts of the result examples
// in FastMCP's documentation: the same wire shapes.
func TestFastMCPResultShapes(t *testing.T) {
	userData := tools.Must(tools.New("get_user_data", func(ctx context.Context, in struct {
		UserID string `json:"user_id"`
	}) (map[string]any, error) {
		return map[string]any{"name": "Alice", "age": 30, "active": true}, nil
	}, nil))
	sum := tools.Must(tools.New("calculate_sum", func(ctx context.Context, in AddIn) (int, error) {
		return in.A + in.B, nil
	}, nil))
	profile := tools.Must(tools.New("get_user_profile", func(ctx context.Context, in struct {
		UserID string `json:"user_id"`
	}) (Person, error) {
		return Person{Name: "Alice", Age: 30, Email: "alice@example.com"}, nil
	}, nil))
	// Protocol 2025-11-25, which adds nothing of its own to results.
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "fastmcp-shapes"}, nil)
	if err := srv.Add(userData, sum, profile); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewServer(t, srv, nil)

	// dict -> content + structuredContent
	res := call(t, ts, "get_user_data", map[string]any{"user_id": "1"})
	jsonEqual(t, res.StructuredContent, `{"name":"Alice","age":30,"active":true}`)
	jsonEqual(t, json.RawMessage(res.Content[0].(*mcp.TextContent).Text), `{"name":"Alice","age":30,"active":true}`)

	// int with an output type -> {"result": 8} for this 2025-11-25 client,
	// text "8"
	res = call(t, ts, "calculate_sum", map[string]any{"a": 5, "b": 3})
	jsonEqual(t, wire(t, res), `{"content":[{"type":"text","text":"8"}],"structuredContent":{"result":8}}`)

	// dataclass -> output schema with required fields, structured content
	list, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]any{}
	for _, tl := range list.Tools {
		schemas[tl.Name] = tl.OutputSchema
	}
	jsonEqual(t, schemas["get_user_profile"], `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
		"email":{"type":"string"}},"required":["name","age","email"],"additionalProperties":false}`)
	jsonEqual(t, schemas["calculate_sum"], `{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"],
		"additionalProperties":false}`)
	res = call(t, ts, "get_user_profile", map[string]any{"user_id": "1"})
	jsonEqual(t, res.StructuredContent, `{"name":"Alice","age":30,"email":"alice@example.com"}`)

	// A 2026-07-28 client gets the value itself, and its schema (SEP-2106).
	ts = mcpkittest.NewStatelessServer(t, srv, nil)
	res = call(t, ts, "calculate_sum", map[string]any{"a": 5, "b": 3})
	got := wire(t, res)
	delete(got, "_meta")
	delete(got, "resultType")
	jsonEqual(t, got, `{"content":[{"type":"text","text":"8"}],"structuredContent":8}`)
	list, err = ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "calculate_sum" {
			jsonEqual(t, tl.OutputSchema, `{"type":"integer"}`)
		}
		if b, _ := json.Marshal(tl); strings.Contains(string(b), "mcpkit") {
			t.Errorf("a library-private key is advertised: %s", b)
		}
	}
}

func TestStructuredResults(t *testing.T) {
	type empty struct{}
	tests := []struct {
		name string
		tool *mcpkit.Tool
		want string // the result on the wire, without _meta
	}{
		{"string", tools.Must(tools.New("s", func(context.Context, empty) (string, error) { return "hi \"there\"", nil }, nil)),
			`{"content":[{"type":"text","text":"hi \"there\""}],"structuredContent":"hi \"there\""}`},
		{"bool", tools.Must(tools.New("b", func(context.Context, empty) (bool, error) { return true, nil }, nil)),
			`{"content":[{"type":"text","text":"true"}],"structuredContent":true}`},
		{"float", tools.Must(tools.New("f", func(context.Context, empty) (float64, error) { return 2.5, nil }, nil)),
			`{"content":[{"type":"text","text":"2.5"}],"structuredContent":2.5}`},
		{"list of one stays a list", tools.Must(tools.New("l", func(context.Context, empty) ([]Person, error) {
			return []Person{{Name: "Ada"}}, nil
		}, nil)),
			`{"content":[{"type":"text","text":"[{\"name\":\"Ada\",\"age\":0,\"email\":\"\"}]"}],
			"structuredContent":[{"name":"Ada","age":0,"email":""}]}`},
		{"nil list is empty", tools.Must(tools.New("n", func(context.Context, empty) ([]int, error) { return nil, nil }, nil)),
			`{"content":[{"type":"text","text":"[]"}],"structuredContent":[]}`},
		{"array", tools.Must(tools.New("a", func(context.Context, empty) ([2]int, error) { return [2]int{1, 2}, nil }, nil)),
			`{"content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2]}`},
		{"pointer to struct", tools.Must(tools.New("p", func(context.Context, empty) (*Person, error) {
			return &Person{Name: "Bo", Age: 2}, nil
		}, nil)),
			`{"content":[{"type":"text","text":"{\"name\":\"Bo\",\"age\":2,\"email\":\"\"}"}],"structuredContent":{"name":"Bo","age":2,"email":""}}`},
		{"nil pointer is empty", tools.Must(tools.New("np", func(context.Context, empty) (*Person, error) { return nil, nil }, nil)),
			`{"content":[]}`},
		{"nil map is empty", tools.Must(tools.New("nm", func(context.Context, empty) (map[string]int, error) { return nil, nil }, nil)),
			`{"content":[]}`},
		{"no output", tools.Must(tools.New("none", func(context.Context, empty) (struct{}, error) { return struct{}{}, nil }, nil)),
			`{"content":[]}`},
		{"dynamic object", tools.Must(tools.New("d", func(context.Context, empty) (any, error) { return map[string]int{"x": 1}, nil }, nil)),
			`{"content":[{"type":"text","text":"{\"x\":1}"}],"structuredContent":{"x":1}}`},
		{"dynamic number", tools.Must(tools.New("dn", func(context.Context, empty) (any, error) { return 7, nil }, nil)),
			`{"content":[{"type":"text","text":"7"}],"structuredContent":7}`},
		{"bytes are a blob", tools.Must(tools.New("bytes", func(context.Context, empty) ([]byte, error) { return []byte("\x89PNG\r\n\x1a\n...."), nil }, nil)),
			`{"content":[{"type":"resource","resource":{"uri":"resource://result","mimeType":"image/png","blob":"iVBORw0KGgouLi4u"}}]}`},
		{"a concrete content block", tools.Must(tools.New("img", func(context.Context, empty) (*mcp.ImageContent, error) {
			return &mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}, nil
		}, nil)),
			`{"content":[{"type":"image","data":"eA==","mimeType":"image/png"}]}`},
		{"dynamic string", tools.Must(tools.New("ds", func(context.Context, empty) (any, error) { return "plain", nil }, nil)),
			`{"content":[{"type":"text","text":"plain"}]}`},
		{"dynamic nil", tools.Must(tools.New("dnil", func(context.Context, empty) (any, error) { return nil, nil }, nil)),
			`{"content":[]}`},
		{"time is not an object", tools.Must(tools.New("tm", func(context.Context, empty) (time.Time, error) {
			return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), nil
		}, nil)),
			`{"content":[{"type":"text","text":"\"2026-01-02T03:04:05Z\""}],"structuredContent":"2026-01-02T03:04:05Z"}`},
		{"call tool result passes through", tools.Must(tools.New("r", func(context.Context, empty) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "as is"}}, StructuredContent: map[string]int{"k": 1}, IsError: true}, nil
		}, nil)),
			`{"content":[{"type":"text","text":"as is"}],"structuredContent":{"k":1},"isError":true}`},
	}
	var all []*mcpkit.Tool
	for _, tt := range tests {
		all = append(all, tt.tool)
	}
	ts := serve(t, all...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wire(t, call(t, ts, tt.tool.Name, map[string]any{}))
			delete(got, "_meta")
			delete(got, "resultType") // set by the SDK on protocol 2026-07-28
			jsonEqual(t, got, tt.want)
		})
	}
}

// TestOutputMatchesSchema checks that every structured result validates
// against the output schema the tool advertises.
func TestOutputMatchesSchema(t *testing.T) {
	type Out struct {
		Items []int           `json:"items"`
		Meta  map[string]bool `json:"meta"`
		Best  *Person         `json:"best"`
	}
	tl := tools.Must(tools.New("o", func(context.Context, struct{}) (Out, error) { return Out{}, nil }, nil))
	ts := serve(t, tl, tools.Must(tools.New("w", func(context.Context, struct{}) ([]string, error) { return nil, nil }, nil)))
	list, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range list.Tools {
		res := call(t, ts, def.Name, nil)
		if err := validate(def.OutputSchema, res.StructuredContent); err != nil {
			t.Errorf("%s: structured content %v does not match its output schema: %v", def.Name, res.StructuredContent, err)
		}
	}
}

func TestArgumentErrors(t *testing.T) {
	type Item struct {
		ID int `json:"id"`
	}
	type In struct {
		Items []Item `json:"items"`
		Q     string `json:"q"`
	}
	tl := tools.Must(tools.New("echo", func(ctx context.Context, in In) (int, error) { return len(in.Items), nil }, nil))
	// The decoder's own errors: without the server's validation, which
	// would reject these arguments first.
	tl.Validation = mcpkit.NoValidation
	ts := serve(t, tl)
	tests := []struct {
		args any
		want string
	}{
		{json.RawMessage(`{"items":[{"id":1},{"id":"two"}]}`), `invalid arguments: items/id: want integer, got string`},
		{json.RawMessage(`{"q":5}`), `invalid arguments: q: want string, got number`},
		{json.RawMessage(`{"items":{}}`), `invalid arguments: items: want array, got object`},
		{json.RawMessage(`{"items":[{"id":10.5}]}`), `invalid arguments: items/id: want integer, got number 10.5`},
		{json.RawMessage(`{"items":[{"id":1e30}]}`), `invalid arguments: items/id: want integer, got a number out of its range: 1e30`},
		{json.RawMessage(`{"items":[{"id":-1.` + strings.Repeat("5", 5000) + `}]}`), `invalid arguments: items/id: want integer, got number -1.` + strings.Repeat("5", 37) + `...`},
	}
	for _, tt := range tests {
		res := call(t, ts, "echo", tt.args)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
			t.Errorf("%s: got %+v, want a retryable tool error", tt.args, res)
			continue
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != tt.want {
			t.Errorf("%.80s: message %q, want %q", tt.args, got, tt.want)
		}
	}
	// No arguments at all decode as the zero value.
	if res := call(t, ts, "echo", nil); res.IsError || res.StructuredContent != 0.0 {
		t.Errorf("no arguments: %+v", res)
	}
}

// TestWholeNumbersForIntegers checks that 10.0 and 1e2, integers to JSON
// Schema and so to the validator, decode into integer fields too.
func TestWholeNumbersForIntegers(t *testing.T) {
	type In struct {
		N  int     `json:"n"`
		U  uint8   `json:"u"`
		F  float64 `json:"f"`
		S  string  `json:"s"`
		XS []int   `json:"xs"`
	}
	tl := tools.Must(tools.New("ints", func(ctx context.Context, in In) (string, error) {
		return fmt.Sprintf("%d %d %v %s %v", in.N, in.U, in.F, in.S, in.XS), nil
	}, nil))
	ts := serve(t, tl)
	res := call(t, ts, "ints", json.RawMessage(`{"n":10.0,"u":1e2,"f":2.50,"s":"1.0e1","xs":[-2.50e1,3]}`))
	if res.IsError || res.Content[0].(*mcp.TextContent).Text != "10 100 2.5 1.0e1 [-25 3]" {
		t.Errorf("got %+v", res.Content[0])
	}
	res = call(t, ts, "ints", json.RawMessage(`{"n":10.5,"u":1,"f":1,"s":"","xs":[]}`))
	if !res.IsError {
		t.Errorf("10.5 for an integer was accepted: %+v", res.Content[0])
	}
}

func TestErrorClasses(t *testing.T) {
	type empty struct{}
	ts := serve(t,
		tools.Must(tools.New("retry", func(context.Context, empty) (int, error) {
			return 0, mcpkit.ToolErrorf("file exists; pass overwrite")
		}, nil)),
		tools.Must(tools.New("fatal", func(context.Context, empty) (int, error) {
			return 0, mcpkit.NewToolError(errors.New("workspace is read-only"), mcpkit.Fatal)
		}, nil)),
		tools.Must(tools.New("protocol", func(context.Context, empty) (int, error) {
			return 0, mcpkit.NewProtocolError(-32042, "not allowed")
		}, nil)),
		tools.Must(tools.New("internal", func(context.Context, empty) (int, error) {
			return 0, errors.New("db down")
		}, nil)),
	)
	for _, tt := range []struct {
		tool  string
		class mcpkit.ErrorClass
		text  string
	}{
		{"retry", mcpkit.Retryable, "file exists; pass overwrite"},
		{"fatal", mcpkit.Fatal, "workspace is read-only"},
		{"internal", mcpkit.Fatal, "db down"},
	} {
		res := call(t, ts, tt.tool, nil)
		if !res.IsError || mcpkit.ErrorClassOf(res) != tt.class || res.Content[0].(*mcp.TextContent).Text != tt.text {
			t.Errorf("%s: got %+v", tt.tool, wire(t, res))
		}
		if res.StructuredContent != nil {
			t.Errorf("%s: error result has structured content", tt.tool)
		}
	}
	_, err := ts.CallTool(t.Context(), "protocol", nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32042 {
		t.Errorf("protocol: %v", err)
	}
}

// Calculator has methods that serve as tools.
type Calculator struct{ Offset int }

func (c *Calculator) Add(ctx context.Context, in AddIn) (int, error) {
	return in.A + in.B + c.Offset, nil
}

func TestBoundMethod(t *testing.T) {
	calc := &Calculator{Offset: 100}
	tl := tools.Must(tools.New("add", calc.Add, &tools.Options{Description: "Add with an offset."}))
	ts := serve(t, tl)
	if res := call(t, ts, "add", AddIn{A: 1, B: 2}); res.StructuredContent != 103.0 {
		t.Errorf("got %v, want 103", res.StructuredContent)
	}
	list, _ := ts.Session.ListTools(t.Context(), nil)
	jsonEqual(t, list.Tools[0].InputSchema, `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
		"required":["a","b"],"additionalProperties":false}`)
}

func TestOptions(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mw := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			mu.Lock()
			seen = append(seen, req.Tool.Name+"@"+req.Tool.Version)
			mu.Unlock()
			return next.ServeTool(ctx, req)
		})
	}
	readOnly := true
	tl := tools.Must(tools.New("search", func(ctx context.Context, in struct {
		Q string `json:"q"`
	}) ([]string, error) {
		return []string{in.Q}, nil
	}, &tools.Options{
		Title:        "Search",
		Description:  "Search the index.",
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: readOnly, IdempotentHint: true, OpenWorldHint: &readOnly},
		Icons:        []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png"}},
		Meta:         mcp.Meta{"com.example/owner": "search-team"},
		Tags:         []string{"read"},
		Version:      "2.1",
		Middleware:   []mcpkit.Middleware{mw},
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"result":{"type":"array"}}}`),
	}))
	if !tl.HasTag("read") || tl.Version != "2.1" {
		t.Errorf("tags/version not set: %+v", tl)
	}
	ts := serve(t, tl)
	list, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	def := list.Tools[0]
	if def.Title != "Search" || def.Description != "Search the index." || !def.Annotations.ReadOnlyHint ||
		!def.Annotations.IdempotentHint || len(def.Icons) != 1 || def.Meta["com.example/owner"] != "search-team" {
		t.Errorf("definition = %+v", def)
	}
	jsonEqual(t, def.InputSchema, `{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"]}`)
	jsonEqual(t, def.OutputSchema, `{"type":"object","properties":{"result":{"type":"array"}}}`)
	call(t, ts, "search", map[string]string{"q": "go"})
	if strings.Join(seen, ",") != "search@2.1" {
		t.Errorf("per-tool middleware saw %v", seen)
	}
}

func TestNewErrors(t *testing.T) {
	type bad struct {
		F func() `json:"f"`
	}
	for name, build := range map[string]func() error{
		"bad name": func() error {
			_, err := tools.New("bad name", func(context.Context, struct{}) (int, error) { return 0, nil }, nil)
			return err
		},
		"nil func": func() error {
			_, err := tools.New[struct{}, int]("f", nil, nil)
			return err
		},
		"bad input": func() error {
			_, err := tools.New("f", func(context.Context, bad) (int, error) { return 0, nil }, nil)
			return err
		},
		"non-object input": func() error {
			_, err := tools.New("f", func(context.Context, []int) (int, error) { return 0, nil }, nil)
			return err
		},
		"bad output": func() error {
			_, err := tools.New("f", func(context.Context, struct{}) (bad, error) { return bad{}, nil }, nil)
			return err
		},
	} {
		if err := build(); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.HasPrefix(err.Error(), "tools: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic on an error")
		}
	}()
	tools.Must(tools.New("bad name", func(context.Context, struct{}) (int, error) { return 0, nil }, nil))
}

// pngBytes returns a 2x2 PNG.
func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wavBytes returns a tiny, valid PCM WAV file.
func wavBytes() []byte {
	samples := []int16{0, 1000, -1000, 0}
	var buf bytes.Buffer
	le := binary.LittleEndian
	buf.WriteString("RIFF")
	binary.Write(&buf, le, uint32(36+2*len(samples)))
	buf.WriteString("WAVEfmt ")
	binary.Write(&buf, le, []any{uint32(16), uint16(1), uint16(1), uint32(8000), uint32(16000), uint16(2), uint16(16)})
	buf.WriteString("data")
	binary.Write(&buf, le, uint32(2*len(samples)))
	binary.Write(&buf, le, samples)
	return buf.Bytes()
}

// TestContentResults checks that content blocks, one or many, the
// interface or a concrete type, are sent as they are.
func TestContentResults(t *testing.T) {
	pngData, wavData := pngBytes(t), wavBytes()
	content := func(name string, c ...mcp.Content) *mcpkit.Tool {
		return tools.Must(tools.New(name, func(context.Context, struct{}) ([]mcp.Content, error) { return c, nil }, nil))
	}
	one := func(name string, c mcp.Content) *mcpkit.Tool {
		return tools.Must(tools.New(name, func(context.Context, struct{}) (mcp.Content, error) { return c, nil }, nil))
	}
	audio := tools.Must(tools.New("audio", func(context.Context, struct{}) (*mcp.AudioContent, error) {
		return &mcp.AudioContent{Data: wavData, MIMEType: "audio/wav"}, nil
	}, nil))
	link := tools.Must(tools.New("link", func(context.Context, struct{}) (*mcp.ResourceLink, error) {
		return &mcp.ResourceLink{URI: "test://big", Name: "big.csv"}, nil
	}, nil))
	tests := []struct {
		tool *mcpkit.Tool
		want string
	}{
		{one("text", &mcp.TextContent{Text: "hello"}), `[{"type":"text","text":"hello"}]`},
		{one("image", &mcp.ImageContent{Data: pngData, MIMEType: "image/png"}), fmt.Sprintf(`[{"type":"image","data":%q,"mimeType":"image/png"}]`, b64(pngData))},
		{audio, fmt.Sprintf(`[{"type":"audio","data":%q,"mimeType":"audio/wav"}]`, b64(wavData))},
		{link, `[{"type":"resource_link","uri":"test://big","name":"big.csv"}]`},
		{one("annotated", &mcp.TextContent{Text: "for you", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.9}}),
			`[{"type":"text","text":"for you","annotations":{"audience":["user"],"priority":0.9}}]`},
		{content("mixed", &mcp.TextContent{Text: "Multiple content types:"}, &mcp.ImageContent{Data: pngData, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed", MIMEType: "application/json", Text: `{"value":123}`}}),
			fmt.Sprintf(`[{"type":"text","text":"Multiple content types:"},{"type":"image","data":%q,"mimeType":"image/png"},
			{"type":"resource","resource":{"uri":"test://mixed","mimeType":"application/json","text":"{\"value\":123}"}}]`, b64(pngData))},
		{content("none"), `[]`},
	}
	var all []*mcpkit.Tool
	for _, tt := range tests {
		all = append(all, tt.tool)
	}
	ts := serve(t, all...)
	for _, tt := range tests {
		t.Run(tt.tool.Name, func(t *testing.T) {
			res := call(t, ts, tt.tool.Name, nil)
			if res.StructuredContent != nil || res.IsError {
				t.Errorf("content result has structured content or isError: %+v", res)
			}
			jsonEqual(t, wire(t, res)["content"], tt.want)
		})
	}
}

func b64(b []byte) string {
	s, _ := json.Marshal(b)
	return strings.Trim(string(s), `"`)
}

// TestProgress calls a tool that reports progress over stateful HTTP and
// checks that it arrives.
func TestProgress(t *testing.T) {
	type In struct {
		Steps int `json:"steps" default:"3"`
	}
	work := func(ctx context.Context, req *mcpkit.Request, in In) (string, error) {
		for i := range in.Steps {
			if err := req.NotifyProgress(ctx, float64(i+1), float64(in.Steps), fmt.Sprintf("step %d", i+1)); err != nil {
				return "", err
			}
		}
		return "done", nil
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "progress"}, nil)
	srv.Add(tools.Must(tools.NewWithRequest("work", work, nil)))

	var (
		mu       sync.Mutex
		progress []string
	)
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, fmt.Sprintf("%v/%v %s token=%v", r.Params.Progress, r.Params.Total, r.Params.Message, r.Params.ProgressToken))
		},
	}})
	params := &mcp.CallToolParams{Name: "work", Arguments: map[string]int{"steps": 3}}
	params.SetProgressToken("tok-1")
	res, err := ts.Session.CallTool(t.Context(), params)
	if sc, _ := res.StructuredContent.(map[string]any); err != nil || sc["result"] != "done" { // wrapped for 2025-11-25
		t.Fatalf("work: %+v, %v", res, err)
	}
	// Notifications sent before the response arrive before it on the
	// stateful transport, but the handlers run asynchronously.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(progress, "; "); got != "1/3 step 1 token=tok-1; 2/3 step 2 token=tok-1; 3/3 step 3 token=tok-1" {
		t.Errorf("progress = %s", got)
	}
}

// TestProgressWithoutToken checks that reporting progress when the client
// did not ask for it is a no-op, not an error.
func TestProgressWithoutToken(t *testing.T) {
	tl := tools.Must(tools.NewWithRequest("p", func(ctx context.Context, req *mcpkit.Request, _ struct{}) (bool, error) {
		return req.NotifyProgress(ctx, 1, 1, "") == nil, nil
	}, nil))
	ts := serve(t, tl)
	if res := call(t, ts, "p", nil); res.StructuredContent != true {
		t.Errorf("got %+v", res)
	}
	// Without a session at all (a unit test), both are no-ops too.
	res, err := tl.Handler.ServeTool(t.Context(), mcpkittest.NewRequest(tl, nil))
	if err != nil || string(res.StructuredContent.(json.RawMessage)) != "true" {
		t.Errorf("without a session: %+v, %v", res, err)
	}
}

// validate checks instance against schema with jsonschema-go.
func validate(schema, instance any) error {
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	return r.Validate(instance)
}
