package version

import "testing"

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "1", -1},
		{"1", "", +1},
		{"1", "1", 0},
		{"1.9", "1.10", -1},
		{"1.10", "1.9", +1},
		{"010", "10", 0},
		{"v2", "1.5", +1},
		{"v1.2", "1.2", 0},
		{"1.2", "1.2.0", -1},
		{"1.2.0", "1.2", +1},
		{"beta", "alpha", +1},
		{"1.a", "1.b", -1},
		{"2", "10", -1},
		{"1..2", "1.0.2", -1}, // an empty part is not a number: "" < "0" as strings
	}
	for _, tt := range tests {
		if got := Compare(tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Compare(tt.b, tt.a); got != -tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d (antisymmetry)", tt.b, tt.a, got, -tt.want)
		}
	}
}

func FuzzCompare(f *testing.F) {
	for _, s := range []string{"", "1", "1.10", "v2.0.1", "a.b", "1..2", "007"} {
		f.Add(s, "1.2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := Compare(a, b), Compare(b, a)
		if ab != -ba {
			t.Fatalf("Compare(%q,%q)=%d but Compare(%q,%q)=%d", a, b, ab, b, a, ba)
		}
		if Compare(a, a) != 0 {
			t.Fatalf("Compare(%q,%q) != 0", a, a)
		}
	})
}
