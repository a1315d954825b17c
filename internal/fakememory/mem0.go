package fakememory

import (
	"fmt"
	"net/http"
	"time"
)

// Mem0Memory is a memory the Mem0 fake holds, as its API shows it.
type Mem0Memory struct {
	ID        string         `json:"id"`
	Memory    string         `json:"memory"`
	UserID    string         `json:"user_id,omitempty"`
	RunID     string         `json:"run_id,omitempty"`
	Metadata  map[string]any `json:"metadata"`
	Score     float64        `json:"score,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// Mem0 is a fake of the Mem0 platform API: POST /v3/memories/add/ (its
// "extraction" keeps each user message as a memory, filed under the
// request's user_id and run_id with its metadata; sent twice, it is kept
// twice), POST
// /v3/memories/search/ (entity ids only inside filters, as documented:
// a top-level one is refused with 400) and DELETE /v1/memories/ by
// user_id or run_id (at least one). Its key comes as "Authorization:
// Token <key>".
type Mem0 struct {
	server
	memories []Mem0Memory
	next     int
}

// NewMem0 starts a Mem0 fake accepting key.
func NewMem0(key string) *Mem0 {
	m := &Mem0{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/memories/add/", m.add)
	mux.HandleFunc("POST /v3/memories/search/", m.search)
	mux.HandleFunc("DELETE /v1/memories/", m.deleteAll)
	m.start("Token", key, mux)
	return m
}

// Seed puts a memory in the fake.
func (m *Mem0) Seed(mem Mem0Memory) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appendLocked(mem)
}

// Memories are the memories the fake holds.
func (m *Mem0) Memories() []Mem0Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Mem0Memory(nil), m.memories...)
}

func (m *Mem0) appendLocked(mem Mem0Memory) {
	m.next++
	if mem.ID == "" {
		mem.ID = fmt.Sprintf("00000000-0000-4000-8000-%012d", m.next)
	}
	if mem.CreatedAt.IsZero() {
		mem.CreatedAt = time.Now().UTC()
	}
	if mem.UpdatedAt.IsZero() {
		mem.UpdatedAt = mem.CreatedAt
	}
	m.memories = append(m.memories, mem)
}

func badRequest(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": "400 Bad Request", "details": map[string]any{"message": msg}})
}

func (m *Mem0) add(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"messages"`
		UserID   string         `json:"user_id"`
		AgentID  string         `json:"agent_id"`
		RunID    string         `json:"run_id"`
		AppID    string         `json:"app_id"`
		Metadata map[string]any `json:"metadata"`
	}
	if !decode(w, r, http.StatusBadRequest, &body) {
		return
	}
	if len(body.Messages) == 0 || body.UserID == "" && body.AgentID == "" && body.RunID == "" && body.AppID == "" {
		badRequest(w, "messages and at least one entity id (user_id, agent_id, app_id, run_id) are required")
		return
	}
	for _, msg := range body.Messages {
		if msg.Content == nil || msg.Role != "user" && msg.Role != "assistant" && msg.Role != "system" {
			badRequest(w, "each message needs a role (user, assistant, system) and content")
			return
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, msg := range body.Messages {
		if msg.Role == "user" {
			m.appendLocked(Mem0Memory{Memory: *msg.Content, UserID: body.UserID, RunID: body.RunID, Metadata: body.Metadata})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"event_id": fmt.Sprintf("evt-%d", m.next), "status": "PENDING"})
}

// entity reads the entity ids of a search's filters: {"user_id": x} or
// {"AND": [{"user_id": x}, {"run_id": y}]}.
func entity(filters map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(map[string]any)
	walk = func(f map[string]any) {
		for k, v := range f {
			switch k {
			case "user_id", "agent_id", "run_id", "app_id":
				if s, ok := v.(string); ok {
					out[k] = s
				}
			case "AND":
				list, _ := v.([]any)
				for _, e := range list {
					if sub, ok := e.(map[string]any); ok {
						walk(sub)
					}
				}
			}
		}
	}
	walk(filters)
	return out
}

func (m *Mem0) search(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if !decode(w, r, http.StatusBadRequest, &body) {
		return
	}
	for _, k := range []string{"user_id", "agent_id", "run_id", "app_id"} {
		if _, ok := body[k]; ok {
			badRequest(w, "entity ids must be passed inside filters")
			return
		}
	}
	query, _ := body["query"].(string)
	filters, _ := body["filters"].(map[string]any)
	ids := entity(filters)
	if query == "" || len(ids) == 0 {
		badRequest(w, "query and filters with at least one entity id are required")
		return
	}
	topK := 10
	if n, ok := body["top_k"].(float64); ok {
		topK = int(n)
	}
	if topK < 1 || topK > 1000 {
		badRequest(w, "top_k must be 1 to 1000")
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var scoped []Mem0Memory
	var texts []string
	for _, mem := range m.memories {
		if (ids["user_id"] == "" || mem.UserID == ids["user_id"]) && (ids["run_id"] == "" || mem.RunID == ids["run_id"]) {
			scoped = append(scoped, mem)
			texts = append(texts, mem.Memory)
		}
	}
	idx, sc := ranked(query, texts)
	results := []Mem0Memory{}
	for k, i := range idx[:min(topK, len(idx))] {
		mem := scoped[i]
		mem.Score = sc[k]
		results = append(results, mem)
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

func (m *Mem0) deleteAll(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	user, run := q.Get("user_id"), q.Get("run_id")
	if user == "" && run == "" && q.Get("agent_id") == "" && q.Get("app_id") == "" {
		badRequest(w, "at least one filter is required")
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := m.memories[:0]
	for _, mem := range m.memories {
		if (user != "" || run != "") && (user == "" || user == "*" || mem.UserID == user) && (run == "" || run == "*" || mem.RunID == run) {
			continue
		}
		kept = append(kept, mem)
	}
	m.memories = kept
	writeJSON(w, http.StatusOK, map[string]any{"message": "Delete in progress. This may take some time.", "event_id": "evt-delete"})
}
