package models

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// pastSession stores a session with one turn, one message and a summary.
func pastSession(t *testing.T, s *Store, id, message, summary string) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.NextTurn(ctx, id, "m", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, []Message{userMessage(id, id+"/1", message)}); err != nil {
		t.Fatal(err)
	}
	if summary != "" {
		err := s.PutSummary(ctx, SessionSummary{SessionID: id, Summary: summary, Model: "m", Turns: 1, Embedding: EncodeVector([]float32{1, 0.5})})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func hitSessions(hits []RecallHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.SessionID)
	}
	return out
}

func TestSummariesSearchAndDelete(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		pastSession(t, s, "bread", "my sourdough starter smells of acetone", "Topic: sourdough starter care. Decision: feed twice a day.")
		pastSession(t, s, "k8s", "the pod is in CrashLoopBackOff", "Topic: kubernetes pod crash. Fact: the image lacked a config file.")
		pastSession(t, s, "asking", "sourdough again", "Topic: sourdough again.")

		hits, err := s.SearchSummaries(ctx, Scope{}, []string{"sourdough", "starter", "feeding"}, "asking", 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := hitSessions(hits); !slices.Equal(got, []string{"bread"}) {
			t.Fatalf("summary hits = %v, want [bread] (never the asking lineage)", got)
		}
		if hits[0].Score <= 0 {
			t.Fatalf("score %v, want positive", hits[0].Score)
		}
		passages, err := s.SearchPassages(ctx, Scope{}, []string{"CrashLoopBackOff", "pod"}, "asking", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(passages) != 1 || passages[0].SessionID != "k8s" || passages[0].Content != "the pod is in CrashLoopBackOff" {
			t.Fatalf("passages = %+v", passages)
		}
		vecs, err := s.SummaryVectors(ctx, Scope{}, "asking")
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != 2 || !slices.Equal(vecs[0].Vector, []float32{1, 0.5}) {
			t.Fatalf("vectors = %+v", vecs)
		}
		n, v, err := s.SummaryCounts(ctx)
		if err != nil || n != 3 || v != 3 {
			t.Fatalf("counts = %d %d %v", n, v, err)
		}

		// A new summary replaces the old one, in the index too.
		if err := s.PutSummary(ctx, SessionSummary{SessionID: "bread", Summary: "Topic: rye bread.", Turns: 2}); err != nil {
			t.Fatal(err)
		}
		if hits, _ := s.SearchSummaries(ctx, Scope{}, []string{"sourdough"}, "asking", 10); len(hits) != 0 {
			t.Fatalf("replaced summary still found: %v", hitSessions(hits))
		}
		if got, err := s.Summary(ctx, "bread"); err != nil || got.Summary != "Topic: rye bread." || got.Vector() != nil {
			t.Fatalf("summary = %+v, %v", got, err)
		}

		if err := s.DeleteSession(ctx, "k8s"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Summary(ctx, "k8s"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("summary of a deleted session: %v", err)
		}
		if hits, _ := s.SearchSummaries(ctx, Scope{}, []string{"kubernetes"}, "", 10); len(hits) != 0 {
			t.Fatalf("deleted session's summary still found: %v", hitSessions(hits))
		}
		if n, v, _ := s.SummaryCounts(ctx); n != 2 || v != 1 {
			t.Fatalf("after delete: %d summaries, %d vectors", n, v)
		}
	})
}

func TestSessionsToSummarize(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		pastSession(t, s, "done", "x", "summary")
		pastSession(t, s, "open", "y", "")
		pastSession(t, s, ReviewSessionPrefix+"open.1", "z", "")
		got, err := s.SessionsToSummarize(ctx, time.Now().Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != "open" {
			t.Fatalf("to summarise: %+v", got)
		}
		if got, _ := s.SessionsToSummarize(ctx, time.Now().Add(-time.Hour), 10); len(got) != 0 {
			t.Fatalf("sessions active since are not idle: %+v", got)
		}
		// A session that went on after its summary is summarised again.
		if _, err := s.NextTurn(ctx, "done", "m", ""); err != nil {
			t.Fatal(err)
		}
		got, _ = s.SessionsToSummarize(ctx, time.Now().Add(time.Hour), 10)
		if len(got) != 2 {
			t.Fatalf("to summarise after a new turn: %+v", got)
		}
	})
}

func TestRecallBlockStoredOnce(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		pastSession(t, s, "a", "x", "")
		if _, ok, err := s.RecallBlock(ctx, "turn/a/1"); ok || err != nil {
			t.Fatalf("block before any: %v %v", ok, err)
		}
		first, err := s.PutRecallBlock(ctx, "a", "turn/a/1", "first")
		if err != nil || first != "first" {
			t.Fatalf("put: %q %v", first, err)
		}
		again, err := s.PutRecallBlock(ctx, "a", "turn/a/1", "second")
		if err != nil || again != "first" {
			t.Fatalf("a retry got %q %v, want the stored block", again, err)
		}
		if err := s.DeleteSession(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.RecallBlock(ctx, "turn/a/1"); ok {
			t.Fatal("the block outlived its session")
		}
	})
}

func TestVectorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range [][]float32{nil, {0}, {1, -2.5, 3e-8}} {
		got := DecodeVector(EncodeVector(v))
		if !slices.Equal(got, v) && len(v) != 0 {
			t.Fatalf("%v -> %v", v, got)
		}
	}
	if DecodeVector([]byte{1, 2, 3}) != nil {
		t.Fatal("a malformed vector decoded")
	}
}
