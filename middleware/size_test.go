package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

func TestArgumentSizeLimit(t *testing.T) {
	args := json.RawMessage(`{"text":"0123456789"}`) // 21 bytes
	tests := []struct {
		name    string
		n       int
		tool    string
		args    json.RawMessage
		wantErr string
	}{
		{"under", 100, "t", args, ""},
		{"at", 21, "t", args, ""},
		{"over", 20, "t", args, `tool "t" arguments are 21 bytes, the limit is 20`},
		{"no arguments", 1, "t", nil, ""},
		{"zero", 0, "t", args, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			h := middleware.ArgumentSizeLimit(tt.n)(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				called = true
				return textResult("ok"), nil
			}))
			_, err := call(t, h, newTool(tt.tool, nil), tt.args)
			if tt.wantErr == "" {
				if err != nil || !called {
					t.Errorf("got %v (called %v), want success", err, called)
				}
				return
			}
			var te *mcpkit.ToolError
			if called || !errors.As(err, &te) || te.ErrorClass() != mcpkit.Retryable || !errors.Is(err, middleware.ErrArgumentsTooLarge) {
				t.Fatalf("got %#v (called %v), want a retryable tool error before the handler", err, called)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("text = %q, want %q", err.Error(), tt.wantErr)
			}
		})
	}
}

// size returns the length of the JSON of res.
func size(t testing.TB, res *mcp.CallToolResult) int {
	t.Helper()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func TestResultSizeLimit(t *testing.T) {
	long := strings.Repeat("abcdefghij", 20) // 200 bytes
	image := &mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}
	tests := []struct {
		name     string
		n        int
		truncate bool
		res      *mcp.CallToolResult
		want     []string // the texts of the result, "" for an image; nil for a rejection
		reject   bool
	}{
		{"under", 1000, false, &mcp.CallToolResult{Content: []mcp.Content{text("short")}}, []string{"short"}, false},
		{"over, rejected", 100, false, &mcp.CallToolResult{Content: []mcp.Content{text(long)}}, nil, true},
		{"over, truncated", 150, true, &mcp.CallToolResult{Content: []mcp.Content{text(long)}},
			[]string{long[:54] + "\n[truncated: the result was 239 bytes, the limit is 150]"}, false},
		{"later text blocks dropped", 300, true,
			&mcp.CallToolResult{Content: []mcp.Content{text("first"), text(long), image, text("third")}},
			[]string{"first", long[:93] + "\n[truncated: the result was 355 bytes, the limit is 300]", ""}, false},
		{"escaped text", 120, true, &mcp.CallToolResult{Content: []mcp.Content{text(strings.Repeat("<&>", 30))}},
			[]string{"<&><" + "\n[truncated: the result was 579 bytes, the limit is 120]"}, false},
		{"marker does not fit", 90, true, &mcp.CallToolResult{Content: []mcp.Content{text(long)}}, nil, true},
		{"structured content too large", 100, true,
			&mcp.CallToolResult{Content: []mcp.Content{text("x")}, StructuredContent: map[string]string{"big": long}}, nil, true},
		{"no text", 50, true, &mcp.CallToolResult{Content: []mcp.Content{image, image}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := json.Marshal(tt.res)
			h := middleware.ResultSizeLimit(tt.n, &middleware.ResultSizeLimitOptions{Truncate: tt.truncate})(
				mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					return tt.res, nil
				}))
			res, err := call(t, h, newTool("big", nil), nil)
			if after, _ := json.Marshal(tt.res); string(after) != string(before) {
				t.Errorf("the handler's result was modified:\n%s\n%s", before, after)
			}
			if tt.reject {
				want := fmt.Sprintf("tool \"big\" result is %d bytes, the limit is %d", len(before), tt.n)
				var te *mcpkit.ToolError
				if res != nil || !errors.As(err, &te) || te.ErrorClass() != mcpkit.Retryable ||
					!errors.Is(err, middleware.ErrResultTooLarge) || err.Error() != want {
					t.Fatalf("got %+v, %#v; want a retryable tool error %q", res, err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := size(t, res); got > tt.n {
				t.Errorf("result is %d bytes, over the limit %d", got, tt.n)
			}
			var got []string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					got = append(got, tc.Text)
				} else {
					got = append(got, "")
				}
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("texts = %q\nwant    %q", got, tt.want)
			}
		})
	}
}

