package mcpkit_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

func ExampleServer_AddResources() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "notes"}, nil)
	// Recover and Timeout serve resources too; a layer that serves tools
	// only is left out of a resource's chain.
	srv.Use(middleware.Recover(nil), middleware.Timeout(10*time.Second, nil))
	err := srv.AddResources(&mcpkit.Resource{
		Resource: mcp.Resource{URI: "notes://today", Name: "today", MIMEType: "text/markdown"},
		Handler: mcpkit.ResourceHandlerFunc(func(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			// The server fills in the URI and the MIME type left empty.
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "# Today\n- write docs"}}}, nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	err = srv.AddResourceTemplates(&mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "notes://archive/{date}", Name: "archive", MIMEType: "text/markdown"},
		Handler: mcpkit.ResourceHandlerFunc(func(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "# " + req.Params["date"]}}}, nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}

	cs := connect(srv)
	defer cs.Close()
	list, _ := cs.ListResources(context.Background(), nil)
	fmt.Println(list.Resources[0].URI, list.Resources[0].MIMEType)
	for _, uri := range []string{"notes://today", "notes://archive/2026-07-28"} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %q\n", res.Contents[0].URI, res.Contents[0].Text)
	}
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "notes://nowhere"})
	fmt.Println(err)
	layers, _ := srv.ResourcePipeline("notes://archive/2026-07-28")
	for _, l := range layers {
		fmt.Println(l.Name)
	}
	// Output:
	// notes://today text/markdown
	// notes://today: "# Today\n- write docs"
	// notes://archive/2026-07-28: "# 2026-07-28"
	// calling "resources/read": Resource not found
	// middleware.Recover
	// middleware.Timeout
}

func ExampleServer_ResourceUpdated() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "notes"}, nil)
	err := srv.AddResources(&mcpkit.Resource{
		Resource: mcp.Resource{URI: "notes://today", Name: "today", MIMEType: "text/markdown"},
		Handler: mcpkit.ResourceHandlerFunc(func(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "# Today"}}}, nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}

	heard := make(chan string, 1)
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, &mcpkittest.Options{
		ProtocolVersion: mcpkittest.StatefulVersion,
		Client: &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			heard <- req.Params.URI
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println("subscribe:", cs.InitializeResult().Capabilities.Resources.Subscribe)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "notes://today"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "notes://nowhere"}))

	// The notes changed: every subscriber that still sees them hears it.
	if err := srv.ResourceUpdated(context.Background(), "notes://today"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("updated:", <-heard)
	// Output:
	// subscribe: true
	// calling "resources/subscribe": Resource not found
	// updated: notes://today
}
