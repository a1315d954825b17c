package prompt

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildContextFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string // under a temp root; the workdir is repo/a/b
		want    string            // path of the chosen file relative to root; "" for none
		wantHas string
		// unbounded leaves the temp root without a .git, so the workdir
		// is in no git repository (unless the real temp directory is).
		unbounded bool
	}{
		{name: "none"},
		{name: ".talaria.md over TALARIA.md", want: "repo/a/b/.talaria.md",
			files: map[string]string{"repo/a/b/.talaria.md": "dot", "repo/a/b/TALARIA.md": "upper", "repo/a/b/AGENTS.md": "agents"}},
		{name: "TALARIA.md over AGENTS.md", want: "repo/a/b/TALARIA.md",
			files: map[string]string{"repo/a/b/TALARIA.md": "upper", "repo/a/b/AGENTS.md": "agents", "repo/a/b/CLAUDE.md": "claude"}},
		{name: "AGENTS.md over CLAUDE.md", want: "repo/a/b/AGENTS.md",
			files: map[string]string{"repo/a/b/AGENTS.md": "agents", "repo/a/b/CLAUDE.md": "claude", "repo/a/b/.cursorrules": "cursor"}},
		{name: "CLAUDE.md over .cursorrules", want: "repo/a/b/CLAUDE.md",
			files: map[string]string{"repo/a/b/CLAUDE.md": "claude", "repo/a/b/.cursorrules": "cursor"}},
		{name: ".cursorrules last", want: "repo/a/b/.cursorrules",
			files: map[string]string{"repo/a/b/.cursorrules": "cursor"}},
		{name: ".talaria.md in a parent below the git root", want: "repo/a/.talaria.md",
			files: map[string]string{"repo/.git/": "", "repo/a/.talaria.md": "parent", "repo/a/b/AGENTS.md": "agents"}},
		{name: "TALARIA.md at the git root", want: "repo/TALARIA.md",
			files: map[string]string{"repo/.git/": "", "repo/TALARIA.md": "root"}},
		{name: "nearest wins over the name order", want: "repo/a/TALARIA.md",
			files: map[string]string{"repo/.git/": "", "repo/a/TALARIA.md": "near", "repo/.talaria.md": "far"}},
		{name: "not found above the git root", want: "repo/a/b/AGENTS.md",
			files: map[string]string{"repo/.git/": "", ".talaria.md": "above", "repo/a/b/AGENTS.md": "agents"}},
		{name: "git file marks a worktree root", want: "",
			files: map[string]string{"repo/a/.git": "gitdir: elsewhere", "repo/.talaria.md": "above"}},
		{name: "no git root: a file planted in a parent is ignored", want: "", unbounded: true,
			files: map[string]string{".talaria.md": "planted", "repo/TALARIA.md": "planted", "repo/a/.talaria.md": "planted"}},
		{name: "no git root: the workdir's own file is used", want: "repo/a/b/TALARIA.md", unbounded: true,
			files: map[string]string{".talaria.md": "planted", "repo/a/b/TALARIA.md": "mine"}},
		{name: "git root two levels up: a file in between is used", want: "repo/a/.talaria.md",
			files: map[string]string{"repo/.git/": "", "repo/a/.talaria.md": "between", ".talaria.md": "above"}},
		{name: "git root two levels up: a file above it is ignored", want: "",
			files: map[string]string{"repo/.git/": "", ".talaria.md": "above", "TALARIA.md": "above"}},
		{name: "AGENTS.md only in the workdir", want: "",
			files: map[string]string{"repo/.git/": "", "repo/a/AGENTS.md": "parent agents"}},
		{name: "empty file is skipped", want: "repo/a/b/CLAUDE.md",
			files: map[string]string{"repo/a/b/.talaria.md": " \n", "repo/a/b/AGENTS.md": "", "repo/a/b/CLAUDE.md": "claude"}},
		{name: "content shown", want: "repo/a/b/AGENTS.md", wantHas: "These are the project's instructions for working in it.\n\nRun make test.",
			files: map[string]string{"repo/a/b/AGENTS.md": "\nRun make test.\n\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// A .git at the temp root bounds the search, so that files in
			// the real ancestors cannot change the outcome.
			root := t.TempDir()
			files := map[string]string{"repo/a/b/": ""}
			if !tt.unbounded {
				files[".git/"] = ""
			} else if dirs := searchDirs(root); len(dirs) > 1 {
				t.Skipf("the temp directory is inside a git repository (%s)", dirs[len(dirs)-1])
			}
			writeFiles(t, root, files)
			writeFiles(t, root, tt.files)
			p, err := Build(Inputs{Workdir: filepath.Join(root, "repo", "a", "b"), Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			text, ok := section(p, SectionContext)
			if tt.want == "" {
				if ok {
					t.Fatalf("unexpected project context:\n%s", text)
				}
				return
			}
			wantHeader := "## Project context (from " + filepath.Join(root, filepath.FromSlash(tt.want)) + ")\n"
			if !strings.HasPrefix(text, wantHeader) {
				t.Errorf("context = %q, want header %q", firstN(text, 200), wantHeader)
			}
			if tt.wantHas != "" && !strings.Contains(text, tt.wantHas) {
				t.Errorf("context = %q, want it to contain %q", text, tt.wantHas)
			}
		})
	}
}

func TestBuildContextCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		content    string
		truncated  bool
		wantMarker string
	}{
		{name: "at the cap", content: strings.Repeat("a", ContextCap)},
		{name: "one over", content: strings.Repeat("a", ContextCap+1), truncated: true,
			wantMarker: "[... truncated: the file has 20001 characters; only the first 20000 are shown ...]"},
		{name: "multi-byte characters counted as characters", content: strings.Repeat("é", ContextCap+10), truncated: true,
			wantMarker: "[... truncated: the file has 20010 characters; only the first 20000 are shown ...]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFiles(t, root, map[string]string{".git/": "", "AGENTS.md": tt.content})
			p, err := Build(Inputs{Workdir: root, Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			text, _ := section(p, SectionContext)
			if got := strings.Contains(text, "[... truncated"); got != tt.truncated {
				t.Fatalf("truncated = %v, want %v", got, tt.truncated)
			}
			if !tt.truncated {
				if !strings.HasSuffix(text, tt.content) {
					t.Error("content not shown whole")
				}
				return
			}
			if !strings.HasSuffix(text, tt.wantMarker) {
				t.Errorf("context ends %q, want marker %q", text[len(text)-120:], tt.wantMarker)
			}
			body := text[strings.Index(text, "\n\n")+2 : strings.LastIndex(text, "\n\n[... truncated")]
			if n := len([]rune(body)); n != ContextCap {
				t.Errorf("kept %d characters, want %d", n, ContextCap)
			}
		})
	}
}

func firstN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
