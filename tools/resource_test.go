package tools_test

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/tools"
)

func ExampleNewTemplate() {
	// One field per variable of the template, decoded from the URI read:
	// a string, or any encoding.TextUnmarshaler (netip.Addr here).
	type HostParams struct {
		Zone string     `json:"zone"`
		Addr netip.Addr `json:"addr"`
	}
	lookup := func(ctx context.Context, req *mcpkit.ResourceRequest, p HostParams) (*mcp.ReadResourceResult, error) {
		text := fmt.Sprintf("%s in zone %s (IPv4: %v)", p.Addr, p.Zone, p.Addr.Is4())
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
	}
	tmpl := tools.MustTemplate(tools.NewTemplate("hosts://{zone}/{addr}", lookup,
		&tools.TemplateOptions{Name: "host", MIMEType: "text/plain"}))

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "inventory"}, nil)
	if err := srv.AddResourceTemplates(tmpl); err != nil {
		log.Fatal(err)
	}
	cs := connect(srv)
	defer cs.Close()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "hosts://eu-west/192.0.2.7"})
	if err != nil {
		log.Fatal(err)
	}
	c := res.Contents[0]
	fmt.Println(c.URI, c.MIMEType)
	fmt.Println(c.Text)
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "hosts://eu-west/not-an-address"})
	fmt.Println(err)
	// Output:
	// hosts://eu-west/192.0.2.7 text/plain
	// 192.0.2.7 in zone eu-west (IPv4: true)
	// calling "resources/read": parameter "addr": ParseAddr("not-an-address"): unable to p...
}

// TestNewTemplateFields checks that NewTemplate refuses a template whose
// variables lack a field, a template that does not compile, and a nil
// function, naming what is wrong.
func TestNewTemplateFields(t *testing.T) {
	read := func(context.Context, *mcpkit.ResourceRequest, struct {
		ID string `json:"id"`
	}) (*mcp.ReadResourceResult, error) {
		return nil, nil
	}
	for _, c := range []struct {
		template string
		want     string
	}{
		{"memo://{id}/{rev}", `no field for the variable "rev"`},
		{"memo://{id", `template "memo://{id"`},
	} {
		if _, err := tools.NewTemplate(c.template, read, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.template, err, c.want)
		}
	}
	if _, err := tools.NewTemplate[struct{}]("memo://x", nil, nil); err == nil {
		t.Error("a nil function was accepted")
	}
	if _, err := tools.NewTemplate("memo://{n}", func(context.Context, *mcpkit.ResourceRequest, struct {
		N int `json:"n"`
	}) (*mcp.ReadResourceResult, error) {
		return nil, nil
	}, nil); err == nil || !strings.Contains(err.Error(), "neither a string nor an encoding.TextUnmarshaler") {
		t.Errorf("an int field: %v", err)
	}
	tmpl, err := tools.NewTemplate("memo://{id}", read, nil)
	if err != nil || tmpl.Name != "memo://{id}" {
		t.Errorf("default name %q, %v; want the template's text", tmpl.Name, err)
	}
}

// TestTextAndBlobResources checks the definitions TextResource and
// BlobResource make, and what a read answers, through a server.
func TestTextAndBlobResources(t *testing.T) {
	text := tools.TextResource("memo://t", "t", "text/plain", "héllo", &tools.ResourceOptions{Description: "d", Tags: []string{"x"}, Unlisted: true})
	blob := tools.BlobResource("memo://b", "b", "image/png", []byte{0, 1, 2}, nil)
	if text.Size != 6 || text.Description != "d" || !text.HasTag("x") || !text.Unlisted || blob.Size != 3 || blob.MIMEType != "image/png" {
		t.Errorf("definitions: %+v, %+v", text.Resource, blob.Resource)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "fixed"}, nil)
	if err := srv.AddResources(text, blob); err != nil {
		t.Fatal(err)
	}
	cs := connect(srv)
	defer cs.Close()
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != "memo://b" {
		t.Errorf("list: %+v, %v; want memo://b alone (memo://t is unlisted)", list, err)
	}
	for uri, want := range map[string]string{"memo://t": "memo://t text/plain héllo []", "memo://b": "memo://b image/png  [0 1 2]"} {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Contents[0]
		if got := fmt.Sprintf("%s %s %s %v", c.URI, c.MIMEType, c.Text, c.Blob); got != want {
			t.Errorf("%s: %q, want %q", uri, got, want)
		}
	}
}
