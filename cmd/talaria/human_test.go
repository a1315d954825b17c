package main

import "testing"

func TestShown(t *testing.T) {
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
		if got := shown(c.in); got != c.want {
			t.Errorf("shown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
