package loop

import (
	"math"
	"testing"
	"unicode/utf8"
)

// The expected ratios are those of Python's
// difflib.SequenceMatcher(None, a, b, autojunk=False).ratio().
var similarityCases = []struct {
	a, b string
	want float64
}{
	{"", "", 1},
	{"a", "", 0},
	{"", "a", 0},
	{"abc", "abc", 1},
	{"abc", "xyz", 0},
	{"abcd", "bcde", 0.75},
	{"serch_files", "search_files", 22.0 / 23},
	{"tide", "diet", 0.25},
	{"diet", "tide", 0.5},
	{"read_file", "write_file", 14.0 / 19},
	{"write_file", "read_file", 14.0 / 19},
	{"todos", "todo", 8.0 / 9},
	{"qabxcd", "abycdf", 8.0 / 12},
	{"private Thread currentThread;", "private volatile Thread currentThread;", 58.0 / 67},
	{"héllo", "hello", 0.8},
	{"aaaa", "aa", 4.0 / 6},
	{"abab", "baba", 0.75},
	{"completely_unknown", "search_files", 0.2},
	{"termnal", "terminal", 14.0 / 15},
	{"brwser_clik", "browser_click", 22.0 / 24},
	{"delete_file", "write_file", 14.0 / 21},
	{"\xff", "\xfe", 0},
	{"\xff", "\xff", 1},
}

func TestSimilarity(t *testing.T) {
	t.Parallel()
	for _, tt := range similarityCases {
		if got := Similarity(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Similarity(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// referenceMatches is a second, recursive rendering of the matching-block
// count, written straight from its definition, to check matchingChars by.
func referenceMatches(a, b []rune, alo, ahi, blo, bhi int) int {
	besti, bestj, bestk := alo, blo, 0
	runs := map[int]int{} // j → length of the common run ending at (i-1, j)
	for i := alo; i < ahi; i++ {
		next := map[int]int{}
		for j := blo; j < bhi; j++ {
			if a[i] == b[j] {
				k := runs[j-1] + 1
				next[j] = k
				if k > bestk {
					besti, bestj, bestk = i-k+1, j-k+1, k
				}
			}
		}
		runs = next
	}
	if bestk == 0 {
		return 0
	}
	return bestk +
		referenceMatches(a, b, alo, besti, blo, bestj) +
		referenceMatches(a, b, besti+bestk, ahi, bestj+bestk, bhi)
}

func FuzzSimilarity(f *testing.F) {
	for _, tt := range similarityCases {
		f.Add(tt.a, tt.b)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 200 || len(b) > 200 {
			t.Skip("long inputs only slow the reference down")
		}
		got := Similarity(a, b)
		if got < 0 || got > 1 || math.IsNaN(got) {
			t.Fatalf("Similarity(%q, %q) = %v, outside [0, 1]", a, b, got)
		}
		if s := Similarity(a, a); s != 1 {
			t.Fatalf("Similarity(%q, itself) = %v, want 1", a, s)
		}
		ra, rb := codePoints(a), codePoints(b)
		if m, want := matchingChars(ra, rb), referenceMatches(ra, rb, 0, len(ra), 0, len(rb)); m != want {
			t.Fatalf("matchingChars(%q, %q) = %d, reference %d", a, b, m, want)
		}
		// The ratio is not symmetric (see "tide"/"diet"), but whether the
		// strings share anything at all is.
		if back := Similarity(b, a); (got > 0) != (back > 0) {
			t.Fatalf("Similarity(%q, %q) = %v but reversed %v", a, b, got, back)
		}
		la, lb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
		if la+lb > 0 && got > 2*float64(min(la, lb))/float64(la+lb) {
			t.Fatalf("Similarity(%q, %q) = %v, above the length bound", a, b, got)
		}
	})
}
