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
// in.
func UIToken(home string) (string, error) {
	path := UITokenPath(home)
	data, err := os.ReadFile(path)
	if err == nil {
		if tok := strings.TrimSpace(string(data)); len(tok) >= embedded.MinUITokenLen {
			return tok, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read the web UI token: %w", err)
	}
	tok, err := embedded.NewUIToken()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("keep the web UI token: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), uiTokenFile+".*")
	if err != nil {
		return "", fmt.Errorf("keep the web UI token: %w", err)
	}
	_, werr := tmp.WriteString(tok + "\n")
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("keep the web UI token: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("keep the web UI token: %w", err)
	}
	return tok, nil
}
