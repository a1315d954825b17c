// Package editdistance measures how far apart two strings are, for
// "did you mean" suggestions and typo-tolerant name repair.
package editdistance

// Runes is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of adjacent code points, each one edit.
func Runes(a, b []rune) int {
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

// Strings is Runes over the code points of a and b. Pure.
func Strings(a, b string) int { return Runes([]rune(a), []rune(b)) }
