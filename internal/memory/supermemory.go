package memory

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/talaria-agent/talaria/internal/tools"
)

// supermemory is the adapter of the Supermemory API
// (https://api.supermemory.ai, or a self-hosted instance), with a bearer
// key. Each Talaria user is a container tag ("talaria-<user>"); each turn
// is a document whose customId names the session and the turn and whose
// metadata carry them (talaria_session, talaria_turn). The routes it
// uses:
//
//   - POST /v3/documents: a turn as one document, from which Supermemory
//     extracts memories (Sync); at a session's end, its summary as one
//     document of customId "summary-<session>" (sent again, it updates
//     the same document) with metadata talaria_session and talaria_kind
//     "session_summary" (EndSession; nothing without a summary);
//   - POST /v4/search: the user's memories and document chunks that match
//     a query, hybrid mode, best first (Prefetch and the
//     supermemory_search tool);
//   - POST /v3/documents/list, then DELETE /v3/documents/bulk: the
//     documents of a session (its turns and its summary), found by their
//     metadata, deleted (Forget;
//     whether the memories Supermemory drew from them go too is the
//     service's doing: its API deletes documents, not memories by
//     session).
type supermemory struct {
	c   *apiClient
	log *slog.Logger
}

// Supermemory's names and bounds.
const (
	// SupermemorySearchName is the name of Supermemory's tool.
	SupermemorySearchName = "supermemory_search"
	// smListPages bounds the pages of documents Forget reads (of 200).
	smListPages = 10
	// smBulk is the most ids one bulk delete takes.
	smBulk = 100
	// smMaxContent bounds a turn's document.
	smMaxContent = 50000
)

func newSupermemory(c *apiClient, logger *slog.Logger) *supermemory {
	return &supermemory{c: c, log: logger}
}

// Name implements Provider.
func (s *supermemory) Name() string { return "supermemory" }

// smTag is the container tag of a Talaria user.
func smTag(user string) string { return serviceID("talaria-", userOf(user)) }

// smResult is a result of Supermemory's search: a memory or a chunk.
type smResult struct {
	ID         string         `json:"id"`
	Memory     string         `json:"memory"`
	Chunk      string         `json:"chunk"`
	Similarity float64        `json:"similarity"`
	Metadata   map[string]any `json:"metadata"`
	UpdatedAt  string         `json:"updatedAt"`
}

