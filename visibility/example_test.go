package visibility_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// demoServer returns a server with the tools "search" (read-only),
// "deploy" (tagged "ops") and "beta_report" (tagged "beta"), each answering
// its name.
func demoServer() *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	add := func(name string, readOnly bool, tags ...string) {
		t := &mcpkit.Tool{
			Tool: mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
			}),
			Tags: tags,
		}
		if readOnly {
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		if err := srv.Add(t); err != nil {
			log.Fatal(err)
		}
	}
	add("search", true)
	add("deploy", false, "ops")
	add("beta_report", true, "beta")
	return srv
}

// listed prints the names of the tools cs lists.
func listed(cs *mcp.ClientSession) {
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	fmt.Println(names, res.CacheScope)
}

// called prints what a call of name answers.
func called(cs *mcp.ClientSession, name string, meta mcp.Meta) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Meta: meta})
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr):
		fmt.Println(name, "->", werr.Code, werr.Message)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println(name, "->", res.Content[0].(*mcp.TextContent).Text)
	}
}

func connect(srv *mcpkit.Server, opts *mcpkittest.Options) *mcp.ClientSession {
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, opts)
	if err != nil {
		log.Fatal(err)
	}
	return cs
}

// New serves every tool except the disabled ones; a disabled tool is
// answered as if it had never been registered.
func ExampleNew() {
	srv := demoServer()
	visibility.New(visibility.Disable(mcpkit.Tagged("beta"))).Attach(srv)

	cs := connect(srv, nil)
	defer cs.Close()
	listed(cs)
	called(cs, "beta_report", nil)
	called(cs, "never_registered", nil)
	// Output:
	// [deploy search] public
	// beta_report -> -32602 unknown tool "beta_report"
	// never_registered -> -32602 unknown tool "never_registered"
}

// NewAllowlist serves only what Enable rules select, minus what Disable
// rules select.
func ExampleNewAllowlist() {
	srv := demoServer()
	visibility.NewAllowlist(
		visibility.Enable(mcpkit.Named("search", "deploy")),
		visibility.Disable(mcpkit.Tagged("ops")), // disable beats enable
	).Attach(srv)

	cs := connect(srv, nil)
	defer cs.Close()
	listed(cs)
	// Output:
	// [search] public
}

// Rules change while serving; clients are told with
// notifications/tools/list_changed.
func ExampleRules_Add() {
	srv := demoServer()
	rules := visibility.New()
	rules.Attach(srv)

	// A 2025-11-25 client hears of changes as soon as it is connected (a
	// 2026-07-28 one, once its subscriptions/listen stream is open).
	changed := make(chan struct{}, 1)
	cs := connect(srv, &mcpkittest.Options{ProtocolVersion: "2025-11-25", Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	defer cs.Close()
	listed(cs)

	freeze := visibility.Disable(mcpkit.Tagged("ops"))
	rules.Add(freeze)
	<-changed
	listed(cs)

	rules.Remove(freeze)
	<-changed
	listed(cs)
	// Output:
	// [beta_report deploy search] public
	// [beta_report search] public
	// [beta_report deploy search] public
}

// Require shows tools only to the requests for which a Predicate holds:
// here, the ops tools to tokens with the "deploy" scope. Allowed answers
// for one request, as the server asks it; tests can call it directly.
func ExampleRequire() {
	rules := visibility.New(visibility.Require(mcpkit.Tagged("ops"), visibility.Scopes("deploy")))

	deploy := &mcpkit.Tool{Tool: mcp.Tool{Name: "deploy"}, Tags: []string{"ops"}}
	ada := mcpkittest.NewRequest(deploy, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada", Scopes: []string{"deploy"}}))
	bob := mcpkittest.NewRequest(deploy, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "bob"}))
	stranger := mcpkittest.NewRequest(deploy, nil) // stdio, in memory: no token

	ctx := context.Background()
	fmt.Println(rules.PerRequest())
	fmt.Println(rules.Allowed(ctx, deploy, ada), rules.Allowed(ctx, deploy, bob), rules.Allowed(ctx, deploy, stranger))
	// Output:
	// true
	// true false false
}

// Predicates combine: several Require rules must all hold, Any needs one
// of its predicates. Claims come from the verified token.
func ExampleClaim() {
	report := &mcpkit.Tool{Tool: mcp.Tool{Name: "report"}, Tags: []string{"finance"}}
	rules := visibility.New(
		visibility.Require(mcpkit.Tagged("finance"), visibility.Claim("tenant", "acme")),
		visibility.Require(mcpkit.Tagged("finance"), visibility.Any(
			visibility.Claim("groups", "finance"),
			visibility.Users("ceo"),
		)),
	)
	for _, info := range []*auth.TokenInfo{
		{UserID: "ada", Extra: map[string]any{"tenant": "acme", "groups": []any{"finance", "dev"}}},
		{UserID: "ceo", Extra: map[string]any{"tenant": "acme"}},
		{UserID: "eve", Extra: map[string]any{"tenant": "initech", "groups": []any{"finance"}}},
	} {
		req := mcpkittest.NewRequest(report, nil, mcpkittest.WithTokenInfo(info))
		fmt.Println(info.UserID, rules.Allowed(context.Background(), report, req))
	}
	// Output:
	// ada true
	// ceo true
	// eve false
}

// ReadOnlyFor puts some requests in read-only mode: here, those sent with
// the header X-Read-Only: 1 (set, say, by a gateway in front of the
// server). Disable(mcpkit.Not(ReadOnly)) would do it for everyone.
func ExampleReadOnlyFor() {
	rules := visibility.New(visibility.ReadOnlyFor(visibility.Header("X-Read-Only", "1")))

	search := &mcpkit.Tool{Tool: mcp.Tool{Name: "search", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}}
	deploy := &mcpkit.Tool{Tool: mcp.Tool{Name: "deploy"}}
	ro := mcpkittest.NewRequest(nil, nil, mcpkittest.WithHeader(http.Header{"X-Read-Only": {"1"}}))
	rw := mcpkittest.NewRequest(nil, nil)
	ctx := context.Background()
	for _, t := range []*mcpkit.Tool{search, deploy} {
		fmt.Println(t.Name, visibility.ReadOnly(t), rules.Allowed(ctx, t, ro), rules.Allowed(ctx, t, rw))
	}
	// Output:
	// search true true true
	// deploy false false true
}

// A tool that elicits input from the user says so with a tag; clients that
// did not declare the elicitation capability do not see it.
func ExampleRequireClientCapabilities() {
	srv := demoServer()
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "confirm_deploy", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := req.Session().Elicit(ctx, &mcp.ElicitParams{Message: "Deploy?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil
		}),
		Tags: []string{visibility.NeedsElicitation},
	})
	visibility.New(
		visibility.RequireClientCapabilities(),
		visibility.Disable(mcpkit.Named("search", "deploy", "beta_report")), // keep the output short
	).Attach(srv)

	// Elicitation during a call is for protocols up to 2025-11-25; on
	// 2026-07-28 a tool returns input requests instead.
	plain := connect(srv, &mcpkittest.Options{ProtocolVersion: "2025-11-25"})
	defer plain.Close()
	listed(plain)

	elicits := connect(srv, &mcpkittest.Options{ProtocolVersion: "2025-11-25", Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}})
	defer elicits.Close()
	listed(elicits)
	called(elicits, "confirm_deploy", nil)
	// Output:
	// [] private
	// [confirm_deploy] private
	// confirm_deploy -> accept
}

