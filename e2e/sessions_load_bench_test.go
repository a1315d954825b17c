package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// loadCalls is how many model calls each turn of BenchmarkSessions makes:
// four that call a cheap tool, then the answer.
const loadCalls = 5

// loadModelDelay is how long the model of BenchmarkSessions takes to
// answer each call.
const loadModelDelay = time.Second

// loadModel is toolLoopModel's fake with the (turn, call) of every request
// it answered, by the request's index: the fake itself keeps no request's
// body (WithoutRequestBodies), which over hundreds of sessions would fill
// the benchmark's process and load the machine serve runs on.
type loadModel struct {
	*fakellm.Server
	mu    sync.Mutex
	calls map[int]loadCall
}

// loadCall is one (turn, call) of toolLoopModel's conversation (loadKey).
type loadCall struct {
	user    string
	results int
}

// call is the (turn, call) of request r, if the model answered it.
func (m *loadModel) call(r fakellm.Request) (loadCall, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.calls[r.Index]
	return c, ok
}

// toolLoopModel answers each request after delay: with a call of the todo
// tool (cheap, no I/O beyond the store) until the conversation holds
// calls-1 tool results, then with "reply for " and the user's message.
func toolLoopModel(delay time.Duration, calls int) *loadModel {
	m := &loadModel{calls: map[int]loadCall{}}
	m.Server = fakellm.New(fakellm.WithoutRequestBodies(), fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		user, results := loadKey(req)
		m.mu.Lock()
		m.calls[req.Index] = loadCall{user: user, results: results}
		m.mu.Unlock()
		if results < calls-1 {
			args := fmt.Sprintf(`{"todos":[{"id":"%d","content":"step %d","status":"completed"}],"merge":true}`, results, results)
			step := fakellm.ToolStep(fakellm.ToolCall{ID: fmt.Sprintf("t%d", results), Name: "todo", Arguments: args})
			step.Delay = delay
			return step
		}
		return fakellm.Step{Text: "reply for " + user, Delay: delay, ChunkSize: 6}
	}))
	return m
}

// loadKey names a request of toolLoopModel's conversation: the user's
// message (unique per session) and how many tool results precede it (the
// call's number within the turn).
func loadKey(req fakellm.Request) (string, int) {
	user, results := "", 0
	for _, m := range req.Body.Messages {
		switch m.Role {
		case "user":
			user = m.Content
		case "tool":
			results++
		}
	}
	return user, results
}

// duplicateCalls counts the requests beyond the first of each (turn, call).
func (m *loadModel) duplicateCalls(reqs []fakellm.Request) int {
	seen := map[loadCall]bool{}
	dup := 0
	for _, r := range reqs {
		c, ok := m.call(r)
		if !ok {
			continue
		}
		if seen[c] {
			dup++
		}
		seen[c] = true
	}
	return dup
}

// firstCalls is, for each session, how long after began its first model
// request arrived: how quickly a burst of new sessions reaches the model.
func (m *loadModel) firstCalls(reqs []fakellm.Request, began time.Time) []time.Duration {
	var out []time.Duration
	for _, r := range reqs {
		if c, ok := m.call(r); ok && c.results == 0 {
			out = append(out, r.Received.Sub(began))
		}
	}
	return out
}

// procCPU is the CPU time (user and system) process pid has used.
func procCPU(tb testing.TB, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// procMemory is a field of process pid's /proc status in MiB: VmHWM (the
// peak resident set), RssAnon (memory of its own: heap, stacks) or
// RssFile (pages of files: mostly the executable).
func procMemory(tb testing.TB, pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	tb.Fatalf("no %s in /proc/pid/status", field)
	return 0
}

// busyLoops starts n processes that spin on a core each until the
// benchmark ends: a machine busy with other work.
func busyLoops(tb testing.TB, n int) {
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
}

// takeProfile saves a CPU profile of the first 4×loadCalls×loadModelDelay
// seconds of the load to file.
func takeProfile(tb testing.TB, addr, file string) {
	secs := 4 * int((time.Duration(loadCalls) * loadModelDelay).Seconds())
	saveURL(tb, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), file)
}

