package activities

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// recallBenchSessions is how many past sessions the recall benchmark's
// store holds (issue 35, criterion 5).
const recallBenchSessions = 10_000

// recallBenchTopics are the subjects of the benchmark's past sessions:
// each session talks about one of them, with a few of its words, so that
// a message's words match many sessions in different measure.
var recallBenchTopics = [][]string{
	{"sourdough", "starter", "hydration", "flour", "proofing", "crumb", "oven", "levain"},
	{"sailing", "bowline", "knot", "tide", "harbour", "mainsail", "jib", "mooring"},
	{"kubernetes", "pod", "deployment", "ingress", "helm", "namespace", "kubelet", "cluster"},
	{"postgres", "vacuum", "index", "replication", "wal", "query", "planner", "autovacuum"},
	{"garden", "tomato", "compost", "seedling", "mulch", "pruning", "aphids", "raised"},
	{"guitar", "chord", "capo", "fretboard", "strumming", "tuning", "pickup", "amp"},
	{"marathon", "training", "tempo", "interval", "taper", "hydration", "shoes", "pace"},
	{"taxes", "deduction", "invoice", "receipt", "quarterly", "freelance", "vat", "accountant"},
	{"rust", "borrow", "lifetime", "trait", "cargo", "async", "tokio", "macro"},
	{"photography", "aperture", "shutter", "iso", "lens", "bokeh", "exposure", "raw"},
	{"coffee", "espresso", "grinder", "burr", "extraction", "crema", "roast", "portafilter"},
	{"travel", "visa", "passport", "itinerary", "hostel", "train", "luggage", "layover"},
	{"chess", "opening", "gambit", "endgame", "castling", "tactics", "sicilian", "rating"},
	{"beekeeping", "hive", "queen", "varroa", "honey", "smoker", "swarm", "frames"},
	{"terraform", "module", "state", "provider", "plan", "drift", "backend", "workspace"},
	{"knitting", "yarn", "gauge", "purl", "cable", "needles", "sweater", "blocking"},
	{"aquarium", "nitrate", "filter", "cichlid", "substrate", "cycling", "ph", "heater"},
	{"piano", "scales", "pedal", "sonata", "metronome", "sight", "reading", "chopin"},
	{"solar", "inverter", "panel", "battery", "kilowatt", "roof", "net", "metering"},
	{"golang", "goroutine", "channel", "context", "generics", "interface", "mutex", "pprof"},
}

// recallBenchStore is a SQLite store holding recallBenchSessions past
// sessions, each with four messages and a summary.
func recallBenchStore(b *testing.B) *models.Store {
	b.Helper()
	ctx := context.Background()
	store, err := models.Open(ctx, filepath.Join(b.TempDir(), "talaria.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	rng := rand.New(rand.NewPCG(35, 5))
	words := func(topic []string, n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = topic[rng.IntN(len(topic))]
		}
		return strings.Join(out, " ")
	}
	const batch = 500
	var msgs []models.Message
	for i := range recallBenchSessions {
		id := fmt.Sprintf("past-%05d", i)
		topic := recallBenchTopics[i%len(recallBenchTopics)]
		if _, err := store.EnsureSession(ctx, id, "model-x"); err != nil {
			b.Fatal(err)
		}
		turn := "turn/" + id + "/1"
		for j, m := range []struct{ role, text string }{
			{"user", "I have a question about " + words(topic, 4) + " for project " + id},
			{"assistant", "Here is what I know about " + words(topic, 6) + ", and some notes on " + words(topic, 3) + "."},
			{"user", "And what about " + words(topic, 3) + " when it gets cold?"},
			{"assistant", "For " + words(topic, 2) + " keep an eye on " + words(topic, 5) + "; that usually settles it."},
		} {
			msgs = append(msgs, models.Message{SessionID: id, TurnID: turn, IdemKey: fmt.Sprintf("%s/%d", turn, j), Role: m.role, Content: m.text})
		}
		sum := fmt.Sprintf("Topic: %s. Decisions: use %s. Facts: %s; session %s.", words(topic, 3), words(topic, 4), words(topic, 8), id)
		if err := store.PutSummary(ctx, models.SessionSummary{SessionID: id, Summary: sum, Model: "model-x", Turns: 1}); err != nil {
			b.Fatal(err)
		}
		if len(msgs) >= batch*4 || i == recallBenchSessions-1 {
			if _, err := store.AppendMessages(ctx, msgs); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
	return store
}

// BenchmarkRecallFirstCallStart measures how long a turn's first model
// call takes to reach the model, from the CallModel activity's start to
// the request's arrival at a fake model server, over a SQLite store of
// 10,000 past sessions with summaries: with the built-in recall (full-text
// search over summaries and messages, no embeddings) and without, one of
// each per iteration, alternating which goes first. It reports the
// medians of both and their difference (issue 35, criterion 5: at most 50
// ms).
func BenchmarkRecallFirstCallStart(b *testing.B) {
	store := recallBenchStore(b)
	model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep("ok") }))
	b.Cleanup(model.Close)
	providers := func(string) ([]llm.Endpoint, error) {
		return []llm.Endpoint{{BaseURL: model.URL(), APIKey: "k", Model: "model-x"}}, nil
	}
	envs := map[bool]*testsuite.TestActivityEnvironment{}
	acts := map[bool]*Activities{}
	for _, on := range []bool{false, true} {
		a := &Activities{Store: store, Providers: providers}
		if on {
			a.Memory, a.RecallBudget = memory.NewRecall(store, nil, nil), time.Minute // never skipped: its whole cost is measured
		}
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(a.CallModel)
		envs[on], acts[on] = env, a
	}
	ctx := context.Background()
	calls := 0
	call := func(on bool) time.Duration {
		calls++
		topic := recallBenchTopics[calls%len(recallBenchTopics)]
		id := fmt.Sprintf("ask-%d", calls)
		turn := "turn/" + id + "/1"
		if _, err := store.EnsureSession(ctx, id, "model-x"); err != nil {
			b.Fatal(err)
		}
		text := fmt.Sprintf("How should I deal with %s and %s in my %s?", topic[calls%7+1], topic[(calls+3)%7+1], topic[0])
		if _, err := store.AppendMessages(ctx, []models.Message{{SessionID: id, TurnID: turn, IdemKey: turn + "/user", Role: "user", Content: text}}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := envs[on].ExecuteActivity(acts[on].CallModel, turnapi.CallModelInput{TurnID: turn, SessionID: id, Call: 1, Model: "model-x"}); err != nil {
			b.Fatalf("CallModel: %v", err)
		}
		reqs := model.Requests()
		last := reqs[len(reqs)-1]
		if recalled := strings.Contains(string(last.Raw), "Related past conversations"); recalled != on {
			b.Fatalf("recall %v, but the request carries a recalled block: %v", on, recalled)
		}
		return last.Received.Sub(start)
	}
	call(true) // the first search warms the store's caches
	call(false)
	var with, without []time.Duration
	b.ResetTimer()
	for i := range b.N {
		first := i%2 == 0
		for _, on := range []bool{first, !first} {
			d := call(on)
			if on {
				with = append(with, d)
			} else {
				without = append(without, d)
			}
		}
	}
	b.StopTimer()
	on, off := recallBenchMedian(with), recallBenchMedian(without)
	b.ReportMetric(recallBenchMS(on), "ms-with-recall")
	b.ReportMetric(recallBenchMS(off), "ms-without")
	b.ReportMetric(recallBenchMS(on-off), "ms-added")
}

func recallBenchMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func recallBenchMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
