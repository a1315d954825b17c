package prompt

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuildSections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    map[string]string // under a temp dir holding home/ and work/
		guidance []string
		want     []string
		check    func(t *testing.T, p Prompt)
	}{
		{name: "nothing present", want: []string{SectionIdentity, SectionDate},
			check: func(t *testing.T, p Prompt) {
				if id, _ := section(p, SectionIdentity); id != DefaultIdentity {
					t.Errorf("identity = %q, want the default", id)
				}
			}},
		{name: "soul present", files: map[string]string{"home/SOUL.md": "\n  You are Pip, a careful helper.  \n\n"},
			want: []string{SectionIdentity, SectionDate},
			check: func(t *testing.T, p Prompt) {
				if id, _ := section(p, SectionIdentity); id != "You are Pip, a careful helper." {
					t.Errorf("identity = %q", id)
				}
			}},
		{name: "soul empty uses default", files: map[string]string{"home/SOUL.md": " \n\t\n"},
			want: []string{SectionIdentity, SectionDate},
			check: func(t *testing.T, p Prompt) {
				if id, _ := section(p, SectionIdentity); id != DefaultIdentity {
					t.Errorf("identity = %q, want the default", id)
				}
			}},
		{name: "soul oversized is capped", files: map[string]string{"home/SOUL.md": strings.Repeat("s", ContextCap+5)},
			want: []string{SectionIdentity, SectionDate},
			check: func(t *testing.T, p Prompt) {
				id, _ := section(p, SectionIdentity)
				if !strings.Contains(id, "[... truncated: the file has 20005 characters") {
					t.Errorf("identity not capped: %q", id[len(id)-120:])
				}
			}},
		{name: "every section", guidance: []string{"Plan with todo."},
			files: map[string]string{
				"home/memories/MEMORY.md":     "note",
				"home/skills/deploy/SKILL.md": "Ship it.",
				"work/AGENTS.md":              "Run make.",
			},
			want: []string{SectionIdentity, SectionMemory, SectionSkills, SectionContext, SectionTools, SectionDate}},
		{name: "user memory only", files: map[string]string{"home/memories/USER.md": "Likes tea"},
			want: []string{SectionIdentity, SectionMemory, SectionDate},
			check: func(t *testing.T, p Prompt) {
				m, _ := section(p, SectionMemory)
				if m != "## About the user\n- Likes tea" {
					t.Errorf("memory = %q", m)
				}
			}},
		{name: "empty memory files omitted", files: map[string]string{"home/memories/MEMORY.md": "", "home/memories/USER.md": "\n§\n\n"},
			want: []string{SectionIdentity, SectionDate}},
		{name: "skills dir without skills omitted", files: map[string]string{"home/skills/empty/": "", "home/skills/README": "x"},
			want: []string{SectionIdentity, SectionDate}},
		{name: "tools without guidance of their own still get the general sentence", guidance: []string{},
			want: []string{SectionIdentity, SectionTools, SectionDate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFiles(t, root, map[string]string{"work/": ""})
			writeFiles(t, root, tt.files)
			p, err := Build(Inputs{Home: filepath.Join(root, "home"), Workdir: filepath.Join(root, "work"),
				Model: "m", Provider: "p", Now: fixedNow, ToolGuidance: tt.guidance})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got := sectionNames(p); !slices.Equal(got, tt.want) {
				t.Errorf("sections = %q, want %q", got, tt.want)
			}
			texts := make([]string, len(p.Sections))
			for i, s := range p.Sections {
				texts[i] = s.Text
			}
			if joined := strings.Join(texts, "\n\n"); p.Text != joined {
				t.Errorf("Text is not the sections joined by blank lines")
			}
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}

func TestBuildFullPromptText(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "repo", "sub")
	writeFiles(t, root, map[string]string{
		"home/SOUL.md":                "You are Talaria.",
		"home/memories/MEMORY.md":     "Tests run with make test\n§\nThe repo uses Go",
		"home/memories/USER.md":       "Name: Ada\nPrefers short answers",
		"home/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Ship the service\n---\nSteps.",
		"repo/.git/":                  "",
		"repo/.talaria.md":            "Use tabs.\n",
		"repo/sub/":                   "",
	})
	p, err := Build(Inputs{Home: home, Workdir: work, Model: "gpt-x", Provider: "api.example.com", Now: fixedNow,
		ToolGuidance: []string{"Plan with todo.", "Run commands with terminal."}})
	if err != nil {
		t.Fatal(err)
	}
	want := "You are Talaria.\n\n" +
		"## Memory (your notes)\n- Tests run with make test\n- The repo uses Go\n\n" +
		"## About the user\n- Name: Ada\n  Prefers short answers\n\n" +
		"## Skills\nSkills are instructions for particular kinds of task. When a task matches one, read its file before you start.\n" +
		"- deploy: Ship the service (" + filepath.Join(home, "skills", "deploy", "SKILL.md") + ")\n\n" +
		"## Project context (from " + filepath.Join(root, "repo", ".talaria.md") + ")\nThese are the project's instructions for working in it.\n\nUse tabs.\n\n" +
		"## Using tools\nAct through your tools and check their results instead of guessing; when a call fails, read the error and change your approach rather than repeating it. " +
		"Plan with todo. Run commands with terminal.\n\n" +
		"Current date: 2026-11-29 (Sunday). Model: gpt-x via api.example.com. Working directory: " + work + "."
	if p.Text != want {
		t.Errorf("prompt text:\n%s\n\nwant:\n%s", p.Text, want)
	}
}

func TestBuildDeterministic(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{"home/SOUL.md": "Soul.", "work/AGENTS.md": "Agents."}
	for i := range 12 {
		name := string(rune('a'+i)) + "skill"
		files["home/skills/"+name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: d\n---\n"
	}
	for i := range 40 {
		files["home/memories/MEMORY.md"] += strings.Repeat("m", 60+i) + "\n§\n"
	}
	writeFiles(t, root, files)
	in := Inputs{Home: filepath.Join(root, "home"), Workdir: filepath.Join(root, "work"), Model: "m", Now: fixedNow,
		ToolGuidance: []string{"Write with write_file.", "Plan with todo."}}
	first, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		if again.Text != first.Text {
			t.Fatal("two builds with the same inputs and files differ")
		}
	}
}

func TestBuildDateLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Inputs
		want string
	}{
		{name: "all parts", in: Inputs{Model: "m1", Provider: "host", Workdir: "/w", Now: fixedNow},
			want: "Current date: 2026-11-29 (Sunday). Model: m1 via host. Working directory: /w."},
		{name: "shown in UTC", in: Inputs{Model: "m1", Now: fixedNow.In(fixedZone(t))},
			want: "Current date: 2026-11-29 (Sunday). Model: m1."},
		{name: "no model", in: Inputs{Now: fixedNow},
			want: "Current date: 2026-11-29 (Sunday). Model: unknown."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := dateLine(tt.in); got != tt.want {
				t.Errorf("dateLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBuildToolGuidance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		sentences []string
		want      string
	}{
		{"no tools", nil, ""},
		{"tools without guidance", []string{}, "## Using tools\n" + generalGuidance},
		{"in the order given", []string{"B.", "A."}, "## Using tools\n" + generalGuidance + " B. A."},
	} {
		if got := toolGuidance(tt.sentences); got != tt.want {
			t.Errorf("%s: toolGuidance(%q) = %q, want %q", tt.name, tt.sentences, got, tt.want)
		}
	}
}
