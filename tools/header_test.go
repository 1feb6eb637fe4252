package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

type routed struct {
	Region string `json:"region" header:"Region"`
	Tenant struct {
		ID     int  `json:"id" header:"Tenant-Id"`
		Active bool `json:"active,omitempty" header:"Tenant-Active"`
	} `json:"tenant"`
	Query string `json:"query"`
}

// TestHeaderTagEndToEnd registers a typed tool whose arguments mirror into
// Mcp-Param headers: the listed schema carries x-mcp-header, a 2026-07-28
// client sends the headers (non-ASCII values Base64-encoded), and
// middleware reads them with ParamHeader.
func TestHeaderTagEndToEnd(t *testing.T) {
	tl, err := tools.New("search", func(ctx context.Context, in routed) (string, error) {
		return in.Region + "/" + in.Query, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan [2]string, 4)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "hdr"}, nil)
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			region, _ := req.ParamHeader("Region")
			tenant, _ := req.ParamHeader("Tenant-Id")
			seen <- [2]string{region, tenant}
			return next.ServeTool(ctx, req)
		})
	})
	if err := srv.Add(tl); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	list, err := ts.Session.ListTools(t.Context(), nil) // the client learns the annotations
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := json.Marshal(list.Tools[0].InputSchema)
	for _, want := range []string{`"x-mcp-header":"Region"`, `"x-mcp-header":"Tenant-Id"`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("listed schema lacks %s: %s", want, schema)
		}
	}
	args := map[string]any{"region": "zürich", "tenant": map[string]any{"id": 42}, "query": "q"}
	res, err := ts.CallTool(t.Context(), "search", args)
	if err != nil || res.IsError {
		t.Fatalf("call = %v, %v", res, err)
	}
	if got := <-seen; got != [2]string{"zürich", "42"} {
		t.Errorf("middleware read %q from the headers, want [zürich 42]", got)
	}
}

func TestHeaderTagErrors(t *testing.T) {
	type number struct {
		Price float64 `json:"price" header:"Price"`
	}
	type inList struct {
		Items []struct {
			ID string `json:"id" header:"Item"`
		} `json:"items"`
	}
	type twice struct {
		A string `json:"a" header:"Zone"`
		B string `json:"b" header:"zone"`
	}
	type badName struct {
		A string `json:"a" header:"Has Space"`
	}
	type empty struct {
		A string `json:"a" header:""`
	}
	for name, build := range map[string]func() error{
		"number":     func() error { _, err := tools.New("t", echo[number], nil); return err },
		"in a list":  func() error { _, err := tools.New("t", echo[inList], nil); return err },
		"case":       func() error { _, err := tools.New("t", echo[twice], nil); return err },
		"bad name":   func() error { _, err := tools.New("t", echo[badName], nil); return err },
		"empty name": func() error { _, err := tools.New("t", echo[empty], nil); return err },
	} {
		if err := build(); err == nil || !strings.Contains(err.Error(), "header") {
			t.Errorf("%s: err = %v, want a header error", name, err)
		}
	}
}

func echo[T any](_ context.Context, in T) (T, error) { return in, nil }
