package memory

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/talaria-agent/talaria/internal/tools"
)

// honcho is the adapter of Honcho (plastic-labs/honcho), its v3 REST API,
// the cloud one (https://api.honcho.dev) or a self-hosted server, with a
// bearer key. Talaria's conversations live in one workspace (memory.
// honcho.workspace, default "talaria"); each user is a peer (observed:
// Honcho reasons about them), the agent is the peer "talaria" (not
// observed), and each Talaria session is a Honcho session of the same id
// (as Honcho's names allow: escaped, and a hash past 100 characters; its
// messages name the Talaria session in their metadata).
// The routes it uses:
//
//   - POST /v3/workspaces: get or create the workspace (once per process);
//   - POST /v3/workspaces/{w}/sessions: get or create a session with its
//     two peers (Sync);
//   - POST /v3/workspaces/{w}/sessions/{s}/messages: a turn's two
//     messages (Sync);
//   - POST /v3/workspaces/{w}/peers/{p}/search: the user's messages that
//     match a query, grouped by session (Prefetch);
//   - POST /v3/workspaces/{w}/peers/{p}/chat: Honcho's answer about the
//     user (the honcho_ask tool);
//   - PUT /v3/workspaces/{w}/sessions/{s}: Honcho's "update session", at
//     a session's end: its metadata become talaria_summary (Talaria's
//     summary), talaria_end_reason and talaria_ended_at (EndSession;
//     nothing without a summary, and a session Honcho does not hold is no
//     error);
//   - DELETE /v3/workspaces/{w}/sessions/{s}: a session and its messages
//     (Forget).
//
// Honcho derives its own conclusions and summaries from the messages as
// they arrive; the summary in the metadata is Talaria's, for whoever
// reads the session there.
type honcho struct {
	c         *apiClient
	workspace string
	log       *slog.Logger

	mu      sync.Mutex
	wsReady bool
}

// Honcho's names.
const (
	// HonchoAgentPeer is the peer the agent's answers come from.
	HonchoAgentPeer = "talaria"
	// HonchoAskName is the name of Honcho's tool.
	HonchoAskName = "honcho_ask"
	// defaultHonchoWorkspace is the workspace when none is configured.
	defaultHonchoWorkspace = "talaria"
	// honchoPassages bounds the passages of one recalled session.
	honchoPassages = 3
)

func newHoncho(c *apiClient, workspace string, logger *slog.Logger) *honcho {
	if strings.TrimSpace(workspace) == "" {
		workspace = defaultHonchoWorkspace
	}
	return &honcho{c: c, workspace: strings.TrimSpace(workspace), log: logger}
}

// Name implements Provider.
func (h *honcho) Name() string { return "honcho" }

