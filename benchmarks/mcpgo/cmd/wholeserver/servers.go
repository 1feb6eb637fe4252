package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/metrics"
	"strings"

	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/tools"
)

// The two tools every server serves. add is the quickstart's (two numbers
// in, their sum out); obj50 is BenchmarkFloor's, which returns fifty small
// objects.

// operands is the argument of add.
type operands struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// sum is the result of add.
type sum struct {
	Sum float64 `json:"sum"`
}

func add(_ context.Context, in operands) (sum, error) {
	return sum{Sum: in.A + in.B}, nil
}

// objIn is the argument of obj50.
type objIn struct {
	N int `json:"n"`
}

// objItem is one of the fifty items obj50 returns.
type objItem struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Score float64  `json:"score"`
}

type objOut struct {
	Items []objItem `json:"items"`
}

func obj50(_ context.Context, in objIn) (objOut, error) {
	out := objOut{Items: make([]objItem, 50)}
	for i := range out.Items {
		out.Items[i] = objItem{ID: in.N + i, Name: "item", Tags: []string{"a", "b"}, Score: float64(i) / 3}
	}
	return out, nil
}

// toolNames are the tools, in the order the runner calls them.
var toolNames = []string{"add", "obj50"}

// toolArgs are the arguments every call sends, by tool.
var toolArgs = map[string]any{
	"add":   map[string]float64{"a": 1, "b": 2},
	"obj50": map[string]int{"n": 1},
}

// wantResult returns the structured result of tool for toolArgs, as JSON.
func wantResult(tool string) ([]byte, error) {
	switch tool {
	case "add":
		out, err := add(context.Background(), operands{A: 1, B: 2})
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	case "obj50":
		out, err := obj50(context.Background(), objIn{N: 1})
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
	return nil, fmt.Errorf("unknown tool %q", tool)
}

// impls are the server implementations serve can run.
var impls = []string{"mcpkit", "mcp-go", "mcp-go+validation"}

// newHandler returns the HTTP handler of implementation impl: its MCP
// endpoints, /stateless and /stateful; /cost, which answers what the
// process has spent so far; and /floor, which measures the endpoint's
// handler alone (see serveFloor).
//
// mcpkit's endpoints are its HTTPHandler, stateless by default and with
// sessions for clients before 2026-07-28 on /stateful, answering with JSON
// rather than an event stream, as BenchmarkFloor's servers do. mcp-go's are
// its streamable HTTP server with the same typed tools, stateless or
// stateful; with validation it checks arguments and structured results
// against the tools' schemas, which mcpkit always does and mcp-go does
// only when asked.
func newHandler(impl string) (http.Handler, error) {
	var stateless, stateful http.Handler
	switch impl {
	case "mcpkit":
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "wholeserver", Version: "0.1.0"}, nil)
		addTool, err := tools.New("add", add, &tools.Options{Description: "Add two numbers."})
		if err != nil {
			return nil, err
		}
		objTool, err := tools.New("obj50", obj50, &tools.Options{Description: "Return fifty objects."})
		if err != nil {
			return nil, err
		}
		if err := srv.Add(addTool, objTool); err != nil {
			return nil, err
		}
		sdk := &mcp.StreamableHTTPOptions{JSONResponse: true}
		stateless = srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: sdk})
		stateful = srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: true, SDK: sdk})
	case "mcp-go", "mcp-go+validation":
		s := newMCPGo(impl == "mcp-go+validation")
		stateless = mgserver.NewStreamableHTTPServer(s, mgserver.WithStateLess(true))
		stateful = mgserver.NewStreamableHTTPServer(s, mgserver.WithStateful(true))
	default:
		return nil, fmt.Errorf("unknown server %q (want one of %s)", clip(impl), strings.Join(impls, ", "))
	}
	endpoints := map[string]*recording{
		"/stateless": {next: stateless},
		"/stateful":  {next: stateful},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cost", serveCost)
	mux.HandleFunc("GET /floor", func(w http.ResponseWriter, r *http.Request) { serveFloor(w, r, endpoints) })
	for path, e := range endpoints {
		mux.Handle(path, e)
	}
	return mux, nil
}

// newMCPGo returns an mcp-go server with the two tools, typed as mcp-go
// types them: arguments bound to the input type, the result sent as
// structured content and as its JSON in a text block, as mcpkit does.
func newMCPGo(validate bool) *mgserver.MCPServer {
	opts := []mgserver.ServerOption{mgserver.WithToolCapabilities(false)}
	if validate {
		opts = append(opts, mgserver.WithInputSchemaValidation(), mgserver.WithOutputSchemaValidation())
	}
	s := mgserver.NewMCPServer("wholeserver", "0.1.0", opts...)
	s.AddTool(mgmcp.NewTool("add", mgmcp.WithDescription("Add two numbers."),
		mgmcp.WithInputSchema[operands](), mgmcp.WithOutputSchema[sum]()),
		mgmcp.NewStructuredToolHandler(func(ctx context.Context, _ mgmcp.CallToolRequest, in operands) (sum, error) {
			return add(ctx, in)
		}))
	s.AddTool(mgmcp.NewTool("obj50", mgmcp.WithDescription("Return fifty objects."),
		mgmcp.WithInputSchema[objIn](), mgmcp.WithOutputSchema[objOut]()),
		mgmcp.NewStructuredToolHandler(func(ctx context.Context, _ mgmcp.CallToolRequest, in objIn) (objOut, error) {
			return obj50(ctx, in)
		}))
	return s
}

// cost is what a server process has spent since it started, as /cost
// answers it.
type cost struct {
	// CPUNanos is the user and system CPU time of the whole process (every
	// thread, the garbage collector's included).
	CPUNanos int64 `json:"cpu_ns"`
	// AllocBytes and AllocObjects count every heap allocation, also of
	// memory freed since.
	AllocBytes   uint64 `json:"alloc_bytes"`
	AllocObjects uint64 `json:"alloc_objects"`
	// GCCycles counts completed garbage collections.
	GCCycles uint64 `json:"gc_cycles"`
}

var costMetrics = []string{"/gc/heap/allocs:bytes", "/gc/heap/allocs:objects", "/gc/cycles/total:gc-cycles"}

// readCost returns what the process has spent so far.
func readCost() (cost, error) {
	cpu, err := processCPU()
	if err != nil {
		return cost{}, err
	}
	samples := make([]metrics.Sample, len(costMetrics))
	for i, name := range costMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	for _, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return cost{}, fmt.Errorf("runtime/metrics has no %s", s.Name)
		}
	}
	return cost{
		CPUNanos:     cpu,
		AllocBytes:   samples[0].Value.Uint64(),
		AllocObjects: samples[1].Value.Uint64(),
		GCCycles:     samples[2].Value.Uint64(),
	}, nil
}

func serveCost(w http.ResponseWriter, _ *http.Request) {
	c, err := readCost()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(c)
}

// clip returns s, cut to a length fit for a name in an error message.
func clip(s string) string { return clipTo(s, 64) }

// clipLong returns s, cut in the middle to a length fit for a whole error
// message: the start says what failed, the end why.
func clipLong(s string) string {
	const head, tail = 120, 280
	if len(s) <= head+tail {
		return s
	}
	return s[:head] + " ... " + s[len(s)-tail:]
}

func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
