package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// oneShotBaselineEnv names another talaria binary (say, one built from an
// earlier commit) that BenchmarkOneShot measures too, in the same run, so
// the two figures share one machine state.
const oneShotBaselineEnv = "TALARIA_ONESHOT_BASELINE"

// BenchmarkOneShot measures `talaria chat -q hi` end to end, without a
// running serve, against a model that answers at once: the process starts
// the embedded Temporal server and a worker, runs one model call, prints the
// answer and exits. "warm" reuses one TALARIA_HOME (a first, untimed run
// creates it, as for a returning user); "fresh" starts every run on a new
// one (schema creation included). It reports the median wall time of the
// runs as s/op-median; run it with e.g. -benchtime 15x:
//
//	go test ./e2e/ -run '^$' -bench OneShot -benchtime 15x
//
// With TALARIA_ONESHOT_BASELINE=/path/to/old/talaria the same cases run for
// that binary too, as "baseline-warm" and "baseline-fresh".
func BenchmarkOneShot(b *testing.B) {
	model := fakellm.New()
	b.Cleanup(model.Close)
	model.SetResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep("hello there") })

	bins := []struct{ prefix, path string }{{"", binary}}
	if other := os.Getenv(oneShotBaselineEnv); other != "" {
		bins = append(bins, struct{ prefix, path string }{"baseline-", other})
	}
	for _, bin := range bins {
		b.Run(bin.prefix+"warm", func(b *testing.B) {
			home := b.TempDir()
			runOneShot(b, bin.path, model.URL(), home) // creates the home, untimed
			benchOneShots(b, func() time.Duration { return runOneShot(b, bin.path, model.URL(), home) })
		})
		b.Run(bin.prefix+"fresh", func(b *testing.B) {
			benchOneShots(b, func() time.Duration { return runOneShot(b, bin.path, model.URL(), b.TempDir()) })
		})
	}
}

// benchOneShots runs once b.N times and reports the median of what it
// returns.
func benchOneShots(b *testing.B, once func() time.Duration) {
	b.Helper()
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		took = append(took, once())
	}
	b.StopTimer()
	b.ReportMetric(oneShotMedian(took).Seconds(), "s/op-median")
}

// oneShotMedian returns the middle value of ds (the mean of the two middle ones
// for an even count); ds is reordered.
func oneShotMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

// runOneShot runs `bin chat -q hi` on home and returns its wall time; a run
// that fails or does not print the answer fails the benchmark.
func runOneShot(b *testing.B, bin, modelURL, home string) time.Duration {
	b.Helper()
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "chat", "-q", "hi")
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"TALARIA_HOME=" + filepath.Join(home, "talaria"),
		"OPENAI_BASE_URL=" + modelURL, "OPENAI_API_KEY=test-key", "TALARIA_MODEL=fake-model",
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began)
	if err != nil || !strings.Contains(out.String(), "hello there") {
		b.Fatalf("%s chat -q hi: %v\nstdout:\n%s\nstderr:\n%s", bin, err, out.String(), errOut.String())
	}
	return took
}
