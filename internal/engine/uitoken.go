package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/talaria-agent/talaria/internal/embedded"
)

// uiTokenFile holds the Web UI's token, beside the credential.
const uiTokenFile = "ui-token"

// UITokenPath is the file holding the token that opens the Web UI of the
// embedded Temporal of home. Only its owner can read it.
func UITokenPath(home string) string {
	return filepath.Join(home, credentialDir, uiTokenFile)
}

// UIToken returns the Web UI's token kept in home, first making one when
// it is missing or unusable. The directory is made 0700 and the file 0600;
// the token stays the same across restarts, so a browser let in once stays
// in. Two processes making it at once end with the first one's.
func UIToken(home string) (string, error) {
	path := UITokenPath(home)
	tok, err := readUIToken(path)
	if err != nil || tok != "" {
		return tok, err
	}
	if tok, err = embedded.NewUIToken(); err != nil {
		return "", err
	}
	// A file that exists is unusable (too short): replace it. Else keep
	// the one another process may write meanwhile, and read it back.
	_, statErr := os.Stat(path)
	if err := writePrivate(filepath.Dir(path), uiTokenFile, []byte(tok+"\n"), statErr != nil); err != nil {
		return "", fmt.Errorf("keep the web UI token: %w", err)
	}
	if tok, err = readUIToken(path); err == nil && tok == "" {
		err = fmt.Errorf("keep the web UI token: %s is unusable", path)
	}
	return tok, err
}

// readUIToken is the token in path; empty when the file is missing or
// too short to be one.
func readUIToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read the web UI token: %w", err)
	}
	if tok := strings.TrimSpace(string(data)); len(tok) >= embedded.MinUITokenLen {
		return tok, nil
	}
	return "", nil
}
