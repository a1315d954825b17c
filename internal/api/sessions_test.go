package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/sessionview"
	"github.com/talaria-agent/talaria/models"
)

// storeAPIKey is the key of the servers storeAPI starts.
const storeAPIKey = "a-test-key-long-enough-for-the-api-0123456789"

// storeAPI is an API server on a real engine: an embedded Temporal
// server and a SQLite store in a fresh home, no worker (a run started
// waits for one).
type storeAPI struct {
	t   *testing.T
	rt  *engine.Runtime
	url string
}

// startStoreAPI starts a storeAPI for the test.
func startStoreAPI(t *testing.T) *storeAPI {
	t.Helper()
	return startStoreAPIConfig(t, config.Default(t.TempDir()))
}

// startStoreAPIConfig starts a storeAPI with cfg.
func startStoreAPIConfig(t *testing.T, cfg config.Config) *storeAPI {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := engine.Start(t.Context(), cfg, engine.Options{Private: true, Logger: logger})
	if err != nil {
		t.Fatalf("start the engine: %v", err)
	}
	t.Cleanup(rt.Close)
	srv, err := New(Options{Runtime: rt, Config: cfg, Key: storeAPIKey, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &storeAPI{t: t, rt: rt, url: hs.URL}
}

// do sends a request with the key (body: nil, a string sent as is, or a
// value sent as JSON) and returns the status and the body.
func (a *storeAPI) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+storeAPIKey)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// want sends a request, wants status, and decodes the answer into out
// (when not nil).
func (a *storeAPI) want(status int, method, path string, body, out any) {
	a.t.Helper()
	got, data := a.do(method, path, body)
	if got != status {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, got, data, status)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

// apiErrorOf decodes the JSON error shape.
func apiErrorOf(t *testing.T, data []byte) apiError {
	t.Helper()
	var body struct {
		Error *apiError `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Error == nil || body.Error.Message == "" {
		t.Fatalf("not the error shape: %s", data)
	}
	if strings.ContainsAny(body.Error.Message, "\r\n") {
		t.Errorf("a message of more than one line: %q", body.Error.Message)
	}
	return *body.Error
}

// seedSession stores a session with a conversation: a user message, a
// hidden reply, a tool call and its result, and a last answer.
func seedSession(t *testing.T, st *models.Store, id, words string) {
	t.Helper()
	ctx := t.Context()
	n, err := st.NextTurn(ctx, id, "model-x", "")
	if err != nil {
		t.Fatal(err)
	}
	turn := fmt.Sprintf("turn/%s/%d", id, n)
	msgs := []models.Message{
		{Role: "user", Content: "tell me about " + words},
		{Role: "assistant", Content: "a discarded reply", Hidden: true},
		{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "c1", Type: "function", Function: models.FunctionCall{Name: "terminal", Arguments: `{"command":"ls"}`}}}},
		{Role: "tool", ToolCallID: "c1", Name: "terminal", Content: "file.txt"},
		{Role: "assistant", Content: "here is " + words, FinishReason: "stop"},
	}
	for i := range msgs {
		msgs[i].SessionID, msgs[i].TurnID, msgs[i].IdemKey = id, turn, fmt.Sprintf("%s/%d", turn, i)
	}
	if _, err := st.AppendMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
}

func sessionIDs(l list[sessionview.Session]) string {
	var ids []string
	for _, s := range l.Data {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ",")
}

func TestSessionsAPI(t *testing.T) {
	a := startStoreAPI(t)
	st := a.rt.Store
	// Newest first: s5, s4, s3, review.s1.1, s2, s1.
	for i, id := range []string{"s1", "s2", "review.s1.1", "s3", "s4", "s5"} {
		seedSession(t, st, id, fmt.Sprintf("topic%d", i))
		if id == "s4" {
			if err := st.SetSessionTitle(t.Context(), "s4", "a title"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	seedSession(t, st, "s3", "the violet heron") // a second turn: s3 is the newest

	t.Run("list and paging", func(t *testing.T) {
		for _, tt := range []struct {
			query string
			want  string
			more  bool
		}{
			{"", "s3,s5,s4,s2,s1", false},
			{"?limit=2", "s3,s5", true},
			{"?limit=2&offset=2", "s4,s2", true},
			{"?limit=2&offset=4", "s1", false},
			{"?offset=9", "", false},
			{"?all=true", "s3,s5,s4,review.s1.1,s2,s1", false},
			{"?all=true&limit=1&offset=3", "review.s1.1", true},
		} {
			var l list[sessionview.Session]
			a.want(http.StatusOK, "GET", "/api/sessions"+tt.query, nil, &l)
			if l.Object != "list" || sessionIDs(l) != tt.want || l.HasMore != tt.more || l.Data == nil {
				t.Errorf("GET /api/sessions%s = %s (has_more %v), want %s (%v)", tt.query, sessionIDs(l), l.HasMore, tt.want, tt.more)
			}
		}
		var l list[sessionview.Session]
		a.want(http.StatusOK, "GET", "/api/sessions?limit=1&offset=2", nil, &l)
		s := l.Data[0]
		if s.ID != "s4" || s.Title != "a title" || s.TurnCount != 1 || s.Model != "model-x" || s.LineageID != "s4" ||
			s.FirstMessage != "tell me about topic4" || s.CreatedAt.IsZero() || s.UpdatedAt.Location() != time.UTC {
			t.Errorf("session = %+v", s)
		}
	})

	t.Run("get and messages", func(t *testing.T) {
		var s sessionview.Session
		a.want(http.StatusOK, "GET", "/api/sessions/s3", nil, &s)
		if s.ID != "s3" || s.TurnCount != 2 {
			t.Errorf("GET s3 = %+v", s)
		}
		var l list[sessionview.Message]
		a.want(http.StatusOK, "GET", "/api/sessions/s1/messages", nil, &l)
		if len(l.Data) != 4 {
			t.Fatalf("messages = %+v, want 4 (the hidden one left out)", l.Data)
		}
		m := l.Data
		if m[0].Role != "user" || m[0].Content != "tell me about topic0" || m[1].ToolCalls[0].Function.Name != "terminal" ||
			m[2].Role != "tool" || m[2].ToolCallID != "c1" || m[3].FinishReason != "stop" || m[0].ID >= m[1].ID || m[0].CreatedAt.IsZero() {
			t.Errorf("messages = %+v", m)
		}
		_, raw := a.do("GET", "/api/sessions/s1/messages", nil)
		for _, key := range []string{`"tool_calls":[{"id":"c1","type":"function","function":{"name":"terminal"`, `"tool_call_id":"c1"`, `"created_at":"`, `"role":"tool"`} {
			if !bytes.Contains(raw, []byte(key)) {
				t.Errorf("messages JSON lacks %s: %s", key, raw)
			}
		}
	})

	t.Run("search", func(t *testing.T) {
		var l list[sessionview.SearchGroup]
		a.want(http.StatusOK, "GET", "/api/sessions/search?q=violet+heron&around=1", nil, &l)
		if len(l.Data) != 1 || l.Data[0].SessionID != "s3" || len(l.Data[0].Hits) == 0 || l.HasMore {
			t.Fatalf("search = %+v", l)
		}
		h := l.Data[0].Hits[0]
		if !strings.Contains(h.Message.Content, "violet heron") || h.Before == nil || h.After == nil {
			t.Errorf("hit = %+v", h)
		}
		a.want(http.StatusOK, "GET", "/api/sessions/search?q=violet&limit=1", nil, &l)
		if !l.HasMore {
			t.Errorf("a full page of hits says no more: %+v", l)
		}
		a.want(http.StatusOK, "GET", "/api/sessions/search?q=nothingmatchesthis", nil, &l)
		if len(l.Data) != 0 || l.Data == nil {
			t.Errorf("no hits = %+v", l)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, tt := range []struct {
			method, path string
			body         any
			status       int
			code         string
		}{
			{"GET", "/api/sessions/nosuch", nil, 404, "not_found"},
			{"GET", "/api/sessions/nosuch/messages", nil, 404, "not_found"},
			{"GET", "/api/sessions/-bad", nil, 404, "not_found"},
			{"GET", "/api/sessions/" + strings.Repeat("x", 200), nil, 404, "not_found"},
			{"DELETE", "/api/sessions/nosuch", nil, 404, "not_found"},
			{"POST", "/api/sessions/nosuch/fork", nil, 404, "not_found"},
			{"GET", "/api/sessions?limit=0", nil, 400, "invalid_limit"},
			{"GET", "/api/sessions?limit=201", nil, 400, "invalid_limit"},
			{"GET", "/api/sessions?limit=x", nil, 400, "invalid_limit"},
			{"GET", "/api/sessions?offset=-1", nil, 400, "invalid_offset"},
			{"GET", "/api/sessions?all=maybe", nil, 400, "invalid_all"},
			{"GET", "/api/sessions/search", nil, 400, "missing_query"},
			{"GET", "/api/sessions/search?q=+", nil, 400, "missing_query"},
			{"GET", "/api/sessions/search?q=x&around=11", nil, 400, "invalid_around"},
			{"POST", "/api/sessions/s1/fork", map[string]string{"session_id": "bad id!"}, 400, "invalid_session_id"},
			{"POST", "/api/sessions/s1/fork", map[string]string{"session_id": "s2"}, 409, "session_exists"},
			{"POST", "/api/sessions/s1/fork", "{not json", 400, "invalid_json"},
			{"POST", "/api/sessions/s1/fork", `{"session_id":"` + strings.Repeat("x", MaxBodyBytes) + `"}`, 413, "request_too_large"},
			{"PUT", "/api/sessions/s1", nil, 405, "method_not_allowed"},
		} {
			status, data := a.do(tt.method, tt.path, tt.body)
			if status != tt.status {
				t.Errorf("%s %.60s = %d %s, want %d", tt.method, tt.path, status, data, tt.status)
				continue
			}
			if e := apiErrorOf(t, data); e.Code != tt.code {
				t.Errorf("%s %.60s: code %q (%s), want %q", tt.method, tt.path, e.Code, e.Message, tt.code)
			}
		}
		// Without the key: 401.
		resp, err := http.Get(a.url + "/api/sessions")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("no key: %d", resp.StatusCode)
		}
	})

	t.Run("fork", func(t *testing.T) {
		var fork sessionview.Session
		a.want(http.StatusCreated, "POST", "/api/sessions/s1/fork", nil, &fork)
		if !strings.HasPrefix(fork.ID, "api-") || fork.ParentSessionID != "" || fork.LineageID != fork.ID || fork.Model != "model-x" ||
			fork.FirstMessage != "tell me about topic0" || fork.TurnCount != 0 {
			t.Errorf("fork = %+v", fork)
		}
		var orig, copied list[sessionview.Message]
		a.want(http.StatusOK, "GET", "/api/sessions/s1/messages", nil, &orig)
		a.want(http.StatusOK, "GET", "/api/sessions/"+fork.ID+"/messages", nil, &copied)
		if len(copied.Data) != len(orig.Data) {
			t.Fatalf("fork holds %d messages, the source %d", len(copied.Data), len(orig.Data))
		}
		for i := range orig.Data {
			o, c := orig.Data[i], copied.Data[i]
			if c.SessionID != fork.ID || c.ID == o.ID || c.Role != o.Role || c.Content != o.Content || c.ToolCallID != o.ToolCallID {
				t.Errorf("copy %d = %+v of %+v", i, c, o)
			}
		}
		var named sessionview.Session
		a.want(http.StatusCreated, "POST", "/api/sessions/s1/fork", map[string]string{"session_id": "s1-fork"}, &named)
		if named.ID != "s1-fork" {
			t.Errorf("named fork = %+v", named)
		}
		a.want(http.StatusOK, "GET", "/api/sessions/s1-fork", nil, nil)
	})

	t.Run("delete", func(t *testing.T) {
		var d deleted
		a.want(http.StatusOK, "DELETE", "/api/sessions/s2", nil, &d)
		if d.ID != "s2" || !d.Deleted || d.Object != "session.deleted" {
			t.Errorf("delete = %+v", d)
		}
		a.want(http.StatusNotFound, "GET", "/api/sessions/s2", nil, nil)
		a.want(http.StatusNotFound, "DELETE", "/api/sessions/s2", nil, nil)
		if msgs, err := st.AllMessages(t.Context(), "s2"); err != nil || len(msgs) != 0 {
			t.Errorf("messages of a deleted session: %d, %v", len(msgs), err)
		}
		var l list[sessionview.Session]
		a.want(http.StatusOK, "GET", "/api/sessions?limit=200", nil, &l)
		if strings.Contains(","+sessionIDs(l)+",", ",s2,") {
			t.Errorf("s2 still listed: %s", sessionIDs(l))
		}
	})
}
