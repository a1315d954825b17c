package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/sessionview"
	"github.com/talaria-agent/talaria/models"
)

// Paging of the lists under /api.
const (
	defaultPageLimit = 20
	maxPageLimit     = 200
	// maxSearchHits and maxSearchAround bound a search.
	maxSearchHits   = 100
	maxSearchAround = 10
)

// list is the shape of every list under /api: {"object": "list", "data":
// [...], "has_more": bool}.
type list[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

func newList[T any](data []T, more bool) list[T] {
	if data == nil {
		data = []T{}
	}
	return list[T]{Object: "list", Data: data, HasMore: more}
}

// deleted answers a DELETE.
type deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// sessionRoutes registers /api/sessions. The sessions, their messages and
// search hits have the shapes `talaria sessions ... -o json` prints
// (sessionview).
func (s *Server) sessionRoutes(handle func(string, handlerFunc)) {
	handle("GET /api/sessions", s.handleListSessions)
	handle("GET /api/sessions/search", s.handleSearchSessions)
	handle("GET /api/sessions/{id}", s.handleGetSession)
	handle("GET /api/sessions/{id}/messages", s.handleSessionMessages)
	handle("GET /api/sessions/{id}/status", s.handleSessionStatus)
	handle("DELETE /api/sessions/{id}", s.handleDeleteSession)
	handle("POST /api/sessions/{id}/fork", s.handleForkSession)
}

// intParam reads the query parameter name as an integer in [min, max];
// def when it is absent.
func intParam(r *http.Request, name string, def, min, max int) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < min || n > max {
		return 0, badRequest("invalid_"+name, "%s must be a whole number from %d to %d, not %q", name, min, max, oneLine(raw))
	}
	return n, nil
}

// boolParam reads the query parameter name as a boolean (absent: false).
func boolParam(r *http.Request, name string) (bool, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, badRequest("invalid_"+name, "%s must be true or false, not %q", name, oneLine(raw))
	}
	return b, nil
}

// handleListSessions answers GET /api/sessions?limit=N&offset=M&all=B:
// sessions most recently updated first, limit of them (20 by default, at
// most 200) after the first offset; has_more says whether another page
// follows (ask again with offset+limit). The sessions the engine makes to
// review memory are left out unless all=true, as in `talaria sessions
// list`.
func (s *Server) handleListSessions(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", defaultPageLimit, 1, maxPageLimit)
	if err != nil {
		return err
	}
	offset, err := intParam(r, "offset", 0, 0, 1<<30)
	if err != nil {
		return err
	}
	all, err := boolParam(r, "all")
	if err != nil {
		return err
	}
	sessions, more, err := sessionview.List(r.Context(), s.rt.Store, offset, limit, all)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newList(sessions, more))
}

// sessionView is a session as the API shows it, its turns counted.
func (s *Server) sessionView(r *http.Request, sess *models.Session) (sessionview.Session, error) {
	counted, err := sessionview.WithTurnCounts(r.Context(), s.rt.Store, []models.Session{*sess})
	if err != nil {
		return sessionview.Session{}, err
	}
	return sessionview.NewSessions(counted, sessionview.FirstMessage(r.Context(), s.rt.Store))[0], nil
}

// loadSession is the session of the path, or a 404.
func (s *Server) loadSession(r *http.Request) (*models.Session, error) {
	id := r.PathValue("id")
	if !validSession(id) {
		return nil, notFound("no session %q", oneLine(id))
	}
	sess, err := s.rt.Store.Session(r.Context(), id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, notFound("no session %q", id)
	}
	return sess, err
}

// handleGetSession answers GET /api/sessions/{id}: the session, as in the
// list.
func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.loadSession(r)
	if err != nil {
		return err
	}
	v, err := s.sessionView(r, sess)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// handleSessionStatus answers GET /api/sessions/{id}/status: what the
