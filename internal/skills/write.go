package skills

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/talaria-agent/talaria/internal/prompt"
)

// Create makes the skill name from its SKILL.md text (checked).
func Create(home, name, text string) (Skill, error) {
	s, err := checked(name, text)
	if err != nil {
		return Skill{}, err
	}
	dir := filepath.Join(Dir(home), name)
	if _, err := os.Lstat(dir); err == nil {
		return Skill{}, fmt.Errorf("%w: %s (edit or patch it, or delete it first)", ErrExists, name)
	}
	if err := writeFile(home, name, prompt.SkillFile, text); err != nil {
		return Skill{}, err
	}
	return s, nil
}

// Replace gives an existing skill a new SKILL.md (checked).
func Replace(home, name, text string) (Skill, error) {
	s, err := checked(name, text)
	if err != nil {
		return Skill{}, err
	}
	if _, err := Read(home, name, ""); err != nil {
		return Skill{}, err
	}
	return s, writeFile(home, name, prompt.SkillFile, text)
}

// WriteFile writes a supporting file of an existing skill (scanned).
func WriteFile(home, name, file, content string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	rel, err := cleanFile(file)
	if err != nil {
		return err
	}
	if rel == prompt.SkillFile {
		return fmt.Errorf("%w: SKILL.md is written by create or edit", ErrInvalid)
	}
	if len(content) > MaxFileBytes {
		return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalid, file, len(content), MaxFileBytes)
	}
	if _, err := Read(home, name, ""); err != nil {
		return err
	}
	if err := Screen(content); err != nil {
		return err
	}
	return writeFile(home, name, rel, content)
}

// Delete removes a skill and its files.
func Delete(home, name string) error {
	if _, err := Read(home, name, ""); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(Dir(home), name)); err != nil {
		return fmt.Errorf("delete skill %s: %w", name, err)
	}
	return nil
}

func checked(name, text string) (Skill, error) {
	if err := CheckName(name); err != nil {
		return Skill{}, err
	}
	return Check(name, text)
}

// writeFile writes rel of the skill atomically (a temporary file renamed
// into place), through no symbolic link.
func writeFile(home, name, rel, content string) error {
	path := filepath.Join(Dir(home), name, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("skill %s: %w", name, err)
	}
	if err := noLinks(Dir(home), path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("skill %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return fmt.Errorf("skill %s: write %s: %w", name, rel, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("skill %s: write %s: %w", name, rel, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("skill %s: write %s: %w", name, rel, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("skill %s: write %s: %w", name, rel, err)
	}
	return nil
}

// Install copies the skill in directory src (its SKILL.md names it) into
// home, checking SKILL.md and scanning every file; symbolic links and
// hidden files are left out. It returns the skill installed.
func Install(home, src string) (Skill, error) {
	data, err := os.ReadFile(filepath.Join(src, prompt.SkillFile))
	if err != nil {
		return Skill{}, fmt.Errorf("%w: %s has no readable %s: %v", ErrInvalid, src, prompt.SkillFile, err)
	}
	h, _, err := parseHeader(string(data))
	if err != nil {
		return Skill{}, err
	}
	type file struct{ rel, content string }
	var extra []file
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." || rel == prompt.SkillFile {
			return nil
		}
		if _, cerr := cleanFile(rel); cerr != nil {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if len(extra) == MaxFiles {
			return fmt.Errorf("%w: more than %d files", ErrInvalid, MaxFiles)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(b) > MaxFileBytes {
			return fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, rel, MaxFileBytes)
		}
		if err := Screen(string(b)); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		extra = append(extra, file{rel, string(b)})
		return nil
	})
	if err != nil {
		return Skill{}, fmt.Errorf("install %s: %w", src, err)
	}
	s, err := Create(home, h.Name, string(data))
	if err != nil {
		return Skill{}, err
	}
	for _, f := range extra {
		if err := writeFile(home, s.Name, f.rel, f.content); err != nil {
			_ = os.RemoveAll(filepath.Join(Dir(home), s.Name))
			return Skill{}, fmt.Errorf("install %s: %w", src, err)
		}
	}
	return Load(home, s.Name)
}
