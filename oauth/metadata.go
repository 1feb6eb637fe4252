package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// wellKnownPRM is the well-known URI suffix of RFC 9728.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// MetadataURL returns the URL at which RFC 9728 (section 3.1) places the
// protected resource metadata of the resource whose canonical URI is
// resource: the well-known path between its host and its path, so
// https://mcp.example.com/mcp has its metadata at
// https://mcp.example.com/.well-known/oauth-protected-resource/mcp. It is
// the URL clients fetch when a 401 or 403 names it in resource_metadata.
// It returns an error for a resource that is not an absolute http(s) URL
// without query or fragment.
func MetadataURL(resource string) (string, error) {
	u, err := checkResource(resource)
	if err != nil {
		return "", err
	}
	u.Path = MetadataPath(resource)
	u.RawPath = ""
	return u.String(), nil
}

// MetadataPath returns the path of [MetadataURL], for a mux: for
// https://mcp.example.com/mcp, /.well-known/oauth-protected-resource/mcp.
// It returns the well-known path alone for a resource it cannot parse.
func MetadataPath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return wellKnownPRM
	}
	p := strings.TrimSuffix(u.Path, "/")
	if p != "" && p[0] != '/' {
		p = "/" + p
	}
	return wellKnownPRM + p
}

func checkResource(resource string) (*url.URL, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return nil, fmt.Errorf("oauth: resource %q: %w", clip(resource), err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("oauth: resource %q is not an absolute http(s) URL", clip(resource))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("oauth: a resource URI has no query or fragment (RFC 8707)")
	}
	return u, nil
}