// honchoMessage is a message as Honcho's API returns it.
type honchoMessage struct {
	ID        string         `json:"id"`
	Content   string         `json:"content"`
	PeerID    string         `json:"peer_id"`
	SessionID string         `json:"session_id"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt time.Time      `json:"created_at"`
}

// honchoPeer is the peer id of a Talaria user.
func honchoPeer(user string) string { return serviceID("", userOf(user)) }

// ws is the route of the workspace's path under it.
func (h *honcho) ws(rest string) string {
	return "/v3/workspaces/" + url.PathEscape(h.workspace) + rest
}

// Prefetch implements Provider: the user's messages that match the text,
// one item per past session (never the asking one), best first.
func (h *honcho) Prefetch(ctx context.Context, q Query) (Recall, error) {
	if strings.TrimSpace(q.Text) == "" {
		return Recall{}, nil
	}
	limit := limitOf(q)
	body := map[string]any{"query": cutText(q.Text, 4000), "limit": min(100, limit*honchoPassages*2)}
	var msgs []honchoMessage
	err := h.c.call(ctx, http.MethodPost, h.ws("/peers/"+url.PathEscape(honchoPeer(q.User))+"/search"), nil, body, &msgs)
	if isNotFound(err) {
		return Recall{}, nil // no such peer or workspace yet: nothing held
	}
	if err != nil {
		return Recall{}, err
	}
	return Recall{Items: honchoItems(msgs, q.SessionID, limit)}, nil
}

// honchoItems groups search results (best first) by session, leaving out
// the session asking: an item per session in the order of its best
// message, with at most honchoPassages passages (who spoke, what was
// said), dated by its latest message, scored by rank (Honcho gives no
// score). At most limit items. Pure.
func honchoItems(msgs []honchoMessage, exclude string, limit int) []Item {
	var items []Item
	index := map[string]int{}
	for _, m := range msgs {
		session := honchoSessionOf(m)
		if exclude != "" && (session == exclude || m.SessionID == serviceID("", exclude)) || strings.TrimSpace(m.Content) == "" {
			continue
		}
		i, ok := index[session]
		if !ok {
			if len(items) == limit {
				continue
			}
			i = len(items)
			index[session] = i
			items = append(items, Item{SessionID: session, Score: 1 / float64(i+1)})
		}
		it := &items[i]
		if m.CreatedAt.After(it.At) {
			it.At = m.CreatedAt
		}
		if len(it.Passages) < honchoPassages {
			who := "user"
			if m.PeerID == HonchoAgentPeer {
				who = "assistant"
			}
			it.Passages = append(it.Passages, who+": "+cutText(m.Content, MaxTextBytes))
		}
	}
	return items
}

// honchoSessionOf is the Talaria session a message of Honcho's came from:
// the one its metadata names (Sync names it), else Honcho's session id
// (Talaria's own, when it needed no escaping). Pure.
func honchoSessionOf(m honchoMessage) string {
	if s, ok := m.Metadata["talaria_session"].(string); ok && s != "" {
		return s
	}
	return m.SessionID
}

// ensureWorkspace gets or creates the workspace, once per process.
func (h *honcho) ensureWorkspace(ctx context.Context) error {
	h.mu.Lock()
	ready := h.wsReady
	h.mu.Unlock()
	if ready {
		return nil
	}
	if err := h.c.call(ctx, http.MethodPost, "/v3/workspaces", nil, map[string]any{"id": h.workspace}, nil); err != nil {
		return err
	}
	h.mu.Lock()
	h.wsReady = true
	h.mu.Unlock()
	return nil
}

// Sync implements Provider: the session (got or created with the user's
// peer and the agent's), then the turn's message and answer, dated by
// the turn and naming it in their metadata.
func (h *honcho) Sync(ctx context.Context, t Turn) error {
	if t.SessionID == "" {
		return fmt.Errorf("honcho: a turn without a session")
	}
	if err := h.ensureWorkspace(ctx); err != nil {
		return err
	}
	user := honchoPeer(t.User)
	session := map[string]any{
		"id": serviceID("", t.SessionID),
		"peers": map[string]any{
			user:            map[string]any{"observe_me": true},
			HonchoAgentPeer: map[string]any{"observe_me": false},
		},
	}
	if err := h.c.call(ctx, http.MethodPost, h.ws("/sessions"), nil, session, nil); err != nil {
		return err
	}
	msgs := honchoTurnMessages(t)
	if len(msgs) == 0 {
		return nil
	}
	return h.c.call(ctx, http.MethodPost, h.ws("/sessions/"+url.PathEscape(serviceID("", t.SessionID))+"/messages"), nil, map[string]any{"messages": msgs}, nil)
}

// honchoMaxContent is the longest message content Honcho takes.
const honchoMaxContent = 25000

// honchoTurnMessages are a turn's messages as Honcho creates them: the
// user's from the user's peer, the answer from the agent's, each cut to
// Honcho's bound; an empty one is left out. Pure.
func honchoTurnMessages(t Turn) []map[string]any {
	var out []map[string]any
	for _, m := range []struct{ peer, text string }{{honchoPeer(t.User), t.UserMessage}, {HonchoAgentPeer, t.Answer}} {
		if strings.TrimSpace(m.text) == "" {
			continue
		}
		msg := map[string]any{
			"peer_id":  m.peer,
			"content":  cutText(m.text, honchoMaxContent),
			"metadata": map[string]any{"talaria_turn": t.TurnID, "talaria_session": t.SessionID},
		}
		if !t.At.IsZero() {
			msg["created_at"] = t.At.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, msg)
	}
	return out
}

// EndSession implements Provider: the session's metadata say how it
// ended (nothing is sent without a summary). A session Honcho does not
// hold (nothing of it was ever synced) is no error: there is nothing to
// mark.
func (h *honcho) EndSession(ctx context.Context, e SessionEnd) error {
	meta := honchoEndMetadata(e)
	if meta == nil {
		return nil
	}
	err := h.c.call(ctx, http.MethodPut, h.ws("/sessions/"+url.PathEscape(serviceID("", e.SessionID))), nil, map[string]any{"metadata": meta}, nil)
	if isNotFound(err) {
		return nil
	}
	return err
}

// honchoEndMetadata are the metadata a session gets at its end (nil: no
// summary, or no session): its summary, cut to Honcho's bound, why it
// ended and when (RFC 3339, UTC; left out when not known). Honcho's
// update replaces a session's metadata as a whole, so these are all its
// metadata from then on (Sync sets none); sending them again (a retried
// activity) sets them again. Pure.
func honchoEndMetadata(e SessionEnd) map[string]any {
	if strings.TrimSpace(e.Summary) == "" || e.SessionID == "" {
		return nil
	}
	meta := map[string]any{
		"talaria_summary":    cutText(e.Summary, honchoMaxContent),
		"talaria_end_reason": string(e.Reason),
	}
	if !e.At.IsZero() {
		meta["talaria_ended_at"] = e.At.UTC().Format(time.RFC3339)
	}
	return meta
}

// Forget implements Provider: the session goes, its messages with it (a
// session Honcho does not hold is already forgotten). Conclusions Honcho
// drew about the user from it stay with the user's peer: its API deletes
// conclusions one by one, not by session.
func (h *honcho) Forget(ctx context.Context, sessionID string) error {
	err := h.c.call(ctx, http.MethodDelete, h.ws("/sessions/"+url.PathEscape(serviceID("", sessionID))), nil, nil, nil)
	if isNotFound(err) {
		return nil
	}
	return err
}

// honchoAskArgs are honcho_ask's arguments.
type honchoAskArgs struct {
	Question string `json:"question" jsonschema:"What to ask about the user: their preferences, history, what they said before."`
}

// Tools implements Provider: honcho_ask.
func (h *honcho) Tools() []tools.Tool {
	return []tools.Tool{tools.Define(tools.Spec[honchoAskArgs]{
		Name: HonchoAskName,
		Description: "Ask Honcho, the external memory of past conversations, a question about the user " +
			"(what they prefer, what they said or decided before) and get its answer, drawn from everything it has seen.",
		Meta:       tools.Meta{Toolset: "recall", Approval: "questions go to the configured Honcho service (memory.honcho)"},
		Idempotent: true,
		Run: func(ctx context.Context, env tools.Env, a honchoAskArgs) (string, error) {
			user, err := toolUser(env)
			if err != nil {
				return "", fmt.Errorf("%s: %w", HonchoAskName, err)
			}
			return h.ask(ctx, user, a.Question)
		},
	})}
}

// ask is Honcho's answer to a question about user.
func (h *honcho) ask(ctx context.Context, user, question string) (string, error) {
	if strings.TrimSpace(question) == "" {
		return "", fmt.Errorf("%s: %w", HonchoAskName, errNoQuestion)
	}
	var out struct {
		Content *string `json:"content"`
	}
	body := map[string]any{"query": cutText(question, 10000), "reasoning_level": "low"}
	if err := h.c.call(ctx, http.MethodPost, h.ws("/peers/"+url.PathEscape(honchoPeer(user))+"/chat"), nil, body, &out); err != nil {
		return "", fmt.Errorf("%s: %w", HonchoAskName, err)
	}
	if out.Content == nil || strings.TrimSpace(*out.Content) == "" {
		return "Honcho has no answer to that.", nil
	}
	return cutText(*out.Content, MaxToolBytes), nil
}
