package middleware

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// byteTokens counts a token per byte, so that tests can say exactly what
// fits.
var byteTokens = TokenEstimatorFunc(func(s string) int { return len(s) })

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{"hello, world", 3},
		{"世界", 2},       // one per character outside ASCII
		{"héllo", 2},    // 4 ASCII bytes, 1 other character
		{"👍🏽", 2},       // two code points
		{"\xff\xfe", 2}, // invalid bytes count as characters
		{strings.Repeat("x", 4000), 1000},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.text); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	// Eight bytes at a time and one at a time agree, at every alignment.
	mixed := strings.Repeat("ascii é 世界 👍🏽 \xff\x80 plain ", 20)
	for i := range 16 {
		s := mixed[i:]
		ascii, other := 0, 0
		for j := 0; j < len(s); j++ {
			switch {
			case s[j] < utf8.RuneSelf:
				ascii++
			case utf8.RuneStart(s[j]):
				other++
			}
		}
		want := (ascii+3)/4 + other
		if got := EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(mixed[%d:]) = %d, want %d", i, got, want)
		}
		if got := estimateTokens([]byte(s)); got != want {
			t.Errorf("estimateTokens([]byte(mixed[%d:])) = %d, want %d", i, got, want)
		}
	}
	// Monotone in the prefix, as TokenEstimator requires.
	s := "naïve café 世界 plain ascii 👍 end"
	for i := range len(s) {
		if EstimateTokens(s[:i]) > EstimateTokens(s[:i+1]) {
			t.Fatalf("EstimateTokens(%q) > EstimateTokens(%q)", s[:i], s[:i+1])
		}
	}
}

func TestCutText(t *testing.T) {
	tests := []struct {
		name string
		s    string
		room int
		want string
	}{
		{"fits", "short", 10, "short"},
		{"no room", "short", 0, ""},
		{"line", "first line\nsecond line\nthird line", 27, "first line\nsecond line"},
		{"crlf", "first line\r\nsecond line\r\nthird", 28, "first line\r\nsecond line"},
		{"word when the line would lose too much", "one line only\nthen a much longer line of words", 40, "one line only\nthen a much longer line of"},
		{"word", "alpha beta gamma delta", 14, "alpha beta"},
		{"characters when the word would lose too much", "aa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 20, "aa bbbbbbbbbbbbbbbbb"},
		{"never inside a UTF-8 sequence", "世界世界世界", 8, "世界"},
		{"never inside a UTF-8 sequence at one byte", "é", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cutText(tt.s, tt.room, byteTokens)
			if got != tt.want {
				t.Errorf("cutText(%q, %d) = %q, want %q", tt.s, tt.room, got, tt.want)
			}
			if !utf8.ValidString(got) || !strings.HasPrefix(tt.s, got) || len(got) > max(tt.room, 0) {
				t.Errorf("cutText(%q, %d) = %q: not a valid prefix within room", tt.s, tt.room, got)
			}
		})
	}
}

func TestScanArrays(t *testing.T) {
	doc := `{"a": [1, [2, 3], {"b": []}], "x/y~z": ["]", "\"[", {"c": [true]}], "n": null}`
	type arr struct {
		ptr string
		n   int
	}
	var got []arr
	for _, a := range scanArrays([]byte(doc)) {
		got = append(got, arr{a.ptr, len(a.ends)})
		if doc[a.open] != '[' || doc[a.close] != ']' {
			t.Errorf("%s: open %d, close %d are not brackets", a.ptr, a.open, a.close)
		}
	}
	want := []arr{{"/a", 3}, {"/a/1", 2}, {"/a/2/b", 0}, {"/x~1y~0z", 3}, {"/x~1y~0z/2/c", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("arrays = %v, want %v", got, want)
	}
	root := scanArrays([]byte(` [ {"k": [1]} , 2 ] `))
	if len(root) != 2 || root[0].ptr != "" || root[1].ptr != "/0/k" {
		t.Errorf("root array: %+v", root)
	}
}

// FuzzCut checks that cutting any array of a valid document to any length
// leaves valid JSON whose array has that length.
func FuzzCut(f *testing.F) {
	for _, s := range []string{`[]`, `[1,2,3]`, `{"a":[{"b":[1,2]},"]"],"c":[[],[[]]]}`, ` [ "x" , [ 1 ] ] `, `{"\u0041\"":[1]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := []byte(s)
		if !json.Valid(doc) {
			return
		}
		arrays := scanArrays(doc)
		for _, a := range arrays {
			for k := range len(a.ends) + 1 {
				out := a.cut(doc, k)
				if !json.Valid(out) {
					t.Fatalf("cutting %s of %s to %d: %s is not JSON", a.ptr, doc, k, out)
				}
				for _, b := range scanArrays(out) {
					if b.ptr == a.ptr && len(b.ends) != k {
						t.Fatalf("cutting %s of %s to %d: it has %d elements: %s", a.ptr, doc, k, len(b.ends), out)
					}
				}
			}
		}
	})
}