// session is doing now, as `talaria status ID -o json` shows it (one
// engine.Status for both).
func (s *Server) handleSessionStatus(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if !validSession(id) {
		return notFound("no session %q", oneLine(id))
	}
	st, err := s.rt.SessionStatus(r.Context(), id)
	if errors.Is(err, engine.ErrNoSession) {
		return notFound("no session %q", id)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

// handleSessionMessages answers GET /api/sessions/{id}/messages: the
// session's conversation, oldest first, without the replies the loop
// discarded (hidden), as `talaria sessions show` shows it.
func (s *Server) handleSessionMessages(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.loadSession(r)
	if err != nil {
		return err
	}
	msgs, err := s.rt.Store.Messages(r.Context(), sess.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newList(sessionview.NewMessages(msgs), false))
}

// handleSearchSessions answers GET /api/sessions/search?q=...&limit=N&around=M:
// full-text search over every session's messages (as `talaria sessions
// search`), at most limit hits (10 by default, at most 100), each with
// around messages of context on each side (1 by default, at most 10),
// grouped by conversation. has_more is true when the search found limit
// hits: there may be more.
func (s *Server) handleSearchSessions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query().Get("q")
	if strings.TrimSpace(q) == "" {
		return badRequest("missing_query", "q is empty: give the words to look for (?q=...)")
	}
	if len(q) > maxInputBytes {
		return badRequest("invalid_q", "q is longer than %d bytes", maxInputBytes)
	}
	limit, err := intParam(r, "limit", 10, 1, maxSearchHits)
	if err != nil {
		return err
	}
	around, err := intParam(r, "around", 1, 0, maxSearchAround)
	if err != nil {
		return err
	}
	// The API is the operator's: every session, chats' included.
	groups, err := s.rt.Store.SearchMessages(r.Context(), models.Scope{}, q, limit, around)
	if errors.Is(err, models.ErrInvalidArgument) {
		return badRequest("invalid_q", "%s", oneLine(err.Error()))
	}
	if err != nil {
		return err
	}
	hits := 0
	for _, g := range groups {
		hits += len(g.Hits)
	}
	return writeJSON(w, http.StatusOK, newList(sessionview.NewSearch(groups), hits >= limit))
}

// handleDeleteSession answers DELETE /api/sessions/{id}: the session and
// everything stored for it go, as with `talaria sessions rm` (a session
// compacted from it stays; its lineage's kept tool outputs go with the
// last of its sessions).
func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.loadSession(r)
	if err != nil {
		return err
	}
	// A running turn would go on writing into what is deleted.
	if st, err := s.rt.SessionState(r.Context(), sess.ID); err == nil && st.Running != "" {
		return errorf(http.StatusConflict, typeConflict, "session_busy", "session %s has a running turn (%s): stop it first (POST /v1/runs/%s/stop)",
			sess.ID, runID(runPrefix, st.Running), runID(runPrefix, st.Running))
	}
	err = engine.DeleteSession(r.Context(), s.rt.Store, s.cfg.Home, sess.ID)
	if errors.Is(err, models.ErrNotFound) {
		return notFound("no session %q", sess.ID)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, deleted{ID: sess.ID, Object: "session.deleted", Deleted: true})
}

// forkRequest is the optional body of POST /api/sessions/{id}/fork.
type forkRequest struct {
	// SessionID names the new session (default: a new api-... id).
	SessionID string `json:"session_id"`
}

// handleForkSession answers POST /api/sessions/{id}/fork with 201 and a
// new session holding a copy of the session's conversation (its model,
// title and system prompt too, none of its turns): a message sent to the
// fork goes on from there, and the original stays as it is.
func (s *Server) handleForkSession(w http.ResponseWriter, r *http.Request) error {
	var req forkRequest
	if r.ContentLength != 0 && r.Body != http.NoBody {
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
	}
	newID := req.SessionID
	if newID == "" {
		newID = newSessionID()
	} else if !validSession(newID) {
		return badRequest("invalid_session_id", "session_id %q: use 1-128 letters, digits, '.', '_', '~' or '-'", oneLine(newID))
	}
	src, err := s.loadSession(r)
	if err != nil {
		return err
	}
	fork, err := s.rt.Store.ForkSession(r.Context(), src.ID, newID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return notFound("no session %q", src.ID)
	case errors.Is(err, models.ErrSessionExists):
		return errorf(http.StatusConflict, typeConflict, "session_exists", "session %q already exists: choose another session_id", newID)
	case err != nil:
		return err
	}
	v, err := s.sessionView(r, fork)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/sessions/"+fork.ID)
	return writeJSON(w, http.StatusCreated, v)
}
