// Package spell finds the word a misspelt one was meant to be, for error
// messages that say `did you mean "minimum"?`.
//
// A word is a near miss of a known word when they differ only in case, or
// by at most one edit (a letter inserted, deleted, replaced, or two
// neighbours swapped) for words of up to five letters, two for longer
// ones. Short words get one edit so that unrelated short names ("form",
// "env") are not taken for misspellings of others ("format", "enum").
package spell

import "strings"

// Suggest returns the known word that word is a near miss of, the closest
// one first in known's order, and false when there is none or when word is
// itself known.
func Suggest(word string, known []string) (string, bool) {
	lw := strings.ToLower(word)
	limit := 1
	if len(word) > 5 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, k := range known {
		if k == word {
			return "", false
		}
		d := distance(lw, strings.ToLower(k))
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, bestDist <= limit
}

// distance returns the optimal string alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and transpositions of
// neighbours each count one.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return len(a) + len(b) // no misspelling of a keyword is that long
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
