package memory

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/tools"
)

// mem0 is the adapter of the Mem0 platform API (https://api.mem0.ai, or a
// server speaking it), with the key sent as "Authorization: Token <key>".
// Each Talaria user is a Mem0 user_id and each session a run_id. The
// routes it uses:
//
//   - POST /v3/memories/add/: a turn's messages, from which Mem0 extracts
//     memories in the background (Sync);
//   - POST /v3/memories/search/: the user's memories that match a query,
//     best first (Prefetch and the mem0_search tool);
//   - POST /v3/memories/add/ again at a session's end: its summary, filed
//     as its turns are (the session its run_id), named by its metadata
//     (talaria_kind "session_summary", talaria_end the reason), from which
//     Mem0 extracts what the session came to (EndSession; nothing without
//     a summary);
//   - DELETE /v1/memories/?run_id=: the memories of a session, its
//     summary's among them (Forget).
type mem0 struct {
	c   *apiClient
	log *slog.Logger
}

// Mem0SearchName is the name of Mem0's tool.
const Mem0SearchName = "mem0_search"

func newMem0(c *apiClient, logger *slog.Logger) *mem0 { return &mem0{c: c, log: logger} }

// Name implements Provider.
func (m *mem0) Name() string { return "mem0" }

// mem0Memory is a memory as Mem0's search returns it.
type mem0Memory struct {
	ID        string         `json:"id"`
	Memory    string         `json:"memory"`
	UserID    string         `json:"user_id"`
	RunID     string         `json:"run_id"`
	Score     float64        `json:"score"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
}

// mem0User is the user_id of a Talaria user.
func mem0User(user string) string { return userOf(user) }

// search is the user's memories that match text, at most n.
func (m *mem0) search(ctx context.Context, user, text string, n int) ([]mem0Memory, error) {
	body := map[string]any{
		"query":   cutText(text, 4000),
		"filters": map[string]any{"user_id": mem0User(user)},
		"top_k":   n,
	}
	var out struct {
		Results []mem0Memory `json:"results"`
	}
	if err := m.c.call(ctx, http.MethodPost, "/v3/memories/search/", nil, body, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// Prefetch implements Provider: the user's memories that match the text,
// one item each (the asking session's own left out), best first.
func (m *mem0) Prefetch(ctx context.Context, q Query) (Recall, error) {
	if strings.TrimSpace(q.Text) == "" {
		return Recall{}, nil
	}
	limit := limitOf(q)
	found, err := m.search(ctx, q.User, q.Text, min(1000, limit*2))
	if err != nil {
		return Recall{}, err
	}
	return Recall{Items: mem0Items(found, q.SessionID, limit)}, nil
}

// mem0Items are Mem0's memories as items, best first: a memory of the
// excluded session or an empty one is left out; its session is its
// run_id, its date its last update (else its creation). At most limit.
// Pure.
func mem0Items(found []mem0Memory, exclude string, limit int) []Item {
	var items []Item
	for _, f := range found {
		if len(items) == limit {
			break
		}
		if exclude != "" && f.RunID == exclude || strings.TrimSpace(f.Memory) == "" {
			continue
		}
		at := parseTime(f.UpdatedAt)
		if at.IsZero() {
			at = parseTime(f.CreatedAt)
		}
		items = append(items, Item{SessionID: f.RunID, At: at, Summary: cutText(f.Memory, MaxTextBytes), Score: f.Score})
	}
	return items
}

// parseTime reads an RFC 3339 time; the zero time when s is not one.
// Pure.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t
}

// Sync implements Provider: the turn's message and answer, filed under
// the user and the session, the turn named in the metadata.
func (m *mem0) Sync(ctx context.Context, t Turn) error {
	body := mem0AddBody(t)
	if body == nil {
		return nil
	}
	return m.c.call(ctx, http.MethodPost, "/v3/memories/add/", nil, body, nil)
}

// mem0MaxContent bounds one message sent to Mem0.
const mem0MaxContent = 25000

// mem0AddBody is the body that adds a turn (nil: nothing to add). Pure.
func mem0AddBody(t Turn) map[string]any {
	var msgs []map[string]string
	for _, msg := range []struct{ role, text string }{{"user", t.UserMessage}, {"assistant", t.Answer}} {
		if strings.TrimSpace(msg.text) != "" {
			msgs = append(msgs, map[string]string{"role": msg.role, "content": cutText(msg.text, mem0MaxContent)})
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	body := map[string]any{
		"messages": msgs,
		"user_id":  mem0User(t.User),
		"metadata": map[string]any{"talaria_turn": t.TurnID},
	}
	if t.SessionID != "" {
		body["run_id"] = t.SessionID
	}
	return body
}

// EndSession implements Provider: the session's summary, added as a
// message for Mem0 to extract from (nothing when there is none). Sent
// again (a retried activity), it is the same body: Mem0 finds the
// memories it holds already and adds none twice.
func (m *mem0) EndSession(ctx context.Context, e SessionEnd) error {
	body := mem0SummaryBody(e)
	if body == nil {
		return nil
	}
	return m.c.call(ctx, http.MethodPost, "/v3/memories/add/", nil, body, nil)
}

// mem0SummaryBody is the body that adds a session's summary (nil: no
// summary, or no session to file it under): one user message (Mem0 draws
// the user's memories from those), filed under the user and the session
// as Sync files a turn, so that Forget, deleting by run_id, takes it too;
// its metadata say it is a summary and why the session ended. Pure.
func mem0SummaryBody(e SessionEnd) map[string]any {
	if strings.TrimSpace(e.Summary) == "" || e.SessionID == "" {
		return nil
	}
	meta := map[string]any{"talaria_kind": SummaryKind}
	if e.Reason != "" {
		meta["talaria_end"] = string(e.Reason)
	}
	return map[string]any{
		"messages": []map[string]string{{"role": "user", "content": cutText(e.Summary, mem0MaxContent)}},
		"user_id":  mem0User(e.User),
		"run_id":   e.SessionID,
		"metadata": meta,
	}
}

// Forget implements Provider: Mem0 deletes, in the background, every
// memory of the session's run (whichever user it was filed under).
func (m *mem0) Forget(ctx context.Context, sessionID string) error {
	if strings.TrimSpace(sessionID) == "" {
		return fmt.Errorf("mem0: forget needs a session")
	}
	q := url.Values{"run_id": {sessionID}}
	return m.c.call(ctx, http.MethodDelete, "/v1/memories/", q, nil, nil)
}

// mem0SearchArgs are mem0_search's arguments.
type mem0SearchArgs struct {
	Query string `json:"query" jsonschema:"What to look for in what Mem0 remembers of the user."`
	Limit int    `json:"limit,omitempty" jsonschema:"At most this many memories (1 to 20, default 5)."`
}

// Tools implements Provider: mem0_search.
func (m *mem0) Tools() []tools.Tool {
	return []tools.Tool{tools.Define(tools.Spec[mem0SearchArgs]{
		Name:        Mem0SearchName,
		Description: "Search Mem0, the external memory of past conversations, for what it remembers of the user (facts, preferences, decisions), best match first.",
		Meta:        tools.Meta{Toolset: "recall", Approval: "queries go to the configured Mem0 service (memory.mem0)"},
		Idempotent:  true,
		Run: func(ctx context.Context, env tools.Env, a mem0SearchArgs) (string, error) {
			if strings.TrimSpace(a.Query) == "" {
				return "", fmt.Errorf("%s: %w", Mem0SearchName, errNoQuestion)
			}
			n := a.Limit
			if n <= 0 {
				n = 5
			}
			user, err := toolUser(env)
			if err != nil {
				return "", fmt.Errorf("%s: %w", Mem0SearchName, err)
			}
			found, err := m.search(ctx, user, a.Query, min(n, 20))
			if err != nil {
				return "", fmt.Errorf("%s: %w", Mem0SearchName, err)
			}
			return itemsText(mem0Items(found, "", min(n, 20))), nil
		},
	})}
}

// itemsText is items as a tool's answer: one numbered line each (its
// text, its date and session when known), bounded by MaxToolBytes. Pure.
func itemsText(items []Item) string {
	if len(items) == 0 {
		return "Nothing found."
	}
	var b strings.Builder
	for i, it := range items {
		text := it.Summary
		if text == "" {
			text = strings.Join(it.Passages, " / ")
		}
		line := strconv.Itoa(i+1) + ". " + oneLine(text, MaxTextBytes)
		var where []string
		if !it.At.IsZero() {
			where = append(where, it.At.UTC().Format("2006-01-02"))
		}
		if it.SessionID != "" {
			where = append(where, "session "+it.SessionID)
		}
		if len(where) > 0 {
			line += " (" + strings.Join(where, ", ") + ")"
		}
		if b.Len()+len(line)+1 > MaxToolBytes {
			break
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
