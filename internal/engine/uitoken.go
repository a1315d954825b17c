package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/talaria-agent/talaria/internal/embedded"
	"github.com/talaria-agent/talaria/workflows"
)

// Files beside the credential holding the home's generated tokens.
const (
	// uiTokenFile holds the Web UI's token.
	uiTokenFile = "ui-token"
	// apiKeyFile holds the HTTP API's generated key.
	apiKeyFile = "api-key"
)

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
	return privateToken(UITokenPath(home), "the web UI token")
}

// APIKeyPath is the file holding the key of the HTTP API of home when the
// configuration sets none (api.key). Only its owner can read it.
func APIKeyPath(home string) string {
	return filepath.Join(home, credentialDir, apiKeyFile)
}

// APIKey returns the HTTP API's generated key kept in home, made as
// UIToken makes its token: private, stable across restarts, the first
// writer's when two processes make it at once.
func APIKey(home string) (string, error) {
	return privateToken(APIKeyPath(home), "the API key")
}

// privateToken returns the token in path, first making one when the file
// is missing or unusable; what names it in errors.
func privateToken(path, what string) (string, error) {
	tok, err := readToken(path, what)
	if err != nil || tok != "" {
		return tok, err
	}
	if tok, err = embedded.NewUIToken(); err != nil {
		return "", err
	}
	// A file that exists is unusable (too short): replace it. Else keep
	// the one another process may write meanwhile, and read it back.
	_, statErr := os.Stat(path)
	if err := writePrivate(filepath.Dir(path), filepath.Base(path), []byte(tok+"\n"), statErr != nil); err != nil {
		return "", fmt.Errorf("keep %s: %w", what, err)
	}
	if tok, err = readToken(path, what); err == nil && tok == "" {
		err = fmt.Errorf("keep %s: %s is unusable", what, path)
	}
	return tok, err
}

// readToken is the token in path; empty when the file is missing or too
// short to be one.
func readToken(path, what string) (string, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read %s: %w", what, err)
	}
	if tok := strings.TrimSpace(string(data)); len(tok) >= embedded.MinUITokenLen {
		return tok, nil
	}
	return "", nil
}

// SessionUILink opens session's turns in the Web UI of the serve running
// on home: its login URL (from serve.json) aimed at the namespace's
// workflows with TalariaSessionId = session. "" when serve runs no UI.
func SessionUILink(home, namespace, session string) string {
	info, err := ReadServeInfo(home)
	if err != nil || info.UI == "" {
		return ""
	}
	return sessionUIURL(info.UI, namespace, session)
}

// sessionUIURL is login (a Web UI URL with its token) aimed at the
// workflows of session in namespace. Pure.
func sessionUIURL(login, namespace, session string) string {
	u, err := url.Parse(login)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("query", fmt.Sprintf("%s=%q", workflows.SearchAttrSessionID, session))
	u.Path, u.RawPath = "/namespaces/"+namespace+"/workflows", ""
	u.RawQuery = q.Encode()
	return u.String()
}
