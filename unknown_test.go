package mcpkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// hideFromAll is a per-request Visibility that hides the tool of that name
// from every request and shows the rest.
type hideFromAll string

func (hideFromAll) Enabled(*mcpkit.Tool) bool { return true }
func (hideFromAll) PerRequest() bool          { return true }
func (h hideFromAll) Allowed(_ context.Context, t *mcpkit.Tool, _ mcpkit.Caller) bool {
	return t.Name != string(h)
}

// secretTool is the name of the hidden tool of the unknown-tool tests:
// longer than the 40 bytes of a name that an answer echoes.
const secretTool = "secret_tool_whose_name_is_longer_than_forty_bytes"

// unknownServers returns servers that all serve "echo" and none of which
// serves secretTool to anyone: one has it registered and hidden per request,
// one never had it, and one never had it but has handed out its SDK server
// (MCPServer) and has a tool registered on it directly, so that the SDK
// answers the names mcpkit does not serve.
func unknownServers(t *testing.T) map[string]*mcpkit.Server {
	echo := func() *mcpkit.Tool {
		return tool("echo", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return textResult("echo"), nil
		})
	}
	hidden := mcpkit.NewServer(&mcp.Implementation{Name: "unknown", Version: "1"}, nil)
	hidden.SetVisibility(hideFromAll(secretTool))
	never := mcpkit.NewServer(&mcp.Implementation{Name: "unknown", Version: "1"}, nil)
	foreign := mcpkit.NewServer(&mcp.Implementation{Name: "unknown", Version: "1"}, nil)
	foreign.MCPServer().AddTool(&mcp.Tool{Name: "sdk_only", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("sdk"), nil
	})
	for _, srv := range []*mcpkit.Server{hidden, never, foreign} {
		if err := srv.Add(echo()); err != nil {
			t.Fatal(err)
		}
	}
	if err := hidden.Add(tool(secretTool, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		t.Error("the hidden tool ran")
		return textResult("secret"), nil
	})); err != nil {
		t.Fatal(err)
	}
	return map[string]*mcpkit.Server{"hidden": hidden, "never registered": never, "never registered, SDK answers": foreign}
}

// unknownAnswer is the message of the answer to a call of a tool named
// name that nobody is served, with name clipped as expected.
func unknownAnswer(clipped string) string { return fmt.Sprintf("unknown tool %q", clipped) }

// TestUnknownToolAnswerThroughClients calls, through a real client of each
// protocol version, a tool hidden from every caller and the same name on
// servers that never had it, a long name that starts as the hidden tool's
// and invalid UTF-8: each answer is JSON-RPC -32602 with the name clipped
// to 40 bytes, the same for the hidden tool and for a name never
// registered, whether mcpkit or the SDK answered it. (The names are long
// enough to be clipped and short enough for the test server's 1 MiB header
// limit, since on 2026-07-28 the name travels in Mcp-Name too;
// TestUnknownToolAnswerBytes sends megabytes.)
func TestUnknownToolAnswerThroughClients(t *testing.T) {
	clipped := unknownAnswer(secretTool[:40] + "...")
	names := []struct {
		label, name, want string
	}{
		{"hidden name", secretTool, clipped},
		{"long name", secretTool[:40] + strings.Repeat("a", 256<<10), clipped},
		// The client's encoder sends each invalid byte as U+FFFD.
		{"invalid UTF-8", strings.Repeat("\xff", 64<<10), unknownAnswer(strings.Repeat("\uFFFD", 13) + "...")},
	}
	for _, tr := range []struct {
		name       string
		connect    func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
		wantLatest bool
	}{
		{"inmemory", mcpkittest.NewInMemoryServer, true},
		{"stateful", mcpkittest.NewServer, false},
		{"stateless", mcpkittest.NewStatelessServer, true},
	} {
		t.Run(tr.name, func(t *testing.T) {
			for label, srv := range unknownServers(t) {
				ts := tr.connect(t, srv, nil)
				if latest := ts.Session.InitializeResult().ProtocolVersion >= "2026-07-28"; latest != tr.wantLatest {
					t.Fatalf("negotiated %s", ts.Session.InitializeResult().ProtocolVersion)
				}
				for _, n := range names {
					_, err := ts.CallTool(t.Context(), n.name, nil)
					var wire *jsonrpc.Error
					if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != n.want {
						t.Errorf("%s: %s: got %.200v, want -32602 %q", label, n.label, err, n.want)
					}
				}
				served := []string{"echo"}
				if label == "never registered, SDK answers" {
					served = append(served, "sdk_only")
				}
				for _, name := range served {
					if res, err := ts.CallTool(t.Context(), name, nil); err != nil || res.IsError {
						t.Errorf("%s: %s: %+v, %v", label, name, res, err)
					}
				}
			}
		})
	}
}

