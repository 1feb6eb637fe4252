package mcpkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// The benchmarks of this file measure what one tool costs to register, to
// remove and to keep, with a schema of its own of about 4 KB, as the tools
// of a catalog generated from an OpenAPI document have: mcpkit next to the
// go-sdk's own server (mcp.NewServer and AddTool of the same definitions),
// in the same run.
//
//	go test -run '^$' -bench ToolChange -benchtime 2000x -count 5 -timeout 0 . | tee costs.txt
//	go test -run '^$' -bench ToolHeap -count 5 . | tee -a costs.txt
//	benchstat -col /server costs.txt
//
// BenchmarkToolChange runs a fixed number of operations: each needs a tool
// made and added (or taken out) with the timer stopped, which costs far
// more than a Remove, and b.N found by time would make that the run.

// costWords are the words the descriptions of the distinct schemas are
// made of.
var costWords = strings.Fields(`account address amount balance batch billing card channel charge
	comment contact country currency customer date device discount domain email event export
	file filter group invoice item label language limit merchant message note order owner page
	payment period plan price product project quota receipt record region report request
	schedule search session shipment source status subscription tax team tenant ticket token
	transfer user vendor webhook window workspace`)

// distinctSchema returns the input schema of the i-th tool of a generated
// catalog: about 4 KB of JSON, with property names and descriptions of its
// own, and the keywords an OpenAPI operation's parameters use (types,
// bounds, enums, patterns, arrays, a nested object, required).
func distinctSchema(i int) json.RawMessage {
	word := func(k int) string { return costWords[(i*7+k*13)%len(costWords)] }
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for k := range 18 {
		if k > 0 {
			b.WriteByte(',')
		}
		name := fmt.Sprintf("%s_%s_%d_%d", word(k), word(k+1), i, k)
		desc := fmt.Sprintf("The %s of the %s that operation %d reads, as the %s service keeps it; see the %s guide, section %d.", word(k+2), word(k+3), i, word(k+4), word(k+5), k)
		fmt.Fprintf(&b, `%q:{"description":%q,`, name, desc)
		switch k % 6 {
		case 0:
			fmt.Fprintf(&b, `"type":"integer","minimum":0,"maximum":%d}`, 1000+i)
		case 1:
			fmt.Fprintf(&b, `"type":"string","maxLength":%d,"pattern":"^[a-z0-9_-]+$"}`, 64+k)
		case 2:
			fmt.Fprintf(&b, `"type":"string","enum":[%q,%q,%q]}`, word(k+6), word(k+7), word(k+8))
		case 3:
			b.WriteString(`"type":"boolean","default":false}`)
		case 4:
			fmt.Fprintf(&b, `"type":"array","items":{"type":"string","format":"%s"},"maxItems":%d}`, "uuid", 10+k)
		case 5:
			fmt.Fprintf(&b, `"type":"object","properties":{"%s":{"type":"string"},"%s":{"type":"number"}},"additionalProperties":false}`, word(k+9), word(k+10))
		}
		if k%4 == 0 {
			required = append(required, name)
		}
	}
	b.WriteString(`},"required":[`)
	for j, r := range required {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q", r)
	}
	b.WriteString(`],"additionalProperties":false}`)
	return json.RawMessage(b.String())
}

// distinctTool returns the i-th tool of a generated catalog, with its own
// schema (see distinctSchema).
func distinctTool(i int) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{
			Name:        fmt.Sprintf("op_%07d", i),
			Description: fmt.Sprintf("Operation %d of a generated catalog: it reads a %s and answers its %s.", i, costWords[i%len(costWords)], costWords[(i/7)%len(costWords)]),
			InputSchema: distinctSchema(i),
		},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }),
	}
}

// distinctTools returns tools from to to-1 of a generated catalog.
func distinctTools(from, to int) []*mcpkit.Tool {
	ts := make([]*mcpkit.Tool, 0, to-from)
	for i := from; i < to; i++ {
		ts = append(ts, distinctTool(i))
	}
	return ts
}

// freshTools numbers the tools that the benchmarks add and remove beyond
// a catalog, so that no schema is seen twice: one Add costs what a new
// tool costs, not what one seen before does.
var freshTools atomic.Int64

func init() { freshTools.Store(10_000_000) }

