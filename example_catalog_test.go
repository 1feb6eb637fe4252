package mcpkit_test

import (
	"context"
	"fmt"
	"log"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// versionOf returns version v of a tool "report" that says which version
// answered.
func versionOf(v string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool:    mcp.Tool{Name: "report", InputSchema: &jsonschema.Schema{Type: "object"}},
		Version: v,
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "report v" + v}}}, nil
		}),
	}
}

// Several versions of a tool: clients list and call the highest, and can
// pin another through the call's _meta.
func ExampleMetaKeyVersion() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
	if err := srv.Add(versionOf("1.9"), versionOf("1.10"), versionOf("2.0.0-rc.1")); err != nil {
		log.Fatal(err)
	}
	cs := connect(srv)
	defer cs.Close()
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("listed:", list.Tools[0].Meta[mcpkit.MetaKeyVersion], list.Tools[0].Meta[mcpkit.MetaKeyVersions])

	for _, pin := range []string{"", "1.9", "3"} {
		params := &mcp.CallToolParams{Name: "report"}
		if pin != "" {
			params.Meta = mcp.Meta{mcpkit.MetaKeyVersion: pin}
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			fmt.Printf("pin %q: %v\n", pin, err)
			continue
		}
		fmt.Printf("pin %q: %s\n", pin, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// listed: 2.0.0-rc.1 [2.0.0-rc.1 1.10 1.9]
	// pin "": report v2.0.0-rc.1
	// pin "1.9": report v1.9
	// pin "3": calling "tools/call": unknown tool "report"
}

func ExampleServer_RemoveVersion() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
	if err := srv.Add(versionOf("1"), versionOf("2")); err != nil {
		log.Fatal(err)
	}
	srv.RemoveVersion("report", "2") // 2 misbehaves: back to 1
	t, _ := srv.Lookup("report")
	fmt.Println(t.Version)
	// Output: 1
}

// A catalog transform written by hand: every tool's description gets a
// prefix. Transforms run when the registry changes, not per request.
func ExampleServer_Transform() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
	if err := srv.Add(versionOf("1")); err != nil {
		log.Fatal(err)
	}
	err := srv.Transform(func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
		t2 := t.Clone() // never modify the tool given
		t2.Description = "[beta] " + t.Description + "Monthly figures."
		return t2, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	t, _ := srv.Lookup("report")
	fmt.Println(t.Description)
	// Output: [beta] Monthly figures.
}

// adminsOnly is a Visibility: tools tagged "admin" are for requests whose
// token has the "admin" scope.
type adminsOnly struct{}

func (adminsOnly) Enabled(*mcpkit.Tool) bool { return true }
func (adminsOnly) PerRequest() bool          { return true }
func (adminsOnly) Allowed(_ context.Context, t *mcpkit.Tool, c mcpkit.Caller) bool {
	if !t.HasTag("admin") {
		return true
	}
	info := c.TokenInfo()
	if info == nil {
		return false // stdio and in-memory: no token, no admin tools
	}
	for _, s := range info.Scopes {
		if s == "admin" {
			return true
		}
	}
	return false
}

func ExampleServer_SetVisibility() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ops"}, nil)
	purge := versionOf("")
	purge.Name, purge.Tags = "purge", []string{"admin"}
	if err := srv.Add(versionOf(""), purge); err != nil {
		log.Fatal(err)
	}
	srv.SetVisibility(adminsOnly{})

	cs := connect(srv) // in memory: no token
	defer cs.Close()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range list.Tools {
		fmt.Println("listed:", t.Name)
	}
	fmt.Println("cacheScope:", list.CacheScope)
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "purge"})
	fmt.Println(err)
	// Output:
	// listed: report
	// cacheScope: private
	// calling "tools/call": unknown tool "purge"
}
