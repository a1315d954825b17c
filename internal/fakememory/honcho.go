package fakememory

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// HonchoMessage is a message the Honcho fake holds, as its API shows it.
type HonchoMessage struct {
	ID          string         `json:"id"`
	Content     string         `json:"content"`
	PeerID      string         `json:"peer_id"`
	SessionID   string         `json:"session_id"`
	WorkspaceID string         `json:"workspace_id"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"created_at"`
	TokenCount  int            `json:"token_count"`
}

// Honcho is a fake of Honcho's v3 API: workspaces, sessions with their
// peers, a session's update (PUT: its metadata replaced as a whole; 404
// for a session it does not hold), messages, a peer's message search, a
// peer's chat (its answer is the peer's messages that match the question,
// or the one SetAnswer set) and a session's deletion. Its key comes as
// "Authorization: Bearer <key>".
type Honcho struct {
	server
	// answer, when set, is what every chat answers (SetAnswer).
	answer string

	workspaces map[string]bool
	sessions   map[string]map[string]any // workspace/session: peers
	meta       map[string]map[string]any // workspace/session: metadata
	messages   []HonchoMessage
	next       int
}

// honchoID is the pattern of Honcho's ids.
var honchoID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// NewHoncho starts a Honcho fake accepting key.
func NewHoncho(key string) *Honcho {
	h := &Honcho{workspaces: map[string]bool{}, sessions: map[string]map[string]any{}, meta: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/workspaces", h.workspace)
	mux.HandleFunc("POST /v3/workspaces/{w}/sessions", h.session)
	mux.HandleFunc("PUT /v3/workspaces/{w}/sessions/{s}", h.updateSession)
	mux.HandleFunc("POST /v3/workspaces/{w}/sessions/{s}/messages", h.addMessages)
	mux.HandleFunc("DELETE /v3/workspaces/{w}/sessions/{s}", h.deleteSession)
	mux.HandleFunc("POST /v3/workspaces/{w}/peers/{p}/search", h.search)
	mux.HandleFunc("POST /v3/workspaces/{w}/peers/{p}/chat", h.chat)
	h.start("Bearer", key, mux)
	return h
}

// SetAnswer makes every chat answer text ("": the matching messages).
func (h *Honcho) SetAnswer(text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answer = text
}

// Seed puts a message in a session of workspace (both made as needed).
func (h *Honcho) Seed(workspace, session, peer, content string, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.workspaces[workspace] = true
	if h.sessions[workspace+"/"+session] == nil {
		h.sessions[workspace+"/"+session] = map[string]any{}
	}
	h.appendLocked(HonchoMessage{Content: content, PeerID: peer, SessionID: session, WorkspaceID: workspace, CreatedAt: at})
}

// Messages are the messages the fake holds.
func (h *Honcho) Messages() []HonchoMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]HonchoMessage(nil), h.messages...)
}

// Sessions are the sessions the fake holds ("workspace/session") and
// their peers.
func (h *Honcho) Sessions() map[string]map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]map[string]any{}
	for k, v := range h.sessions {
		out[k] = v
	}
	return out
}

// SessionMetadata are the metadata of a session of workspace (false: the
// fake does not hold the session).
func (h *Honcho) SessionMetadata(workspace, session string) (map[string]any, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[workspace+"/"+session] == nil {
		return nil, false
	}
	return maps.Clone(h.metaLocked(workspace + "/" + session)), true
}

// metaLocked are the metadata of the session key, never nil.
func (h *Honcho) metaLocked(key string) map[string]any {
	if m := h.meta[key]; m != nil {
		return m
	}
	return map[string]any{}
}

// sessionJSON is a session as Honcho's API shows it.
func (h *Honcho) sessionJSON(ws, id string) map[string]any {
	return map[string]any{"id": id, "is_active": true, "workspace_id": ws, "metadata": h.metaLocked(ws + "/" + id), "configuration": map[string]any{}, "created_at": time.Now().UTC()}
}

func (h *Honcho) appendLocked(m HonchoMessage) HonchoMessage {
	h.next++
	m.ID = fmt.Sprintf("msg_%d", h.next)
	m.TokenCount = len(strings.Fields(m.Content))
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now().UTC()
	}
	h.messages = append(h.messages, m)
	return m
}

func (h *Honcho) workspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID string `json:"id"`
	}
	if !decode(w, r, http.StatusUnprocessableEntity, &body) {
		return
	}
	if !honchoID.MatchString(body.ID) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "invalid id"})
		return
	}
	h.mu.Lock()
	h.workspaces[body.ID] = true
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": body.ID, "metadata": map[string]any{}, "configuration": map[string]any{}, "created_at": time.Now().UTC()})
}

// known answers 404 unless the workspace exists.
func (h *Honcho) known(w http.ResponseWriter, ws string) bool {
	if !h.workspaces[ws] {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Workspace " + ws + " not found"})
		return false
	}
	return true
}

// knownSession answers 404 for a workspace or session the fake does not
// hold (the caller holds h.mu).
func (h *Honcho) knownSession(w http.ResponseWriter, ws, sess string) bool {
	if !h.known(w, ws) {
		return false
	}
	if h.sessions[ws+"/"+sess] == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Session " + sess + " not found"})
		return false
	}
	return true
}