// Rules see each version of a tool: hiding the highest serves the next,
// and a call pinned to a hidden version is answered as unknown.
func ExampleVersionRange() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	for _, v := range []string{"1.4", "2.0", "3.0-rc.1"} {
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object"}},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "search " + v}}}, nil
			}),
			Version: v,
		})
	}
	visibility.New(
		visibility.Disable(visibility.VersionRange("3.0-alpha", "")), // no release candidates
		visibility.Disable(visibility.Key("search", "1.4")),
	).Attach(srv)

	cs := connect(srv, nil)
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Tools[0].Name, res.Tools[0].Meta[mcpkit.MetaKeyVersion], res.Tools[0].Meta[mcpkit.MetaKeyVersions])
	called(cs, "search", nil)
	called(cs, "search", mcp.Meta{mcpkit.MetaKeyVersion: "3.0-rc.1"})
	// Output:
	// search 2.0 [2.0]
	// search -> search 2.0
	// search -> -32602 unknown tool "search"
}

type tenantKey struct{}

// A Predicate of your own can read anything the request carries, such as
// a value the embedding service put in the context. Every tool that a
// Require rule selects is hidden from requests for which it does not hold.
func ExamplePredicate() {
	internal := visibility.Predicate(func(ctx context.Context, c mcpkit.Caller) bool {
		tenant, _ := ctx.Value(tenantKey{}).(string)
		return tenant == "internal"
	})
	rules := visibility.New(
		visibility.Require(visibility.AllTools, visibility.Authenticated()),
		visibility.Require(mcpkit.Named("debug"), internal),
	)

	debug := &mcpkit.Tool{Tool: mcp.Tool{Name: "debug"}}
	req := mcpkittest.NewRequest(debug, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"}))
	fmt.Println(rules.Allowed(context.Background(), debug, req))
	fmt.Println(rules.Allowed(context.WithValue(context.Background(), tenantKey{}, "internal"), debug, req))
	fmt.Println(rules.Enabled(debug))
	// Output:
	// false
	// true
	// true
}

// A tool for clients of protocol 2026-07-28 or later only.
func ExampleProtocolAtLeast() {
	rules := visibility.New(visibility.Require(mcpkit.Tagged("mrtr"), visibility.ProtocolAtLeast("2026-07-28")))
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "multi_step"}, Tags: []string{"mrtr"}}
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		req := mcpkittest.NewRequest(tool, nil, mcpkittest.WithMeta(mcp.Meta{mcp.MetaKeyProtocolVersion: v}))
		fmt.Println(v, rules.Allowed(context.Background(), tool, req))
	}
	// Output:
	// 2025-11-25 false
	// 2026-07-28 true
}
