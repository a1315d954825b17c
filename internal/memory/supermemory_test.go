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

func TestSupermemoryOverItsAPI(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewSupermemory(testKey)
	t.Cleanup(fake.Close)
	p := external(t, "supermemory", fake.URL())
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	fake.SeedMemory(fakememory.SupermemoryMemory{Memory: "Ann likes to sail a small boat", ContainerTag: "talaria-ann", Metadata: map[string]any{"talaria_session": "s-old"}, UpdatedAt: at})
	fake.SeedMemory(fakememory.SupermemoryMemory{Memory: "Bob sails too", ContainerTag: "talaria-bob"})

	turns := []Turn{
		{SessionID: "s-sea", TurnID: "t1", User: "ann", UserMessage: "Where can I sail near Brest?", Answer: "Try the Rade de Brest.", At: at},
		{SessionID: "s-sea", TurnID: "t2", User: "ann", UserMessage: "And in winter?", Answer: "Wear a drysuit."},
		{SessionID: "s-tax", TurnID: "t3", User: "ann", UserMessage: "Taxes are due in April", Answer: "Noted."},
	}
	for _, turn := range turns {
		if err := p.Sync(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	adds := fake.RequestsTo(http.MethodPost, "/v3/documents")
	if len(adds) != 3 {
		t.Fatalf("%d documents added, want 3", len(adds))
	}
	var doc map[string]any
	if err := adds[0].JSON(&doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"content":      "user: Where can I sail near Brest?\n\nassistant: Try the Rade de Brest.",
		"containerTag": "talaria-ann",
		"customId":     "turn-s-sea_00t1",
		"metadata":     map[string]any{"talaria_session": "s-sea", "talaria_turn": "t1", "talaria_at": "2026-05-01T09:00:00Z"},
	}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("document sent %v, want %v", doc, want)
	}
	// Sending a turn again updates its document.
	if err := p.Sync(ctx, turns[0]); err != nil || len(fake.Documents()) != 3 {
		t.Fatalf("a turn sent twice: %v, %d documents", err, len(fake.Documents()))
	}

	got, err := p.Prefetch(ctx, Query{SessionID: "s-new", User: "ann", Text: "sail Brest"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 2 || got.Items[0].SessionID != "s-sea" || len(got.Items[0].Passages) != 1 || !strings.Contains(got.Items[0].Passages[0], "near Brest") ||
		got.Items[1].SessionID != "s-old" || got.Items[1].Summary != "Ann likes to sail a small boat" || !got.Items[1].At.Equal(at) || got.Items[0].Score < got.Items[1].Score {
		t.Fatalf("Prefetch = %+v", got)
	}
	var search map[string]any
	if err := fake.RequestsTo(http.MethodPost, "/v4/search")[0].JSON(&search); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(search, map[string]any{"q": "sail Brest", "containerTag": "talaria-ann", "searchMode": "hybrid", "limit": float64(6)}) {
		t.Fatalf("search sent %v", search)
	}
	// From the sea session itself, only the older memory.
	if got, err := p.Prefetch(ctx, Query{SessionID: "s-sea", User: "ann", Text: "sail Brest"}); err != nil || len(got.Items) != 1 || got.Items[0].SessionID != "s-old" {
		t.Fatalf("Prefetch from the sea session = %+v, %v", got, err)
	}

	out, err := toolOf(t, p, SupermemorySearchName).Run(ctx, tools.Env{SessionID: "s-tax", Owner: "ann", OwnerKnown: true}, json.RawMessage(`{"query":"taxes"}`))
	if err != nil || !strings.HasPrefix(out, "1. user: Taxes are due in April assistant: Noted. (") || strings.Contains(out, "2.") {
		t.Fatalf("supermemory_search = %q, %v", out, err)
	}

	if err := p.Forget(ctx, "s-sea"); err != nil {
		t.Fatal(err)
	}
	var bulk struct {
		IDs []string `json:"ids"`
	}
	if err := fake.RequestsTo(http.MethodDelete, "/v3/documents/bulk")[0].JSON(&bulk); err != nil || len(bulk.IDs) != 2 {
		t.Fatalf("bulk delete of %v, %v", bulk.IDs, err)
	}
	if docs := fake.Documents(); len(docs) != 1 || docs[0].Metadata["talaria_session"] != "s-tax" {
		t.Fatalf("documents after forgetting the sea session: %+v", docs)
	}
	// Nothing left of it: forgetting again deletes nothing.
	if err := p.Forget(ctx, "s-sea"); err != nil || len(fake.RequestsTo(http.MethodDelete, "/v3/documents/bulk")) != 1 {
		t.Fatalf("forgetting again: %v", err)
	}
	for _, r := range fake.Requests() {
		if r.Auth != "Bearer "+testKey {
			t.Fatalf("%s %s sent Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
}

func TestSupermemorySlow(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewSupermemory(testKey)
	t.Cleanup(fake.Close)
	checkSlow(t, external(t, "supermemory", fake.URL()), fake)
}

func TestSupermemoryDown(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewSupermemory(testKey)
	checkDown(t, external(t, "supermemory", fake.URL()), fake)
}

func TestSmItems(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		found   []smResult
		exclude string
		limit   int
		want    []Item
	}{
		{"none", nil, "", 3, nil},
		{"memory a summary, chunk a passage", []smResult{
			{Memory: "fact", Similarity: 0.9, UpdatedAt: at.Format(time.RFC3339Nano), Metadata: map[string]any{"talaria_session": "s1"}},
			{Chunk: "text", Similarity: 0.8},
		}, "", 3, []Item{
			{SessionID: "s1", At: at, Summary: "fact", Score: 0.9},
			{Passages: []string{"text"}, Score: 0.8},
		}},
		{"excluded, empty, limit", []smResult{
			{Memory: "mine", Metadata: map[string]any{"talaria_session": "now"}},
			{Memory: " ", Chunk: ""},
			{Memory: "x", Metadata: map[string]any{"talaria_session": 7.0}},
			{Memory: "y"},
		}, "now", 1, []Item{{Summary: "x"}}},
	} {
		if got := smItems(tt.found, tt.exclude, tt.limit); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: smItems = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestSmIDs(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("u", 200)
	for _, tt := range []struct{ got, want string }{
		{smTag(""), "talaria-user"},
		{smTag("telegram:42"), "talaria-telegram_3a42"},
		{serviceID("turn-", "s\x00t"), "turn-s_00t"},
	} {
		if tt.got != tt.want {
			t.Errorf("id %q, want %q", tt.got, tt.want)
		}
	}
	if id := smTag(long); len(id) > maxServiceID || id == smTag(long+"v") || !strings.HasPrefix(id, "talaria-h-") {
		t.Errorf("a long user's tag %q", id)
	}
	if smDocument(Turn{UserMessage: " ", Answer: "\n"}) != nil {
		t.Error("an empty turn has a document")
	}
}

// TestSupermemorySessionEnd: a session's end adds its summary as a
// document of the user's container, with its customId and metadata and
// the bearer key; told again, it updates that document; an empty summary
// sends nothing; Forget then deletes the summary with the turns.
func TestSupermemorySessionEnd(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewSupermemory(testKey)
	t.Cleanup(fake.Close)
	p := external(t, "supermemory", fake.URL())
	ctx := t.Context()
	for _, turn := range []Turn{
		{SessionID: "s-sea", TurnID: "t1", User: "ann", UserMessage: "Where can I sail near Brest?", Answer: "Try the Rade."},
		{SessionID: "s-tax", TurnID: "t2", User: "ann", UserMessage: "Taxes are due in April", Answer: "Noted."},
	} {
		if err := p.Sync(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}

	before := len(fake.Requests())
	if err := p.EndSession(ctx, SessionEnd{SessionID: "s-sea", User: "ann", Reason: EndIdle}); err != nil || len(fake.Requests()) != before {
		t.Fatalf("EndSession without a summary: %v, %d requests sent", err, len(fake.Requests())-before)
	}
	end := SessionEnd{SessionID: "s-sea", User: "ann", Reason: EndIdle, At: time.Now(), Summary: "Ann sails near Brest, in winter too."}
	for range 2 { // a retried activity tells the end again
		if err := p.EndSession(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	sent := fake.Requests()[before:]
	if len(sent) != 2 {
		t.Fatalf("%d requests at the session's end, want 2 (told twice)", len(sent))
	}
	want := map[string]any{
		"content":      "Ann sails near Brest, in winter too.",
		"containerTag": "talaria-ann",
		"customId":     "summary-s-sea",
		"metadata":     map[string]any{"talaria_session": "s-sea", "talaria_kind": "session_summary", "talaria_end": "idle"},
	}
	for _, r := range sent {
		var got map[string]any
		if err := r.JSON(&got); err != nil {
			t.Fatal(err)
		}
		if r.Method != http.MethodPost || r.Path != "/v3/documents" || r.Auth != "Bearer "+testKey || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %s (Authorization %q) sent %v, want %v", r.Method, r.Path, r.Auth, got, want)
		}
	}
	summaries := 0
	for _, d := range fake.Documents() {
		if d.CustomID == "summary-s-sea" && d.Content == end.Summary && d.Metadata["talaria_session"] == "s-sea" {
			summaries++
		}
	}
	if summaries != 1 || len(fake.Documents()) != 3 {
		t.Fatalf("documents after the end told twice: %+v", fake.Documents())
	}

	if err := p.Forget(ctx, "s-sea"); err != nil {
		t.Fatal(err)
	}
	if docs := fake.Documents(); len(docs) != 1 || docs[0].Metadata["talaria_session"] != "s-tax" {
		t.Fatalf("documents after forgetting the sea session: %+v", docs)
	}
}

func TestSmSummaryDocument(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("s", smMaxContent+10)
	longSession := strings.Repeat("x", 150)
	for _, tt := range []struct {
		name string
		e    SessionEnd
		want map[string]any
	}{
		{"no summary", SessionEnd{SessionID: "s", Reason: EndIdle}, nil},
		{"a blank summary", SessionEnd{SessionID: "s", Summary: "\t"}, nil},
		{"no session", SessionEnd{Summary: "sum"}, nil},
		{"the default user, no reason", SessionEnd{SessionID: "a/b", Summary: "sum"}, map[string]any{
			"content":      "sum",
			"containerTag": "talaria-user",
			"customId":     "summary-a_2fb",
			"metadata":     map[string]any{"talaria_session": "a/b", "talaria_kind": SummaryKind},
		}},
		{"cut, a long session hashed", SessionEnd{SessionID: longSession, User: "ann", Reason: EndReset, Summary: long}, map[string]any{
			"content":      cutText(long, smMaxContent),
			"containerTag": "talaria-ann",
			"customId":     serviceID("summary-", longSession),
			"metadata":     map[string]any{"talaria_session": longSession, "talaria_kind": SummaryKind, "talaria_end": "reset"},
		}},
	} {
		if got := smSummaryDocument(tt.e); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: smSummaryDocument = %v, want %v", tt.name, got, tt.want)
		}
	}
	if id := serviceID("summary-", longSession); len(id) > maxServiceID || !strings.HasPrefix(id, "summary-h-") {
		t.Errorf("a long session's summary id %q", id)
	}
}
