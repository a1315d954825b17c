package memory

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/internal/tools"
)

func TestMem0OverItsAPI(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewMem0(testKey)
	t.Cleanup(fake.Close)
	p := external(t, "mem0", fake.URL())
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	fake.Seed(fakememory.Mem0Memory{Memory: "Ann is allergic to bees", UserID: "ann", RunID: "s-old", CreatedAt: at})

	turns := []Turn{
		{SessionID: "s-garden", TurnID: "t1", User: "ann", UserMessage: "My garden has roses and bees", Answer: "Roses like sun."},
		{SessionID: "s-tax", TurnID: "t2", User: "ann", UserMessage: "I file taxes in April", Answer: "Noted."},
	}
	for _, turn := range turns {
		if err := p.Sync(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	adds := fake.RequestsTo(http.MethodPost, "/v3/memories/add/")
	if len(adds) != 2 {
		t.Fatalf("%d adds, want 2", len(adds))
	}
	var add map[string]any
	if err := adds[0].JSON(&add); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"messages": []any{
			map[string]any{"role": "user", "content": "My garden has roses and bees"},
			map[string]any{"role": "assistant", "content": "Roses like sun."},
		},
		"user_id":  "ann",
		"run_id":   "s-garden",
		"metadata": map[string]any{"talaria_turn": "t1"},
	}
	if !reflect.DeepEqual(add, want) {
		t.Fatalf("add sent %v, want %v", add, want)
	}

	got, err := p.Prefetch(ctx, Query{SessionID: "s-garden", User: "ann", Text: "bees", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	// The asking session's own memory is left out; the older one is found.
	if len(got.Items) != 1 || got.Items[0].SessionID != "s-old" || got.Items[0].Summary != "Ann is allergic to bees" || !got.Items[0].At.Equal(at) || got.Items[0].Score != 1 {
		t.Fatalf("Prefetch = %+v", got)
	}
	var search map[string]any
	if err := fake.RequestsTo(http.MethodPost, "/v3/memories/search/")[0].JSON(&search); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(search, map[string]any{"query": "bees", "filters": map[string]any{"user_id": "ann"}, "top_k": float64(10)}) {
		t.Fatalf("search sent %v", search)
	}
	if got, err := p.Prefetch(ctx, Query{SessionID: "s-new", User: "ann", Text: "roses garden"}); err != nil || len(got.Items) != 1 || got.Items[0].SessionID != "s-garden" {
		t.Fatalf("Prefetch of the garden = %+v, %v", got, err)
	}

	out, err := toolOf(t, p, Mem0SearchName).Run(ctx, tools.Env{SessionID: "s-tax", Owner: "ann", OwnerKnown: true}, json.RawMessage(`{"query":"taxes April","limit":3}`))
	if err != nil || !strings.HasPrefix(out, "1. I file taxes in April (") || !strings.HasSuffix(out, "session s-tax)") {
		t.Fatalf("mem0_search = %q, %v", out, err)
	}
	if _, err := toolOf(t, p, Mem0SearchName).Run(ctx, tools.Env{OwnerKnown: true}, json.RawMessage(`{"query":" "}`)); err == nil {
		t.Fatal("mem0_search without a query ran")
	}

	if err := p.Forget(ctx, "s-garden"); err != nil {
		t.Fatal(err)
	}
	if d := fake.RequestsTo(http.MethodDelete, "/v1/memories/"); len(d) != 1 || d[0].RawQuery != "run_id=s-garden" {
		t.Fatalf("delete requests %v", d)
	}
	for _, m := range fake.Memories() {
		if m.RunID == "s-garden" {
			t.Fatalf("a memory of the forgotten session is held: %+v", m)
		}
	}
	if len(fake.Memories()) != 2 {
		t.Fatalf("the other memories went too: %+v", fake.Memories())
	}
	for _, r := range fake.Requests() {
		if r.Auth != "Token "+testKey {
			t.Fatalf("%s %s sent Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
}

func TestMem0Slow(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewMem0(testKey)
	t.Cleanup(fake.Close)
	checkSlow(t, external(t, "mem0", fake.URL()), fake)
}

func TestMem0Down(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewMem0(testKey)
	checkDown(t, external(t, "mem0", fake.URL()), fake)
}

func TestMem0Items(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		found   []mem0Memory
		exclude string
		limit   int
		want    []Item
	}{
		{"none", nil, "", 3, nil},
		{"dated by update, else creation", []mem0Memory{
			{Memory: "a", RunID: "r1", Score: 0.9, CreatedAt: "2020-01-01T00:00:00Z", UpdatedAt: at.Format(time.RFC3339)},
			{Memory: "b", Score: 0.5, CreatedAt: at.Format(time.RFC3339Nano)},
			{Memory: "c", Score: 0.4, CreatedAt: "yesterday"},
		}, "", 3, []Item{
			{SessionID: "r1", At: at, Summary: "a", Score: 0.9},
			{At: at, Summary: "b", Score: 0.5},
			{Summary: "c", Score: 0.4},
		}},
		{"excluded, empty, limit", []mem0Memory{
			{Memory: "mine", RunID: "now"}, {Memory: " "}, {Memory: "x", Score: 0.3}, {Memory: "y"},
		}, "now", 1, []Item{{Summary: "x", Score: 0.3}}},
	} {
		if got := mem0Items(tt.found, tt.exclude, tt.limit); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: mem0Items = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestMem0AddBody(t *testing.T) {
	t.Parallel()
	if mem0AddBody(Turn{UserMessage: " "}) != nil {
		t.Fatal("an empty turn has a body")
	}
	b := mem0AddBody(Turn{UserMessage: "hi"})
	if b["user_id"] != defaultUser || b["run_id"] != nil || len(b["messages"].([]map[string]string)) != 1 {
		t.Fatalf("body %v", b)
	}
}

// TestMem0SessionEnd: a session's end adds its summary, filed under the
// user and the session, named by its metadata, with Mem0's auth header;
// told again, it sends the same; an empty summary sends nothing; Forget
// then takes the summary's memory with the session's others.
func TestMem0SessionEnd(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewMem0(testKey)
	t.Cleanup(fake.Close)
	p := external(t, "mem0", fake.URL())
	ctx := t.Context()
	if err := p.Sync(ctx, Turn{SessionID: "s-garden", TurnID: "t1", User: "ann", UserMessage: "My garden has roses", Answer: "Nice."}); err != nil {
		t.Fatal(err)
	}
	fake.Seed(fakememory.Mem0Memory{Memory: "Ann files taxes in April", UserID: "ann", RunID: "s-tax"})

	before := len(fake.Requests())
	if err := p.EndSession(ctx, SessionEnd{SessionID: "s-garden", User: "ann", Reason: EndReset, Summary: " "}); err != nil || len(fake.Requests()) != before {
		t.Fatalf("EndSession without a summary: %v, %d requests sent", err, len(fake.Requests())-before)
	}
	end := SessionEnd{SessionID: "s-garden", User: "ann", Reason: EndReset, At: time.Now(), Summary: "Ann grows roses and keeps bees."}
	for range 2 { // a retried activity tells the end again
		if err := p.EndSession(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	adds := fake.Requests()[before:]
	if len(adds) != 2 {
		t.Fatalf("%d requests at the session's end, want 2 (told twice)", len(adds))
	}
	want := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Ann grows roses and keeps bees."}},
		"user_id":  "ann",
		"run_id":   "s-garden",
		"metadata": map[string]any{"talaria_kind": "session_summary", "talaria_end": "reset"},
	}
	for _, r := range adds {
		var got map[string]any
		if err := r.JSON(&got); err != nil {
			t.Fatal(err)
		}
		if r.Method != http.MethodPost || r.Path != "/v3/memories/add/" || r.Auth != "Token "+testKey || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %s (Authorization %q) sent %v, want %v", r.Method, r.Path, r.Auth, got, want)
		}
	}
	held := 0
	for _, m := range fake.Memories() {
		if m.RunID == "s-garden" && m.Memory == end.Summary && m.Metadata["talaria_kind"] == "session_summary" {
			held++
		}
	}
	if held == 0 {
		t.Fatalf("Mem0 holds no memory of the summary: %+v", fake.Memories())
	}

	if err := p.Forget(ctx, "s-garden"); err != nil {
		t.Fatal(err)
	}
	if left := fake.Memories(); len(left) != 1 || left[0].RunID != "s-tax" {
		t.Fatalf("memories after forgetting the garden session: %+v", left)
	}
}

func TestMem0SummaryBody(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", mem0MaxContent)
	for _, tt := range []struct {
		name string
		e    SessionEnd
		want map[string]any
	}{
		{"no summary", SessionEnd{SessionID: "s", Reason: EndIdle}, nil},
		{"a blank summary", SessionEnd{SessionID: "s", Summary: " \n"}, nil},
		{"no session", SessionEnd{Summary: "sum"}, nil},
		{"the default user, no reason", SessionEnd{SessionID: "s", Summary: " sum "}, map[string]any{
			"messages": []map[string]string{{"role": "user", "content": "sum"}},
			"user_id":  defaultUser,
			"run_id":   "s",
			"metadata": map[string]any{"talaria_kind": SummaryKind},
		}},
		{"cut", SessionEnd{SessionID: "s", User: "ann", Reason: EndCompaction, Summary: long}, map[string]any{
			"messages": []map[string]string{{"role": "user", "content": cutText(long, mem0MaxContent)}},
			"user_id":  "ann",
			"run_id":   "s",
			"metadata": map[string]any{"talaria_kind": SummaryKind, "talaria_end": "compaction"},
		}},
	} {
		if got := mem0SummaryBody(tt.e); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: mem0SummaryBody = %v, want %v", tt.name, got, tt.want)
		}
	}
}
