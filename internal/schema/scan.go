package schema

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth is the deepest nesting of arrays and objects accepted, the same
// limit as encoding/json's, so that a document the handler can decode is one
// this package can scan and the other way round.
const maxDepth = 10000

// isSpace reports whether c is JSON whitespace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

// skipSpace returns the index of the first non-whitespace byte of d at or
// after i, or len(d).
func skipSpace(d []byte, i int) int {
	for i < len(d) && d[i] <= ' ' && isSpace(d[i]) {
		i++
	}
	return i
}

// isNullDoc reports whether d is the JSON literal null, with any whitespace.
func isNullDoc(d []byte) bool {
	i := skipSpace(d, 0)
	return len(d)-i >= 4 && string(d[i:i+4]) == "null" && skipSpace(d, i+4) == len(d)
}

// plainByte[c] is 1 for the bytes that may appear in a JSON string as they
// are: not a quote, a backslash or a control character. A constant, so
// that it cannot change.
const plainByte = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"

// scanString scans the JSON string whose opening quote is at d[i]. It
// returns the index just past the closing quote, whether the contents are
// "plain" (no escapes, valid UTF-8: the raw bytes are the decoded string), or
// a negative index and a message if the string is malformed.
func scanString(d []byte, i int) (end int, plain bool, msg string) {
	j := i + 1
	var hi byte
	escaped := false
	for {
		for j < len(d) && plainByte[d[j]] != 0 {
			hi |= d[j]
			j++
		}
		if j >= len(d) {
			return -1, false, "unterminated string"
		}
		switch c := d[j]; {
		case c == '"':
			plain = !escaped && (hi < utf8.RuneSelf || utf8.Valid(d[i+1:j]))
			return j + 1, plain, ""
		case c < 0x20:
			return -1, false, "control character in string"
		}
		// A backslash.
		escaped = true
		if j+1 >= len(d) {
			return -1, false, "unterminated string"
		}
		switch d[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if j+6 > len(d) {
				return -1, false, "unterminated string"
			}
			for _, h := range d[j+2 : j+6] {
				if !isHex(h) {
					return -1, false, "invalid \\u escape in string"
				}
			}
			j += 6
		default:
			return -1, false, "invalid escape in string"
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) rune {
	switch {
	case c <= '9':
		return rune(c - '0')
	case c >= 'a':
		return rune(c - 'a' + 10)
	default:
		return rune(c - 'A' + 10)
	}
}

// u4 decodes the \uXXXX escape at s[0:6], or returns -1.
func u4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		if !isHex(c) {
			return -1
		}
		r = r<<4 | hexVal(c)
	}
	return r
}

// appendUnquoted appends to dst the decoded contents of a well-formed JSON
// string body s (without its quotes), decoding as encoding/json does: escapes
// are resolved, a lone or mismatched surrogate and each byte of invalid UTF-8
// become U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := u4(s[i:])
				i += 6
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, u4(s[i:])); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						i += 6
						continue
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}

// Number literal shapes reported by scanNumber.
const (
	numInt   = iota // digits only: always an integer value
	numFloat        // has a fraction or an exponent
)

// scanNumber scans the JSON number at d[i]. It returns the index just past
// it and its shape, or a negative index if it is malformed.
func scanNumber(d []byte, i int) (end, shape int) {
	j := i
	if j < len(d) && d[j] == '-' {
		j++
	}
	switch {
	case j < len(d) && d[j] == '0':
		j++
	case j < len(d) && '1' <= d[j] && d[j] <= '9':
		j++
		for j < len(d) && '0' <= d[j] && d[j] <= '9' {
			j++
		}
	default:
		return -1, 0
	}
	shape = numInt
	if j < len(d) && d[j] == '.' {
		j++
		k := j
		for j < len(d) && '0' <= d[j] && d[j] <= '9' {
			j++
		}
		if j == k {
			return -1, 0
		}
		shape = numFloat
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		k := j
		for j < len(d) && '0' <= d[j] && d[j] <= '9' {
			j++
		}
		if j == k {
			return -1, 0
		}
		shape = numFloat
	}
	return j, shape
}

// parseNumber returns the float64 value of the well-formed number literal
// s, as encoding/json decodes it into an any, and false if it is out of the
// range of a float64 (which encoding/json rejects).
func parseNumber(s []byte, shape int) (float64, bool) {
	if shape == numInt {
		digits := s
		neg := s[0] == '-'
		if neg {
			digits = s[1:]
		}
		// Up to 15 digits are exact in a float64, so this gives
		// ParseFloat's result without its cost.
		if len(digits) <= 15 {
			var n int64
			for _, c := range digits {
				n = n*10 + int64(c-'0')
			}
			f := float64(n)
			if neg {
				f = math.Copysign(f, -1) // keeps -0, as ParseFloat does
			}
			return f, true
		}
	}
	if mayOverflow(s, shape) && overflows(s) {
		// Found without ParseFloat, whose error allocates: a document
		// of many such numbers must cost nothing per number.
		if s[0] == '-' {
			return math.Inf(-1), false
		}
		return math.Inf(1), false
	}
	// ParseFloat keeps no reference to its argument (its errors copy it),
	// so the bytes need not be copied into a string.
	f, err := strconv.ParseFloat(unsafe.String(&s[0], len(s)), 64)
	return f, err == nil
}

// mayOverflow reports whether the number literal s (of the given shape)
// could be out of a float64's range, so that it must be parsed to find out.
func mayOverflow(s []byte, shape int) bool {
	return shape == numFloat || len(s) > 300
}

// float64Limit holds the digits of 2^1024 - 2^970, halfway between the
// largest float64 and 2^1024: the least magnitude that rounds to infinity
// (the tie goes to the even 2^1024), as 0.float64Limit × 10^309.
const float64Limit = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792"

// overflows reports whether the well-formed number literal s is beyond the
// range of a float64: whether its magnitude is at least float64Limit.
func overflows(s []byte) bool {
	i := 0
	if s[0] == '-' {
		i++
	}
	m := i // the end of the mantissa
	for m < len(s) && s[m] != 'e' && s[m] != 'E' {
		m++
	}
	exp := 0
	if m < len(s) {
		j := m + 1
		neg := s[j] == '-'
		if s[j] == '+' || neg {
			j++
		}
		for ; j < len(s) && exp < 1e6; j++ { // saturating: 1e6 is beyond any float64
			exp = exp*10 + int(s[j]-'0')
		}
		if neg {
			exp = -exp
		}
	}
	// The magnitude is 0.d × 10^k, d the digits from the first that is
	// not zero.
	first, k, point := -1, 0, false
	for j := i; j < m; j++ {
		switch c := s[j]; {
		case c == '.':
			point = true
		case first < 0 && c == '0':
			if point {
				k--
			}
		default:
			if first < 0 {
				first = j
			}
			if !point {
				k++
			}
		}
	}
	if first < 0 {
		return false // zero
	}
	switch k += exp; {
	case k < len(float64Limit):
		return false
	case k > len(float64Limit):
		return true
	}
	t := 0
	for j := first; j < m; j++ {
		if s[j] == '.' {
			continue
		}
		if s[j] != float64Limit[t] {
			return s[j] > float64Limit[t]
		}
		if t++; t == len(float64Limit) {
			return true // equal to the limit so far: at least the limit
		}
	}
	return false // a prefix of the limit, which has digits left that are not all 0
}
