package oauth

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// resourceServer is an MCP server behind a JWTVerifier for issuer, with
// its protected resource metadata: every call needs repo:read (the 401
// names it), and delete_repo needs repo:admin too (a 403 challenge).
type resourceServer struct {
	URL, Meta string
	verifier  *JWTVerifier
}

func newResourceServer(t testing.TB, o func(resource string) *testOP) (*resourceServer, *testOP) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	resource := "http://" + ts.Listener.Addr().String() + "/mcp"
	op := o(resource)
	meta, err := MetadataURL(resource)
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, op.URL, resource, &JWTOptions{AcceptPlainJWT: true})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "repos", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	srv.Add(echoTool("read_repo"), echoTool("delete_repo"))
	mux := http.NewServeMux()
	mux.Handle(MetadataPath(resource), auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{op.URL},
		ScopesSupported:        []string{"repo:read", "repo:admin"},
		BearerMethodsSupported: []string{"header"},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta, Scopes: []string{"repo:read"}})(
		srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: meta})))
	ts.Config.Handler = mux
	ts.Start()
	t.Cleanup(ts.Close)
	return &resourceServer{URL: resource, Meta: meta, verifier: v}, op
}

// challenges records the authorization challenges a client receives.
type challenges struct {
	mu   sync.Mutex
	seen []string // "status WWW-Authenticate"
}

func (c *challenges) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		c.mu.Lock()
		c.seen = append(c.seen, http.StatusText(resp.StatusCode)+" "+resp.Header.Get("WWW-Authenticate"))
		c.mu.Unlock()
	}
	return resp, err
}

func (c *challenges) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

// TestStepUpAgainstOP runs the whole flow with the SDK's client-side OAuth
// (extauth.ClientCredentialsHandler) against the OP: the first request is
// answered 401 naming repo:read and the metadata; the client discovers
// the OP from the metadata and gets a token for repo:read; read_repo
// succeeds; delete_repo is answered 403 insufficient_scope naming
// repo:admin; the client gets a token with both scopes and the call
// succeeds, as the issuer-qualified principal. On both protocol eras.
func TestStepUpAgainstOP(t *testing.T) {
	for _, version := range []string{mcpkittest.StatelessVersion, mcpkittest.StatefulVersion} {
		t.Run(version, func(t *testing.T) {
			rs, op := newResourceServer(t, func(resource string) *testOP { return newTestOP(t, opClients(resource)) })
			rec := &challenges{}
			h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
				Credentials: &oauthex.ClientCredentials{ClientID: "agent", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "agent-secret"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
				Endpoint: rs.URL, OAuthHandler: h, HTTPClient: &http.Client{Transport: rec},
			}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			principal := `iss:"` + op.URL + `" sub:agent`
			for _, name := range []string{"read_repo", "delete_repo"} {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %v", name, res, err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != principal {
					t.Errorf("%s ran for %s, want %s", name, got, principal)
				}
			}
			want := []string{
				`Unauthorized Bearer resource_metadata="` + rs.Meta + `", scope="repo:read"`,
				`Forbidden Bearer error="insufficient_scope", scope="repo:admin", resource_metadata="` + rs.Meta + `"`,
			}
			if got := rec.get(); !slices.Equal(got, want) {
				t.Errorf("challenges:\n%q\nwant\n%q", got, want)
			}
		})
	}
}
