package models

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Column sizes of the identifier columns; the tags in types.go match them.
const (
	maxSessionIDLen = 128
	maxTurnIDLen    = 256
	maxIdemKeyLen   = 512
)

// checkID rejects an empty or oversized identifier, or one that is not
// valid UTF-8 or holds a NUL byte (identifiers are stored as they are, not
// escaped like text), so that both dialects refuse the same input. Keys
// stored escaped are checked in their stored form (EncodeText).
func checkID(what, value string, max int) error {
	if value == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidArgument, what)
	}
	if !utf8.ValidString(value) || strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("%w: %s is not valid UTF-8 text", ErrInvalidArgument, what)
	}
	if utf8.RuneCountInString(value) > max {
		return fmt.Errorf("%w: %s longer than %d characters", ErrInvalidArgument, what, max)
	}
	return nil
}
