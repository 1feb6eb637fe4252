package schema

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// A decimal is a non-negative number m × 10^exp, for multipleOf. The
// specification asks whether the quotient is an integer; jsonschema-go
// divides float64s, which rejects 19.99 as a multiple of 0.01 (and accepts
// 1e21 as a multiple of 3). This package divides exactly, as the JSON text
// says.
type decimal struct {
	m   uint64
	exp int
}

// maxExp bounds the exponents handled with machine integers.
const maxExp = 1000

// parseDecimal returns the absolute value of the well-formed number literal
// s as a decimal, and false if its significant digits do not fit a uint64
// or its exponent is extreme.
func parseDecimal(s []byte) (decimal, bool) {
	var d decimal
	i := 0
	if s[0] == '-' {
		i++
	}
	digits := 0
	frac := false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			frac = true
			continue
		case c == 'e' || c == 'E':
			e, err := strconv.Atoi(string(s[i+1:]))
			if err != nil || e > maxExp || e < -maxExp {
				return d, false
			}
			d.exp += e
			i = len(s)
			continue
		}
		if frac {
			d.exp--
		}
		if c == '0' && d.m == 0 {
			continue // a leading zero
		}
		if digits == 19 {
			return d, false
		}
		d.m = d.m*10 + uint64(c-'0')
		digits++
	}
	if d.m == 0 {
		return decimal{}, true
	}
	for d.m%10 == 0 {
		d.m /= 10
		d.exp++
	}
	return d, true
}

// multipleOf reports whether a is an integer multiple of b (b > 0).
func (a decimal) multipleOf(b decimal) bool {
	if a.m == 0 {
		return true
	}
	e := a.exp - b.exp
	if e >= 0 {
		// a.m × 10^e / b.m is an integer iff what is left of b.m, once
		// its common factors with a.m are divided out, divides 10^e: it
		// is 2^x × 5^y with x, y <= e.
		r := b.m / gcd(a.m, b.m)
		x, y := 0, 0
		for r%2 == 0 {
			r /= 2
			x++
		}
		for r%5 == 0 {
			r /= 5
			y++
		}
		return r == 1 && x <= e && y <= e
	}
	// a.m / (b.m × 10^-e) is an integer iff the divisor divides a.m.
	div := b.m
	for range -e {
		hi, lo := bits.Mul64(div, 10)
		if hi != 0 || lo > a.m {
			return false // the divisor exceeds a.m, which is not 0
		}
		div = lo
	}
	return a.m%div == 0
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// bigMultipleOf is multipleOf for numbers that do not fit a decimal.
func bigMultipleOf(a, b []byte) bool {
	x, ok1 := new(big.Rat).SetString(string(a))
	y, ok2 := new(big.Rat).SetString(string(b))
	if !ok1 || !ok2 || y.Sign() == 0 {
		return false
	}
	return x.Quo(x, y).IsInt()
}

// isMultiple reports whether the number raw, whose float64 value is f, is
// a multiple of n's multipleOf.
func (n *node) isMultiple(raw []byte, f float64) bool {
	if n.multipleOf == 0 {
		// Not a valid schema; jsonschema-go's division rejects every number.
		_, frac := math.Modf(f / n.multipleOf)
		return frac == 0
	}
	if n.mulFits {
		if a, ok := parseDecimal(raw); ok {
			return a.multipleOf(n.mulDec)
		}
	}
	return bigMultipleOf(raw, []byte(n.multipleOfText))
}
