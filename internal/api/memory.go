package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/models"
)

// Bounds of GET /api/memory/search.
const (
	// maxRecallQueryBytes bounds the message searched for (recall reads
	// its first words only).
	maxRecallQueryBytes = 4 << 10
	// maxRecallLimit bounds the sessions one search recalls.
	maxRecallLimit = 20
)

// memoryRoutes registers /api/memory: recall across sessions, as `talaria
// memory status | search | recall` show it (the same JSON shapes).
func (s *Server) memoryRoutes(handle func(string, handlerFunc)) {
	handle("GET /api/memory/status", s.handleMemoryStatus)
	handle("GET /api/memory/search", s.handleMemorySearch)
	handle("GET /api/memory/recall/{session}", s.handleMemoryRecall)
}

// recallOff is the 409 of a recall route while memory.recall is off.
func recallOff() *apiError {
	return errorf(http.StatusConflict, typeConflict, "recall_off",
		"memory recall is off on this server (memory.recall: true in config.yaml turns it on)")
}

// handleMemoryStatus answers GET /api/memory/status: the provider ("" when
// recall is off), the summaries and vectors stored, and the settings that
// bound recall, as `talaria memory status -o json`.
func (s *Server) handleMemoryStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := memory.StatusOf(r.Context(), s.cfg, s.rt.Store)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

// handleMemorySearch answers GET /api/memory/search?q=...&limit=N: what
// the built-in recall finds in the store for the message q (the past
// sessions, best first, with their summaries, best passages, dates and
// scores; at most limit sessions, 3 by default, at most 20), as `talaria
// memory search -o json`. 409 recall_off while memory.recall is off.
func (s *Server) handleMemorySearch(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query().Get("q")
	if strings.TrimSpace(q) == "" {
		return badParam("q", "missing_query", "q is empty: give the message to recall for (?q=...)")
	}
	if len(q) > maxRecallQueryBytes {
		return badParam("q", "invalid_q", "q is longer than %d bytes", maxRecallQueryBytes)
	}
	limit, err := intParam(r, "limit", memory.DefaultLimit, 1, maxRecallLimit)
	if err != nil {
		return err
	}
	if !s.cfg.Memory.Recall {
		return recallOff()
	}
	cfg := s.cfg
	cfg.Memory.Provider = config.MemoryRecall // the store's recall, as the CLI searches it
	p, err := engine.MemoryProvider(cfg, s.rt.Store, s.logger)
	if err != nil {
		return err
	}
	rec, err := p.Prefetch(r.Context(), memory.Query{Text: q, Limit: limit})
	if err != nil {
		return err
	}
	for i := range rec.Items {
		if rec.Items[i].Passages == nil {
			rec.Items[i].Passages = []string{}
		}
	}
	return writeJSON(w, http.StatusOK, newList(rec.Items, false))
}

// handleMemoryRecall answers GET /api/memory/recall/{session}: the summary
// kept of the session, as `talaria memory recall -o json`; 404 when it has
// none, 409 recall_off while memory.recall is off.
func (s *Server) handleMemoryRecall(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("session")
	if !s.cfg.Memory.Recall {
		return recallOff()
	}
	if !validSession(id) {
		return notFound("no summary of session %q", oneLine(id))
	}
	sum, err := s.rt.Store.Summary(r.Context(), id)
	if errors.Is(err, models.ErrNotFound) {
		return notFound("no summary of session %q (a session is summarised when it ends)", id)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, memory.NewSummaryView(sum))
}
