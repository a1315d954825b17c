package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkTerminalKills measures how long a terminal call takes to end
// what it started: a command past its timeout of 1 s (about 1 s; with
// SIGTERM ignored, 1 s and the grace before SIGKILL), a cancelled command
// (from the cancel to the return), a call that leaves a background process
// (it is killed when the shell exits) and one whose escaped process keeps
// the output pipe open (the output drains for a while, then the call
// returns).
func BenchmarkTerminalKills(b *testing.B) {
	env := func(b *testing.B) Env { return Env{Workdir: b.TempDir(), Policy: unsandboxed} }
	for _, tc := range timeoutKillCases {
		b.Run("timeout/"+tc.name, func(b *testing.B) {
			args := mustJSON(b, map[string]any{"command": tc.command, "timeout": 1})
			for b.Loop() {
				if _, err := (Terminal).Run(b.Context(), env(b), json.RawMessage(args)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("cancel", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			e := env(b)
			ctx, cancel := context.WithCancel(b.Context())
			done := make(chan error, 1)
			go func() {
				_, err := (Terminal).Run(ctx, e, []byte(`{"command":"echo $$ > pid; sleep 120"}`))
				done <- err
			}()
			for !pidWritten(filepath.Join(e.Workdir, "pid")) {
				time.Sleep(time.Millisecond)
			}
			b.StartTimer()
			cancel()
			if err := <-done; err == nil {
				b.Fatal("the cancelled command succeeded")
			}
		}
	})
	b.Run("background leftover", func(b *testing.B) {
		for b.Loop() {
			if _, err := (Terminal).Run(b.Context(), env(b), []byte(`{"command":"sleep 120 & echo $!"}`)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("escaped process", func(b *testing.B) {
		for b.Loop() {
			out, err := (Terminal).Run(b.Context(), env(b), []byte(escapedCommand))
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			killEscaped(b, out)
			b.StartTimer()
		}
	})
}

// BenchmarkRunBatchConcurrency measures a batch of three calls that take
// 400, 200 and 50 ms: about 400 ms when they run at once (650 ms one after
// the other).
func BenchmarkRunBatchConcurrency(b *testing.B) {
	st := &sleepTool{spans: map[string][2]time.Time{}}
	r, err := NewRegistry(st.tool())
	if err != nil {
		b.Fatal(err)
	}
	calls := []Call{
		{ID: "a", Name: "sleep", Arguments: `{"id":"a","ms":400}`},
		{ID: "b", Name: "sleep", Arguments: `{"id":"b","ms":200}`},
		{ID: "c", Name: "sleep", Arguments: `{"id":"c","ms":50}`},
	}
	for b.Loop() {
		for _, res := range r.RunBatch(b.Context(), Env{}, calls) {
			if res.IsError {
				b.Fatalf("%+v", res)
			}
		}
	}
}

// BenchmarkQuickToolsRefuseAFIFO measures read_file and write_file on a
// FIFO nobody writes to or reads from: the refusal, without waiting.
func BenchmarkQuickToolsRefuseAFIFO(b *testing.B) {
	dir := b.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		tool Tool
		args string
	}{
		{ReadFile, `{"path":"pipe"}`},
		{WriteFile, `{"path":"pipe","content":"x"}`},
	} {
		b.Run(bc.tool.Name(), func(b *testing.B) {
			for b.Loop() {
				if _, err := bc.tool.Run(b.Context(), Env{Workdir: dir}, json.RawMessage(bc.args)); err == nil {
					b.Fatal("a FIFO was read or written")
				}
			}
		})
	}
	if info, err := os.Lstat(filepath.Join(dir, "pipe")); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		b.Fatalf("the FIFO was replaced: %v %v", info, err)
	}
}
