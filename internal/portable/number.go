package portable

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// rat returns the exact value of n, or nil when n is not a number that
// big.Rat reads (it reads every JSON number) or when its exponent is so
// large that the exact value would take megabytes (1e999999999).
func rat(n json.Number) *big.Rat {
	if i := strings.IndexAny(string(n), "eE"); i >= 0 {
		if e, err := strconv.Atoi(strings.TrimPrefix(string(n[i+1:]), "+")); err != nil || e > 400 || e < -400 {
			return nil
		}
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

func numEqual(a, b json.Number) bool {
	ra, rb := rat(a), rat(b)
	if ra == nil || rb == nil {
		return a == b
	}
	return ra.Cmp(rb) == 0
}

// isInteger reports whether n is mathematically an integer (1, 1.0, 1e2),
// which is what JSON Schema's "integer" admits.
func isInteger(n json.Number) bool {
	r := rat(n)
	return r != nil && r.IsInt()
}

// tighter returns whichever of a and b is the stronger bound: the larger
// for a lower bound (lower is true), the smaller for an upper one. An
// empty number is no bound.
func tighter(a, b json.Number, lower bool) json.Number {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	ra, rb := rat(a), rat(b)
	if ra == nil || rb == nil {
		return a
	}
	if c := ra.Cmp(rb); lower == (c < 0) {
		return b
	}
	return a
}

// nextInteger returns the least integer greater than n, for turning an
// exclusive lower bound on integers into an inclusive one; prevInteger is
// its mirror. ok is false when n is not a number.
func nextInteger(n json.Number) (json.Number, bool) {
	r := rat(n)
	if r == nil {
		return "", false
	}
	q := new(big.Int).Quo(r.Num(), r.Denom()) // truncated toward zero
	if r.Sign() >= 0 || r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return json.Number(q.String()), true
}

func prevInteger(n json.Number) (json.Number, bool) {
	r := rat(n)
	if r == nil {
		return "", false
	}
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if r.Sign() <= 0 || r.IsInt() {
		q.Sub(q, big.NewInt(1))
	}
	return json.Number(q.String()), true
}
