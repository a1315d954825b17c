package tools

import (
	"context"
	"encoding/json"
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// SessionSearchName is the name of the session_search tool.
const SessionSearchName = "session_search"

const sessionSearchDescription = `Search the text of past conversations (all sessions, full-text, case-insensitive): a message matches when it holds every word of the query, in any order; words in double quotes must appear together as a phrase. ` +
	`Use it when the user refers to something discussed before ("the codename we picked", "last week's fix"). ` +
	`Results are grouped by conversation, newest first (a session continued after context compression counts once), ` +
	`each match with the messages around it.`

const sessionSearchSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"The words to find (all must appear; \"double quotes\" keep a phrase)."},` +
	`"limit":{"type":"integer","description":"How many matching messages at most (default 10, max 50)."}` +
	`},"required":["query"],"additionalProperties":false}`

// SearchMatch is one message of a search result.
type SearchMatch struct {
	Role    string   `json:"role"`
	Content string   `json:"content"`
	Before  []string `json:"before,omitempty"`
	After   []string `json:"after,omitempty"`
}

// SearchSession is one conversation's matches. A conversation is a lineage
// of sessions (a session and those context compression continued it in);
// SessionID is the newest of its sessions with a match.
type SearchSession struct {
	SessionID string        `json:"session_id"`
	Matches   []SearchMatch `json:"matches"`
}

// SessionSearcher searches past sessions.
type SessionSearcher interface {
	SearchSessions(ctx context.Context, query string, limit int) ([]SearchSession, error)
}

// ErrNoSearch: the engine gave the tool no searcher.
var ErrNoSearch = errors.New("session search is not available")

// SessionSearchTool is the session_search tool; it searches through Searcher.
type SessionSearchTool struct{ Searcher SessionSearcher }

// Name implements Tool.
func (SessionSearchTool) Name() string { return SessionSearchName }

// Idempotent implements Tool: it only reads.
func (SessionSearchTool) Idempotent() bool { return true }

// Definition implements Tool.
func (t SessionSearchTool) Definition() openai.Tool {
	return functionTool(t.Name(), sessionSearchDescription, sessionSearchSchema)
}

// Run implements Tool.
func (t SessionSearchTool) Run(ctx context.Context, _ Env, raw json.RawMessage) (string, error) {
	a, err := parseArgs(t.Name(), raw)
	if err != nil {
		return "", err
	}
	query, err := a.requiredStr("query")
	if err != nil {
		return "", err
	}
	limit, ok, err := a.integer("limit")
	if err != nil {
		return "", err
	}
	if !ok || limit <= 0 {
		limit = 10
	}
	limit = min(limit, 50)
	if t.Searcher == nil {
		return "", ErrNoSearch
	}
	groups, err := t.Searcher.SearchSessions(ctx, query, limit)
	if err != nil {
		return "", err
	}
	if groups == nil {
		groups = []SearchSession{}
	}
	out, err := json.Marshal(map[string]any{"query": query, "sessions": groups})
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// session_search is a built-in tool.
var _ = builtin(func(s Services) Tool { return SessionSearchTool{Searcher: s.Searcher} })

// Meta implements Described.
func (SessionSearchTool) Meta() Meta {
	return Meta{
		Toolset: "recall",
	}
}
