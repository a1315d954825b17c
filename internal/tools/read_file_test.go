package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, dir, "three.txt", "first\nsecond\nthird\n")
	writeTestFile(t, dir, "nonl.txt", "alpha\nbeta")
	writeTestFile(t, dir, "crlf.txt", "a\r\nb\r\n")
	writeTestFile(t, dir, "empty.txt", "")
	writeTestFile(t, dir, "sub/nested.txt", "nested\n")
	writeTestFile(t, dir, "big.txt", numberedLines(3000))
	writeTestFile(t, dir, "long.txt", strings.Repeat("x", 2500)+"\nshort\n")
	writeTestFile(t, dir, "utf8long.txt", strings.Repeat("é", 2005)+"\n")
	writeTestFile(t, dir, "binary.bin", "abc\x00def")
	abs := filepath.Join(dir, "three.txt")

	type want struct {
		content  string
		total    int
		offset   int
		returned int
		trunc    bool
		next     int
	}
	tests := []struct {
		name    string
		env     Env
		args    string
		want    *want
		check   func(t *testing.T, r readFileResult)
		wantErr error
		errHas  string
	}{
		{name: "relative path", env: Env{Workdir: dir}, args: `{"path":"three.txt"}`,
			want: &want{content: "     1|first\n     2|second\n     3|third", total: 3, offset: 1, returned: 3}},
		{name: "absolute path ignores workdir", env: Env{Workdir: "/nonexistent"}, args: mustJSON(t, map[string]string{"path": abs}),
			want: &want{content: "     1|first\n     2|second\n     3|third", total: 3, offset: 1, returned: 3}},
		{name: "nested relative path", env: Env{Workdir: dir}, args: `{"path":"sub/../sub/nested.txt"}`,
			want: &want{content: "     1|nested", total: 1, offset: 1, returned: 1}},
		{name: "no trailing newline", env: Env{Workdir: dir}, args: `{"path":"nonl.txt"}`,
			want: &want{content: "     1|alpha\n     2|beta", total: 2, offset: 1, returned: 2}},
		{name: "crlf stripped", env: Env{Workdir: dir}, args: `{"path":"crlf.txt"}`,
			want: &want{content: "     1|a\n     2|b", total: 2, offset: 1, returned: 2}},
		{name: "empty file", env: Env{Workdir: dir}, args: `{"path":"empty.txt"}`,
			want: &want{content: "", total: 0, offset: 1, returned: 0}},
		{name: "offset and limit", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":2,"limit":1}`,
			want: &want{content: "     2|second", total: 3, offset: 2, returned: 1, trunc: true, next: 3}},
		{name: "offset is last line", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":3}`,
			want: &want{content: "     3|third", total: 3, offset: 3, returned: 1}},
		{name: "offset zero means 1", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":0,"limit":1}`,
			want: &want{content: "     1|first", total: 3, offset: 1, returned: 1, trunc: true, next: 2}},
		{name: "numeric strings accepted", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":"2","limit":"5"}`,
			want: &want{content: "     2|second\n     3|third", total: 3, offset: 2, returned: 2}},
		{name: "limit exactly total", env: Env{Workdir: dir}, args: `{"path":"three.txt","limit":3}`,
			want: &want{content: "     1|first\n     2|second\n     3|third", total: 3, offset: 1, returned: 3}},
		{name: "default limit 500", env: Env{Workdir: dir}, args: `{"path":"big.txt"}`,
			check: func(t *testing.T, r readFileResult) {
				if r.LinesReturned != 500 || r.TotalLines != 3000 || !r.Truncated || r.NextOffset != 501 {
					t.Errorf("got returned=%d total=%d truncated=%v next=%d", r.LinesReturned, r.TotalLines, r.Truncated, r.NextOffset)
				}
				if !strings.HasSuffix(r.Content, "   500|line 500") {
					t.Errorf("content ends %q", r.Content[len(r.Content)-20:])
				}
			}},
		{name: "limit capped at 2000", env: Env{Workdir: dir}, args: `{"path":"big.txt","limit":99999}`,
			check: func(t *testing.T, r readFileResult) {
				if r.LinesReturned != 2000 || !r.Truncated || r.NextOffset != 2001 {
					t.Errorf("got returned=%d truncated=%v next=%d", r.LinesReturned, r.Truncated, r.NextOffset)
				}
			}},
		{name: "tail window", env: Env{Workdir: dir}, args: `{"path":"big.txt","offset":2999,"limit":10}`,
			want: &want{content: "  2999|line 2999\n  3000|line 3000", total: 3000, offset: 2999, returned: 2}},
		{name: "output cap stops at a line boundary", env: Env{Workdir: dir, MaxOutputChars: 100}, args: `{"path":"big.txt"}`,
			check: func(t *testing.T, r readFileResult) {
				// Each numbered line is 7 + len("line N") + 1 characters.
				if r.LinesReturned == 0 || r.LinesReturned >= 20 || !r.Truncated || r.NextOffset != r.LinesReturned+1 {
					t.Errorf("got returned=%d truncated=%v next=%d", r.LinesReturned, r.Truncated, r.NextOffset)
				}
				if len(r.Content) > 100 {
					t.Errorf("content has %d chars, cap 100", len(r.Content))
				}
			}},
		{name: "long line cut with marker", env: Env{Workdir: dir}, args: `{"path":"long.txt"}`,
			check: func(t *testing.T, r readFileResult) {
				lines := strings.Split(r.Content, "\n")
				if len(lines) != 2 || lines[1] != "     2|short" {
					t.Fatalf("lines: %q", lines)
				}
				wantFirst := "     1|" + strings.Repeat("x", 2000) + " [... line truncated, 500 more characters]"
				if lines[0] != wantFirst {
					t.Errorf("first line has %d chars, want %d; ends %q", len(lines[0]), len(wantFirst), lines[0][len(lines[0])-50:])
				}
			}},
		{name: "long multibyte line cut at a character", env: Env{Workdir: dir}, args: `{"path":"utf8long.txt"}`,
			check: func(t *testing.T, r readFileResult) {
				want := "     1|" + strings.Repeat("é", 2000) + " [... line truncated, 5 more characters]"
				if r.Content != want {
					t.Errorf("content ends %q", r.Content[len(r.Content)-60:])
				}
			}},

		{name: "missing file names resolved path", env: Env{Workdir: dir}, args: `{"path":"nope.txt"}`,
			wantErr: os.ErrNotExist, errHas: filepath.Join(dir, "nope.txt")},
		{name: "directory refused", env: Env{Workdir: dir}, args: `{"path":"sub"}`, errHas: "is a directory"},
		{name: "binary refused", env: Env{Workdir: dir}, args: `{"path":"binary.bin"}`, wantErr: ErrBinaryFile},
		{name: "offset past end", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":10}`, errHas: "past the end"},
		{name: "missing path", env: Env{Workdir: dir}, args: `{}`, wantErr: ErrInvalidArguments, errHas: `"path"`},
		{name: "empty path", env: Env{Workdir: dir}, args: `{"path":"  "}`, wantErr: ErrInvalidArguments},
		{name: "path wrong type", env: Env{Workdir: dir}, args: `{"path":["a"]}`, wantErr: ErrInvalidArguments, errHas: "must be a string"},
		{name: "offset wrong type", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":true}`, wantErr: ErrInvalidArguments, errHas: `"offset"`},
		{name: "offset fractional", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":1.5}`, wantErr: ErrInvalidArguments},
		{name: "offset negative", env: Env{Workdir: dir}, args: `{"path":"three.txt","offset":-1}`, wantErr: ErrInvalidArguments},
		{name: "limit negative", env: Env{Workdir: dir}, args: `{"path":"three.txt","limit":-5}`, wantErr: ErrInvalidArguments},
		{name: "limit not a number", env: Env{Workdir: dir}, args: `{"path":"three.txt","limit":"lots"}`, wantErr: ErrInvalidArguments},
		{name: "malformed JSON", env: Env{Workdir: dir}, args: `{"path":`, wantErr: ErrInvalidArguments, errHas: "malformed"},
		{name: "array instead of object", env: Env{Workdir: dir}, args: `["three.txt"]`, wantErr: ErrInvalidArguments, errHas: "JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runTool(t, ReadFile, tc.env, tc.args)
			if expectError(t, out, err, tc.wantErr, tc.errHas) {
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			r := decode[readFileResult](t, out)
			if tc.want != nil {
				got := want{r.Content, r.TotalLines, r.Offset, r.LinesReturned, r.Truncated, r.NextOffset}
				if got != *tc.want {
					t.Errorf("got  %+v\nwant %+v", got, *tc.want)
				}
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestReadFileResultJSONShape(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, dir, "a.txt", "hi\n")
	out, err := runTool(t, ReadFile, Env{Workdir: dir}, `{"path":"a.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":"     1|hi","total_lines":1,"offset":1,"lines_returned":1,"truncated":false}`
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestReadFileHomeExpansion(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeTestFile(t, home, "notes.txt", "from home\n")
	out, err := runTool(t, ReadFile, Env{Workdir: "/"}, `{"path":"~/notes.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	if r := decode[readFileResult](t, out); r.Content != "     1|from home" {
		t.Errorf("content %q", r.Content)
	}
}

func TestReadFileIdempotent(t *testing.T) {
	if !(ReadFile).Idempotent() {
		t.Error("read_file must be idempotent")
	}
}
