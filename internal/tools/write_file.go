package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// writeFileArgs are write_file's arguments.
type writeFileArgs struct {
	Path    string `json:"path" jsonschema:"Path of the file to write, absolute or relative to the working directory."`
	Content string `json:"content" jsonschema:"The complete new content of the file."`
}

type writeFileResult struct {
	Path         string `json:"path"`
	BytesWritten int    `json:"bytes_written"`
}

// WriteFile is the write_file tool. Writing is reported as not idempotent:
// the engine must not silently re-run it after a crash.
var WriteFile = Define(Spec[writeFileArgs]{
	Name: "write_file",
	Description: `Write a file, replacing its entire content; the file and any missing parent directories are created. ` +
		`Relative paths resolve against the working directory; "~" is the home directory. ` +
		`Only paths under the working directory (and configured extra roots) can be written, symlinks resolved; credential and shell start-up files, ~/bin and .git hooks or config never. ` +
		`The write is atomic: readers see either the old or the new content, never a partial file. ` +
		`An existing file keeps its permissions; a new one gets 0644. ` +
		`The result is JSON: {"path": absolute path, "bytes_written": n}. ` +
		`To change part of a file, read it first and write back the complete new content.`,
	Meta: Meta{
		Toolset:      "file",
		Guidance:     "write_file replaces the whole file: write the complete new content, never a fragment.",
		GuidanceRank: 30,
		Approval:     "paths checked: working directory and write roots only",
		FromCode:     true,
	},
	Quick: true, // writing one file
	Run: func(ctx context.Context, env Env, a writeFileArgs) (string, error) {
		if err := requirePath("write_file", a.Path); err != nil {
			return "", err
		}
		target, err := env.writablePath("write_file", a.Path)
		if err != nil {
			return "", err
		}
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("write_file %s: %w: %w", target.Abs, ErrCancelled, err)
		}
		if err := writeChecked(target, []byte(a.Content)); err != nil {
			return "", fmt.Errorf("write_file %s: %w; nothing was written", target.Abs, err)
		}
		return marshalResult(writeFileResult{Path: target.Abs, BytesWritten: len(a.Content)})
	},
})

// writeChecked writes data to a temporary file in the target's directory
// and renames it over the target, so the target is never seen half-written.
// Every step goes through an os.Root opened at the target's root, so a
// directory swapped for a symlink after the check cannot lead outside it;
// parent directories are created only now, after the check; a target that
// became a symlink is refused rather than followed.
func writeChecked(target checkedPath, data []byte) (err error) {
	// A configured root that does not exist yet is created.
	if err := os.MkdirAll(target.Root, 0o755); err != nil {
		return fmt.Errorf("create root %s: %w", target.Root, err)
	}
	root, err := os.OpenRoot(target.Root)
	if err != nil {
		return fmt.Errorf("open root %s: %w", target.Root, err)
	}
	defer root.Close()
	rel, err := filepath.Rel(target.Root, target.Real)
	if err != nil || rel == "." {
		return errors.New("is a directory")
	}
	mode := fs.FileMode(0o644)
	info, statErr := root.Lstat(rel)
	switch {
	case statErr == nil && info.Mode()&fs.ModeSymlink != 0:
		return errors.New("became a symbolic link while being written")
	case statErr == nil && info.IsDir():
		return errors.New("is a directory")
	case statErr == nil && !info.Mode().IsRegular():
		// A FIFO, socket or device is never replaced: the write would
		// destroy it, and writing into one could block.
		return errors.New(notRegular("write_file", info.Mode()))
	case statErr == nil:
		mode = info.Mode().Perm()
	case !errors.Is(statErr, fs.ErrNotExist):
		return statErr
	}
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create parent directories: %w", err)
	}
	tmpName := filepath.Join(dir, "."+filepath.Base(rel)+".tmp-"+randomHex(6))
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			root.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write temporary file: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("set permissions: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync temporary file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close temporary file: %w", err)
	}
	if err := root.Rename(tmpName, rel); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeAtomic writes data to path atomically, for tools that write their own
// files (outside the model's choice of path): a temporary file in the same
// directory, renamed over the target. A symlink target is written through.
func writeAtomic(path string, data []byte) error {
	if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
		if target, terr := filepath.EvalSymlinks(path); terr == nil {
			path = target
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create parent directories: %w", err)
	}
	return writeChecked(checkedPath{Abs: path, Real: path, Root: dir}, data)
}

// write_file is a built-in tool.
var _ = builtin(func(Services) Tool { return WriteFile })
