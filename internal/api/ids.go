package api

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	"github.com/talaria-agent/talaria/workflows"
)

// sessionIDPattern is what a session id may be (as the CLI's): 1-128
// letters, digits, '.', '_', '~' or '-', starting with a letter or digit.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$`)

// validSession reports whether id may name a session.
func validSession(id string) bool { return sessionIDPattern.MatchString(id) }

// newSessionID names a session the API starts.
func newSessionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "api-" + hex.EncodeToString(b[:])
}

// A run is a turn: its id names the conversation and the turn's number,
// "run_<n>_<session>", so any API process finds it without a table of its
// own. A response's id is the same with "resp_".
const (
	runPrefix      = "run_"
	responsePrefix = "resp_"
)

// runID is the id of the turn with workflow id turnID; "" when turnID is
// not a turn's id. Pure.
func runID(prefix, turnID string) string {
	session, n, ok := parseTurnID(turnID)
	if !ok {
		return ""
	}
	return prefix + strconv.Itoa(n) + "_" + session
}

// parseTurnID splits "turn/<session>/<n>". Pure.
func parseTurnID(turnID string) (session string, n int, ok bool) {
	rest, found := strings.CutPrefix(turnID, "turn/")
	i := strings.LastIndexByte(rest, '/')
	if !found || i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 1 || !validSession(rest[:i]) {
		return "", 0, false
	}
	return rest[:i], n, true
}

// parseRunID is the turn workflow id and the session of a run (or
// response) id; ok false when id is none. Pure.
func parseRunID(prefix, id string) (turnID, session string, ok bool) {
	rest, found := strings.CutPrefix(id, prefix)
	num, session, cut := strings.Cut(rest, "_")
	if !found || !cut || num == "" || len(num) > 9 || strings.TrimLeft(num, "0123456789") != "" || num[0] == '0' {
		return "", "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || !validSession(session) {
		return "", "", false
	}
	return workflows.TurnWorkflowID(session, n), session, true
}
