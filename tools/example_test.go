package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// connect serves srv in memory and returns a client session.
func connect(srv *mcpkit.Server) *mcp.ClientSession {
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	if err != nil {
		log.Fatal(err)
	}
	return cs
}

func ExampleNew() {
	type SearchIn struct {
		Query string `json:"query" description:"What to look for." minLength:"1"`
		Limit int    `json:"limit" default:"10" minimum:"1" maximum:"50"`
	}
	type Hit struct {
		Title string `json:"title"`
	}
	search := func(ctx context.Context, in SearchIn) ([]Hit, error) {
		return []Hit{{Title: "Result for " + in.Query}}, nil
	}
	tool, err := tools.New("search", search, &tools.Options{Description: "Search the catalog."})
	if err != nil {
		log.Fatal(err)
	}
	schema, _ := json.Marshal(tool.InputSchema)
	fmt.Println(string(schema))

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "catalog"}, nil)
	srv.Add(tool)
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "go"}})
	structured, _ := json.Marshal(res.StructuredContent)
	fmt.Println(string(structured))
	// Output:
	// {"type":"object","properties":{"query":{"type":"string","description":"What to look for.","minLength":1},"limit":{"type":"integer","default":10,"minimum":1,"maximum":50}},"required":["query"],"additionalProperties":false}
	// {"result":[{"title":"Result for go"}]}
}

func ExampleNewWithRequest() {
	type In struct {
		Files []string `json:"files"`
	}
	index := func(ctx context.Context, req *mcpkit.Request, in In) (int, error) {
		for i := range in.Files {
			// A no-op unless the client sent a progress token.
			req.NotifyProgress(ctx, float64(i+1), float64(len(in.Files)), "indexing")
		}
		return len(in.Files), nil
	}
	tool := tools.Must(tools.NewWithRequest("index", index, nil))
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "indexer"}, nil)
	srv.Add(tool)
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "index", Arguments: In{Files: []string{"a", "b"}}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.StructuredContent)
	// Output: 2 map[result:2]
}

func ExampleNew_content() {
	chart := func(ctx context.Context, _ struct{}) ([]mcp.Content, error) {
		png := []byte("\x89PNG\r\n\x1a\n") // a real tool would render one
		return []mcp.Content{
			&mcp.TextContent{Text: "Sales by month:"},
			&mcp.ImageContent{Data: png, MIMEType: "image/png", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 1}},
		}, nil
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "charts"}, nil)
	srv.Add(tools.Must(tools.New("chart", chart, nil)))
	cs := connect(srv)
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "chart"})
	for _, c := range res.Content {
		b, _ := json.Marshal(c)
		fmt.Println(string(b))
	}
	// Output:
	// {"type":"text","text":"Sales by month:"}
	// {"type":"image","mimeType":"image/png","data":"iVBORw0KGgo=","annotations":{"audience":["user"],"priority":1}}
}

func ExampleNew_errors() {
	type In struct {
		Path      string `json:"path"`
		Overwrite bool   `json:"overwrite,omitempty"`
	}
	write := func(ctx context.Context, in In) (string, error) {
		if !in.Overwrite {
			// Shown to the model, which may retry with overwrite set.
			return "", mcpkit.ToolErrorf("%s exists; set overwrite to replace it", in.Path)
		}
		return "written", nil
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
	srv.Add(tools.Must(tools.New("write_file", write, nil)))
	cs := connect(srv)
	defer cs.Close()

	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: In{Path: "a.txt"}})
	fmt.Println(res.IsError, mcpkit.ErrorClassOf(res), res.Content[0].(*mcp.TextContent).Text)

	// Arguments of the wrong type are reported with the field's name.
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": 7}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// true retryable a.txt exists; set overwrite to replace it
	// true invalid arguments: path: want string, got number
}

// Level is an enumeration that describes itself.
type Level int

func (Level) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Enum: []any{1, 2, 3}, Description: "1 low, 2 normal, 3 urgent."}
}

func ExampleSchemaer() {
	type In struct {
		Level Level `json:"level"`
	}
	tool := tools.Must(tools.New("triage", func(ctx context.Context, in In) (bool, error) { return in.Level == 3, nil }, nil))
	schema, _ := json.Marshal(tool.InputSchema)
	fmt.Println(string(schema))
	// Output: {"type":"object","properties":{"level":{"type":"integer","description":"1 low, 2 normal, 3 urgent.","enum":[1,2,3]}},"required":["level"],"additionalProperties":false}
}
