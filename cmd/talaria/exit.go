package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the turn did not complete, or the command failed
	exitUsage   = 2 // bad flags, bad configuration, unusable environment
)

// exitError carries an exit status; a nil err prints nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr marks err as a usage or configuration problem (exit 2).
func usageErr(err error) error { return &exitError{code: exitUsage, err: err} }

// usagef formats a usage or configuration problem (exit 2).
func usagef(format string, args ...any) error { return usageErr(fmt.Errorf(format, args...)) }

// noArgs rejects positional arguments as a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q (see '%s --help')", c.CommandPath(), args[0], c.CommandPath())
	}
	return nil
}
