//go:build !unix

package embedded

// dirLock is a no-op where flock is unavailable.
type dirLock struct{}

func lockDataDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (l *dirLock) release() error { return nil }
