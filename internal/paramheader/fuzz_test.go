package paramheader

import (
	"encoding/json"
	"net/http"
	"testing"
)

// FuzzAgree checks that any header value against any arguments
// is answered without a panic, with a bounded message that never echoes
// the header, and that what is accepted agrees: a string argument equals
// the header's decoded value.
func FuzzAgree(f *testing.F) {
	for _, seed := range [][2]string{
		{"eu", `{"region":"eu"}`},
		{"=?base64?WsO8cmljaA==?=", `{"region":"Zürich"}`},
		{"=?base64?SGVsbG8?=", `{"region":"Hello"}`},
		{"7", `{"region":7}`},
		{"true", `{"region":true}`},
		{"", `{"region":null}`},
		{"x", `[1,2]`},
		{"9007199254740993", `{"region":9007199254740993}`},
		{"1e400", `{"region":{"a":1}}`},
	} {
		f.Add(seed[0], seed[1])
	}
	params := []Param{{Header: "Mcp-Param-Region", Path: []string{"region"}}, {Header: "Mcp-Param-Deep", Path: []string{"a", "b"}}}
	f.Fuzz(func(t *testing.T, value, args string) {
		h := http.Header{}
		if value != "" {
			h.Set("Mcp-Param-Region", value)
		}
		err := Agree(h, json.RawMessage(args), params, true)
		if err != nil {
			if len(err.Error()) > 200 {
				t.Errorf("a %d-byte message", len(err.Error()))
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) != nil {
			return
		}
		var s string
		if raw, ok := obj["region"]; ok && json.Unmarshal(raw, &s) == nil {
			if got, _ := Decode(value); got != s {
				t.Errorf("accepted header %q for region %q", value, s)
			}
		}
	})
}