// search is the user's memories and chunks that match text, at most n.
func (s *supermemory) search(ctx context.Context, user, text string, n int) ([]smResult, error) {
	body := map[string]any{"q": cutText(text, 4000), "containerTag": smTag(user), "searchMode": "hybrid", "limit": n}
	var out struct {
		Results []smResult `json:"results"`
	}
	if err := s.c.call(ctx, http.MethodPost, "/v4/search", nil, body, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// Prefetch implements Provider: the user's memories and chunks that match
// the text, one item each (the asking session's own left out).
func (s *supermemory) Prefetch(ctx context.Context, q Query) (Recall, error) {
	if strings.TrimSpace(q.Text) == "" {
		return Recall{}, nil
	}
	limit := limitOf(q)
	found, err := s.search(ctx, q.User, q.Text, min(100, limit*2))
	if err != nil {
		return Recall{}, err
	}
	return Recall{Items: smItems(found, q.SessionID, limit)}, nil
}

// smItems are Supermemory's results as items, best first: a memory is a
// summary, a chunk a passage; the session is the talaria_session of the
// metadata (a result of the excluded session is left out, as is an empty
// one). At most limit. Pure.
func smItems(found []smResult, exclude string, limit int) []Item {
	var items []Item
	for _, f := range found {
		if len(items) == limit {
			break
		}
		session, _ := f.Metadata["talaria_session"].(string)
		if exclude != "" && session == exclude {
			continue
		}
		it := Item{SessionID: session, At: parseTime(f.UpdatedAt), Score: f.Similarity}
		switch {
		case strings.TrimSpace(f.Memory) != "":
			it.Summary = cutText(f.Memory, MaxTextBytes)
		case strings.TrimSpace(f.Chunk) != "":
			it.Passages = []string{cutText(f.Chunk, MaxTextBytes)}
		default:
			continue
		}
		items = append(items, it)
	}
	return items
}

// Sync implements Provider: the turn as one document in the user's
// container.
func (s *supermemory) Sync(ctx context.Context, t Turn) error {
	body := smDocument(t)
	if body == nil {
		return nil
	}
	return s.c.call(ctx, http.MethodPost, "/v3/documents", nil, body, nil)
}

// smDocument is the body that adds a turn (nil: nothing to add): its
// text ("user: …" then "assistant: …"), the user's container tag, a
// customId of the session and the turn (sending the turn again updates
// it, never duplicates it) and metadata naming them. Pure.
func smDocument(t Turn) map[string]any {
	var parts []string
	if strings.TrimSpace(t.UserMessage) != "" {
		parts = append(parts, "user: "+strings.TrimSpace(t.UserMessage))
	}
	if strings.TrimSpace(t.Answer) != "" {
		parts = append(parts, "assistant: "+strings.TrimSpace(t.Answer))
	}
	if len(parts) == 0 {
		return nil
	}
	meta := map[string]any{"talaria_session": t.SessionID, "talaria_turn": t.TurnID}
	if !t.At.IsZero() {
		meta["talaria_at"] = t.At.UTC().Format("2006-01-02T15:04:05Z07:00")
	}
	return map[string]any{
		"content":      cutText(strings.Join(parts, "\n\n"), smMaxContent),
		"containerTag": smTag(t.User),
		"customId":     serviceID("turn-", t.SessionID+"\x00"+t.TurnID),
		"metadata":     meta,
	}
}

// EndSession implements Provider: the session's summary as a document of
// the user's container (nothing when there is none).
func (s *supermemory) EndSession(ctx context.Context, e SessionEnd) error {
	body := smSummaryDocument(e)
	if body == nil {
		return nil
	}
	return s.c.call(ctx, http.MethodPost, "/v3/documents", nil, body, nil)
}

// smSummaryDocument is the body that adds a session's summary (nil: no
// summary, or no session): its text, the user's container tag (as Sync),
// a customId of the session (sending it again updates the document,
// never duplicates it) and metadata naming the session (which Forget
// lists by), the kind and why the session ended. Pure.
func smSummaryDocument(e SessionEnd) map[string]any {
	if strings.TrimSpace(e.Summary) == "" || e.SessionID == "" {
		return nil
	}
	meta := map[string]any{"talaria_session": e.SessionID, "talaria_kind": SummaryKind}
	if e.Reason != "" {
		meta["talaria_end"] = string(e.Reason)
	}
	return map[string]any{
		"content":      cutText(e.Summary, smMaxContent),
		"containerTag": smTag(e.User),
		"customId":     serviceID("summary-", e.SessionID),
		"metadata":     meta,
	}
}

// smListed is a document as Supermemory's list returns it.
type smListed struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata"`
}

// Forget implements Provider: the session's documents (those whose
// metadata name it, read from at most smListPages pages of the list) are
// deleted.
func (s *supermemory) Forget(ctx context.Context, sessionID string) error {
	if strings.TrimSpace(sessionID) == "" {
		return fmt.Errorf("supermemory: forget needs a session")
	}
	var ids []string
	for page := 1; page <= smListPages; page++ {
		body := map[string]any{
			"filters": map[string]any{"AND": []map[string]any{{"key": "talaria_session", "value": sessionID}}},
			"limit":   200,
			"page":    page,
		}
		var out struct {
			Memories   []smListed `json:"memories"`
			Pagination struct {
				TotalPages int `json:"totalPages"`
			} `json:"pagination"`
		}
		if err := s.c.call(ctx, http.MethodPost, "/v3/documents/list", nil, body, &out); err != nil {
			return err
		}
		for _, d := range out.Memories {
			if v, _ := d.Metadata["talaria_session"].(string); v == sessionID && d.ID != "" {
				ids = append(ids, d.ID)
			}
		}
		if page >= out.Pagination.TotalPages {
			break
		}
	}
	for len(ids) > 0 {
		n := min(len(ids), smBulk)
		if err := s.c.call(ctx, http.MethodDelete, "/v3/documents/bulk", nil, map[string]any{"ids": ids[:n]}, nil); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// supermemorySearchArgs are supermemory_search's arguments.
type supermemorySearchArgs struct {
	Query string `json:"query" jsonschema:"What to look for in what Supermemory holds of the user."`
	Limit int    `json:"limit,omitempty" jsonschema:"At most this many results (1 to 20, default 5)."`
}

// Tools implements Provider: supermemory_search.
func (s *supermemory) Tools() []tools.Tool {
	return []tools.Tool{tools.Define(tools.Spec[supermemorySearchArgs]{
		Name:        SupermemorySearchName,
		Description: "Search Supermemory, the external memory of past conversations, for what it holds of the user (facts drawn from past conversations and their passages), best match first.",
		Meta:        tools.Meta{Toolset: "recall", Approval: "queries go to the configured Supermemory service (memory.supermemory)"},
		Idempotent:  true,
		Run: func(ctx context.Context, env tools.Env, a supermemorySearchArgs) (string, error) {
			if strings.TrimSpace(a.Query) == "" {
				return "", fmt.Errorf("%s: %w", SupermemorySearchName, errNoQuestion)
			}
			n := a.Limit
			if n <= 0 {
				n = 5
			}
			user, err := toolUser(env)
			if err != nil {
				return "", fmt.Errorf("%s: %w", SupermemorySearchName, err)
			}
			found, err := s.search(ctx, user, a.Query, min(n, 20))
			if err != nil {
				return "", fmt.Errorf("%s: %w", SupermemorySearchName, err)
			}
			return itemsText(smItems(found, "", min(n, 20))), nil
		},
	})}
}
