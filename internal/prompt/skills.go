package prompt

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/internal/injection"
)

// SkillsDir holds one directory per skill, each with a SkillFile.
const (
	SkillsDir = "skills"
	SkillFile = "SKILL.md"
)

// maxDescription caps a skill's description in the index, in characters.
const maxDescription = 300

// Skill is one entry of the skills index.
type Skill struct {
	Name        string
	Description string
	Path        string // the SKILL.md file
	text        string // its whole text, for the injection scan
}

// FrontMatter is the YAML header of a SKILL.md.
type FrontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Version is as written (a number or a string); "" when absent.
	Version string `yaml:"version"`
}

// Errors of ReadFrontMatter.
var (
	ErrNoFrontMatter       = errors.New(`no front matter: a SKILL.md starts with front matter, a line "---", name: and description: lines, then "---"`)
	ErrUnclosedFrontMatter = errors.New(`the front matter is not closed by a "---" line`)
)

// ReadFrontMatter splits a SKILL.md into its decoded front matter and its
// body: ErrNoFrontMatter without one, ErrUnclosedFrontMatter when it is
// not closed, a decoding error when it is not YAML.
func ReadFrontMatter(text string) (FrontMatter, string, error) {
	header, body, found, ok := splitFrontMatter(text)
	switch {
	case !found:
		return FrontMatter{}, body, ErrNoFrontMatter
	case !ok:
		return FrontMatter{}, "", ErrUnclosedFrontMatter
	}
	fm, err := decodeFrontMatter(header)
	return fm, body, err
}

// ParseSkill reads a skill's name and description from the text of its
// SKILL.md. With front matter, they come from its name and description
// fields (a missing name falls back to dir, a missing description to the
// first non-empty line of the body). Without front matter, the name is
// dir and the description the first non-empty line. Malformed front matter
// gives dir and no description.
func ParseSkill(dir, text string) (name, description string) {
	header, body, found, ok := splitFrontMatter(text)
	if !found {
		return dir, firstLine(text)
	}
	if !ok {
		return dir, ""
	}
	fm, err := decodeFrontMatter(header)
	if err != nil {
		return dir, ""
	}
	name, description = oneLine(fm.Name), oneLine(fm.Description)
	name = cmp.Or(name, dir)
	description = cmp.Or(description, firstLine(body))
	return name, description
}

// decodeFrontMatter decodes a YAML header; a decoder panic on hostile
// input counts as malformed front matter.
func decodeFrontMatter(header string) (fm FrontMatter, err error) {
	defer func() {
		if p := recover(); p != nil {
			fm, err = FrontMatter{}, fmt.Errorf("decode front matter: %v", p)
		}
	}()
	if err := yaml.Unmarshal([]byte(header), &fm); err != nil {
		return FrontMatter{}, fmt.Errorf("decode front matter: %w", err)
	}
	return fm, nil
}

// splitFrontMatter separates a leading "---" block from the body. found
// reports whether the text starts with front matter; ok whether it is
// closed by a "---" line.
func splitFrontMatter(text string) (header, body string, found, ok bool) {
	text = strings.TrimPrefix(text, "\uFEFF")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		return "", text, false, false
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			return strings.Join(lines[1:i], "\n"), strings.Join(lines[i+1:], "\n"), true, true
		}
	}
	return "", "", true, false
}

// firstLine returns the first non-empty line, without heading marks.
func firstLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		if line != "" {
			return oneLine(line)
		}
	}
	return ""
}

// oneLine collapses whitespace and caps the length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if charCount(s) > maxDescription {
		s = string([]rune(s)[:maxDescription-3]) + "..."
	}
	return s
}

// LoadSkills reads the skills index under home, sorted by name (then
// path). Directories without a SKILL.md are skipped, and so are a skills
// directory or a SKILL.md that exist but cannot be read (Build lists
// those in Prompt.Unread). The error is always nil.
func LoadSkills(home string) ([]Skill, error) {
	skills, _ := loadSkills(home)
	return skills, nil
}

// loadSkills is LoadSkills, also returning what it skipped because it
// could not be read, in directory order.
func loadSkills(home string) ([]Skill, []Unread) {
	root := filepath.Join(home, SkillsDir)
	entries, err := os.ReadDir(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, []Unread{{Path: root, Err: fmt.Errorf("skills: %w %s: %w", ErrUnreadable, root, err)}}
	}
	var skills []Skill
	var unread []Unread
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue // a stray file or a broken link is not a skill
		}
		path := filepath.Join(dir, SkillFile)
		text, ok, err := readOptional(path)
		if err != nil {
			unread = append(unread, Unread{Path: path, Err: fmt.Errorf("skills: %w", err)})
			continue
		}
		if !ok {
			continue
		}
		name, desc := ParseSkill(e.Name(), text)
		skills = append(skills, Skill{Name: name, Description: desc, Path: path, text: text})
	}
	sort.SliceStable(skills, func(i, j int) bool {
		if skills[i].Name != skills[j].Name {
			return skills[i].Name < skills[j].Name
		}
		return skills[i].Path < skills[j].Path
	})
	return skills, unread
}

// skillsSection renders the skills index. A skills directory or a SKILL.md
// that exists but cannot be read is left out with one line saying so
// (named relative to home), and returned as unread.
func skillsSection(home string) (string, []Unread, []Refusal) {
	if home == "" {
		return "", nil, nil
	}
	all, unread := loadSkills(home)
	var b bytes.Buffer
	for i, u := range unread {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(unreadNote(homeRelative(home, u.Path)))
	}
	// A skill whose text looks like a prompt injection is left out of the
	// index, with a line saying so.
	var skills []Skill
	var refused []Refusal
	for _, s := range all {
		if findings := injection.ScanInstructions(s.text); len(findings) > 0 {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(refusedNote(homeRelative(home, s.Path), findings))
			refused = append(refused, Refusal{Path: s.Path, Findings: findings})
			continue
		}
		skills = append(skills, s)
	}
	if len(skills) == 0 {
		return b.String(), unread, refused
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString("## Skills\n")
	b.WriteString("Skills are instructions for particular kinds of task. When a task matches one, read its file before you start.")
	for _, s := range skills {
		b.WriteString("\n- ")
		b.WriteString(s.Name)
		if s.Description != "" {
			b.WriteString(": ")
			b.WriteString(s.Description)
		}
		fmt.Fprintf(&b, " (%s)", s.Path)
	}
	return b.String(), unread, refused
}

// homeRelative names path relative to home with slashes, or by its base
// name when it is not under home.
func homeRelative(home, path string) string {
	rel, err := filepath.Rel(home, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}