// TestUnknownToolAnswerBytes posts tools/call requests for the hidden tool,
// a 3 MiB name and 1 MiB of invalid UTF-8 (raw bytes in the body, which the
// SDK's decoder reads as U+FFFD each: 3 MiB) straight to each server's HTTP
// handler, on both protocol eras, and checks that the responses (status and
// body) are byte-identical whichever server answers, the same for the
// hidden tool and the 3 MiB name that shares its first 40 bytes, and small.
// Handlers called directly have no header size limit, so the 2026-07-28
// requests carry the whole name in Mcp-Name, as they must. Under the race
// detector, which makes decoding megabytes slow, the names are 64 KiB.
func TestUnknownToolAnswerBytes(t *testing.T) {
	long, bad := 3<<20, 1<<20
	if raceEnabled {
		long, bad = 64<<10, 64<<10
	}
	servers := unknownServers(t)
	handlers := map[string]http.Handler{}
	for label, srv := range servers {
		handlers[label] = srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: &mcp.StreamableHTTPOptions{JSONResponse: true}})
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			answers := map[string][]byte{}
			for _, n := range []struct{ label, name string }{
				{"hidden name", secretTool},
				{"3 MiB name", secretTool[:40] + strings.Repeat("a", long)},
				{"invalid UTF-8", strings.Repeat("\xff", bad)},
			} {
				var first []byte
				for label, h := range handlers {
					body := postCall(t, h, version, n.name)
					if len(body) > 512 {
						t.Errorf("%s: %s: answer of %d bytes: %.200s", label, n.label, len(body), body)
					}
					if first == nil {
						first = body
					} else if !bytes.Equal(body, first) {
						t.Errorf("%s: %s: answer %s, another server answered %s", label, n.label, body, first)
					}
				}
				answers[n.label] = first
			}
			if !bytes.Equal(answers["hidden name"], answers["3 MiB name"]) {
				t.Errorf("answers %s and %s, want the same clipped name", answers["hidden name"], answers["3 MiB name"])
			}
			var msg struct {
				Error *jsonrpc.Error `json:"error"`
			}
			_, body, _ := bytes.Cut(answers["invalid UTF-8"], []byte(" {"))
			if err := json.Unmarshal(append([]byte("{"), body...), &msg); err != nil || msg.Error == nil ||
				msg.Error.Message != unknownAnswer(strings.Repeat("\uFFFD", 13)+"...") {
				t.Errorf("invalid UTF-8: answer %s", answers["invalid UTF-8"])
			}
		})
	}
}

// postCall posts a tools/call of name, as a stateless client of version
// sends it with the name as it is in the body (invalid UTF-8 included),
// to h and returns the response's status and body.
func postCall(t *testing.T, h http.Handler, version, name string) []byte {
	t.Helper()
	header, body := callWire(version, name)
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header = header
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return fmt.Appendf(nil, "HTTP %d %s", w.Code, w.Body.Bytes())
}

// callWire returns the headers and body of a tools/call of name with no
// arguments, as a stateless client of version sends it. The name is
// written into the body as it is, so it must need no escaping in JSON;
// invalid UTF-8 is kept, and Mcp-Name holds the name as the server decodes
// it from the body, each invalid byte as U+FFFD.
func callWire(version, name string) (http.Header, []byte) {
	var body bytes.Buffer
	body.WriteString(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`)
	body.WriteString(name)
	body.WriteString(`","arguments":{}`)
	if version >= "2026-07-28" {
		fmt.Fprintf(&body, `,"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{}}`, version)
	}
	body.WriteString(`}}`)
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "application/json, text/event-stream")
	header.Set("Mcp-Protocol-Version", version)
	if version >= "2026-07-28" {
		var decoded string
		json.Unmarshal([]byte(`"`+name+`"`), &decoded)
		header.Set("Mcp-Method", "tools/call")
		header.Set("Mcp-Name", decoded)
	}
	return header, body.Bytes()
}
