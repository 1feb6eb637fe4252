package oauth

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// TestJWTType: a JWTVerifier accepts only tokens typed as access tokens
// (RFC 9068, section 4: at+jwt, with or without "application/", in any
// case); an ID token, a DPoP proof or an untyped JWT of the same issuer,
// for the same audience, is refused.
func TestJWTType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		iss := newFakeIssuer(t, "127.0.0.1:1")
		iss.start(t, n)
		strict := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: iss.URL + keysPath, HTTPClient: n.client(t)})
		plain := newVerifier(t, iss.URL, fakeResource, &JWTOptions{JWKSURL: iss.URL + keysPath, HTTPClient: n.client(t), AcceptPlainJWT: true})
		for _, tc := range []struct {
			typ           string
			strict, plain bool // accepted by default, with AcceptPlainJWT
		}{
			{"at+jwt", true, true},
			{"application/at+jwt", true, true},
			{"AT+JWT", true, true},
			{"Application/At+Jwt", true, true},
			{"JWT", false, true},
			{"jwt", false, true},
			{"", false, true},
			{"application/jwt", false, true},
			{"id_token+jwt", false, false},
			{"dpop+jwt", false, false},
			{"at+jwt; x", false, false},
			{"application/application/at+jwt", false, false},
		} {
			token := iss.mint(t, tc.typ)
			for _, v := range []struct {
				name string
				v    *JWTVerifier
				ok   bool
			}{{"default", strict, tc.strict}, {"AcceptPlainJWT", plain, tc.plain}} {
				_, err := v.v.Verify(t.Context(), token, nil)
				if (err == nil) != v.ok {
					t.Errorf("typ %q, %s: %v, want ok=%v", tc.typ, v.name, err, v.ok)
				}
				if err != nil && (!errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), "typ")) {
					t.Errorf("typ %q, %s: %v, want an invalid token for its typ", tc.typ, v.name, err)
				}
			}
		}
		// A typ that is not a string, and headers that are not JSON.
		parts := strings.Split(iss.mint(t, "at+jwt"), ".")
		for name, head := range map[string]string{
			"numeric typ":   `{"alg":"ES256","kid":"k1","typ":1}`,
			"array typ":     `{"alg":"ES256","kid":"k1","typ":["at+jwt"]}`,
			"not an object": `["at+jwt"]`,
			"not JSON":      `{"typ":"at+jwt"`,
		} {
			token := base64.RawURLEncoding.EncodeToString([]byte(head)) + "." + parts[1] + "." + parts[2]
			if _, err := plain.Verify(t.Context(), token, nil); err == nil || !errors.Is(err, auth.ErrInvalidToken) {
				t.Errorf("%s: %v, want an invalid token", name, err)
			}
		}
	})
}

// TestJWTTypeOfOP: the access tokens of zitadel's OP are typed JWT; a
// default verifier refuses them with a 401 over HTTP, one with
// AcceptPlainJWT lets them through.
func TestJWTTypeOfOP(t *testing.T) {
	rs, o := newResourceServer(t, func(resource string) *testOP { return newTestOP(t, opClients(resource)) })
	token := o.token(t, "agent", rs.URL, "repo:read")
	strict := newVerifier(t, o.URL, rs.URL, nil)
	if _, err := strict.Verify(t.Context(), token, nil); err == nil || !strings.Contains(err.Error(), `typ is "JWT"`) {
		t.Errorf("the OP's token, by a default verifier: %v", err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	auth.RequireBearerToken(strict.Verify, nil)(http.NotFoundHandler()).ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("over HTTP: %d, want 401", rec.Code)
	}
	if _, err := rs.verifier.Verify(t.Context(), token, nil); err != nil {
		t.Errorf("the OP's token, with AcceptPlainJWT: %v", err)
	}
}
