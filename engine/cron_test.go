package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// createScriptJobs adds n jobs due every minute whose run only appends their
// name to log (a pre-run script with no prompt: no model call).
func createScriptJobs(t testing.TB, st *models.Store, n int, log string) {
	t.Helper()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("job%03d", i)
		_, err := st.CreateCronJob(context.Background(), models.CronJob{ID: name, Name: name, Schedule: "* * * * *",
			PreRunScript: fmt.Sprintf("echo %s >> %s", name, log), Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTwoSchedulersRunEachSlotOnce: two scheduler replicas (each with its
// own store connection) tick the same minute against one Temporal: each of
// 100 due jobs runs exactly once.
func TestTwoSchedulersRunEachSlotOnce(t *testing.T) {
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := filepath.Join(t.TempDir(), "runs.log")
	createScriptJobs(t, rt.Store, 100, log)
	second, err := models.Open(ctx, rt.Config.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	minute := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	var wg sync.WaitGroup
	results := make([]scheduler.Result, 2)
	for i, st := range []*models.Store{rt.Store, second} {
		wg.Add(1)
		go func(i int, st *models.Store) {
			defer wg.Done()
			res, err := scheduler.Tick(ctx, st, rt.Cron(), rt.Cron(), minute)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}(i, st)
	}
	wg.Wait()
	started := len(results[0].Started) + len(results[1].Started)
	if started != 100 {
		t.Fatalf("the two replicas started %d slots, want 100 (%d + %d)", started, len(results[0].Started), len(results[1].Started))
	}
	waitFor(t, 2*time.Minute, func() bool {
		data, _ := os.ReadFile(log)
		return strings.Count(string(data), "\n") >= 100
	})
	time.Sleep(time.Second) // a duplicate run would show up now
	data, _ := os.ReadFile(log)
	lines := strings.Fields(string(data))
	sort.Strings(lines)
	if len(lines) != 100 || lines[0] != "job000" || lines[99] != "job099" {
		t.Fatalf("runs: %d lines (want each of 100 jobs once)", len(lines))
	}
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] {
			t.Fatalf("%s ran twice", lines[i])
		}
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BenchmarkTickStarts1000 (cron benchmark): the time from the minute
// boundary (the tick) until all of 1,000 due jobs' workflows are started.
func BenchmarkTickStarts1000(b *testing.B) {
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(b, model)
	createScriptJobs(b, rt.Store, 1000, filepath.Join(b.TempDir(), "runs.log"))
	minute := time.Now().UTC().Truncate(time.Minute)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		minute = minute.Add(time.Minute)
		start := time.Now()
		res, err := scheduler.Tick(context.Background(), rt.Store, rt.Cron(), rt.Cron(), minute)
		if err != nil || len(res.Started) != 1000 {
			b.Fatalf("tick: %v, started %d, errors %v", err, len(res.Started), res.Errors)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/1000-starts")
	}
}
