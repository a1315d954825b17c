package workflows

import (
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestWithWorkerModel: the worker's model settings fill only what the
// sender left unset, and a result without them changes nothing.
func TestWithWorkerModel(t *testing.T) {
	worker := &turnapi.WorkerModel{Name: "w", Timeout: time.Minute, MaxRetryAfter: 2 * time.Second, Attempts: 2}
	for _, tt := range []struct {
		name  string
		asked TurnInput
		w     *turnapi.WorkerModel
		want  TurnInput
	}{
		{"nothing asked: the worker's", TurnInput{}, worker,
			TurnInput{ModelTimeout: time.Minute, MaxRetryAfter: 2 * time.Second, ModelAttempts: 2}},
		{"the sender's win", TurnInput{Model: "m", ModelTimeout: time.Hour, MaxRetryAfter: time.Second, ModelAttempts: 9}, worker,
			TurnInput{Model: "m", ModelTimeout: time.Hour, MaxRetryAfter: time.Second, ModelAttempts: 9}},
		{"partly asked", TurnInput{ModelAttempts: 3}, worker,
			TurnInput{ModelTimeout: time.Minute, MaxRetryAfter: 2 * time.Second, ModelAttempts: 3}},
		{"recorded before workers reported", TurnInput{}, nil, TurnInput{}.withDefaults()},
		{"worker without limits keeps defaults", TurnInput{}, &turnapi.WorkerModel{Name: "w"}, TurnInput{}.withDefaults()},
		{"the worker's reply cap is the base of re-asks", TurnInput{}, &turnapi.WorkerModel{MaxTokens: 1000},
			TurnInput{Limits: loop.Limits{BaseMaxTokens: 1000}}},
		{"over the sender's", TurnInput{Limits: loop.Limits{BaseMaxTokens: 8000}}, &turnapi.WorkerModel{MaxTokens: 1000},
			TurnInput{Limits: loop.Limits{BaseMaxTokens: 1000}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := withWorkerModel(tt.asked.withDefaults(), tt.asked, tt.w)
			want := tt.want.withDefaults()
			if got.Model != want.Model || got.ModelTimeout != want.ModelTimeout || got.Limits.BaseMaxTokens != want.Limits.BaseMaxTokens ||
				got.MaxRetryAfter != want.MaxRetryAfter || got.ModelAttempts != want.ModelAttempts {
				t.Fatalf("got model %q %v %v %d, want %q %v %v %d", got.Model, got.ModelTimeout, got.MaxRetryAfter, got.ModelAttempts,
					want.Model, want.ModelTimeout, want.MaxRetryAfter, want.ModelAttempts)
			}
		})
	}
}

// TestModelUsed: a result names the model its last reply came from, else
// the input's.
func TestModelUsed(t *testing.T) {
	for _, tt := range []struct {
		in, st, want string
	}{
		{"", "", ""},
		{"m", "", "m"},
		{"", "w", "w"},
		{"m", "fallback-model", "fallback-model"},
	} {
		if got := modelUsed(TurnInput{Model: tt.in}, TurnState{Model: tt.st}); got != tt.want {
			t.Errorf("modelUsed(%q, %q) = %q, want %q", tt.in, tt.st, got, tt.want)
		}
	}
	if workerModelName(nil) != "" || workerModelName(&turnapi.WorkerModel{Name: "x"}) != "x" {
		t.Fatal("workerModelName")
	}
}

// TestWorkerCompactionThreshold: a sender that leaves the window to the
// model gets the worker's threshold; a sender's own threshold, a worker
// that knows no window and a result recorded before workers reported one
// keep the sender's.
func TestWorkerCompactionThreshold(t *testing.T) {
	fallback := CompactionSettings{Threshold: 61952, Ratio: 0.5, OverflowAttempts: 3}
	for _, tt := range []struct {
		name  string
		asked CompactionSettings
		w     *turnapi.WorkerModel
		want  int
		ratio float64
	}{
		{"the worker's window", fallback, &turnapi.WorkerModel{ContextWindow: 32768, CompactionThreshold: 14336}, 14336, 0.5},
		{"the worker knows no window", fallback, &turnapi.WorkerModel{Name: "w"}, 61952, 0.5},
		{"recorded before workers reported", fallback, nil, 61952, 0.5},
		{"the sender's window", CompactionSettings{Threshold: 9000}, &turnapi.WorkerModel{CompactionThreshold: 14336}, 9000, 0},
		{"compaction before calls off", CompactionSettings{Ratio: 0.5}, &turnapi.WorkerModel{CompactionThreshold: 14336}, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked := TurnInput{Compaction: tt.asked}
			if r := askedRatio(tt.asked); r != tt.ratio {
				t.Fatalf("askedRatio = %g, want %g", r, tt.ratio)
			}
			got := withWorkerModel(asked.withDefaults(), asked, tt.w)
			if got.Compaction.Threshold != tt.want || got.Compaction.OverflowAttempts != tt.asked.OverflowAttempts {
				t.Fatalf("compaction = %+v, want threshold %d", got.Compaction, tt.want)
			}
		})
	}
}
