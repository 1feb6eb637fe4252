package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// addResources registers the scenarios' resources and resource template on
// s. Resources are not tools, so they bypass mcpkit and use the SDK as is.
func addResources(s *mcp.Server, m *media) {
	s.AddResource(&mcp.Resource{URI: staticTextURI, Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: staticTextContent},
			}}, nil
		})
	s.AddResource(&mcp.Resource{URI: staticBinaryURI, Name: "static-binary", Description: "A static PNG image.", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "image/png", Blob: m.png},
			}}, nil
		})
	s.AddResource(&mcp.Resource{URI: watchedURI, Name: "watched-resource", Description: "A resource clients may subscribe to.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "The watched resource."},
			}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: dataTemplate, Name: "template-data", Description: "Data for an ID.", MIMEType: "application/json"},
		readTemplateData)
}

// templateData is the content of a test://template/{id}/data resource.
type templateData struct {
	ID           string `json:"id"`
	TemplateTest bool   `json:"templateTest"`
	Data         string `json:"data"`
}

func readTemplateData(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, dataTemplatePre)
	if ok {
		id, ok = strings.CutSuffix(id, dataTemplateSuf)
	}
	// JSON cannot carry invalid UTF-8, so no client can name such an ID.
	if !ok || id == "" || strings.Contains(id, "/") || !utf8.ValidString(id) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	b, err := json.Marshal(templateData{ID: id, TemplateTest: true, Data: "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "application/json", Text: string(b)},
	}}, nil
}

// addPrompts registers the scenarios' prompts on s.
func addPrompts(s *mcp.Server, m *media) {
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{
		Name:        "test_prompt_with_arguments",
		Description: "A prompt with two required arguments.",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}},
		}}, nil
	})
	s.AddPrompt(&mcp.Prompt{
		Name:        "test_prompt_with_embedded_resource",
		Description: "A prompt that embeds a resource.",
		Arguments:   []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
			}}},
			{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
		}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for context before it is rendered (SEP-2322)."},
		promptWithInput)
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.ImageContent{Data: m.png, MIMEType: "image/png"}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}},
			}}, nil
		})
}

// complete answers completion/complete: for the arguments of
// test_prompt_with_arguments, the values of a fixed list that start with
// what the user typed; for anything else, no values. Values is never nil:
// clients expect an array.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	values := []string{}
	p := req.Params
	if p.Ref != nil && p.Ref.Type == "ref/prompt" && p.Ref.Name == "test_prompt_with_arguments" {
		for _, v := range [...]string{"paris", "park", "party", "test", "testValue1", "testValue2"} {
			if strings.HasPrefix(v, p.Argument.Value) {
				values = append(values, v)
			}
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
