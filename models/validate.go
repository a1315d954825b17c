package models

import (
	"fmt"
	"unicode/utf8"
)

// Column sizes of the identifier columns; the tags in types.go match them.
const (
	maxSessionIDLen = 128
	maxTurnIDLen    = 256
	maxIdemKeyLen   = 512
)

// checkID rejects an empty or oversized identifier, so that both dialects
// refuse the same input.
func checkID(what, value string, max int) error {
	if value == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidArgument, what)
	}
	if utf8.RuneCountInString(value) > max {
		return fmt.Errorf("%w: %s longer than %d characters", ErrInvalidArgument, what, max)
	}
	return nil
}
