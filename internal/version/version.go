// Package version compares the version strings of mcpkit tools.
package version

import "strings"

// Compare returns -1, 0 or +1 as a is lower than, equal to or higher than b.
//
// Versions are split at dots. Two parts that are both decimal numbers compare
// as numbers ("10" > "9", "010" == "10"); otherwise parts compare as strings.
// A version that runs out of parts first is the lower ("1.2" < "1.2.0"), and
// the empty version is lower than every other. A leading "v" is ignored.
func Compare(a, b string) int {
	if a == b {
		return 0
	}
	a, b = strings.TrimPrefix(a, "v"), strings.TrimPrefix(b, "v")
	for a != "" || b != "" {
		if a == "" {
			return -1
		}
		if b == "" {
			return +1
		}
		var pa, pb string
		pa, a, _ = strings.Cut(a, ".")
		pb, b, _ = strings.Cut(b, ".")
		if c := comparePart(pa, pb); c != 0 {
			return c
		}
	}
	return 0
}

func comparePart(a, b string) int {
	if isDigits(a) && isDigits(b) {
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return +1
		}
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
