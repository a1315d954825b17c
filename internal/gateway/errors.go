package gateway

import (
	"errors"

	"go.temporal.io/api/serviceerror"
)

// isNotFound reports whether err says the session's coordinator is gone
// (nothing runs there).
func isNotFound(err error) bool {
	var missing *serviceerror.NotFound
	return errors.As(err, &missing)
}
