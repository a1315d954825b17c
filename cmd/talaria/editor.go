package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"mvdan.cc/sh/v3/shell"
)

// editorArgs splits an editor command such as "code -w" or
// `"/opt/My Editor/bin/ed" --wait` into its program and arguments, as a
// shell would (quotes, variables, ~), and appends path. An empty editor is
// vi. Pure but for the environment that env reads.
func editorArgs(editor, path string, env func(string) string) ([]string, error) {
	if strings.TrimSpace(editor) == "" {
		return []string{"vi", path}, nil
	}
	fields, err := shell.Fields(editor, env)
	if err != nil {
		return nil, fmt.Errorf("$EDITOR %q cannot be read as a command: %w", editor, err)
	}
	if len(fields) == 0 || fields[0] == "" {
		return nil, fmt.Errorf("$EDITOR %q names no program", editor)
	}
	return append(fields, path), nil
}

// runEditor opens path in $EDITOR (default vi) on this terminal and waits
// for it to exit.
func runEditor(ctx context.Context, path string) error {
	args, err := editorArgs(os.Getenv("EDITOR"), path, nil)
	if err != nil {
		return usageErr(err)
	}
	run := exec.CommandContext(ctx, args[0], args[1:]...)
	run.Stdin, run.Stdout, run.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := run.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("the editor (%s) exited with status %d", strings.Join(args[:len(args)-1], " "), exit.ExitCode())
		}
		return usageErr(fmt.Errorf("run the editor %q: %w", args[0], err))
	}
	return nil
}
