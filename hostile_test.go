package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// hostileInts returns arguments of about size bytes: a list of strings
// where a tool takes integers.
func hostileInts(size int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"xs":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"x"`)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// unknownKeys returns arguments with n properties the schema does not
// know.
func unknownKeys(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"xs":[]`)
	for i := range n {
		b.WriteString(`,"k`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`":0`)
	}
	b.WriteString(`}`)
	return json.RawMessage(b.String())
}

type sumIn struct {
	XS []int `json:"xs"`
}

func sumServer(mode mcpkit.ValidationMode) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "hostile"}, &mcpkit.ServerOptions{Validation: mode})
	srv.Add(tools.Must(tools.New("sum", func(_ context.Context, in sumIn) (int, error) {
		n := 0
		for _, x := range in.XS {
			n += x
		}
		return n, nil
	}, nil)))
	return srv
}

// TestHostileArgumentsGetSmallAnswers sends arguments built to make the
// answer large, through a real client over HTTP (under the SDK's 4 MiB body
// limit): the answer must stay a few KiB.
func TestHostileArgumentsGetSmallAnswers(t *testing.T) {
	for _, mode := range []mcpkit.ValidationMode{mcpkit.Strict, mcpkit.Lenient} {
		ts := mcpkittest.NewServer(t, sumServer(mode), nil)
		for name, args := range map[string]json.RawMessage{
			"3.6MB of strings for integers": hostileInts(3_600_000),
			"unknown keys":                  unknownKeys(100_000),
		} {
			res, err := ts.CallTool(t.Context(), "sum", args)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			answer, _ := json.Marshal(res)
			if !res.IsError || len(answer) > 4096 || !strings.Contains(resultText(t, res), " more") {
				t.Errorf("%s (mode %d): %d-byte answer: %.300s", name, mode, len(answer), answer)
			}
			issues, _ := res.Meta[mcpkit.MetaKeyValidationIssues].([]any)
			if len(issues) != 10 {
				t.Errorf("%s: %d issues in _meta, want 10", name, len(issues))
			}
		}
	}
}

// BenchmarkHostileRequest measures what the server allocates to reject a
// hostile request of 1 and 4 MB, through the tool's whole chain, against a
// valid call of the same tool, and reports the size of the answer's text
// and _meta as answer-B.
func BenchmarkHostileRequest(b *testing.B) {
	srv := sumServer(mcpkit.Lenient)
	h, _ := srv.Handler("sum")
	tl, _ := srv.Lookup("sum")
	for _, bc := range []struct {
		name string
		args json.RawMessage
	}{
		{"valid", json.RawMessage(`{"xs":[1,2,3]}`)},
		{"1MB", hostileInts(1 << 20)},
		{"4MB", hostileInts(4 << 20)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := mcpkittest.NewRequest(tl, bc.args)
			var answer int
			b.ReportAllocs()
			for b.Loop() {
				res, err := h.ServeTool(context.Background(), req)
				if (err != nil) != (bc.name != "valid") {
					b.Fatalf("%v %v", res, err)
				}
				if err != nil {
					var meta []byte
					var rme mcpkit.ResultMetaError
					if errors.As(err, &rme) {
						meta, _ = json.Marshal(rme.ResultMeta())
					}
					answer = len(err.Error()) + len(meta)
				}
			}
			b.ReportMetric(float64(answer), "answer-B")
		})
	}
}
