package memory

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/internal/tools"
)

func TestHonchoOverItsAPI(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewHoncho(testKey)
	t.Cleanup(fake.Close)
	p := external(t, "honcho", fake.URL())
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

	turns := []Turn{
		{SessionID: "s-bees", TurnID: "t1", User: "telegram:42", UserMessage: "I keep bees on my roof in Lyon", Answer: "Rooftop hives need shade.", At: at},
		{SessionID: "s-tax", TurnID: "t2", User: "telegram:42", UserMessage: "How do I file my taxes?", Answer: "Start with the form.", At: at.Add(time.Hour)},
	}
	for _, turn := range turns {
		if err := p.Sync(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range fake.Requests() {
		if r.Auth != "Bearer "+testKey {
			t.Fatalf("%s %s sent Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
	if got := fake.RequestsTo(http.MethodPost, "/v3/workspaces"); len(got) != 1 || string(got[0].Body) != `{"id":"talaria"}` {
		t.Fatalf("workspace requests %v, want one {id: talaria}", got)
	}
	var session struct {
		ID    string                     `json:"id"`
		Peers map[string]map[string]bool `json:"peers"`
	}
	if err := fake.RequestsTo(http.MethodPost, "/v3/workspaces/talaria/sessions")[0].JSON(&session); err != nil {
		t.Fatal(err)
	}
	wantPeers := map[string]map[string]bool{"telegram_3a42": {"observe_me": true}, "talaria": {"observe_me": false}}
	if session.ID != "s-bees" || !reflect.DeepEqual(session.Peers, wantPeers) {
		t.Fatalf("session %+v", session)
	}
	var batch struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := fake.RequestsTo(http.MethodPost, "/v3/workspaces/talaria/sessions/s-bees/messages")[0].JSON(&batch); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"peer_id": "telegram_3a42", "content": "I keep bees on my roof in Lyon", "metadata": map[string]any{"talaria_turn": "t1", "talaria_session": "s-bees"}, "created_at": "2026-05-01T09:00:00Z"},
		{"peer_id": "talaria", "content": "Rooftop hives need shade.", "metadata": map[string]any{"talaria_turn": "t1", "talaria_session": "s-bees"}, "created_at": "2026-05-01T09:00:00Z"},
	}
	if !reflect.DeepEqual(batch.Messages, want) {
		t.Fatalf("messages sent %v, want %v", batch.Messages, want)
	}

	// Prefetch finds the session about bees, not the one about taxes.
	got, err := p.Prefetch(ctx, Query{SessionID: "s-new", User: "telegram:42", Text: "bees on the roof"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 1 || got.Items[0].SessionID != "s-bees" || !got.Items[0].At.Equal(at) ||
		!reflect.DeepEqual(got.Items[0].Passages, []string{"user: I keep bees on my roof in Lyon"}) {
		t.Fatalf("Prefetch = %+v", got)
	}
	var search map[string]any
	if err := fake.RequestsTo(http.MethodPost, "/v3/workspaces/talaria/peers/telegram_3a42/search")[0].JSON(&search); err != nil {
		t.Fatal(err)
	}
	if search["query"] != "bees on the roof" || search["limit"] != float64(18) {
		t.Fatalf("search sent %v", search)
	}
	// The session asking is never recalled from itself.
	if got, err := p.Prefetch(ctx, Query{SessionID: "s-bees", User: "telegram:42", Text: "bees"}); err != nil || len(got.Items) != 0 {
		t.Fatalf("Prefetch from the bees session = %+v, %v", got, err)
	}
	// A user Honcho has never seen has nothing recalled.
	if got, err := p.Prefetch(ctx, Query{SessionID: "s-new", User: "bob", Text: "bees"}); err != nil || len(got.Items) != 0 {
		t.Fatalf("Prefetch for bob = %+v, %v", got, err)
	}

	// honcho_ask asks about the session's user.
	answer, err := toolOf(t, p, HonchoAskName).Run(ctx, tools.Env{SessionID: "s-tax", Owner: "telegram:42", OwnerKnown: true}, json.RawMessage(`{"question":"taxes"}`))
	if err != nil || answer != "The user said: How do I file my taxes?" {
		t.Fatalf("honcho_ask = %q, %v", answer, err)
	}
	if got := fake.RequestsTo(http.MethodPost, "/v3/workspaces/talaria/peers/telegram_3a42/chat"); len(got) != 1 || string(got[0].Body) != `{"query":"taxes","reasoning_level":"low"}` {
		t.Fatalf("chat requests %v", got)
	}

	// Forget deletes the session and its messages; again, it is no error.
	if err := p.Forget(ctx, "s-bees"); err != nil {
		t.Fatal(err)
	}
	if _, ok := fake.Sessions()["talaria/s-bees"]; ok {
		t.Fatal("the session is still held")
	}
	for _, m := range fake.Messages() {
		if m.SessionID == "s-bees" {
			t.Fatalf("a message of the forgotten session is held: %+v", m)
		}
	}
	if err := p.Forget(ctx, "s-bees"); err != nil {
		t.Fatalf("forgetting again: %v", err)
	}
}

func TestHonchoRefusedKey(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewHoncho("another-key")
	t.Cleanup(fake.Close)
	_, err := external(t, "honcho", fake.URL()).Prefetch(t.Context(), Query{Text: "bees"})
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), testKey) {
		t.Fatalf("Prefetch with a refused key: %v", err)
	}
}

func TestHonchoSlow(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewHoncho(testKey)
	t.Cleanup(fake.Close)
	checkSlow(t, external(t, "honcho", fake.URL()), fake)
}

func TestHonchoDown(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewHoncho(testKey)
	checkDown(t, external(t, "honcho", fake.URL()), fake)
}

func TestHonchoItems(t *testing.T) {
	t.Parallel()
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	long := strings.Repeat("x", MaxTextBytes+50)
	for _, tt := range []struct {
		name    string
		msgs    []honchoMessage
		exclude string
		limit   int
		want    []Item
	}{
		{"none", nil, "", 3, nil},
		{"grouped by session, dated by the latest", []honchoMessage{
			{SessionID: "a", PeerID: "ann", Content: "one", CreatedAt: t1},
			{SessionID: "b", PeerID: HonchoAgentPeer, Content: "two", CreatedAt: t1},
			{SessionID: "a", PeerID: "ann", Content: "three", CreatedAt: t2},
		}, "", 3, []Item{
			{SessionID: "a", At: t2, Passages: []string{"user: one", "user: three"}, Score: 1},
			{SessionID: "b", At: t1, Passages: []string{"assistant: two"}, Score: 0.5},
		}},
		{"excluded session, empty text and limit", []honchoMessage{
			{SessionID: "now", Content: "mine"},
			{SessionID: "a", Content: "  "},
			{SessionID: "b", Content: "bee"},
			{SessionID: "c", Content: "sea"},
		}, "now", 1, []Item{{SessionID: "b", Passages: []string{"user: bee"}, Score: 1}}},
		{"Talaria's session ids, as the metadata names them; the asking one left out however Honcho spells it", []honchoMessage{
			{SessionID: "telegram_2edm_2e42", Content: "mine, named", Metadata: map[string]any{"talaria_session": "telegram.dm.42"}},
			{SessionID: "telegram_2edm_2e42", Content: "mine, synced before sessions were named"},
			{SessionID: "slack_2ec_2e7", Content: "theirs", Metadata: map[string]any{"talaria_session": "slack.c.7"}},
		}, "telegram.dm.42", 3, []Item{{SessionID: "slack.c.7", Passages: []string{"user: theirs"}, Score: 1}}},
		{"passages bounded and cut", []honchoMessage{
			{SessionID: "a", Content: long}, {SessionID: "a", Content: "2"}, {SessionID: "a", Content: "3"}, {SessionID: "a", Content: "4"},
		}, "", 3, []Item{{SessionID: "a", Passages: []string{"user: " + cutText(long, MaxTextBytes), "user: 2", "user: 3"}, Score: 1}}},
	} {
		if got := honchoItems(tt.msgs, tt.exclude, tt.limit); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: honchoItems = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestServiceIDs: ids at the services are at most maxServiceID of their
// characters, distinct for distinct strings, the short ones readable.
func TestServiceIDs(t *testing.T) {
	t.Parallel()
	key := "email:" + strings.Repeat("someone.with.a.long.name", 4) + "@example.org:<thread@example.org>"
	for _, id := range []string{honchoPeer(key), honchoPeer(key + "x"), serviceID("", strings.Repeat("s.", 64))} {
		if len(id) > maxServiceID || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("id %q: %d characters, bound %d", id, len(id), maxServiceID)
		}
	}
	if honchoPeer(key) == honchoPeer(key+"x") {
		t.Fatal("two long keys share a peer")
	}
	if got := honchoPeer("telegram:42"); got != "telegram_3a42" {
		t.Fatalf("honchoPeer(telegram:42) = %q", got)
	}
}

func TestHonchoTurnMessages(t *testing.T) {
	t.Parallel()
	if got := honchoTurnMessages(Turn{UserMessage: " ", Answer: ""}); got != nil {
		t.Fatalf("an empty turn = %v", got)
	}
	got := honchoTurnMessages(Turn{User: "", TurnID: "t", Answer: strings.Repeat("é", 20000)})
	if len(got) != 1 || got[0]["peer_id"] != HonchoAgentPeer || len(got[0]["content"].(string)) > honchoMaxContent || got[0]["created_at"] != nil {
		t.Fatalf("an answer alone = %v", got[0]["peer_id"])
	}
	if honchoPeer("") != "user" {
		t.Fatalf("the default peer is %q", honchoPeer(""))
	}
}

func TestHonchoAnswerBounded(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewHoncho(testKey)
	t.Cleanup(fake.Close)
	fake.SetAnswer(strings.Repeat("a", MaxAnswerBytes))
	fake.Seed("talaria", "s1", "user", "bees", time.Now())
	_, err := toolOf(t, external(t, "honcho", fake.URL()), HonchoAskName).Run(t.Context(), tools.Env{OwnerKnown: true}, json.RawMessage(`{"question":"bees"}`))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "answer larger than 256 KiB") {
		t.Fatalf("honcho_ask with an answer over the bound: %v", err)
	}
	fake.SetAnswer(strings.Repeat("é", MaxToolBytes))
	out, err := toolOf(t, external(t, "honcho", fake.URL()), HonchoAskName).Run(t.Context(), tools.Env{OwnerKnown: true}, json.RawMessage(`{"question":"bees"}`))
	if err != nil || len(out) > MaxToolBytes || !strings.HasSuffix(out, "…") {
		t.Fatalf("a long answer: %d bytes, %v", len(out), err)
	}
}

// TestHonchoSessionEnd: a session's end puts its summary, reason and time
// in the session's metadata (Honcho's update session, the bearer key);
// told again, the same; an empty summary sends nothing; a session Honcho
// does not hold (404) is no error, another failure is.
func TestHonchoSessionEnd(t *testing.T) {
	t.Parallel()
	fake := fakememory.NewHoncho(testKey)
	t.Cleanup(fake.Close)
	p := external(t, "honcho", fake.URL())
	ctx := t.Context()
	if err := p.Sync(ctx, Turn{SessionID: "s-bees", TurnID: "t1", User: "ann", UserMessage: "I keep bees", Answer: "Nice."}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 9, 30, 0, 0, time.FixedZone("CEST", 2*3600))

	before := len(fake.Requests())
	if err := p.EndSession(ctx, SessionEnd{SessionID: "s-bees", User: "ann", Reason: EndIdle, At: at}); err != nil || len(fake.Requests()) != before {
		t.Fatalf("EndSession without a summary: %v, %d requests sent", err, len(fake.Requests())-before)
	}
	end := SessionEnd{SessionID: "s-bees", User: "ann", Reason: EndIdle, At: at, Summary: "Ann keeps bees on her roof."}
	for range 2 { // a retried activity tells the end again
		if err := p.EndSession(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]any{"metadata": map[string]any{
		"talaria_summary":    "Ann keeps bees on her roof.",
		"talaria_end_reason": "idle",
		"talaria_ended_at":   "2026-05-01T07:30:00Z",
	}}
	sent := fake.Requests()[before:]
	if len(sent) != 2 {
		t.Fatalf("%d requests at the session's end, want 2 (told twice)", len(sent))
	}
	for _, r := range sent {
		var got map[string]any
		if err := r.JSON(&got); err != nil {
			t.Fatal(err)
		}
		if r.Method != http.MethodPut || r.Path != "/v3/workspaces/talaria/sessions/s-bees" || r.Auth != "Bearer "+testKey || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %s (Authorization %q) sent %v, want %v", r.Method, r.Path, r.Auth, got, want)
		}
	}
	if meta, ok := fake.SessionMetadata("talaria", "s-bees"); !ok || !reflect.DeepEqual(meta, want["metadata"]) {
		t.Fatalf("the session's metadata: %v (held %v)", meta, ok)
	}

	// A session never synced: Honcho answers 404, which is no error.
	before = len(fake.Requests())
	if err := p.EndSession(ctx, SessionEnd{SessionID: "s-never", Reason: EndReset, Summary: "nothing synced"}); err != nil {
		t.Fatalf("EndSession of a session Honcho does not hold: %v", err)
	}
	if got := fake.Requests()[before:]; len(got) != 1 || got[0].Path != "/v3/workspaces/talaria/sessions/s-never" {
		t.Fatalf("requests for the session never synced: %v", got)
	}
	if _, ok := fake.SessionMetadata("talaria", "s-never"); ok {
		t.Fatal("the end of a session never synced made it")
	}
	// Another failure is one.
	fake.Close()
	if err := p.EndSession(ctx, end); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("EndSession with Honcho down: %v, want ErrUnavailable", err)
	}
}

func TestHonchoEndMetadata(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	long := strings.Repeat("b", honchoMaxContent+1)
	for _, tt := range []struct {
		name string
		e    SessionEnd
		want map[string]any
	}{
		{"no summary", SessionEnd{SessionID: "s", Reason: EndIdle, At: at}, nil},
		{"a blank summary", SessionEnd{SessionID: "s", Summary: " ", At: at}, nil},
		{"no session", SessionEnd{Summary: "sum", At: at}, nil},
		{"no time", SessionEnd{SessionID: "s", Reason: EndCompaction, Summary: "sum"}, map[string]any{
			"talaria_summary": "sum", "talaria_end_reason": "compaction",
		}},
		{"cut, dated to the second", SessionEnd{SessionID: "s", Reason: EndReset, Summary: long, At: at}, map[string]any{
			"talaria_summary": cutText(long, honchoMaxContent), "talaria_end_reason": "reset", "talaria_ended_at": "2026-03-04T05:06:07Z",
		}},
	} {
		if got := honchoEndMetadata(tt.e); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: honchoEndMetadata = %v, want %v", tt.name, got, tt.want)
		}
	}
}
