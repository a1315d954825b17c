package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// patch limits.
const (
	// patchMaxFileBytes is the largest file patch edits.
	patchMaxFileBytes = 8 << 20
	// patchMaxDiffChars caps the diff in the result.
	patchMaxDiffChars = 6000
)

// patchArgs are patch's arguments: replace mode's or patch mode's.
type patchArgs struct {
	Path       string  `json:"path,omitempty" jsonschema:"Replace mode: the file to edit."`
	OldString  *string `json:"old_string,omitempty" jsonschema:"Replace mode: the exact text to replace, with enough context to be unique."`
	NewString  *string `json:"new_string,omitempty" jsonschema:"Replace mode: the text to put in its place (may be empty to delete)."`
	ReplaceAll bool    `json:"replace_all,omitempty" jsonschema:"Replace mode: replace every occurrence instead of requiring one. Default false."`
	Patch      *string `json:"patch,omitempty" jsonschema:"Patch mode: a V4A patch (*** Begin Patch ... *** End Patch) for one or more files."`
}

// Patch is the patch tool. Patching changes files: a retry after a crash
// is answered "outcome unknown"; the model's own repeat of a patch that
// took effect is reported already applied.
var Patch = Define(Spec[patchArgs]{
	Name: "patch",
	Description: `Edit files precisely. ` +
		`Replace mode {path, old_string, new_string, replace_all?}: old_string must occur exactly once in the file (or set replace_all to replace every occurrence); ` +
		`when it is not found exactly, lines are matched ignoring their leading and trailing whitespace, then with runs of whitespace taken as one space. ` +
		`A missing or ambiguous old_string is an error showing the closest lines or where it occurs, with line numbers: read the file and give more context. ` +
		`Patch mode {patch}: a V4A patch for several files at once: "*** Begin Patch", then per file "*** Update File: PATH" with hunks ` +
		`("@@ a line just before the change" optional, then lines starting with " " (context), "-" (removed) and "+" (added)), "*** Add File: PATH" with "+" lines, or "*** Delete File: PATH"; then "*** End Patch". ` +
		`Every change is checked before any file is written; each file is written atomically. Paths follow write_file's rules. ` +
		`A change already in the file (the new text is there, the old one is not) is reported as already applied, not as an error. ` +
		`The result is JSON with each file's path, what was done and a unified diff.`,
	Meta: Meta{
		Toolset:      "file",
		Guidance:     "To change part of a file, use patch with an old_string copied exactly from the file and enough lines around it to be unique; several files at once go in one V4A patch.",
		GuidanceRank: 40,
		Approval:     "paths checked: working directory and write roots only",
		FromCode:     true,
	},
	Quick: true, // reading and writing a few files
	Run:   runPatch,
})

// patchFile is what patch did to one file.
type patchFile struct {
	Path string `json:"path"`
	// Action is "updated", "added", "deleted" or "already applied".
	Action       string `json:"action"`
	Replacements int    `json:"replacements,omitempty"`
	// Match names the fallback that found old_string ("" when exact).
	Match string `json:"match,omitempty"`
}

type patchResult struct {
	Files []patchFile `json:"files"`
	Diff  string      `json:"diff,omitempty"`
}

// runPatch plans every change, then writes them.
func runPatch(ctx context.Context, env Env, a patchArgs) (string, error) {
	var edits []fileEdit
	var err error
	if a.Patch != nil {
		if a.Path != "" {
			return "", invalidArgs("patch", `give either "patch" or "path" with "old_string" and "new_string", not both`)
		}
		edits, err = planPatch(env, *a.Patch)
	} else {
		edits, err = planReplace(env, a)
	}
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("patch: %w: %w; nothing was written", ErrCancelled, err)
	}
	return applyEdits(env, edits)
}

// fileEdit is one file's planned change: its content before and after.
type fileEdit struct {
	target       checkedPath
	before       string
	after        string
	existed      bool
	remove       bool
	replacements int
	match        string
	applied      bool // the change is in the file already
}

// planReplace plans replace mode's edit of one file.
func planReplace(env Env, a patchArgs) ([]fileEdit, error) {
	if err := requirePath("patch", a.Path); err != nil {
		return nil, err
	}
	if a.OldString == nil || a.NewString == nil {
		return nil, invalidArgs("patch", "missing required argument %q", map[bool]string{true: "old_string", false: "new_string"}[a.OldString == nil])
	}
	path, old, repl, all := a.Path, *a.OldString, *a.NewString, a.ReplaceAll
	if old == "" {
		return nil, invalidArgs("patch", `"old_string" is empty: to create a file use write_file, to add text give the lines around where it goes`)
	}
	if old == repl {
		return nil, invalidArgs("patch", `"old_string" and "new_string" are the same: nothing would change`)
	}
	e, err := loadEdit(env, path, true)
	if err != nil {
		return nil, err
	}
	after, n, match, applied, err := replaceIn(e.before, old, repl, all)
	if err != nil {
		return nil, fmt.Errorf("patch %s: %w", e.target.Abs, err)
	}
	e.after, e.replacements, e.match, e.applied = after, n, match, applied
	return []fileEdit{e}, nil
}

// errPatchNotFound and errPatchAmbiguous are replace errors the model
// reads; the message carries the closest lines or the occurrences.
var (
	errPatchNotFound  = errors.New("old_string not found")
	errPatchAmbiguous = errors.New("old_string is not unique")
)

