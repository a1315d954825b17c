package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/models"
)

// startMemoryAPI is a storeAPI with memory.recall set to recall, holding
// two summarised sessions (bread, boats) and one without a summary
// (plain).
func startMemoryAPI(t *testing.T, recall bool) *storeAPI {
	t.Helper()
	cfg := config.Default(t.TempDir())
	cfg.Memory.Recall = recall
	a := startStoreAPIConfig(t, cfg)
	st := a.rt.Store
	seedSession(t, st, "bread", "sourdough starter hydration")
	seedSession(t, st, "boats", "sailing knots and tides")
	seedSession(t, st, "plain", "nothing in particular")
	for id, text := range map[string]string{
		"bread": "Baking sourdough: the starter is fed twice a day at 75% hydration.",
		"boats": "Sailing: the bowline knot, and reading the tide tables before leaving harbour.",
	} {
		if err := st.PutSummary(t.Context(), models.SessionSummary{SessionID: id, Summary: text, Model: "model-x", Turns: 1}); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func TestMemoryAPI(t *testing.T) {
	t.Parallel()
	a := startMemoryAPI(t, true)

	var st memory.Status
	a.want(http.StatusOK, "GET", "/api/memory/status", nil, &st)
	if !st.Recall || st.Provider != config.MemoryRecall || st.Summaries != 2 || st.Vectors != 0 ||
		st.BudgetMS != config.DefaultPrefetchBudget.Milliseconds() || st.MaxBytes != config.DefaultRecallBytes {
		t.Errorf("status = %+v", st)
	}

	// What recall finds: the session on the message's topic, first, with
	// its summary, passages, date and score; never the others.
	var found list[memory.Item]
	a.want(http.StatusOK, "GET", "/api/memory/search?q=how+is+my+sourdough+starter", nil, &found)
	if len(found.Data) == 0 || found.Data[0].SessionID != "bread" {
		t.Fatalf("search found %+v, want bread first", found.Data)
	}
	bread := found.Data[0]
	if !strings.Contains(bread.Summary, "fed twice a day") || len(bread.Passages) == 0 || bread.At.IsZero() || bread.Score <= 0 {
		t.Errorf("bread = %+v", bread)
	}
	for _, it := range found.Data {
		if it.SessionID == "boats" {
			t.Errorf("a search about bread recalled boats: %+v", found.Data)
		}
	}
	var none list[memory.Item]
	a.want(http.StatusOK, "GET", "/api/memory/search?q=quantum+chromodynamics&limit=1", nil, &none)
	if len(none.Data) != 0 {
		t.Errorf("an unrelated search found %+v", none.Data)
	}
	var one list[memory.Item]
	a.want(http.StatusOK, "GET", "/api/memory/search?q=sourdough+sailing+knots&limit=1", nil, &one)
	if len(one.Data) != 1 {
		t.Errorf("limit=1 found %d sessions", len(one.Data))
	}

	var sum memory.SummaryView
	a.want(http.StatusOK, "GET", "/api/memory/recall/boats", nil, &sum)
	if sum.Session != "boats" || !strings.Contains(sum.Summary, "bowline") || sum.Model != "model-x" || sum.Turns != 1 || sum.At.IsZero() || sum.Vector {
		t.Errorf("recall boats = %+v", sum)
	}
	for _, path := range []string{"/api/memory/recall/plain", "/api/memory/recall/nobody", "/api/memory/recall/bad%20id"} {
		status, data := a.do("GET", path, nil)
		if e := apiErrorOf(t, data); status != http.StatusNotFound || e.Type != typeNotFound {
			t.Errorf("GET %s = %d %+v, want 404", path, status, e)
		}
	}

	// Bad input: a 400 with a one-line message.
	for _, path := range []string{
		"/api/memory/search",
		"/api/memory/search?q=+++",
		"/api/memory/search?q=bread&limit=0",
		"/api/memory/search?q=bread&limit=-2",
		"/api/memory/search?q=bread&limit=21",
		"/api/memory/search?q=bread&limit=9999999999999999999999",
		"/api/memory/search?q=bread&limit=three",
		"/api/memory/search?q=" + strings.Repeat("long+", maxRecallQueryBytes/5+1),
	} {
		status, data := a.do("GET", path, nil)
		if e := apiErrorOf(t, data); status != http.StatusBadRequest || e.Type != typeInvalidRequest {
			t.Errorf("GET %s = %d %+v, want 400", oneLine(path), status, e)
		}
	}
	// Words that are no words, or only an FTS operator, find nothing.
	for _, q := range []string{"%22%22", "AND", "*", "NEAR(a+b)", "-"} {
		a.want(http.StatusOK, "GET", "/api/memory/search?q="+q, nil, nil)
	}

	// Behind the key.
	req, err := http.NewRequestWithContext(t.Context(), "GET", a.url+"/api/memory/status", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the key: %d", resp.StatusCode)
	}

	// A deleted session's summary goes with it.
	a.want(http.StatusOK, "DELETE", "/api/sessions/bread", nil, nil)
	a.want(http.StatusNotFound, "GET", "/api/memory/recall/bread", nil, nil)
	var after list[memory.Item]
	a.want(http.StatusOK, "GET", "/api/memory/search?q=sourdough+starter", nil, &after)
	if len(after.Data) != 0 {
		t.Errorf("a deleted session is still found: %+v", after.Data)
	}
}

func TestMemoryAPIRecallOff(t *testing.T) {
	t.Parallel()
	a := startMemoryAPI(t, false)
	var st memory.Status
	a.want(http.StatusOK, "GET", "/api/memory/status", nil, &st)
	if st.Recall || st.Provider != "" || st.Summaries != 2 {
		t.Errorf("status with recall off = %+v", st)
	}
	for _, path := range []string{"/api/memory/search?q=sourdough", "/api/memory/recall/bread"} {
		status, data := a.do("GET", path, nil)
		e := apiErrorOf(t, data)
		if status != http.StatusConflict || e.Code != "recall_off" || !strings.Contains(e.Message, "memory.recall") {
			t.Errorf("GET %s = %d %+v, want 409 recall_off", path, status, e)
		}
	}
	// Bad input is still bad input.
	status, data := a.do("GET", "/api/memory/search?limit=2", nil)
	if e := apiErrorOf(t, data); status != http.StatusBadRequest {
		t.Errorf("missing q with recall off = %d %+v", status, e)
	}
}
