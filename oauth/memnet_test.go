package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// memNet is an in-memory network for tests in a synctest bubble. Each
// connection is a net.Pipe, so a goroutine waiting on one is durably
// blocked and the bubble's clock moves on; an address nobody listens on
// refuses connections at once, as a host whose server is down does.
type memNet struct {
	mu    sync.Mutex
	ls    map[string]*memListener
	dials map[string][]time.Time // when each address was dialled
}

func newMemNet() *memNet {
	return &memNet{ls: map[string]*memListener{}, dials: map[string][]time.Time{}}
}

type memListener struct {
	n     *memNet
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.n.mu.Lock()
		if l.n.ls[l.addr] == l {
			delete(l.n.ls, l.addr)
		}
		l.n.mu.Unlock()
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr(l.addr) }

// dial connects to the listener at addr, or is refused.
func (n *memNet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	n.mu.Lock()
	n.dials[addr] = append(n.dials[addr], time.Now())
	l := n.ls[addr]
	n.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: memAddr(addr), Err: syscall.ECONNREFUSED}
	if l == nil {
		return nil, refused
	}
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, refused
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dialsTo returns when addr was dialled.
func (n *memNet) dialsTo(addr string) []time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]time.Time(nil), n.dials[addr]...)
}

// client returns an HTTP client of the network, closed at the test's end.
func (n *memNet) client(t testing.TB) *http.Client {
	tr := &http.Transport{DialContext: n.dial}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// serve serves h at addr ("127.0.0.1:1" and so on: a loopback address,
// which the SDK's discovery allows over plain HTTP) until the test ends.
func (n *memNet) serve(t testing.TB, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	l := &memListener{n: n, addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	n.mu.Lock()
	n.ls[addr] = l
	n.mu.Unlock()
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// fakeIssuer is an authorization server with its metadata (RFC 8414), a
// JWKS, an introspection endpoint (every token is active but those that begin "inactive")
// and a token endpoint for token exchange, on a memNet, whose endpoints the
// test can make hang: a hung request is accepted and never answered, until
// its client gives up or the test ends.
type fakeIssuer struct {
	URL  string
	addr string
	key  *ecdsa.PrivateKey
	kid  string

	mu       sync.Mutex
	hang     map[string]bool // by path
	hits     map[string]int  // by path
	released chan struct{}   // closed at the test's end
}

const (
	metaPath       = "/.well-known/oauth-authorization-server"
	keysPath       = "/keys"
	introspectPath = "/introspect"
	tokenPath      = "/token"
)

// newFakeIssuer returns an issuer at http://addr; it is down (nothing
// listens) until start.
func newFakeIssuer(t testing.TB, addr string) *fakeIssuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeIssuer{URL: "http://" + addr, addr: addr, key: k, kid: "k1", hang: map[string]bool{}, hits: map[string]int{}, released: make(chan struct{})}
}

// start serves the issuer on n, until the test ends; then its hung
// requests are released before the server closes.
func (f *fakeIssuer) start(t testing.TB, n *memNet) {
	n.serve(t, f.addr, f)
	t.Cleanup(func() { close(f.released) })
}

func (f *fakeIssuer) setHang(path string, hang bool) {
	f.mu.Lock()
	f.hang[path] = hang
	f.mu.Unlock()
}

func (f *fakeIssuer) hitsOf(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

// rotate makes a new key, with key ID kid, the only one.
func (f *fakeIssuer) rotate(t testing.TB, kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.key, f.kid = k, kid
	f.mu.Unlock()
}

func (f *fakeIssuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.URL.Path]++
	hang := f.hang[r.URL.Path]
	pub := jose.JSONWebKey{Key: &f.key.PublicKey, KeyID: f.kid, Algorithm: "ES256", Use: "sig"}
	f.mu.Unlock()
	if hang {
		select {
		case <-r.Context().Done():
		case <-f.released:
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case metaPath:
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                           f.URL,
			"authorization_endpoint":           f.URL + "/authorize",
			"token_endpoint":                   f.URL + tokenPath,
			"jwks_uri":                         f.URL + keysPath,
			"introspection_endpoint":           f.URL + introspectPath,
			"code_challenge_methods_supported": []string{"S256"},
		})
	case keysPath:
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	case introspectPath:
		r.ParseForm()
		if strings.HasPrefix(r.PostForm.Get("token"), "inactive") {
			json.NewEncoder(w).Encode(map[string]any{"active": false})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"active": true, "iss": f.URL, "aud": fakeResource, "sub": "user-" + r.PostForm.Get("token"),
			"exp": time.Now().Add(time.Hour).Unix(), "scope": "repo:read",
		})
	case tokenPath: // token exchange only: the exchanged token names the subject token
		r.ParseForm()
		if r.PostForm.Get("grant_type") != grantTokenExchange || r.PostForm.Get("subject_token") == "" {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"error": "invalid_request"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"access_token": "exchanged-" + r.PostForm.Get("subject_token"), "issued_token_type": accessTokenType,
			"token_type": "Bearer", "expires_in": 300,
		})
	default:
		http.NotFound(w, r)
	}
}

// fakeResource is the resource the fake issuer's tokens are for.
const fakeResource = "https://mcp.example.com/mcp"

// mint returns a token for fakeResource signed by the issuer's current
// key, with the typ header typ (none when empty).
func (f *fakeIssuer) mint(t testing.TB, typ string) string {
	t.Helper()
	f.mu.Lock()
	key, kid := f.key, f.kid
	f.mu.Unlock()
	return signToken(t, jose.ES256, key, kid, typ, map[string]any{
		"iss": f.URL, "aud": fakeResource, "sub": "alice", "scope": "repo:read",
		"exp": time.Now().Add(24 * time.Hour).Unix(), "iat": time.Now().Unix(),
	})
}

// signToken signs claims as a compact JWS with key, naming kid and typ in
// its header (typ left out when empty).
func signToken(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithHeader("kid", kid)
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, ".") != 2 {
		t.Fatalf("not a compact JWS: %s", out)
	}
	return out
}
