package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// V4A patch markers.
const (
	v4aBegin  = "*** Begin Patch"
	v4aEnd    = "*** End Patch"
	v4aUpdate = "*** Update File: "
	v4aAdd    = "*** Add File: "
	v4aDelete = "*** Delete File: "
	v4aMove   = "*** Move to: "
	v4aEOF    = "*** End of File"
)

// v4aFile is one file's section of a V4A patch.
type v4aFile struct {
	kind  string // v4aUpdate, v4aAdd or v4aDelete
	path  string
	hunks []v4aHunk
	added []string // Add File's lines
}

// v4aHunk is one change of an Update File: an optional anchor line, then
// the old and new lines (context in both).
type v4aHunk struct {
	anchor   string
	old, new []string
}

// parseV4A reads a V4A patch. Pure.
func parseV4A(text string) ([]v4aFile, error) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n"), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != v4aBegin {
		return nil, fmt.Errorf("a V4A patch starts with %q", v4aBegin)
	}
	if strings.TrimSpace(lines[len(lines)-1]) != v4aEnd {
		return nil, fmt.Errorf("a V4A patch ends with %q", v4aEnd)
	}
	var files []v4aFile
	var cur *v4aFile
	var hunk *v4aHunk
	flush := func() {
		if cur != nil && hunk != nil && (len(hunk.old) > 0 || len(hunk.new) > 0) {
			cur.hunks = append(cur.hunks, *hunk)
		}
		hunk = nil
	}
	for n, l := range lines[1 : len(lines)-1] {
		at := fmt.Sprintf("line %d", n+2)
		switch {
		case strings.HasPrefix(l, v4aUpdate), strings.HasPrefix(l, v4aAdd), strings.HasPrefix(l, v4aDelete):
			flush()
			kind := l[:strings.Index(l, ": ")+2]
			path := strings.TrimSpace(l[len(kind):])
			if path == "" {
				return nil, fmt.Errorf("%s: %q names no file", at, strings.TrimSpace(kind))
			}
			for _, f := range files {
				if f.path == path {
					return nil, fmt.Errorf("%s: %s appears twice; put all its changes in one section", at, path)
				}
			}
			files = append(files, v4aFile{kind: kind, path: path})
			cur = &files[len(files)-1]
		case cur == nil:
			if strings.TrimSpace(l) != "" {
				return nil, fmt.Errorf("%s: expected %q, %q or %q", at, strings.TrimSpace(v4aUpdate), strings.TrimSpace(v4aAdd), strings.TrimSpace(v4aDelete))
			}
		case strings.HasPrefix(l, v4aMove):
			return nil, fmt.Errorf("%s: moving files is not supported in a patch; move it with the terminal (mv), then patch it", at)
		case strings.TrimSpace(l) == v4aEOF:
		case cur.kind == v4aDelete:
			if strings.TrimSpace(l) != "" {
				return nil, fmt.Errorf("%s: a Delete File section has no lines", at)
			}
		case cur.kind == v4aAdd:
			if !strings.HasPrefix(l, "+") {
				return nil, fmt.Errorf("%s: every line of an Add File section starts with \"+\"", at)
			}
			cur.added = append(cur.added, l[1:])
		case strings.HasPrefix(l, "@@"):
			flush()
			hunk = &v4aHunk{anchor: strings.TrimSpace(strings.TrimPrefix(l, "@@"))}
		default:
			if hunk == nil {
				hunk = &v4aHunk{}
			}
			if l == "" { // an empty context line whose space was lost
				l = " "
			}
			switch l[0] {
			case ' ':
				hunk.old, hunk.new = append(hunk.old, l[1:]), append(hunk.new, l[1:])
			case '-':
				hunk.old = append(hunk.old, l[1:])
			case '+':
				hunk.new = append(hunk.new, l[1:])
			default:
				return nil, fmt.Errorf("%s: a hunk line starts with \" \" (context), \"-\" (removed) or \"+\" (added), got %q", at, clipLine(l))
			}
		}
	}
	flush()
	if len(files) == 0 {
		return nil, errors.New("the patch changes no file")
	}
	for _, f := range files {
		if f.kind == v4aUpdate && len(f.hunks) == 0 {
			return nil, fmt.Errorf("the Update File section of %s has no change", f.path)
		}
	}
	return files, nil
}

