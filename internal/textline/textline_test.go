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

// TestVisible: control characters and invisible Unicode are made visible;
// invalid UTF-8 is U+FFFD.
func TestVisible(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"rm -rf ./build", "rm -rf ./build"},
		{"ls\x1b[8m; rm -rf ~", `ls\x1b[8m; rm -rf ~`},
		{"echo a\rrm -rf ~", `echo a\x0drm -rf ~`},
		{"ls\nrm -rf ~", `ls\nrm -rf ~`},
		{"ls\u200b -la", "ls<U+200B> -la"},
		{"ls \u202erm", "ls <U+202E>rm"},
		{"a\u0085b", `a\u0085b`},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"café ✓", "café ✓"},
	}
	for _, c := range cases {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
