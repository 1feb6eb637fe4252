// Package version orders the version strings of mcpkit tools.
//
// From lowest to highest:
//
//  1. the empty version (an unversioned tool);
//  2. semver-like versions: an optional "v", one or more dot-separated
//     decimal numbers, an optional "-" pre-release and an optional "+" build
//     suffix ("1", "v1.2", "2.0.0-rc.1", "1.4.2+linux"). Numbers compare as
//     numbers ("1.10" > "1.9"), missing parts count as zero ("1.2" and
//     "1.2.0" rank alike), a pre-release ranks below its release and
//     pre-releases compare by semver's rules; build suffixes do not rank;
//  3. every other string ("beta", "2024-06", "1.x"), compared byte-wise.
//
// Versions that rank alike but are spelled differently ("1.2", "1.2.0",
// "v1.2") are put in byte-wise order, so Compare is a total order and
// returns 0 only for equal strings.
package version

import (
	"strings"
)

// Compare returns -1, 0 or +1 as a is lower than, equal to or higher than
// b, in the order of the package documentation.
func Compare(a, b string) int {
	if a == b {
		return 0
	}
	if c := Rank(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// Rank is Compare without the final tie-break: it returns 0 for versions
// that rank alike ("1.2" and "v1.2.0").
func Rank(a, b string) int {
	ka, kb := kind(a), kind(b)
	if ka != kb {
		if ka < kb {
			return -1
		}
		return +1
	}
	switch ka {
	case kindNone:
		return 0
	case kindOther:
		return strings.Compare(a, b)
	}
	return compareSemver(a, b)
}

const (
	kindNone = iota
	kindSemver
	kindOther
)

func kind(v string) int {
	switch {
	case v == "":
		return kindNone
	case IsSemver(v):
		return kindSemver
	}
	return kindOther
}

// IsSemver reports whether v is semver-like: an optional "v", dot-separated
// decimal numbers, an optional "-" pre-release of dot-separated
// alphanumeric identifiers, and an optional "+" build suffix.
func IsSemver(v string) bool {
	core, pre, build := split(v)
	if !allParts(core, isDigits) {
		return false
	}
	if pre != nil && !allParts(*pre, isIdent) {
		return false
	}
	return build == nil || allParts(*build, isIdent)
}

// split cuts a version into its numeric core, its pre-release and its build
// suffix; a nil pre-release or build means the version has none.
func split(v string) (core string, pre, build *string) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexByte(v, '+'); i >= 0 {
		b := v[i+1:]
		build, v = &b, v[:i]
	}
	if i := strings.IndexByte(v, '-'); i >= 0 {
		p := v[i+1:]
		pre, v = &p, v[:i]
	}
	return v, pre, build
}

func compareSemver(a, b string) int {
	ca, pa, _ := split(a)
	cb, pb, _ := split(b)
	for ca != "" || cb != "" {
		var x, y string
		x, ca, _ = strings.Cut(ca, ".")
		y, cb, _ = strings.Cut(cb, ".")
		if c := compareNumbers(x, y); c != 0 {
			return c
		}
	}
	switch {
	case pa == nil && pb == nil:
		return 0
	case pa == nil:
		return +1 // a release ranks above its pre-releases
	case pb == nil:
		return -1
	}
	return comparePre(*pa, *pb)
}

// comparePre compares pre-releases as semver does: identifier by
// identifier, numbers numerically and below words, and a shorter list of
// equal identifiers first.
func comparePre(a, b string) int {
	for a != "" || b != "" {
		if a == "" {
			return -1
		}
		if b == "" {
			return +1
		}
		var x, y string
		x, a, _ = strings.Cut(a, ".")
		y, b, _ = strings.Cut(b, ".")
		nx, ny := isDigits(x), isDigits(y)
		var c int
		switch {
		case nx && ny:
			c = compareNumbers(x, y)
		case nx:
			c = -1
		case ny:
			c = +1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// compareNumbers compares two strings of decimal digits of any length; an
// empty string counts as zero.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return +1
	}
	return strings.Compare(a, b)
}

func allParts(s string, ok func(string) bool) bool {
	for {
		part, rest, more := strings.Cut(s, ".")
		if !ok(part) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
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

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// Major returns the first number of a semver-like version ("2" for
// "v2.1.0"), or the whole version when it is not semver-like. Two versions
// with different Majors are, by convention, allowed to break compatibility.
func Major(v string) string {
	if !IsSemver(v) {
		return v
	}
	core, _, _ := split(v)
	major, _, _ := strings.Cut(core, ".")
	if t := strings.TrimLeft(major, "0"); t != "" {
		return t
	}
	return "0"
}
