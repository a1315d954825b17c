package main

import (
	"errors"

	"go.temporal.io/api/serviceerror"
)

// isNotFound reports a workflow that does not exist (a session never used).
func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return err != nil && errors.As(err, &nf)
}
