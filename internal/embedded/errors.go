package embedded

import "errors"

var (
	// ErrDataDir reports that the data directory is unusable: it cannot be
	// created, is not a directory, or is not writable. The cause is wrapped.
	ErrDataDir = errors.New("embedded: data directory unusable")
	// ErrDataDirLocked reports that another server (in this or another
	// process) already uses the data directory.
	ErrDataDirLocked = errors.New("embedded: data directory in use by another server")
	// ErrPortUnavailable reports that the requested frontend address cannot
	// be bound.
	ErrPortUnavailable = errors.New("embedded: frontend port unavailable")
	// ErrInvalidOptions reports an option value that cannot be used.
	ErrInvalidOptions = errors.New("embedded: invalid options")
	// ErrNotReady reports that the server started but did not become ready
	// (frontend healthy and namespace visible) before the context ended.
	ErrNotReady = errors.New("embedded: server did not become ready")
)
