package tools

import (
	"context"
	"errors"
)

// SessionSearchName is the name of the session_search tool.
const SessionSearchName = "session_search"

const sessionSearchDescription = `Search the text of past conversations (full-text, case-insensitive): a message matches when it holds every word of the query, in any order; words in double quotes must appear together as a phrase. ` +
	`Use it when the user refers to something discussed before ("the codename we picked", "last week's fix"). ` +
	`Results are grouped by conversation, newest first (a session continued after context compression counts once), ` +
	`each match with the messages around it.`

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
	// SearchSessions searches the sessions the asking session may see:
	// those of its owner (a gateway chat's session sees only that chat's
	// sessions; the operator's see every session).
	SearchSessions(ctx context.Context, asking, query string, limit int) ([]SearchSession, error)
}

// ErrNoSearch: the engine gave the tool no searcher.
var ErrNoSearch = errors.New("session search is not available")

// sessionSearchArgs are session_search's arguments.
type sessionSearchArgs struct {
	Query string `json:"query" jsonschema:"The words to find (all must appear; \"double quotes\" keep a phrase)."`
	Limit int    `json:"limit,omitempty" jsonschema:"How many matching messages at most (default 10, max 50)."`
}

// SessionSearch is the session_search tool over searcher (nil: every call
// says search is not available). It only reads, quickly.
func SessionSearch(searcher SessionSearcher) Tool {
	return Define(Spec[sessionSearchArgs]{
		Name: SessionSearchName, Description: sessionSearchDescription, Meta: Meta{Toolset: "recall"},
		Quick: true, Idempotent: true,
		Run: func(ctx context.Context, env Env, a sessionSearchArgs) (string, error) {
			if searcher == nil {
				return "", ErrNoSearch
			}
			limit := a.Limit
			if limit <= 0 {
				limit = 10
			}
			groups, err := searcher.SearchSessions(ctx, env.SessionID, a.Query, min(limit, 50))
			if err != nil {
				return "", err
			}
			if groups == nil {
				groups = []SearchSession{}
			}
			return marshalResult(map[string]any{"query": a.Query, "sessions": groups})
		},
	})
}

var _ = builtin(func(s Services) Tool { return SessionSearch(s.Searcher) })
