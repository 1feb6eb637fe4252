package proxy_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/skills"
)

// A remote server's tools served through a local one, under a prefix,
// alongside the local tools. The upstream here is an mcpkit server over
// in-memory transports; proxy.HTTP and proxy.Command reach real ones.
func Example() {
	ctx := context.Background()
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "weather"}, nil)
	remote.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "forecast", InputSchema: objectSchema(`"city":{"type":"string"}`)},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return text("sunny in " + string(req.Arguments)), nil
		}),
	})

	up, err := proxy.New(ctx, func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := remote.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}, &proxy.Options{Prefix: "weather_"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer up.Close()

	local := mcpkit.NewServer(&mcp.Implementation{Name: "assistant"}, nil)
	up.AddTo(local)

	cs, _ := mcpkittest.ConnectInMemory(ctx, local, nil)
	defer cs.Close()
	for t := range cs.Tools(ctx, nil) {
		fmt.Println(t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather_forecast", Arguments: map[string]any{"city": "Oslo"}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather_forecast", Arguments: map[string]any{"city": 7}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// weather_forecast
	// sunny in {"city":"Oslo"}
	// true invalid arguments: city: want string, got number
}

// An upstream over HTTP gets the proxy's own credentials, and per call
// those minted for the verified caller; the caller's token stays local.
func ExampleHTTP() {
	ctx := context.Background()
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	remote.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: objectSchema("")},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return text("the upstream sees " + req.Header().Get("Authorization")), nil
		}),
	})
	upstream := httptest.NewServer(remote.HTTPHandler(nil))
	defer upstream.Close()

	up, err := proxy.New(ctx, proxy.HTTP(upstream.URL, &proxy.HTTPOptions{
		Header: http.Header{"Authorization": {"Bearer proxy-token"}},
	}), &proxy.Options{
		Credentials: func(_ context.Context, req *mcpkit.Request) (http.Header, error) {
			if p := mcpkit.VerifiedPrincipal(req); p != "" {
				return http.Header{"Authorization": {"Bearer token-for-" + p}}, nil
			}
			return nil, nil // anonymous callers: the proxy's own credentials
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer up.Close()
	// One tool's chain, called as two callers would call it: one with an
	// unverified bearer token, one whose token a verifier checked.
	whoami, _ := up.LookupTool(ctx, nil, "whoami")
	for _, opt := range []mcpkittest.RequestOption{
		mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer client-secret"}}),
		mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"}),
	} {
		res, _ := whoami.Handler.ServeTool(ctx, mcpkittest.NewRequest(whoami, nil, opt))
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// the upstream sees Bearer proxy-token
	// the upstream sees Bearer token-for-sub:ada
}

// A command that speaks MCP on stdio, started by the proxy (and started
// again if it exits). Here the command is this test binary, which serves
// test tools when upstreamEnv is set; in a program it is the server's own
// executable.
func ExampleCommand() {
	exe, _ := os.Executable()
	up, err := proxy.New(context.Background(), proxy.Command(func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), upstreamEnv+"=1")
		return cmd
	}, nil), &proxy.Options{Prefix: "files_"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer up.Close()
	fmt.Println(up.Name())
	tools, _ := up.ListTools(context.Background(), nil, "", 3)
	for _, t := range tools {
		fmt.Println(t.Name)
	}
	// Output:
	// stdio-upstream
	// files_ask
	// files_die
	// files_echo
}

// A gateway starts while its upstream is down: New returns, the gateway
// serves its own tools, and the upstream's appear, with list_changed to
// listening clients, once it comes up (the proxy tries again from a
// second after New, doubling the delay).
func ExampleNew_upstreamDownAtStart() {
	ctx := context.Background()
	ln, _ := net.Listen("tcp", "127.0.0.1:0") // an address where nothing listens yet
	addr := ln.Addr().String()
	ln.Close()

	up, err := proxy.New(ctx, proxy.HTTP("http://"+addr, nil), &proxy.Options{Name: "crm", Prefix: "crm_"})
	if err != nil {
		fmt.Println(err) // only a Dial that fails
		return
	}
	defer up.Close()
	gateway := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	up.AddTo(gateway)
	changed := make(chan struct{}, 1)
	cs, _ := mcpkittest.ConnectInMemory(ctx, gateway, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}})
	defer cs.Close()
	list := func() {
		res, _ := cs.ListTools(ctx, nil)
		fmt.Println("tools:", len(res.Tools))
	}
	list()

	// The upstream comes up at that address.
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	remote.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "search", InputSchema: objectSchema("")},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("found"), nil })})
	if ln, err = net.Listen("tcp", addr); err != nil {
		fmt.Println(err)
		return
	}
	srv := &http.Server{Handler: remote.HTTPHandler(nil)}
	go srv.Serve(ln)
	defer srv.Close()

	<-changed
	list()
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crm_search"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// tools: 0
	// tools: 1
	// found
}

// The upstream's prompts and resources, as an Upstream serves them to the
// local server: listed from its catalog, and read through to the
// upstream, here for a URI that one of its templates matches.
func ExampleUpstream_LookupResourceTemplate() {
	ctx := context.Background()
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "notes"}, nil)
	remote.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "summarize"},
		Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize."}}}}, nil
		})})
	remote.AddResourceTemplates(&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "notes://{id}", Name: "note"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "note " + req.Params["id"]}}}, nil
		})})

	up, err := proxy.New(ctx, func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := remote.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}, &proxy.Options{Prefix: "notes_"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer up.Close()

	prompts, _ := up.ListPrompts(ctx, nil, "", 0)
	fmt.Println(prompts[0].Name)
	t, _ := up.LookupResourceTemplate(ctx, nil, "notes://7")
	res, err := t.Handler.ServeResource(ctx, &mcpkit.ResourceRequest{Template: t, URI: "notes://7"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Contents[0].Text)
	// Output:
	// notes_summarize
	// note 7
}

// An upstream's skills listed and got through a local server with skills
// of its own: the Upstream is one of the skills.ServeOptions.Upstreams,
// asked on each request, and the files of its skills are read through it.
func ExampleUpstream_ListSkills() {
	ctx := context.Background()
	defs := func(name string) []skills.Def {
		md := "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n"
		return []skills.Def{{Path: name, Files: map[string][]byte{"SKILL.md": []byte(md), "notes.txt": []byte(name + " notes")}}}
	}
	remoteSet, _ := skills.New(defs("billing"), nil)
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "billing"}, nil)
	if err := skills.Serve(remote, remoteSet, nil); err != nil {
		fmt.Println(err)
		return
	}
	up, err := proxy.New(ctx, func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := remote.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer up.Close()

	localSet, _ := skills.New(defs("onboarding"), nil)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "assistant"}, nil)
	up.AddTo(local)
	if err := skills.Serve(local, localSet, &skills.ServeOptions{Upstreams: []skills.Upstream{up}}); err != nil {
		fmt.Println(err)
		return
	}

	cs, _ := mcpkittest.ConnectInMemory(ctx, local, &mcpkittest.Options{ClientSetup: func(c *mcp.Client) {
		mcp.AddSendingCustomMethod[*skills.ListParams, *skills.ListResult](c, skills.MethodList)
	}})
	defer cs.Close()
	list, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](ctx, cs, skills.MethodList, &skills.ListParams{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range list.Skills {
		fmt.Println(e.URI, len(e.Resources.Files), "files", list.CacheScope)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://billing/notes.txt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Contents[0].Text)
	// Output:
	// skill://billing/SKILL.md 2 files private
	// skill://onboarding/SKILL.md 2 files private
	// billing notes
}
