package spell

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	known := []string{"minimum", "maximum", "description", "json", "format", "enum", "properties", "omitempty"}
	for _, tt := range []struct {
		word, want string
		ok         bool
	}{
		{"mininum", "minimum", true},
		{"Minimum", "minimum", true},
		{"descripton", "description", true},
		{"jsn", "json", true},
		{"sjon", "json", true},
		{"propertees", "properties", true},
		{"omitempy", "omitempty", true},
		{"minimum", "", false}, // known
		{"form", "", false},    // gin's tag, two edits from format
		{"env", "", false},     // two edits from enum
		{"yaml", "", false},
		{"validate", "", false},
		{"x-mcp-header", "", false},
		{"", "", false},
	} {
		got, ok := Suggest(tt.word, known)
		if got != tt.want && tt.ok || ok != tt.ok {
			t.Errorf("Suggest(%q) = %q, %v; want %q, %v", tt.word, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzSuggest(f *testing.F) {
	for _, s := range []string{"mininum", "", "\xff\xfe", "propertiesproperties"} {
		f.Add(s)
	}
	known := []string{"minimum", "properties", "a"}
	f.Fuzz(func(t *testing.T, word string) {
		got, ok := Suggest(word, known)
		if !ok {
			return
		}
		if word == got {
			t.Errorf("suggested %q for itself", word)
		}
		if d := distance(strings.ToLower(word), strings.ToLower(got)); d > 2 {
			t.Errorf("suggested %q for %q, %d edits away", got, word, d)
		}
	})
}
