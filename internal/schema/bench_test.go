package schema

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// echoArgs is the Go form of the echo_obj arguments, what a handler
// decodes them into.
type echoArgs struct {
	Items []echoItem `json:"items"`
	Q     string     `json:"q"`
}

type echoItem struct {
	ID   int      `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

// echoDoc returns echo_obj arguments with n items.
func echoDoc(n int) []byte {
	args := echoArgs{Q: "find things"}
	for i := range n {
		args.Items = append(args.Items, echoItem{
			ID:   i,
			Name: fmt.Sprintf("item-%d", i),
			Tags: []string{"red", "green", fmt.Sprintf("t%d", i%7)},
		})
	}
	data, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return data
}

// BenchmarkEchoObj measures the echo_obj arguments (50 items) as a handler
// that decodes them into a struct sees them: decoding alone (the
// baseline), after Validate, after Process in lenient mode, and after
// jsonschema-go's validation of the decoded value (what the MCP SDK does).
func BenchmarkEchoObj(b *testing.B) {
	doc := echoDoc(50)
	v := mustCompile(b, echoSchema)
	rs := mustResolve(b, echoSchema)
	decode := func(b *testing.B) {
		var args echoArgs
		if err := json.Unmarshal(doc, &args); err != nil {
			b.Fatal(err)
		}
		if len(args.Items) != 50 {
			b.Fatal("decoded wrong")
		}
	}
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decode(b)
		}
	})
	b.Run("validate+unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Validate(doc); err != nil {
				b.Fatal(err)
			}
			decode(b)
		}
	})
	b.Run("process-lenient+unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := v.Process(doc, true)
			if err != nil || len(out) != len(doc) {
				b.Fatal(err)
			}
			decode(b)
		}
	})
	b.Run("jsonschema-go+unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := validateRef(rs, doc); err != nil {
				b.Fatal(err)
			}
			decode(b)
		}
	})
}

// validateRef validates as the MCP SDK does: decode into a map, validate.
func validateRef(rs *jsonschema.Resolved, doc []byte) error {
	var m any = map[string]any{}
	if err := json.Unmarshal(doc, &m); err != nil {
		return err
	}
	return rs.Validate(&m)
}

// BenchmarkValidate measures Validate alone on documents of several sizes.
func BenchmarkValidate(b *testing.B) {
	v := mustCompile(b, echoSchema)
	for _, n := range []int{1, 50, 1000} {
		doc := echoDoc(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if err := v.Validate(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
