package defdiff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Definition returns the canonical form of the tool definition def, which
// is the JSON text of an MCP tool (as json.Marshal writes an mcp.Tool, or as
// a lockfile holds it). The canonical form is compact JSON with every
// object's keys in byte order, every number in [canonical number] form,
// strings escaped as encoding/json escapes them but with '<', '>' and '&'
// left as they are, and the tool's annotations reduced to the hints that
// differ from the protocol's defaults (see [normalizeAnnotations]).
//
// Two definitions that differ only in key order, whitespace, the writing
// of their numbers (1, 1.0, 1e0) or hints spelled at their defaults have
// the same canonical form.
func Definition(def []byte) ([]byte, error) {
	v, err := decodeDefinition(def)
	if err != nil {
		return nil, err
	}
	return encode(v), nil
}

// Fingerprint returns "sha256:" and the lower-case hexadecimal SHA-256 of
// canonical, which is a result of [Definition].
func Fingerprint(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// decodeDefinition decodes the JSON object def with its numbers in canonical
// form and its annotations normalized.
func decodeDefinition(def []byte) (map[string]any, error) {
	v, err := decode(def)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("defdiff: a tool definition is a JSON object, not %s", Clip(string(encode(v)), maxQuote))
	}
	normalizeAnnotations(m)
	return m, nil
}

// decode decodes one JSON value, with every number as a json.Number in
// canonical form.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("defdiff: %w", err)
	}
	if len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("defdiff: data after the JSON value")
	}
	return canonicalNumbers(v), nil
}

// canonicalNumbers replaces, in the freshly decoded value v, every
// json.Number by its canonical form, and returns v.
func canonicalNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return json.Number(canonicalNumber(string(v)))
	case []any:
		for i, x := range v {
			v[i] = canonicalNumbers(x)
		}
	case map[string]any:
		for k, x := range v {
			v[k] = canonicalNumbers(x)
		}
	}
	return v
}

// encode returns the canonical JSON text of the decoded value v, whose
// numbers are already canonical.
func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Decoded JSON always encodes: strings, json.Numbers that
		// canonicalNumber wrote, bools, nil, slices and maps of those.
		panic("defdiff: cannot encode a decoded value: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// maxExponent bounds the exponents that canonicalNumber rewrites; a number
// whose exponent is beyond it is kept as written, so that no arithmetic on
// the exponent can overflow.
const maxExponent = 1_000_000_000

// canonicalNumber returns the canonical form of the well-formed JSON number
// literal s, so that two literals of the same value have the same form:
// the shortest decimal, without an exponent when the decimal point falls
// within 21 digits of the first significant digit (1, 1.5, 0.000001, 1e+21
// stays 1e+21, 100 for 1e2, 0.5 for 5e-1), and otherwise d.ddde±n as
// JavaScript writes numbers (1e+21, 1.5e-7). Negative zero is 0. Digits
// are never rounded, so integers beyond 2^53 keep their value. A literal
// whose exponent is beyond ±10^9 is kept as written.
func canonicalNumber(s string) string {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	mant, expText, hasExp := strings.Cut(strings.ToLower(body), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil || e > maxExponent || e < -maxExponent {
			return s
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	if digits == "" {
		return "0"
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	// The value is 0.digits × 10^point.
	point := len(digits) + exp
	switch {
	case exp >= 0 && point <= 21:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", exp))
	case exp < 0 && point > 0:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	case exp < 0 && point > -6:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(digits)
	default:
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if point-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(point - 1))
	}
	return b.String()
}
