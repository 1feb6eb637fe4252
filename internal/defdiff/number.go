package defdiff

import (
	"encoding/json"
	"strconv"
	"strings"
)

func isNumber(v any) bool {
	_, ok := v.(json.Number)
	return ok
}

// compareNumbers returns -1, 0 or +1 as the JSON number a is less than,
// equal to or greater than b, exactly, and false if either is not a number
// in the canonical form of canonicalNumber.
func compareNumbers(a, b any) (int, bool) {
	x, ok1 := a.(json.Number)
	y, ok2 := b.(json.Number)
	if !ok1 || !ok2 {
		return 0, false
	}
	p, ok1 := parseNumber(string(x))
	q, ok2 := parseNumber(string(y))
	if !ok1 || !ok2 {
		return 0, false
	}
	return p.cmp(q), true
}

// A number is ±0.digits × 10^point, digits without leading or trailing
// zeros; zero has no digits.
type number struct {
	neg    bool
	digits string
	point  int
}

// parseNumber reads a number that canonicalNumber wrote.
func parseNumber(s string) (number, bool) {
	var n number
	s, n.neg = strings.CutPrefix(s, "-")
	mant, expText, hasExp := strings.Cut(s, "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil || e > maxExponent || e < -maxExponent {
			return n, false
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	lead := len(intPart+frac) - len(digits)
	n.digits = strings.TrimRight(digits, "0")
	n.point = len(intPart) - lead + exp
	if n.digits == "" {
		return number{}, true
	}
	return n, true
}

func (a number) cmp(b number) int {
	switch {
	case a.digits == "" && b.digits == "":
		return 0
	case a.digits == "":
		return b.sign() * -1
	case b.digits == "":
		return a.sign()
	case a.neg != b.neg:
		return a.sign()
	}
	c := 0
	switch {
	case a.point != b.point:
		c = 1
		if a.point < b.point {
			c = -1
		}
	default:
		c = strings.Compare(a.digits, b.digits)
	}
	if a.neg {
		return -c
	}
	return c
}

func (a number) sign() int {
	if a.neg {
		return -1
	}
	return 1
}