func (h *Honcho) session(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID    string         `json:"id"`
		Peers map[string]any `json:"peers"`
	}
	if !decode(w, r, http.StatusUnprocessableEntity, &body) {
		return
	}
	if !honchoID.MatchString(body.ID) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "invalid id"})
		return
	}
	ws := r.PathValue("w")
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.known(w, ws) {
		return
	}
	key := ws + "/" + body.ID
	if h.sessions[key] == nil {
		h.sessions[key] = map[string]any{}
	}
	for p, c := range body.Peers {
		h.sessions[key][p] = c
	}
	writeJSON(w, http.StatusOK, h.sessionJSON(ws, body.ID))
}

// updateSession replaces a session's metadata (when the body has them;
// Honcho's update does not merge), answering the session.
func (h *Honcho) updateSession(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Metadata      map[string]any `json:"metadata"`
		Configuration map[string]any `json:"configuration"`
	}
	if !decode(w, r, http.StatusUnprocessableEntity, &body) {
		return
	}
	ws, sess := r.PathValue("w"), r.PathValue("s")
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.knownSession(w, ws, sess) {
		return
	}
	if body.Metadata != nil {
		h.meta[ws+"/"+sess] = body.Metadata
	}
	writeJSON(w, http.StatusOK, h.sessionJSON(ws, sess))
}

func (h *Honcho) addMessages(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Content   *string        `json:"content"`
			PeerID    string         `json:"peer_id"`
			Metadata  map[string]any `json:"metadata"`
			CreatedAt *time.Time     `json:"created_at"`
		} `json:"messages"`
	}
	if !decode(w, r, http.StatusUnprocessableEntity, &body) {
		return
	}
	if len(body.Messages) < 1 || len(body.Messages) > 100 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "messages: 1 to 100 items"})
		return
	}
	ws, sess := r.PathValue("w"), r.PathValue("s")
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.knownSession(w, ws, sess) {
		return
	}
	var out []HonchoMessage
	for _, m := range body.Messages {
		if m.Content == nil || m.PeerID == "" || len(*m.Content) > 25000 {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "content and peer_id are required; content at most 25000"})
			return
		}
		msg := HonchoMessage{Content: *m.Content, PeerID: m.PeerID, SessionID: sess, WorkspaceID: ws, Metadata: m.Metadata}
		if m.CreatedAt != nil {
			msg.CreatedAt = *m.CreatedAt
		}
		out = append(out, h.appendLocked(msg))
	}
	writeJSON(w, http.StatusCreated, out)
}

func (h *Honcho) deleteSession(w http.ResponseWriter, r *http.Request) {
	ws, sess := r.PathValue("w"), r.PathValue("s")
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.knownSession(w, ws, sess) {
		return
	}
	delete(h.sessions, ws+"/"+sess)
	delete(h.meta, ws+"/"+sess)
	kept := h.messages[:0]
	for _, m := range h.messages {
		if m.WorkspaceID != ws || m.SessionID != sess {
			kept = append(kept, m)
		}
	}
	h.messages = kept
	writeJSON(w, http.StatusAccepted, map[string]any{"message": "Session deleted"})
}

// matching are the peer's messages in ws that match query, best first.
func (h *Honcho) matching(ws, peer, query string) []HonchoMessage {
	var mine []HonchoMessage
	var texts []string
	for _, m := range h.messages {
		if m.WorkspaceID == ws && m.PeerID == peer {
			mine = append(mine, m)
			texts = append(texts, m.Content)
		}
	}
	idx, _ := ranked(query, texts)
	out := make([]HonchoMessage, 0, len(idx))
	for _, i := range idx {
		out = append(out, mine[i])
	}
	return out
}

func (h *Honcho) search(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Query *string `json:"query"`
		Limit *int    `json:"limit"`
	}
	if !decode(w, r, http.StatusUnprocessableEntity, &body) {
		return
	}
	limit := 10
	if body.Limit != nil {
		limit = *body.Limit
	}
	if body.Query == nil || limit < 1 || limit > 100 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "query is required; limit 1 to 100"})
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.known(w, r.PathValue("w")) {
		return
	}
	out := h.matching(r.PathValue("w"), r.PathValue("p"), *body.Query)
	writeJSON(w, http.StatusOK, out[:min(limit, len(out))])
}

func (h *Honcho) chat(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Query string `json:"query"`
	}
	if !decode(w, r, http.StatusUnprocessableEntity, &body) {
		return
	}
	if body.Query == "" || len(body.Query) > 10000 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "query: 1 to 10000 characters"})
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.known(w, r.PathValue("w")) {
		return
	}
	if h.answer != "" {
		writeJSON(w, http.StatusOK, map[string]any{"content": h.answer})
		return
	}
	found := h.matching(r.PathValue("w"), r.PathValue("p"), body.Query)
	if len(found) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"content": nil})
		return
	}
	var said []string
	for _, m := range found {
		said = append(said, m.Content)
	}
	writeJSON(w, http.StatusOK, map[string]any{"content": "The user said: " + strings.Join(said, " | ")})
}
