package textline

import "testing"

func TestOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"two\nlines\r\n  and\ttabs", 0, "two lines and tabs"},
		{"\x1b[31mred\x1b[0m", 0, "[31mred [0m"},
		{"héllo wörld", 5, "héllo…"},
		{"bad \xff byte", 0, "bad \uFFFD byte"},
		{"  ", 5, ""},
	} {
		if got := Of(tt.in, tt.max); got != tt.want {
			t.Errorf("Of(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
