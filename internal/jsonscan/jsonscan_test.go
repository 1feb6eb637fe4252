package jsonscan

import "testing"

func TestValue(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int // index after the first value
	}{
		{`"a\"b",1`, 6},
		{`{"a":[1,{"b":"}"}]} x`, 19},
		{`[1,2] `, 5},
		{`12.5e3,`, 6},
		{`true}`, 4},
		{`"unterminated`, 13},
		{`{"open":`, 8},
	} {
		if got := Value([]byte(tt.text), 0); got != tt.want {
			t.Errorf("Value(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	if got := Space([]byte(" \t\r\n x"), 0); got != 5 {
		t.Errorf("Space = %d, want 5", got)
	}
}
