// Package suggest finds the known name nearest to a misspelt one, for the
// "did you mean" of hilrun's error messages.
package suggest

import "strings"

// Nearest returns the candidate nearest to got, ignoring case, and its edit
// distance; "" and -1 when there are no candidates. Callers decide how near
// is near enough to suggest.
func Nearest(got string, candidates []string) (string, int) {
	best, bestD := "", -1
	g := strings.ToLower(got)
	for _, c := range candidates {
		d := Distance(g, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD
}

// Distance is the edit distance between a and b in bytes: insertions,
// deletions, substitutions and swaps of neighbours each count one.
func Distance(a, b string) int {
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
