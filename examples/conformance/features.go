package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/tools"
)

// Resources the scenarios read and subscribe to.
const (
	staticTextURI     = "test://static-text"
	staticBinaryURI   = "test://static-binary"
	watchedURI        = "test://watched-resource"
	dataTemplate      = "test://template/{id}/data"
	dataTemplatePre   = "test://template/"
	dataTemplateSuf   = "/data"
	staticTextContent = "This is the content of the static text resource."
)

// addResources registers the scenarios' resources and resource template
// with srv, so that they pass through its rules as its tools do.
func addResources(srv *mcpkit.Server, m *media) error {
	text := func(uri, text string) mcpkit.ResourceHandler {
		return mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
		})
	}
	err := srv.AddResources(
		&mcpkit.Resource{
			Resource: mcp.Resource{URI: staticTextURI, Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
			Handler:  text(staticTextURI, staticTextContent),
		},
		&mcpkit.Resource{
			Resource: mcp.Resource{URI: staticBinaryURI, Name: "static-binary", Description: "A static PNG image.", MIMEType: "image/png"},
			Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: staticBinaryURI, MIMEType: "image/png", Blob: m.png}}}, nil
			}),
		},
		&mcpkit.Resource{
			Resource: mcp.Resource{URI: watchedURI, Name: "watched-resource", Description: "A resource clients may subscribe to.", MIMEType: "text/plain"},
			Handler:  text(watchedURI, "The watched resource."),
		},
	)
	if err != nil {
		return err
	}
	return srv.AddResourceTemplates(&mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: dataTemplate, Name: "template-data", Description: "Data for an ID.", MIMEType: "application/json"},
		Handler:          mcpkit.ResourceHandlerFunc(readTemplateData),
	})
}

// templateData is the content of a test://template/{id}/data resource.
type templateData struct {
	ID           string `json:"id"`
	TemplateTest bool   `json:"templateTest"`
	Data         string `json:"data"`
}

// readTemplateData reads a test://template/{id}/data resource; the
// template matches only URIs with an ID.
func readTemplateData(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	id := req.Params["id"]
	b, err := json.Marshal(templateData{ID: id, TemplateTest: true, Data: "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.URI, MIMEType: "application/json", Text: string(b)},
	}}, nil
}

// messages returns a prompt handler that answers msgs.
func messages(msgs ...*mcp.PromptMessage) mcpkit.PromptHandler {
	return mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: msgs}, nil
	})
}

// addPrompts registers the scenarios' prompts with srv; the arguments of
// test_prompt_with_arguments complete from a fixed list.
func addPrompts(srv *mcpkit.Server, m *media) error {
	cities := tools.CompleteFrom("paris", "park", "party", "test", "testValue1", "testValue2")
	return srv.AddPrompts(
		&mcpkit.Prompt{
			Prompt:  mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments."},
			Handler: messages(&mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}}),
		},
		&mcpkit.Prompt{
			Prompt: mcp.Prompt{
				Name:        "test_prompt_with_arguments",
				Description: "A prompt with two required arguments.",
				Arguments: []*mcp.PromptArgument{
					{Name: "arg1", Description: "First test argument", Required: true},
					{Name: "arg2", Description: "Second test argument", Required: true},
				},
			},
			Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
				a := req.Arguments
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}},
				}}, nil
			}),
			Complete: map[string]mcpkit.CompleteFunc{"arg1": cities, "arg2": cities},
		},
		&mcpkit.Prompt{
			Prompt: mcp.Prompt{
				Name:        "test_prompt_with_embedded_resource",
				Description: "A prompt that embeds a resource.",
				Arguments:   []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			},
			Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
						URI: req.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
					}}},
					{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
				}}, nil
			}),
		},
		&mcpkit.Prompt{
			Prompt:  mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for context before it is rendered (SEP-2322)."},
			Handler: mcpkit.PromptHandlerFunc(promptWithInput),
		},
		&mcpkit.Prompt{
			Prompt: mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
			Handler: messages(
				&mcp.PromptMessage{Role: "user", Content: &mcp.ImageContent{Data: m.png, MIMEType: "image/png"}},
				&mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}},
			),
		},
	)
}