// planPatch checks a V4A patch against the files and plans every edit;
// nothing is written.
func planPatch(env Env, text string) ([]fileEdit, error) {
	files, err := parseV4A(text)
	if err != nil {
		return nil, fmt.Errorf("%w for patch: %w", ErrInvalidArguments, err)
	}
	edits := make([]fileEdit, 0, len(files))
	for _, f := range files {
		e, err := loadEdit(env, f.path, f.kind == v4aUpdate)
		if err != nil {
			return nil, err
		}
		switch f.kind {
		case v4aAdd:
			e.after = strings.Join(f.added, "\n") + "\n"
			switch {
			case e.existed && e.before == e.after:
				e.applied = true
			case e.existed:
				return nil, fmt.Errorf("patch: %s exists already; change it with an Update File section", e.target.Abs)
			}
		case v4aDelete:
			e.remove, e.applied = e.existed, !e.existed
		default:
			e.after, e.applied, err = applyHunks(e.before, f.hunks)
			if err != nil {
				return nil, fmt.Errorf("patch %s: %w", e.target.Abs, err)
			}
		}
		edits = append(edits, e)
	}
	return edits, nil
}

// applyHunks applies an Update File's hunks in order, each after the one
// before (and after its anchor line, when it has one). A hunk whose new
// lines are there and old ones are not is taken as applied; applied is
// true when all are. Pure.
func applyHunks(content string, hunks []v4aHunk) (after string, applied bool, err error) {
	cursor, skipped := 0, 0
	for i, h := range hunks {
		from := cursor
		if h.anchor != "" {
			at := anchorLine(content, cursor, h.anchor)
			if at < 0 {
				return "", false, fmt.Errorf("hunk %d: the anchor line %q is not in the file (after the previous hunk)", i+1, clipLine(h.anchor))
			}
			from = at
		}
		old, repl := joinLines(h.old), joinLines(h.new)
		if old == "" { // only added lines: after the anchor, or at the end
			insertAt := len(content)
			if h.anchor != "" {
				insertAt = lineEnd(content, from)
			}
			if strings.Contains(content[from:], repl) {
				skipped++
				continue
			}
			content = content[:insertAt] + ensureNewline(content[:insertAt]) + repl + content[insertAt:]
			cursor = insertAt + len(repl)
			continue
		}
		spans, _ := findMatches(content[from:], old)
		if len(spans) == 0 {
			if strings.Contains(content[from:], repl) && repl != "" {
				skipped++
				continue
			}
			msg := fmt.Sprintf("hunk %d: its lines (context and removed) are not in the file", i+1)
			if near := closestMatch(content, old); near != "" {
				msg += "; the closest lines are:\n" + near
			}
			return "", false, refuse(errPatchNotFound, "%s", msg)
		}
		s := spans[0]
		s.start, s.end = s.start+from, s.end+from
		content = content[:s.start] + repl + content[s.end:]
		cursor = s.start + len(repl)
	}
	return content, skipped == len(hunks), nil
}

// joinLines joins hunk lines into text ending with a newline ("" for
// none). Pure.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// anchorLine is the start of the first line at or after from whose
// trimmed text contains anchor, or -1. Pure.
func anchorLine(content string, from int, anchor string) int {
	for _, l := range splitLines(content[from:]) {
		if strings.Contains(strings.TrimSpace(l.text), anchor) {
			return from + l.start
		}
	}
	return -1
}

// lineEnd is the offset just after the line starting at start. Pure.
func lineEnd(content string, start int) int {
	if i := strings.IndexByte(content[start:], '\n'); i >= 0 {
		return start + i + 1
	}
	return len(content)
}

// ensureNewline is "\n" when text is not empty and does not end with one.
func ensureNewline(text string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		return "\n"
	}
	return ""
}

// removeChecked deletes a checked file through an os.Root at its root, so
// a directory swapped for a symlink cannot lead outside it.
func removeChecked(target checkedPath) error {
	root, err := os.OpenRoot(target.Root)
	if err != nil {
		return fmt.Errorf("open root %s: %w", target.Root, err)
	}
	defer root.Close()
	rel, err := filepath.Rel(target.Root, target.Real)
	if err != nil || rel == "." {
		return errors.New("is a directory")
	}
	info, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !info.Mode().IsRegular():
		return errors.New(notRegular("patch", info.Mode()))
	}
	return root.Remove(rel)
}
