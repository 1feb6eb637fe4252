package tasks

import "testing"

func TestStatusText(t *testing.T) {
	for _, tt := range []struct {
		done, total float64
		message     string
		want        string
	}{
		{1, 3, "indexing", "indexing (1/3)"},
		{0.5, 1, "", "0.5/1"},
		{42, 0, "rows", "rows (42)"},
		{0, 0, "starting", "starting"},
		{0, 0, "", ""},
	} {
		if got := statusText(tt.done, tt.total, tt.message); got != tt.want {
			t.Errorf("statusText(%v, %v, %q) = %q, want %q", tt.done, tt.total, tt.message, got, tt.want)
		}
	}
}
