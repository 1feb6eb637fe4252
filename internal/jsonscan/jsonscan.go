// Package jsonscan steps over the values of valid JSON text without
// decoding them, for code that rewrites arguments in place: every function
// takes the text and an index into it and returns the index after what it
// skipped. The text must be valid JSON (checked before, with json.Valid);
// on other text the functions stop at its end and never panic.
package jsonscan

// Space returns the index of the first byte at or after i that is not
// JSON white space.
func Space(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// String returns the index after the string that starts at data[i].
func String(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// Value returns the index after the value that starts at data[i].
func Value(data []byte, i int) int {
	switch data[i] {
	case '"':
		return String(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = String(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for ; i < len(data); i++ {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}
