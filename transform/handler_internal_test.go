package transform

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendString: appendString writes the JSON string that encoding/json
// reads back as json.Marshal's would be read: the same value.
func TestAppendString(t *testing.T) {
	cases := []string{"", "alice", `quote " and \ backslash`, "tab\tnew\nline\rcr", "\x00\x01\x1f\x7f",
		"ünïcödé 日本 😀", "\u2028\u2029", "bad \xff utf-8 \xe2\x82", "<html>&amp;</html>", "\ufffd"}
	for b := range 256 {
		cases = append(cases, string(rune(b)), string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	cases = append(cases, strings.Repeat("x\"", 100))
	for _, s := range cases {
		got := appendString([]byte("prefix"), s)
		if !strings.HasPrefix(string(got), "prefix") {
			t.Fatalf("%q: the prefix is gone: %q", s, got)
		}
		got = got[len("prefix"):]
		var fromUs, fromJSON string
		if err := json.Unmarshal(got, &fromUs); err != nil {
			t.Fatalf("%q: wrote %s, not a JSON string: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		json.Unmarshal(want, &fromJSON)
		if fromUs != fromJSON {
			t.Errorf("%q: wrote %s, which reads %q; json.Marshal's reads %q", s, got, fromUs, fromJSON)
		}
	}
}