// saveURL saves what url answers to file; a failure is logged.
func saveURL(tb testing.TB, url, file string) {
	resp, err := http.Get(url)
	if err != nil {
		tb.Logf("profile: %v", err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(file, data, 0o644)
	}
	if err != nil {
		tb.Logf("profile: %v", err)
	}
}

// BenchmarkSessions measures many sessions at once against one serve
// (embedded Temporal, SQLite): each sends one streaming completion through
// the API with the official OpenAI SDK, and its turn makes loadCalls model
// calls of loadModelDelay each (four cheap tool calls, then the answer).
// The ideal wall time is loadCalls × loadModelDelay. It reports the wall
// time over the ideal, serve's CPU seconds during the run, serve's peak RSS,
// the model requests made more than once for the same (turn, call), and
// how long after the burst began the sessions' first model requests came
// (median and last).
// "busy" runs with four busy loops per core beside it. Each sub-benchmark
// starts its own serve:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkSessions -benchtime 1x
//
// With TALARIA_BENCH_PROFILE=PREFIX set, serve runs with --pprof-listen,
// a CPU profile of each run's first seconds is saved as PREFIX-NAME.pprof
// (go tool pprof -top PREFIX-100.pprof) and its heap after the run as
// PREFIX-NAME.heap.
func BenchmarkSessions(b *testing.B) {
	for _, c := range []struct {
		name     string
		sessions int
		busy     bool
	}{{"100", 100, false}, {"300", 300, false}, {"100-busy", 100, true}} {
		b.Run(c.name, func(b *testing.B) {
			model := toolLoopModel(loadModelDelay, loadCalls)
			defer model.Close()
			u := newUser(b, model.URL())
			profile := os.Getenv("TALARIA_BENCH_PROFILE")
			var extra []string
			pprofAddr := fmt.Sprintf("127.0.0.1:%d", freePort(b))
			if profile != "" {
				extra = append(extra, "--pprof-listen", pprofAddr)
			}
			s, base := u.apiServe(extra...)
			pid := s.cmd.Process.Pid
			if c.busy {
				busyLoops(b, 4*runtime.NumCPU())
			}
			for b.Loop() {
				before, cpu0 := len(model.Requests()), procCPU(b, pid)
				began := time.Now()
				if profile != "" {
					go takeProfile(b, pprofAddr, fmt.Sprintf("%s-%s.pprof", profile, c.name))
				}
				streamConcurrently(b, base, c.sessions)
				wall := time.Since(began)
				if profile != "" {
					saveURL(b, "http://"+pprofAddr+"/debug/pprof/heap", fmt.Sprintf("%s-%s.heap", profile, c.name))
				}
				reqs := model.Requests()[before:]
				ideal := time.Duration(loadCalls) * loadModelDelay
				b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
				b.ReportMetric((procCPU(b, pid) - cpu0).Seconds(), "serve-cpu-s")
				b.ReportMetric(procMemory(b, pid, "VmHWM"), "serve-peak-MiB")
				b.ReportMetric(procMemory(b, pid, "RssAnon"), "serve-anon-end-MiB")
				b.ReportMetric(procMemory(b, pid, "RssFile"), "serve-file-end-MiB")
				b.ReportMetric(float64(model.duplicateCalls(reqs)), "duplicate-calls")
				if first := model.firstCalls(reqs, began); len(first) > 0 {
					p50, last := percentile(first, 50), percentile(first, 100)
					b.ReportMetric(p50.Seconds(), "first-call-p50-s")
					b.ReportMetric(last.Seconds(), "first-call-max-s")
					if last > 2*p50+5*time.Second {
						b.Logf("a session's first call came %s after the burst (median %s)", last.Round(time.Millisecond), p50.Round(time.Millisecond))
						logWarnings(b, u)
					}
				}
				if want := c.sessions * loadCalls; len(reqs) < want {
					b.Errorf("%d model requests, want at least %d", len(reqs), want)
				}
			}
		})
	}
}
