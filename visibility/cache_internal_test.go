package visibility

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/mcpkit/mcpkit"
)

// TestCheckCache checks that the cache compiles a tool's checks once, is
// read without locking once warm, and does not keep tools alive.
func TestCheckCache(t *testing.T) {
	compiled := map[*mcpkit.Tool]int{}
	always := Predicate(func(context.Context, mcpkit.Caller) bool { return true })
	c := newCheckCache(func(t *mcpkit.Tool) []Predicate {
		compiled[t]++
		return []Predicate{always}
	})

	tools := make([]*mcpkit.Tool, 1000)
	for i := range tools {
		tools[i] = &mcpkit.Tool{Version: fmt.Sprint(i)}
	}
	for range 3 {
		for _, tl := range tools {
			if got := c.get(tl); len(got) != 1 {
				t.Fatalf("get(%s) = %v", tl.Version, got)
			}
		}
	}
	for _, tl := range tools {
		if compiled[tl] != 1 {
			t.Fatalf("tool %s compiled %d times", tl.Version, compiled[tl])
		}
	}
	c.mu.Lock()
	dirty, read := len(c.dirty), len(*c.read.Load())
	c.mu.Unlock()
	if dirty != 0 || read != len(tools) {
		t.Errorf("after three passes: %d entries read without lock, %d with; want %d and 0", read, dirty, len(tools))
	}

	// The tools go; new ones come. The cache keeps neither the old tools
	// nor their entries for long.
	clear(compiled)
	tools = nil
	runtime.GC()
	for i := range 2000 {
		tl := &mcpkit.Tool{Version: fmt.Sprint("new", i)}
		c.get(tl)
		tools = append(tools, tl)
	}
	c.mu.Lock()
	total := len(c.dirty) + len(*c.read.Load())
	c.mu.Unlock()
	if total > len(tools)+len(tools)/2 {
		t.Errorf("%d entries for %d live tools: dead ones are kept", total, len(tools))
	}
	runtime.KeepAlive(tools)
}
