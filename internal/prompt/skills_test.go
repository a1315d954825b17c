package prompt

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPromptParseSkill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		text     string
		wantName string
		wantDesc string
	}{
		{name: "front matter", text: "---\nname: deploy\ndescription: Ship the service\n---\n# Deploy\n",
			wantName: "deploy", wantDesc: "Ship the service"},
		{name: "front matter with CRLF-free quoted values", text: "---\nname: \"pdf tools\"\ndescription: 'Read: and write PDFs'\n---\n",
			wantName: "pdf tools", wantDesc: "Read: and write PDFs"},
		{name: "front matter without name uses dir", text: "---\ndescription: Does things\n---\n",
			wantName: "dir", wantDesc: "Does things"},
		{name: "front matter without description uses first body line", text: "---\nname: n\n---\n\n## Build the docs\nmore",
			wantName: "n", wantDesc: "Build the docs"},
		{name: "multi-line description collapsed", text: "---\nname: n\ndescription: >\n  one\n  two\n---\n",
			wantName: "n", wantDesc: "one two"},
		{name: "no front matter", text: "\n\n# Release checklist\nStep 1\n", wantName: "dir", wantDesc: "Release checklist"},
		{name: "empty file", text: "", wantName: "dir", wantDesc: ""},
		{name: "unclosed front matter", text: "---\nname: x\ndescription: y\n", wantName: "dir", wantDesc: ""},
		{name: "invalid YAML", text: "---\nname: [unclosed\n---\nbody\n", wantName: "dir", wantDesc: ""},
		{name: "wrong YAML types", text: "---\nname:\n  nested: map\n---\n", wantName: "dir", wantDesc: ""},
		{name: "YAML list instead of a map", text: "---\n- a\n- b\n---\n", wantName: "dir", wantDesc: ""},
		{name: "long description capped", text: "---\nname: n\ndescription: " + strings.Repeat("w", 1000) + "\n---\n",
			wantName: "n", wantDesc: strings.Repeat("w", maxDescription-3) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name, desc := ParseSkill("dir", tt.text)
			if name != tt.wantName || desc != tt.wantDesc {
				t.Errorf("ParseSkill = %q, %q; want %q, %q", name, desc, tt.wantName, tt.wantDesc)
			}
		})
	}
}

func TestBuildSkillsIndex(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeFiles(t, home, map[string]string{
		"skills/zeta/SKILL.md":     "---\nname: alpha\ndescription: First by name\n---\n",
		"skills/beta/SKILL.md":     "Plain instructions\nmore",
		"skills/broken/SKILL.md":   "---\nname: [\n---\n",
		"skills/no-skill-file/":    "",
		"skills/notes.txt":         "not a skill",
		"skills/gamma/SKILL.md":    "---\nname: gamma\n---\n",
		"skills/gamma/extra/x.md":  "ignored",
		"skills/deeper/a/SKILL.md": "only one level is searched",
		"skills/Upper/SKILL.md":    "---\nname: Upper\ndescription: sorts before lower case\n---\n",
	})
	skills, err := LoadSkills(home)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range skills {
		got = append(got, s.Name+"|"+s.Description+"|"+filepath.Base(filepath.Dir(s.Path)))
	}
	want := []string{
		"Upper|sorts before lower case|Upper",
		"alpha|First by name|zeta",
		"beta|Plain instructions|beta",
		"broken||broken",
		"gamma||gamma",
	}
	if !slices.Equal(got, want) {
		t.Errorf("skills:\n%q\nwant:\n%q", got, want)
	}

	p, err := Build(Inputs{Home: home, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	text, ok := section(p, SectionSkills)
	if !ok {
		t.Fatal("no skills section")
	}
	lines := strings.Split(text, "\n")
	if len(lines) != 2+len(want) {
		t.Fatalf("skills section has %d lines:\n%s", len(lines), text)
	}
	if wantLine := "- broken (" + filepath.Join(home, "skills", "broken", "SKILL.md") + ")"; lines[5] != wantLine {
		t.Errorf("line = %q, want %q", lines[5], wantLine)
	}
	if wantLine := "- alpha: First by name (" + filepath.Join(home, "skills", "zeta", "SKILL.md") + ")"; lines[3] != wantLine {
		t.Errorf("line = %q, want %q", lines[3], wantLine)
	}
}
