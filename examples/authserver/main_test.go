package main

import (
	"strings"
	"testing"
)

// TestRun runs the demonstration as `go run .` does and checks what the
// client met: a 401 naming repo:read and the metadata, read_repo served,
// a 403 challenge naming repo:admin, delete_repo served after the step-up,
// both for the issuer-qualified principal.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, false); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		`<- 401 WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1:`,
		`/.well-known/oauth-protected-resource/mcp", scope="repo:read"`,
		"-> read_repo done for iss:\"http://127.0.0.1:",
		`<- 403 WWW-Authenticate: Bearer error="insufficient_scope", scope="repo:admin", resource_metadata="http://127.0.0.1:`,
		`-> delete_repo done for iss:"http://127.0.0.1:`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "<- 403") < strings.Index(got, "call delete_repo") {
		t.Errorf("the 403 came before delete_repo was called:\n%s", got)
	}
}
