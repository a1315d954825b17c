package main

import (
	"fmt"
	"regexp"

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

// goParse is how Go's strconv says a flag's value is not one.
var goParse = regexp.MustCompile(`strconv\.Parse(Int|Uint|Float|Bool): parsing "[^"]*": (invalid syntax|value out of range)`)

// plainFlagError is a flag parser's error in a person's words: "not a
// number", "out of range", never Go's function names. Pure.
func plainFlagError(msg string) string {
	return goParse.ReplaceAllStringFunc(msg, func(m string) string {
		switch sub := goParse.FindStringSubmatch(m); {
		case sub[2] == "value out of range":
			return "out of range"
		case sub[1] == "Bool":
			return "not true or false"
		case sub[1] == "Float":
			return "not a number"
		}
		return "not a whole number"
	})
}

// noArgs rejects positional arguments as a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q (see '%s --help')", c.CommandPath(), args[0], c.CommandPath())
	}
	return nil
}
