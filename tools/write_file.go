package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	openai "github.com/sashabaranov/go-openai"
)

const writeFileDescription = `Write a file, replacing its entire content; the file and any missing parent directories are created. ` +
	`Relative paths resolve against the working directory; "~" is the home directory. ` +
	`The write is atomic: readers see either the old or the new content, never a partial file. ` +
	`An existing file keeps its permissions; a new one gets 0644. ` +
	`The result is JSON: {"path": absolute path, "bytes_written": n}. ` +
	`To change part of a file, read it first and write back the complete new content.`

const writeFileSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"Path of the file to write, absolute or relative to the working directory."},` +
	`"content":{"type":"string","description":"The complete new content of the file."}` +
	`},"required":["path","content"],"additionalProperties":false}`

// WriteFileTool is the write_file tool. The zero value is ready to use.
type WriteFileTool struct{}

type writeFileResult struct {
	Path         string `json:"path"`
	BytesWritten int    `json:"bytes_written"`
}

// Name implements Tool.
func (WriteFileTool) Name() string { return "write_file" }

// Idempotent implements Tool. Writing is reported as not idempotent: the
// engine must not silently re-run it after a crash.
func (WriteFileTool) Idempotent() bool { return false }

// Definition implements Tool.
func (t WriteFileTool) Definition() openai.Tool {
	return functionTool(t.Name(), writeFileDescription, writeFileSchema)
}

// Run implements Tool.
func (t WriteFileTool) Run(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	a, err := parseArgs(t.Name(), raw)
	if err != nil {
		return "", err
	}
	path, err := a.requiredPath()
	if err != nil {
		return "", err
	}
	content, err := a.requiredStr("content")
	if err != nil {
		return "", err
	}
	abs, err := env.resolvePath(path)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("write_file %s: %w: %w", abs, ErrCancelled, err)
	}
	if err := writeAtomic(abs, []byte(content)); err != nil {
		return "", fmt.Errorf("write_file %s: %w", abs, err)
	}
	return marshalResult(writeFileResult{Path: abs, BytesWritten: len(content)})
}

// writeAtomic writes data to a temporary file in the target's directory and
// renames it over the target, so the target is never seen half-written.
func writeAtomic(path string, data []byte) (err error) {
	// Writing through a symlink replaces the file it points to, not the link.
	if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
		if target, terr := filepath.EvalSymlinks(path); terr == nil {
			path = target
		}
	}
	mode := fs.FileMode(0o644)
	info, statErr := os.Stat(path)
	switch {
	case statErr == nil && info.IsDir():
		return errors.New("is a directory")
	case statErr == nil:
		mode = info.Mode().Perm()
	case !errors.Is(statErr, fs.ErrNotExist):
		return statErr
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create parent directories: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
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
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}
