package version

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "1", -1},
		{"", "beta", -1},
		{"1", "1", 0},
		{"1.9", "1.10", -1},
		{"2", "10", -1},
		{"010", "10", -1}, // rank alike; byte order breaks the tie
		{"v2", "1.5", +1},
		{"v1.2", "1.2", +1}, // rank alike; byte order
		{"1.2", "1.2.0", -1},
		{"1.2.1", "1.2", +1},
		{"2.0.0-rc.1", "2.0.0", -1},
		{"2.0.0-rc.1", "2.0.0-rc.2", -1},
		{"2.0.0-rc.2", "2.0.0-rc.10", -1},
		{"1.0.0-alpha", "1.0.0-alpha.1", -1},
		{"1.0.0-1", "1.0.0-alpha", -1}, // numeric identifiers below words
		{"1.0.0-beta", "1.0.0-alpha.beta", +1},
		{"1.0.0+linux", "1.0.0+mac", -1}, // build ignored, then byte order
		{"beta", "alpha", +1},
		{"beta", "99.0", +1}, // non-semver strings rank above semver ones
		{"1.a", "2", +1},
		{"1..2", "1.0.2", +1},   // "1..2" is not semver-like
		{"2024-06", "2024", -1}, // a pre-release of 2024
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

func TestRankAlike(t *testing.T) {
	for _, pair := range [][2]string{{"1.2", "1.2.0"}, {"v1.2", "1.2"}, {"010", "10"}, {"1.0+a", "1.0+b"}} {
		if r := Rank(pair[0], pair[1]); r != 0 {
			t.Errorf("Rank(%q, %q) = %d, want 0", pair[0], pair[1], r)
		}
	}
}

func TestSortedOrder(t *testing.T) {
	want := []string{"", "0.9", "1.0.0-rc.1", "1", "1.0.0", "v1.1", "1.10", "2", "alpha", "latest"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, Compare)
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %q, want %q", got, want)
	}
}

func TestMajor(t *testing.T) {
	for v, want := range map[string]string{"v2.1.0": "2", "1": "1", "0.3": "0", "007.1": "7", "beta": "beta", "": ""} {
		if got := Major(v); got != want {
			t.Errorf("Major(%q) = %q, want %q", v, got, want)
		}
	}
}

func FuzzCompare(f *testing.F) {
	for _, s := range []string{"", "1", "1.10", "v2.0.1", "a.b", "1..2", "007", "1.0.0-rc.1+b", "v", "-", "+"} {
		f.Add(s, "1.2", "2.0-beta")
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ab, ba := Compare(a, b), Compare(b, a)
		if ab != -ba {
			t.Fatalf("Compare(%q,%q)=%d but Compare(%q,%q)=%d", a, b, ab, b, a, ba)
		}
		if (ab == 0) != (a == b) {
			t.Fatalf("Compare(%q,%q)=%d", a, b, ab)
		}
		if ab < 0 && Compare(b, c) < 0 && Compare(a, c) >= 0 {
			t.Fatalf("not transitive: %q < %q < %q but Compare(a,c)=%d", a, b, c, Compare(a, c))
		}
	})
}