// replaceIn replaces old by repl in content: the one occurrence, or all
// with all. A change already made (old absent, repl present) is applied
// with nothing to do. Pure.
func replaceIn(content, old, repl string, all bool) (after string, n int, match string, applied bool, err error) {
	spans, match := findMatches(content, old)
	switch {
	case len(spans) > 0 && insideReplacements(content, repl, spans):
		// The new text holds the old one and is there already, around
		// every occurrence: replacing again would apply the change twice.
		return content, 0, "", true, nil
	case len(spans) == 0 && repl != "" && strings.Contains(content, repl):
		return content, 0, "", true, nil
	case len(spans) == 0:
		msg := errPatchNotFound.Error() + " (not even with whitespace ignored)"
		if near := closestMatch(content, old); near != "" {
			msg += "; the closest lines are:\n" + near
		}
		return "", 0, "", false, refuse(errPatchNotFound, "%s", msg)
	case len(spans) > 1 && !all:
		var lines []string
		for _, s := range spans {
			if n := fmt.Sprint(lineNumber(content, s.start)); len(lines) < 10 && !slices.Contains(lines, n) {
				lines = append(lines, n)
			}
		}
		return "", 0, "", false, refuse(errPatchAmbiguous,
			"old_string occurs %d times (at lines %s): include more surrounding lines to make it unique, or set replace_all", len(spans), strings.Join(lines, ", "))
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(content[last:s.start])
		b.WriteString(repl)
		last = s.end
	}
	b.WriteString(content[last:])
	if match == matchExact {
		match = ""
	}
	return b.String(), len(spans), match, false, nil
}

// insideReplacements reports whether every span lies within an
// occurrence of repl in content. Pure.
func insideReplacements(content, repl string, spans []span) bool {
	if repl == "" {
		return false
	}
	found := exactMatches(content, repl)
	if len(found) == 0 {
		return false
	}
	for _, s := range spans {
		inside := false
		for _, f := range found {
			if f.start <= s.start && s.end <= f.end {
				inside = true
				break
			}
		}
		if !inside {
			return false
		}
	}
	return true
}

// loadEdit checks that path may be read and written and reads it: a
// missing file is an error when mustExist.
func loadEdit(env Env, path string, mustExist bool) (fileEdit, error) {
	target, err := env.writablePath("patch", path)
	if err != nil {
		return fileEdit{}, err
	}
	source, err := env.readablePath("patch", path)
	if err != nil {
		return fileEdit{}, err
	}
	f, err := env.openReadable("patch", source)
	if err != nil {
		if !mustExist && errors.Is(err, fs.ErrNotExist) {
			return fileEdit{target: target}, nil
		}
		return fileEdit{}, explainOpenError("patch", source, err)
	}
	defer f.Close()
	if err := checkOpenedRegular("patch", source.Abs, f); err != nil {
		return fileEdit{}, err
	}
	data, err := io.ReadAll(io.LimitReader(f, patchMaxFileBytes+1))
	if err != nil {
		return fileEdit{}, fmt.Errorf("patch %s: %w", source.Abs, err)
	}
	if len(data) > patchMaxFileBytes {
		return fileEdit{}, fmt.Errorf("patch %s: the file is larger than %d MiB; edit it with the terminal", source.Abs, patchMaxFileBytes>>20)
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return fileEdit{}, fmt.Errorf("patch %s: %w: it is not a text file", source.Abs, ErrBinaryFile)
	}
	return fileEdit{target: target, before: string(data), existed: true}, nil
}

// applyEdits writes every planned edit, each atomically, and reports them
// with one diff.
func applyEdits(env Env, edits []fileEdit) (string, error) {
	var res patchResult
	var diff strings.Builder
	for i, e := range edits {
		f := patchFile{Path: e.target.Abs, Replacements: e.replacements, Match: e.match}
		switch {
		case e.applied:
			f.Action = "already applied"
		case e.remove:
			f.Action = "deleted"
			if err := removeChecked(e.target); err != nil {
				return "", partial(edits[:i], fmt.Errorf("patch: delete %s: %w", e.target.Abs, err))
			}
		default:
			f.Action = "updated"
			if !e.existed {
				f.Action = "added"
			}
			if err := writeChecked(e.target, []byte(e.after)); err != nil {
				return "", partial(edits[:i], fmt.Errorf("patch %s: %w", e.target.Abs, err))
			}
		}
		res.Files = append(res.Files, f)
		if !e.applied {
			diff.WriteString(unifiedDiff(e))
		}
	}
	res.Diff = clipDiff(diff.String())
	return marshalResult(res)
}

// partial says which files were written before a write failed.
func partial(done []fileEdit, err error) error {
	if len(done) == 0 {
		return fmt.Errorf("%w; nothing was written", err)
	}
	names := make([]string, len(done))
	for i, e := range done {
		names[i] = e.target.Abs
	}
	return fmt.Errorf("%w; already written: %s", err, strings.Join(names, ", "))
}

// unifiedDiff is the edit as a unified diff with 3 lines of context. Pure.
func unifiedDiff(e fileEdit) string {
	from, to := "a"+e.target.Abs, "b"+e.target.Abs
	if !e.existed {
		from = "/dev/null"
	}
	after := e.after
	if e.remove {
		to, after = "/dev/null", ""
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(e.before), B: difflib.SplitLines(after),
		FromFile: from, ToFile: to, Context: 3,
	})
	if err != nil {
		return ""
	}
	return d
}

// clipDiff cuts a long diff, saying so. Pure.
func clipDiff(d string) string {
	if len(d) <= patchMaxDiffChars {
		return d
	}
	cut := strings.LastIndexByte(d[:patchMaxDiffChars], '\n') + 1
	return d[:cut] + fmt.Sprintf("... (diff cut: %d more characters; read the file to see the rest)\n", len(d)-cut)
}

// patch is a built-in tool.
var _ = builtin(func(Services) Tool { return Patch })
