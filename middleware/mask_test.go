package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// classified is an error that picks its own class.
type classified struct {
	msg   string
	class mcpkit.ErrorClass
}

func (e *classified) Error() string                 { return e.msg }
func (e *classified) ErrorClass() mcpkit.ErrorClass { return e.class }

var errDB = errors.New("db: connection to 10.0.0.7 refused")

func TestMaskErrors(t *testing.T) {
	ownError := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "handled"}}, IsError: true}
	tests := []struct {
		name      string
		err       error
		res       *mcp.CallToolResult
		masked    bool
		wantClass mcpkit.ErrorClass // of a masked error, as its chain gives it
	}{
		{name: "other error", err: fmt.Errorf("loading: %w", errDB), masked: true, wantClass: ""},
		{name: "classified error", err: &classified{"flaky upstream", mcpkit.Retryable}, masked: true, wantClass: mcpkit.Retryable},
		{name: "zero-code JSON-RPC error", err: &jsonrpc.Error{Code: 0, Message: "no code"}, masked: true},
		{name: "context error", err: context.Canceled, masked: true},
		{name: "tool error", err: mcpkit.ToolErrorf("file %q exists", "a")},
		{name: "wrapped tool error", err: fmt.Errorf("writing: %w", mcpkit.NewToolError(errors.New("read-only"), mcpkit.Fatal))},
		{name: "protocol error", err: mcpkit.NewProtocolError(-32041, "busy")},
		{name: "wrapped protocol error", err: fmt.Errorf("layer: %w", mcpkit.NewProtocolError(-32041, "busy"))},
		{name: "own error result", res: ownError},
		{name: "success", res: textResult("fine")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			h := middleware.MaskErrors(&middleware.MaskErrorsOptions{Logger: logs.logger()})(
				mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					return tt.res, tt.err
				}))
			res, err := call(t, h, newTool("lookup", nil), nil)
			if res != tt.res {
				t.Errorf("result = %+v, want %+v", res, tt.res)
			}
			if !tt.masked {
				if err != tt.err {
					t.Errorf("error = %#v, want it unchanged: %#v", err, tt.err)
				}
				if logs.String() != "" {
					t.Errorf("logged %s", logs.String())
				}
				return
			}
			if got, want := fmt.Sprint(err), `error calling tool "lookup"`; got != want {
				t.Errorf("text = %q, want %q", got, want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("errors.Is(masked, original) = false")
			}
			var c interface{ ErrorClass() mcpkit.ErrorClass }
			var gotClass mcpkit.ErrorClass
			if errors.As(err, &c) {
				gotClass = c.ErrorClass()
			}
			if gotClass != tt.wantClass {
				t.Errorf("class = %q, want %q", gotClass, tt.wantClass)
			}
			if !strings.Contains(logs.String(), tt.err.Error()) {
				t.Errorf("the real error was not logged: %s", logs.String())
			}
		})
	}
}

// TestMaskErrorsOnce checks that masking twice keeps the first mask.
func TestMaskErrorsOnce(t *testing.T) {
	h := mcpkit.Chain(middleware.MaskErrors(nil), middleware.MaskErrors(nil))(
		mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, errDB
		}))
	_, err := call(t, h, newTool("t", nil), nil)
	if err == nil || err.Error() != `error calling tool "t"` || errors.Unwrap(err) != errDB {
		t.Errorf("got %#v, want one mask around errDB", err)
	}
}

// TestMaskErrorsSecretNeverReachesClient plants a secret in internal errors
// and checks every byte the client receives, on both HTTP transports.
func TestMaskErrorsSecretNeverReachesClient(t *testing.T) {
	const secret = "hunter2-s3cr3t"
	tests := []struct {
		tool      string
		handler   mcpkit.HandlerFunc
		wantText  string
		wantClass mcpkit.ErrorClass
	}{
		{"internal", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("query failed: dsn=postgres://app:%s@db: %w", secret, errDB)
		}, `error calling tool "internal"`, mcpkit.Fatal},
		{"retryable_internal", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("calling upstream: %w", &classified{"token " + secret + " expired", mcpkit.Retryable})
		}, `error calling tool "retryable_internal"`, mcpkit.Retryable},
		{"zero_code_rpc", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Message: secret}
		}, `error calling tool "zero_code_rpc"`, mcpkit.Fatal},
		{"panics", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			panic(errors.New(secret))
		}, `internal error in tool "panics"`, mcpkit.Fatal},
		{"meta", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("wrapped: %w", metaSecret("postgres://app:"+secret+"@db"))
		}, `error calling tool "meta"`, mcpkit.Fatal},
	}
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		var logs logBuffer
		var tools []*mcpkit.Tool
		for _, tt := range tests {
			tools = append(tools, newTool(tt.tool, tt.handler))
		}
		srv := newServer(t, []mcpkit.Middleware{
			middleware.Recover(&middleware.RecoverOptions{Logger: logs.logger()}),
			middleware.MaskErrors(&middleware.MaskErrorsOptions{Logger: logs.logger()}),
		}, tools...)
		ts := connect(srv)
		version := mcpkittest.StatefulVersion
		if strings.HasSuffix(t.Name(), "stateless") {
			version = mcpkittest.StatelessVersion
		}
		cs, wire := recordingSession(t, ts, version)
		for _, tt := range tests {
			t.Run(tt.tool, func(t *testing.T) {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool})
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if !res.IsError || resultText(t, res) != tt.wantText || mcpkit.ErrorClassOf(res) != tt.wantClass {
					t.Errorf("got %+v (class %q), want %q (class %q)", res, mcpkit.ErrorClassOf(res), tt.wantText, tt.wantClass)
				}
				data, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				mustNotContain(t, secret, map[string]string{"marshalled result": string(data)})
			})
		}
		if !strings.Contains(wire.String(), `error calling tool`) {
			t.Fatalf("the recorder saw no responses: %q", wire.String())
		}
		mustNotContain(t, secret, map[string]string{"HTTP response bytes": wire.String()})
		if n := strings.Count(logs.String(), secret); n < len(tests) {
			t.Errorf("the secret was logged %d times, want at least %d (one per call)", n, len(tests))
		}
	})
}

// metaSecret is an internal error that would put its text in the result's
// _meta.
type metaSecret string

func (e metaSecret) Error() string        { return string(e) }
func (e metaSecret) ResultMeta() mcp.Meta { return mcp.Meta{"com.example/dsn": string(e)} }
