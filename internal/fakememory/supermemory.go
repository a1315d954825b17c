package fakememory

import (
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// SupermemoryDoc is a document the Supermemory fake holds.
type SupermemoryDoc struct {
	ID           string         `json:"id"`
	CustomID     string         `json:"customId,omitempty"`
	Content      string         `json:"content"`
	ContainerTag string         `json:"containerTag"`
	Metadata     map[string]any `json:"metadata"`
	UpdatedAt    time.Time      `json:"updatedAt"`
}

// SupermemoryMemory is a memory the fake holds, as drawn from documents.
type SupermemoryMemory struct {
	ID           string
	Memory       string
	ContainerTag string
	Metadata     map[string]any
	UpdatedAt    time.Time
}

// Supermemory is a fake of the Supermemory API: POST /v3/documents (a
// customId already held updates its document), POST /v4/search (by
// containerTag; "memories", "documents" or "hybrid" mode: memories are
// the seeded ones, chunks the documents' text), POST /v3/documents/list
// (metadata filters {"AND": [{key, value}]}, pages) and DELETE
// /v3/documents/bulk by ids. Its key comes as "Authorization: Bearer
// <key>".
type Supermemory struct {
	server
	docs     []SupermemoryDoc
	memories []SupermemoryMemory
	next     int
}

// smIDPattern is what Supermemory allows in a container tag or customId.
var smIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,100}$`)

// NewSupermemory starts a Supermemory fake accepting key.
func NewSupermemory(key string) *Supermemory {
	s := &Supermemory{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/documents", s.add)
	mux.HandleFunc("POST /v4/search", s.search)
	mux.HandleFunc("POST /v3/documents/list", s.list)
	mux.HandleFunc("DELETE /v3/documents/bulk", s.bulkDelete)
	s.start("Bearer", key, mux)
	return s
}

// SeedMemory puts a memory in the fake.
func (s *Supermemory) SeedMemory(m SupermemoryMemory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	if m.ID == "" {
		m.ID = fmt.Sprintf("mem_%d", s.next)
	}
	s.memories = append(s.memories, m)
}

// Documents are the documents the fake holds.
func (s *Supermemory) Documents() []SupermemoryDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SupermemoryDoc(nil), s.docs...)
}

func (s *Supermemory) add(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Content      string         `json:"content"`
		ContainerTag string         `json:"containerTag"`
		CustomID     string         `json:"customId"`
		Metadata     map[string]any `json:"metadata"`
	}
	if !decode(w, r, http.StatusBadRequest, &body) {
		return
	}
	if body.Content == "" || body.ContainerTag != "" && !smIDPattern.MatchString(body.ContainerTag) || body.CustomID != "" && !smIDPattern.MatchString(body.CustomID) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Bad Request", "details": "content is required; containerTag and customId: at most 100 letters, digits, '-' or '_'"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	doc := SupermemoryDoc{CustomID: body.CustomID, Content: body.Content, ContainerTag: body.ContainerTag, Metadata: body.Metadata, UpdatedAt: time.Now().UTC()}
	for i, d := range s.docs {
		if body.CustomID != "" && d.CustomID == body.CustomID {
			doc.ID = d.ID
			s.docs[i] = doc
			writeJSON(w, http.StatusOK, map[string]any{"id": doc.ID, "status": "queued"})
			return
		}
	}
	s.next++
	doc.ID = fmt.Sprintf("doc_%d", s.next)
	s.docs = append(s.docs, doc)
	writeJSON(w, http.StatusOK, map[string]any{"id": doc.ID, "status": "queued"})
}

func (s *Supermemory) search(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Q            string `json:"q"`
		ContainerTag string `json:"containerTag"`
		SearchMode   string `json:"searchMode"`
		Limit        *int   `json:"limit"`
	}
	if !decode(w, r, http.StatusBadRequest, &body) {
		return
	}
	limit := 10
	if body.Limit != nil {
		limit = *body.Limit
	}
	if body.SearchMode == "" {
		body.SearchMode = "memories"
	}
	if body.Q == "" || limit < 1 || body.SearchMode != "memories" && body.SearchMode != "documents" && body.SearchMode != "hybrid" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Bad Request", "details": "q is required; searchMode memories, documents or hybrid"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var results []map[string]any
	var texts []string
	if body.SearchMode != "documents" {
		for _, m := range s.memories {
			if body.ContainerTag == "" || m.ContainerTag == body.ContainerTag {
				results = append(results, map[string]any{"id": m.ID, "memory": m.Memory, "metadata": m.Metadata, "updatedAt": m.UpdatedAt, "version": 1})
				texts = append(texts, m.Memory)
			}
		}
	}
	if body.SearchMode != "memories" {
		for _, d := range s.docs {
			if body.ContainerTag == "" || d.ContainerTag == body.ContainerTag {
				results = append(results, map[string]any{"id": "chunk_" + d.ID, "chunk": d.Content, "metadata": d.Metadata, "updatedAt": d.UpdatedAt, "version": 1})
				texts = append(texts, d.Content)
			}
		}
	}
	idx, sc := ranked(body.Q, texts)
	out := []map[string]any{}
	for k, i := range idx[:min(limit, len(idx))] {
		results[i]["similarity"] = sc[k]
		out = append(out, results[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out, "timing": 12, "total": len(out)})
}

func (s *Supermemory) list(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Filters struct {
			AND []struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			} `json:"AND"`
		} `json:"filters"`
		ContainerTags []string `json:"containerTags"`
		Limit         int      `json:"limit"`
		Page          int      `json:"page"`
	}
	if !decode(w, r, http.StatusBadRequest, &body) {
		return
	}
	if body.Limit == 0 {
		body.Limit = 50
	}
	if body.Page == 0 {
		body.Page = 1
	}
	if body.Limit < 1 || body.Limit > 200 || body.Page < 1 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Bad Request", "details": "limit 1 to 200, page from 1"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []map[string]any
	for _, d := range s.docs {
		ok := len(body.ContainerTags) == 0 || len(body.ContainerTags) == 1 && body.ContainerTags[0] == d.ContainerTag
		for _, f := range body.Filters.AND {
			if v, _ := d.Metadata[f.Key].(string); v != f.Value {
				ok = false
			}
		}
		if ok {
			match = append(match, map[string]any{"id": d.ID, "customId": d.CustomID, "status": "done", "type": "text", "containerTags": []string{d.ContainerTag}, "metadata": d.Metadata, "createdAt": d.UpdatedAt})
		}
	}
	pages := (len(match) + body.Limit - 1) / body.Limit
	from := min((body.Page-1)*body.Limit, len(match))
	page := append([]map[string]any{}, match[from:min(from+body.Limit, len(match))]...)
	writeJSON(w, http.StatusOK, map[string]any{"memories": page, "pagination": map[string]any{"currentPage": body.Page, "totalPages": pages, "totalItems": len(match), "limit": body.Limit}})
}

func (s *Supermemory) bulkDelete(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IDs []string `json:"ids"`
	}
	if !decode(w, r, http.StatusBadRequest, &body) {
		return
	}
	if len(body.IDs) < 1 || len(body.IDs) > 100 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Bad Request", "details": "ids: 1 to 100"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	gone := map[string]bool{}
	for _, id := range body.IDs {
		gone[id] = true
	}
	kept, n := s.docs[:0], 0
	for _, d := range s.docs {
		if gone[d.ID] {
			n++
			continue
		}
		kept = append(kept, d)
	}
	s.docs = kept
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "deletedCount": n})
}