// nextFresh returns n tools whose names and schemas no tool had before.
func nextFresh(n int) []*mcpkit.Tool {
	from := int(freshTools.Add(int64(n))) - n
	return distinctTools(from, from+n)
}

// costServer is what the benchmarks measure: an mcpkit Server or the
// go-sdk's, with the same operations.
type costServer interface {
	add(ts ...*mcpkit.Tool)
	remove(names ...string)
}

type kitServer struct {
	b   *testing.B
	srv *mcpkit.Server
}

func (k kitServer) add(ts ...*mcpkit.Tool) {
	if err := k.srv.Add(ts...); err != nil {
		k.b.Fatal(err)
	}
}
func (k kitServer) remove(names ...string) { k.srv.Remove(names...) }

type sdkServer struct{ srv *mcp.Server }

func sdkNop(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }

func (s sdkServer) add(ts ...*mcpkit.Tool) {
	for _, t := range ts {
		def := t.Tool
		s.srv.AddTool(&def, sdkNop)
	}
}
func (s sdkServer) remove(names ...string) { s.srv.RemoveTools(names...) }

// costServers returns the two servers, each holding the tools ts.
func costServers(b *testing.B, ts []*mcpkit.Tool) map[string]costServer {
	k := kitServer{b, mcpkit.NewServer(&mcp.Implementation{Name: "catalog"}, nil)}
	s := sdkServer{mcp.NewServer(&mcp.Implementation{Name: "catalog"}, nil)}
	k.add(ts...)
	s.add(ts...)
	return map[string]costServer{"mcpkit": k, "go-sdk": s}
}

// costBatch is how many fresh tools a benchmark makes at a time, with its
// timer stopped.
const costBatch = 256

// BenchmarkToolChange measures one Add and one Remove of a tool with a
// schema of its own on a server of n such tools, mcpkit next to the
// go-sdk's AddTool and RemoveTools. Each Add is of a tool never seen
// before; the tools are made, and taken out or added again every
// costBatch operations, with the timer stopped.
func BenchmarkToolChange(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		servers := costServers(b, distinctTools(0, n))
		for _, name := range []string{"mcpkit", "go-sdk"} {
			srv := servers[name]
			b.Run(fmt.Sprintf("op=add/server=%s/tools=%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				var batch []*mcpkit.Tool
				for i := 0; i < b.N; i++ {
					if i%costBatch == 0 {
						b.StopTimer()
						removeAll(srv, batch)
						batch = nextFresh(costBatch)
						b.StartTimer()
					}
					srv.add(batch[i%costBatch])
				}
				b.StopTimer()
				removeAll(srv, batch[:(b.N-1)%costBatch+1])
			})
			b.Run(fmt.Sprintf("op=remove/server=%s/tools=%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				var batch []*mcpkit.Tool
				for i := 0; i < b.N; i++ {
					if i%costBatch == 0 {
						b.StopTimer()
						batch = nextFresh(costBatch)
						srv.add(batch...)
						b.StartTimer()
					}
					srv.remove(batch[i%costBatch].Name)
				}
				b.StopTimer()
				removeAll(srv, batch)
			})
		}
		runtime.KeepAlive(servers)
	}
}

func removeAll(srv costServer, ts []*mcpkit.Tool) {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	if len(names) > 0 {
		srv.remove(names...)
	}
}

// BenchmarkToolHeap reports the heap a server keeps per registered tool
// beyond the tool's definition (bytes/tool), with 10,000 tools of a
// schema each, mcpkit next to the go-sdk. The definitions are made, and
// kept alive, before the heap is first read, so that only what the
// server adds is counted.
func BenchmarkToolHeap(b *testing.B) {
	const n = 10_000
	tools := distinctTools(0, n)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for _, name := range []string{"mcpkit", "go-sdk"} {
		b.Run("server="+name, func(b *testing.B) {
			var per float64
			for b.Loop() {
				before := heap()
				var srv costServer
				if name == "mcpkit" {
					srv = kitServer{b, mcpkit.NewServer(&mcp.Implementation{Name: "catalog"}, nil)}
				} else {
					srv = sdkServer{mcp.NewServer(&mcp.Implementation{Name: "catalog"}, nil)}
				}
				srv.add(tools...)
				per = (float64(heap()) - float64(before)) / n
				runtime.KeepAlive(srv)
			}
			b.ReportMetric(per, "bytes/tool")
		})
	}
	runtime.KeepAlive(tools)
}
