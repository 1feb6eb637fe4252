package paramheader

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
)

func TestOf(t *testing.T) {
	s := json.RawMessage(`{"type":"object","properties":{
		"zone":{"type":"integer","x-mcp-header":"Zone"},
		"where":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}},
		"note":{"type":"string"}}}`)
	got := Of(s)
	want := []Param{{Header: "Mcp-Param-Region", Path: []string{"where", "region"}}, {Header: "Mcp-Param-Zone", Path: []string{"zone"}}}
	if len(got) != len(want) {
		t.Fatalf("Of = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Header != want[i].Header || !slices.Equal(got[i].Path, want[i].Path) {
			t.Errorf("Of[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if Of(json.RawMessage(`{"type":"object"}`)) != nil {
		t.Error("Of found headers in a schema without annotations")
	}
}

func TestCheck(t *testing.T) {
	for schema, ok := range map[string]bool{
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`:                                          true,
		`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`:                                          false,
		`{"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`:                                 false,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`:                                        false,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`:                                           false,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`: false,
	} {
		if err := Check(json.RawMessage(schema)); (err == nil) != ok {
			t.Errorf("Check(%s) = %v, want ok=%v", schema, err, ok)
		}
	}
}

// The decoder is strict: the value Request.ParamHeader reports is the one
// Agree accepted.
func TestDecode(t *testing.T) {
	for in, want := range map[string]struct {
		v  string
		ok bool
	}{
		"eu":                      {"eu", true},
		"=?base64?WsO8cmljaA==?=": {"Zürich", true},
		"=?base64?WsO8cmljaA?=":   {"", false}, // padding is required
		"=?base64?WsO8cmljaB==?=": {"", false}, // not canonical
		"=?base64?abc":            {"=?base64?abc", true},
		"=?base64?SGVs!!!bG8=?=":  {"", false},
		"":                        {"", true},
	} {
		v, ok := Decode(in)
		if v != want.v || ok != want.ok {
			t.Errorf("Decode(%q) = %q, %v; want %q, %v", in, v, ok, want.v, want.ok)
		}
	}
}

func TestAgreeRequired(t *testing.T) {
	params := []Param{{Header: "Mcp-Param-Region", Path: []string{"region"}}}
	args := json.RawMessage(`{"region":"eu"}`)
	if err := Agree(http.Header{}, args, params, true); !errors.Is(err, ErrMismatch) {
		t.Errorf("a missing header, required: %v", err)
	}
	if err := Agree(http.Header{}, args, params, false); err != nil {
		t.Errorf("a missing header, not required: %v", err)
	}
	h := http.Header{"Mcp-Param-Region": {"us"}}
	if err := Agree(h, args, params, false); !errors.Is(err, ErrMismatch) {
		t.Errorf("a header that disagrees, not required: %v", err)
	}
}
