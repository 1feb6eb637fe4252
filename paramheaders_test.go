package mcpkit_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// geoTool is a tool whose region (a string), zone (an integer) and fast (a
// boolean) arguments 2026-07-28 clients mirror into Mcp-Param headers.
func geoTool(name, version string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"region":{"type":"string","x-mcp-header":"Region"},` +
			`"zone":{"type":"integer","x-mcp-header":"Zone"},` +
			`"fast":{"type":"boolean","x-mcp-header":"Fast"},` +
			`"note":{"type":"string"}}}`)},
		Version: version,
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			region, _ := req.ParamHeader("Region")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + "@" + version + " " + region}}}, nil
		}),
	}
}

// wireAnswer is what an HTTP request got: its status and its one JSON-RPC
// message, read from a JSON body or from the first event of a stream.
type wireAnswer struct {
	status int
	msg    string
}

// postParamCall sends a 2026-07-28 tools/call of name with args, the Mcp-Param
// headers params and the bearer token, as a client that writes its own
// headers would.
func postParamCall(t *testing.T, url, token, name string, args map[string]any, meta map[string]any, params map[string]string) wireAnswer {
	t.Helper()
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	for k, v := range meta {
		m[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args, "_meta": m}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name, "Authorization": "Bearer " + token} {
		req.Header.Set(k, v)
	}
	for k, v := range params {
		req.Header.Set("Mcp-Param-"+k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		return wireAnswer{resp.StatusCode, strings.TrimSpace(string(data))}
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return wireAnswer{resp.StatusCode, d}
		}
	}
	return wireAnswer{resp.StatusCode, ""}
}

var geoTokens = map[string]*auth.TokenInfo{
	"admin": {UserID: "ada", Scopes: []string{"geo"}, Expiration: time.Now().Add(time.Hour)},
	"user":  {UserID: "bob", Expiration: time.Now().Add(time.Hour)},
}

// The Mcp-Param headers of a call are checked against the arguments of the
// version it reaches, and only once the caller may see it: a caller who
// may not gets the unknown-tool answer, byte for byte what a name never
// registered gets, whatever headers it sent; one who may gets HTTP 400 and
// -32020 for a header that disagrees with the body.
func TestParamHeaders(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "geo"}, nil)
		visibility.New(visibility.Require(mcpkit.Named("geo"), visibility.Scopes("geo"))).Attach(srv)
		if err := srv.Add(geoTool("geo", "1"), geoTool("geo", "2")); err != nil {
			t.Fatal(err)
		}
		ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: geoTokens, Token: "admin",
			HTTP: &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}})
		call := func(token string, args map[string]any, params map[string]string) wireAnswer {
			return postParamCall(t, ts.URL, token, "geo", args, nil, params)
		}

		// Hidden: the answer of a name never registered (of the same
		// length), whatever the headers.
		never := postParamCall(t, ts.URL, "user", "xyz", map[string]any{"region": "eu"}, nil, nil)
		for _, params := range []map[string]string{nil, {"Region": "us"}, {"Region": "eu"}} {
			got := call("user", map[string]any{"region": "eu"}, params)
			if want := strings.Replace(never.msg, "xyz", "geo", 1); got.status != never.status || got.msg != want {
				t.Errorf("json=%v hidden, headers %v: HTTP %d %s; want HTTP %d %s", jsonResponse, params, got.status, got.msg, never.status, want)
			}
		}

		ok := func(args map[string]any, params map[string]string, want string) {
			t.Helper()
			got := call("admin", args, params)
			if got.status != http.StatusOK || !strings.Contains(got.msg, `"text":"`+want+`"`) {
				t.Errorf("json=%v %v %v: HTTP %d %s; want the tool's answer %q", jsonResponse, args, params, got.status, got.msg, want)
			}
		}
		refused := func(args map[string]any, params map[string]string, want string) {
			t.Helper()
			got := call("admin", args, params)
			if got.status != http.StatusBadRequest || !strings.Contains(got.msg, `"code":-32020`) || !strings.Contains(got.msg, want) {
				t.Errorf("json=%v %v %v: HTTP %d %s; want 400, -32020 and %q", jsonResponse, args, params, got.status, got.msg, want)
			}
		}
		ok(map[string]any{"region": "eu"}, map[string]string{"Region": "eu"}, "geo@2 eu")
		ok(map[string]any{"region": "Zürich"}, map[string]string{"Region": "=?base64?WsO8cmljaA==?="}, "geo@2 Zürich")
		ok(map[string]any{"region": "=?base64?abc"}, map[string]string{"Region": "=?base64?abc"}, "geo@2 =?base64?abc") // a literal
		ok(map[string]any{"zone": 7, "fast": true}, map[string]string{"Zone": "7", "Fast": "true"}, "geo@2 ")
		ok(map[string]any{"note": "x"}, nil, "geo@2 ")
		refused(map[string]any{"region": "eu"}, nil, `header mismatch: Mcp-Param-Region is missing for the argument \"region\"`)
		refused(map[string]any{"region": "eu"}, map[string]string{"Region": "us"}, `Mcp-Param-Region does not match the argument \"region\"`)
		refused(map[string]any{"region": "Hello"}, map[string]string{"Region": "=?base64?SGVsbG8?="}, `Mcp-Param-Region is not valid Base64`)
		refused(map[string]any{"region": "Hello"}, map[string]string{"Region": "=?base64?SGVs!!!bG8=?="}, `Mcp-Param-Region is not valid Base64`)
		refused(map[string]any{"region": nil}, map[string]string{"Region": "eu"}, `Mcp-Param-Region was sent for the argument \"region\", which is absent or null`)
		refused(map[string]any{"zone": 7}, map[string]string{"Zone": "8"}, `Mcp-Param-Zone does not match`)
		refused(map[string]any{"fast": true}, map[string]string{"Fast": "TRUE"}, `Mcp-Param-Fast does not match`)

		// A call pinned to version 1 is checked against version 1's
		// headers: one that is sent must agree, none is required (the
		// client built its headers from the definition it is listed).
		pin1 := map[string]any{mcpkit.MetaKeyVersion: "1"}
		if got := postParamCall(t, ts.URL, "admin", "geo", map[string]any{"region": "eu"}, pin1, map[string]string{"Region": "us"}); got.status != http.StatusBadRequest || !strings.Contains(got.msg, "-32020") {
			t.Errorf("json=%v pinned to 1 with a header that disagrees: HTTP %d %s", jsonResponse, got.status, got.msg)
		}
		if got := postParamCall(t, ts.URL, "admin", "geo", map[string]any{"region": "eu"}, pin1, nil); got.status != http.StatusOK || !strings.Contains(got.msg, `"text":"geo@1 "`) {
			t.Errorf("json=%v pinned to 1 without its header: HTTP %d %s", jsonResponse, got.status, got.msg)
		}
	}
}

// A version of a tool whose schema mirrors nothing into headers is called
// without any, even when another version of the same name mirrors some.
func TestParamHeadersPerVersion(t *testing.T) {
	plain := geoTool("geo", "2")
	plain.InputSchema = json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"}}}`)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "geo"}, nil)
	if err := srv.Add(geoTool("geo", "1"), plain); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if got := postParamCall(t, ts.URL, "", "geo", map[string]any{"region": "eu"}, nil, nil); got.status != http.StatusOK || !strings.Contains(got.msg, "geo@2") {
		t.Errorf("version 2 without headers: HTTP %d %s", got.status, got.msg)
	}
	if got := postParamCall(t, ts.URL, "", "geo", map[string]any{"region": "eu"}, map[string]any{mcpkit.MetaKeyVersion: "1"}, map[string]string{"Region": "us"}); got.status != http.StatusBadRequest {
		t.Errorf("version 1 with a header that disagrees: HTTP %d %s", got.status, got.msg)
	}
}
