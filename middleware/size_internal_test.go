package middleware

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestJSONStringLen checks the escaping arithmetic against encoding/json for
// every character of the BMP, a sample of the others, and invalid UTF-8.
func TestJSONStringLen(t *testing.T) {
	check := func(s string) {
		t.Helper()
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonStringLen(s), len(data)-2; got != want {
			t.Fatalf("jsonStringLen(%q) = %d, encoding/json writes %d bytes: %s", s, got, want, data)
		}
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r > 0xffff && r%251 != 0 {
			continue // above the BMP, every character takes 4 bytes: a sample does
		}
		check(string(r))
	}
	for b := 0x80; b <= 0xff; b++ {
		check(string([]byte{byte(b)}))
		check("a" + string([]byte{byte(b)}) + "b")
	}
	check("\xe2\x82") // a truncated three-byte sequence
	check(`mixed <b>&"quotes"` + "\n\t\u2028 héllo 世界 \x00")
}

func TestJSONPrefix(t *testing.T) {
	tests := []struct {
		s     string
		limit int
		want  string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"héllo", 2, "h"}, // é takes 2 bytes
		{"héllo", 3, "hé"},
		{"a<b", 2, "a"}, // < is \u003c, 6 bytes
		{"a<b", 7, "a<"},
		{"世界", 5, "世"},
		{"a\nb", 2, "a"},
		{"a\nb", 3, "a\n"},
	}
	for _, tt := range tests {
		if got := jsonPrefix(tt.s, tt.limit); got != tt.want {
			t.Errorf("jsonPrefix(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
		if !strings.HasPrefix(tt.s, tt.want) {
			t.Errorf("%q is not a prefix of %q", tt.want, tt.s)
		}
	}
}
