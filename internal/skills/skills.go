package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/talaria-agent/talaria/internal/injection"
	"github.com/talaria-agent/talaria/internal/prompt"
	"github.com/talaria-agent/talaria/internal/regularfile"
)

// Limits of a skill.
const (
	MaxSkillBytes = 100 << 10
	MaxFileBytes  = 1 << 20
	MaxFiles      = 100
)

// Sentinel errors, matched with errors.Is.
var (
	ErrNotFound   = errors.New("no such skill")
	ErrExists     = errors.New("the skill exists already")
	ErrInvalid    = errors.New("invalid skill")
	ErrSuspicious = errors.New("the skill looks like a prompt injection")
)

// namePattern is what a skill's name (and its directory) may be.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Skill is a skill as listed.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version,omitempty"`
	// Files are the supporting files, relative to the skill's directory.
	Files []string `json:"files,omitempty"`
}

// Dir is the skills directory of home.
func Dir(home string) string { return filepath.Join(home, prompt.SkillsDir) }

// CheckName refuses a name that is not a skill name.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%w: name %q: use 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", ErrInvalid, name)
	}
	return nil
}

// Check validates a SKILL.md for the skill name: front matter naming it,
// with a description; within MaxSkillBytes; nothing the injection scan
// flags.
func Check(name, text string) (Skill, error) {
	if len(text) > MaxSkillBytes {
		return Skill{}, fmt.Errorf("%w: SKILL.md is %d bytes, more than %d", ErrInvalid, len(text), MaxSkillBytes)
	}
	h, body, err := parseHeader(text)
	if err != nil {
		return Skill{}, err
	}
	switch {
	case h.Name != name:
		return Skill{}, fmt.Errorf("%w: the front matter's name is %q, not the skill's %q", ErrInvalid, h.Name, name)
	case strings.TrimSpace(h.Description) == "":
		return Skill{}, fmt.Errorf("%w: the front matter has no description (one line saying when to use the skill)", ErrInvalid)
	case strings.TrimSpace(body) == "":
		return Skill{}, fmt.Errorf("%w: SKILL.md has no instructions after its front matter", ErrInvalid)
	}
	if err := Screen(text); err != nil {
		return Skill{}, err
	}
	return Skill{Name: name, Description: strings.Join(strings.Fields(h.Description), " "), Version: h.Version}, nil
}

// Screen refuses text the injection scan flags: a skill enters the
// prompt of every session.
func Screen(text string) error {
	if findings := injection.ScanInstructions(text); len(findings) > 0 {
		return fmt.Errorf("%w: %s; a skill must be plain instructions, without hidden text, directives to ignore rules or commands that send secrets; nothing was changed",
			ErrSuspicious, injection.Details(findings))
	}
	return nil
}

// parseHeader splits SKILL.md into its decoded front matter and body.
func parseHeader(text string) (prompt.FrontMatter, string, error) {
	fm, body, err := prompt.ReadFrontMatter(text)
	if err != nil {
		return prompt.FrontMatter{}, "", fmt.Errorf("%w: SKILL.md: %v", ErrInvalid, err)
	}
	return fm, body, nil
}

// List reads every skill under home, sorted by name; a skill whose
// SKILL.md cannot be read or parsed is listed by its directory name with
// the reason as its description.
func List(home string) ([]Skill, error) {
	entries, err := os.ReadDir(Dir(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	var out []Skill
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		s, err := Load(home, e.Name())
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			s = Skill{Name: e.Name(), Description: "(unreadable: " + err.Error() + ")"}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Load reads one skill's listing.
func Load(home, name string) (Skill, error) {
	text, err := Read(home, name, "")
	if err != nil {
		return Skill{}, err
	}
	s := Skill{Name: name}
	if h, _, err := parseHeader(text); err == nil {
		s.Description, s.Version = strings.Join(strings.Fields(h.Description), " "), h.Version
	} else {
		_, s.Description = prompt.ParseSkill(name, text)
	}
	s.Files, err = files(filepath.Join(Dir(home), name))
	return s, err
}

// Read returns SKILL.md of the skill, or one of its files.
func Read(home, name, file string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	path := filepath.Join(Dir(home), name, prompt.SkillFile)
	if file != "" {
		rel, err := cleanFile(file)
		if err != nil {
			return "", err
		}
		path = filepath.Join(Dir(home), name, rel)
	}
	if err := noLinks(Dir(home), path); err != nil {
		return "", err
	}
	data, err := regularfile.ReadAtMost(path, max(MaxSkillBytes, MaxFileBytes))
	switch {
	case errors.Is(err, fs.ErrNotExist) && file == "":
		return "", fmt.Errorf("%w: %s", ErrNotFound, name)
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: skill %s has no file %s", ErrNotFound, name, file)
	case err != nil:
		return "", fmt.Errorf("skill %s: %w", name, err)
	}
	return string(data), nil
}

// cleanFile checks a supporting file's path: relative, inside the skill,
// not SKILL.md itself. Pure.
func cleanFile(file string) (string, error) {
	rel := filepath.Clean(filepath.FromSlash(file))
	switch {
	case filepath.IsAbs(rel) || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		return "", fmt.Errorf("%w: file %q: give a path inside the skill, such as references/api.md", ErrInvalid, file)
	case strings.Count(rel, string(filepath.Separator)) > 3:
		return "", fmt.Errorf("%w: file %q is nested too deep (at most 4 levels)", ErrInvalid, file)
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if strings.HasPrefix(part, ".") {
			return "", fmt.Errorf("%w: file %q: hidden files and directories are not part of a skill", ErrInvalid, file)
		}
	}
	return rel, nil
}

// noLinks refuses a path under root that goes through a symbolic link:
// a skill's files are its own.
func noLinks(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, path)
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link", ErrInvalid, p)
		}
	}
	return nil
}

// files lists a skill's supporting files, relative, sorted.
func files(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != prompt.SkillFile && len(out) < MaxFiles {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}