// TestResultTruncationFits checks, for random texts and limits, that a
// truncated result fits its limit, keeps its structured content and a
// prefix of the text, and is not cut shorter than it has to be.
func TestResultTruncationFits(t *testing.T) {
	alphabet := []rune("ab<>&\"\\\n\t\x01é世\u2028😀")
	r := rand.New(rand.NewPCG(1, 2))
	truncated := 0
	for i := range 500 {
		var sb strings.Builder
		for range r.IntN(300) {
			sb.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		orig := sb.String()
		res := &mcp.CallToolResult{Content: []mcp.Content{text(orig)}, StructuredContent: map[string]int{"n": i}}
		full := size(t, res)
		limit := 100 + r.IntN(full+1)
		h := middleware.ResultSizeLimit(limit, &middleware.ResultSizeLimitOptions{Truncate: true})(
			mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) { return res, nil }))
		got, err := call(t, h, newTool("t", nil), nil)
		if err != nil {
			continue // too small for the marker: rejected, as documented
		}
		if n := size(t, got); n > limit {
			t.Fatalf("case %d: %d bytes over the limit %d", i, n, limit)
		}
		if full <= limit {
			if got != res {
				t.Fatalf("case %d: a result under the limit was replaced", i)
			}
			continue
		}
		truncated++
		kept, marker, found := strings.Cut(resultText(t, got), "\n[truncated: ")
		if !found || !strings.HasPrefix(orig, kept) || got.StructuredContent == nil {
			t.Fatalf("case %d: %+v is not a cut of %q", i, got, orig)
		}
		// One more character would not have fitted.
		if len(kept) < len(orig) {
			_, w := utf8.DecodeRuneInString(orig[len(kept):])
			longer := &mcp.CallToolResult{Content: []mcp.Content{text(orig[:len(kept)+w] + "\n[truncated: " + marker)}, StructuredContent: res.StructuredContent}
			if size(t, longer) <= limit {
				t.Fatalf("case %d: cut at %d bytes, but %d fit", i, len(kept), len(kept)+w)
			}
		}
	}
	if truncated < 100 {
		t.Errorf("only %d of 500 cases were truncated", truncated)
	}
}

func TestResultSizeLimitPassThrough(t *testing.T) {
	wantErr := errors.New("failed")
	tests := []struct {
		name string
		n    int
		res  *mcp.CallToolResult
		err  error
	}{
		{"short error", 100, nil, wantErr},
		{"nil result", 1, nil, nil},
		{"no limit", 0, textResult(strings.Repeat("x", 100)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := middleware.ResultSizeLimit(tt.n, nil)(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				return tt.res, tt.err
			}))
			res, err := call(t, h, newTool("t", nil), nil)
			if res != tt.res || err != tt.err {
				t.Errorf("got %v, %v; want %v, %v", res, err, tt.res, tt.err)
			}
		})
	}
}

func TestSizeLimitsEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		echo := func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			return textResult(args.Text), nil
		}
		truncating := newTool("echo_truncated", echo)
		truncating.Middleware = []mcpkit.Middleware{middleware.ResultSizeLimit(100, &middleware.ResultSizeLimitOptions{Truncate: true})}
		srv := newServer(t, []mcpkit.Middleware{
			middleware.ArgumentSizeLimit(300),
			middleware.ResultSizeLimit(200, nil),
		}, newTool("echo", echo), truncating)
		ts := connect(srv)

		tests := []struct {
			tool, text string
			want       string
			isError    bool
		}{
			{"echo", "hi", "hi", false},
			{"echo", strings.Repeat("x", 400), `tool "echo" arguments are 411 bytes, the limit is 300`, true},
			{"echo", strings.Repeat("x", 250), `tool "echo" result is 289 bytes, the limit is 200`, true},
			{"echo_truncated", strings.Repeat("x", 250), "xxxx\n[truncated: the result was 289 bytes, the limit is 100]", false},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%d", tt.tool, len(tt.text)), func(t *testing.T) {
				res, err := ts.CallTool(t.Context(), tt.tool, map[string]string{"text": tt.text})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError != tt.isError || resultText(t, res) != tt.want {
					t.Errorf("got %+v, want %q (isError %v)", res, tt.want, tt.isError)
				}
				if tt.isError && mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
					t.Errorf("class = %q", mcpkit.ErrorClassOf(res))
				}
			})
		}
	})
}

// TestResultSizeLimitBoundsErrors checks that an error's text is cut to the
// limit, keeping its class and, for outer middleware, its chain.
func TestResultSizeLimitBoundsErrors(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	errInner := errors.New(huge)
	tests := []struct {
		name   string
		err    error
		class  mcpkit.ErrorClass
		prefix string // of the text the client sees
	}{
		{"tool error", mcpkit.NewToolError(errInner, mcpkit.Fatal), mcpkit.Fatal, "xxx"},
		{"retryable tool error", mcpkit.NewToolError(errInner, mcpkit.Retryable), mcpkit.Retryable, "xxx"},
		{"internal error", fmt.Errorf("wrapped: %w", errInner), mcpkit.Fatal, "wrapped: xxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen error
			outer := func(next mcpkit.Handler) mcpkit.Handler {
				return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					res, err := next.ServeTool(ctx, req)
					seen = err
					return res, err
				})
			}
			srv := newServer(t, []mcpkit.Middleware{outer, middleware.ResultSizeLimit(1000, nil)},
				newTool("t", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, tt.err }))
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			res, err := ts.CallTool(t.Context(), "t", nil)
			if err != nil {
				t.Fatal(err)
			}
			text := resultText(t, res)
			marker := fmt.Sprintf("\n[truncated: the error was %d bytes, the limit is 1000]", len(tt.err.Error()))
			if len(text) > 1000 || !strings.HasPrefix(text, tt.prefix) || !strings.HasSuffix(text, marker) {
				t.Errorf("client got %d bytes of text, want at most 1000 ending in %q: %.120q...", len(text), marker, text)
			}
			if !res.IsError || mcpkit.ErrorClassOf(res) != tt.class {
				t.Errorf("isError %v class %q, want class %q", res.IsError, mcpkit.ErrorClassOf(res), tt.class)
			}
			if !errors.Is(seen, errInner) {
				t.Errorf("outer middleware lost the original error: %T", seen)
			}
		})
	}
}
