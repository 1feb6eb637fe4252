package proxy_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// BenchmarkProxyCall measures what the proxy adds to a call: "direct" is
// an SDK client calling the upstream's echo tool over in-memory
// transports; "proxied" calls it through a local server whose Upstream
// forwards over in-memory transports too, with the default layers
// (breaker, timeout, result size limit); "proxied-bare" without them.
// Compare the three in one run: the proxied call costs the direct one
// plus a second hop (the local server's decode, pipeline and encode, and
// the proxy's client). cpu-ns/op is the CPU time the process spent per
// call, the garbage collector's included: on a busy machine it varies
// less than ns/op, which counts the time spent waiting for a CPU too.
func BenchmarkProxyCall(b *testing.B) {
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "remote"}, nil)
	addTools(remote, newProbe())
	args := map[string]any{"say": "hello"}
	run := func(b *testing.B, cs *mcp.ClientSession, name string) {
		b.Helper()
		ctx := context.Background()
		params := &mcp.CallToolParams{Name: name, Arguments: args}
		b.ReportAllocs()
		start, ok := cpuTime()
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
		if end, ok2 := cpuTime(); ok && ok2 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
	b.Run("direct", func(b *testing.B) {
		cs, err := mcpkittest.ConnectInMemory(context.Background(), remote, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		run(b, cs, "echo")
	})
	for name, opts := range map[string]*proxy.Options{
		"proxied":      nil,
		"proxied-bare": {NoBreaker: true, Timeout: -1, MaxResultBytes: -1},
	} {
		b.Run(name, func(b *testing.B) {
			up := newProxy(b, inMemory(remote), opts)
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			cs, err := mcpkittest.ConnectInMemory(context.Background(), local, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			run(b, cs, "echo")
		})
	}
}
