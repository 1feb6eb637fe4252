package main

import (
	"slices"
	"testing"
)

// TestLayers checks that the command's own middleware is listed under
// "main" in its tests too, where the compiler names its code by its
// import path, also when it is built with -trimpath.
func TestLayers(t *testing.T) {
	if got, want := layers(), []string{"main.audit", "main.tenant", "mcpkit.Validation"}; !slices.Equal(got, want) {
		t.Errorf("layers of a command in its test: %q, want %q", got, want)
	}
}
