package textline

import (
	"strings"
	"testing"
)

// TestWriter: control characters reach the terminal made visible, in
// whatever pieces the text is written; new lines, tabs and other text
// pass as they are.
func TestWriter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pieces []string
		want   string
	}{
		{[]string{"plain\ttext\nnext line\n"}, "plain\ttext\nnext line\n"},
		{[]string{"hi \x1b]52;c;cHduZWQ=\x07 \x1b[2J"}, `hi \x1b]52;c;cHduZWQ=\x07 \x1b[2J`},
		{[]string{"line\r\n", "over\rwritten"}, "line\noverwritten"},
		{[]string{"eight-bit \u009b31m csi"}, `eight-bit \u009b31m csi`},
		{[]string{"cut \xc2", "\x9b here"}, `cut \u009b here`},
		{[]string{"é cut \xc3", "\xa9 whole"}, "é cut é whole"},
		{[]string{"a DEL \x7f, a BS \x08 and a NUL \x00"}, "a DEL \\x7f, a BS \\x08 and a NUL \x00"},
	} {
		var b strings.Builder
		w := NewWriter(&b)
		for _, p := range tt.pieces {
			if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
				t.Fatalf("Write(%q) = %d, %v", p, n, err)
			}
		}
		if b.String() != tt.want {
			t.Errorf("%q: wrote %q, want %q", tt.pieces, b.String(), tt.want)
		}
	}
}
