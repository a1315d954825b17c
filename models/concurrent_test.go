package models

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeLoad performs the writes of one conversation step, as a turn's
// activities would: number a turn, record it, append two messages and save
// the todo list. The messages' keys start with prefix.
func writeLoad(ctx context.Context, s *Store, prefix string) (int, error) {
	n, err := s.NextTurn(ctx, "shared", "m", "")
	if err != nil {
		return 0, err
	}
	turnID := fmt.Sprintf("%s/turn-%d", prefix, n)
	if err := s.UpsertTurn(ctx, Turn{ID: turnID, SessionID: "shared", Number: n, Status: "running", StartedAt: now()}); err != nil {
		return 0, err
	}
	msgs := []Message{
		{SessionID: "shared", TurnID: turnID, IdemKey: turnID + "/user", Role: "user", Content: "question"},
		{SessionID: "shared", TurnID: turnID, IdemKey: turnID + "/assistant", Role: "assistant", Content: "answer"},
	}
	if _, err := s.AppendMessages(ctx, msgs); err != nil {
		return 0, err
	}
	if err := s.SaveTodosJSON(ctx, "shared", []byte(`[{"turn":`+strconv.Itoa(n)+`}]`)); err != nil {
		return 0, err
	}
	return n, nil
}

// checkSharedSession verifies that turns 1..turns were each written once.
func checkSharedSession(t *testing.T, s *Store, numbers []int, turns int) {
	t.Helper()
	slices.Sort(numbers)
	for i, n := range numbers {
		if n != i+1 {
			t.Fatalf("turn numbers = %v, want 1..%d each once", numbers, turns)
		}
	}
	sess, err := s.Session(t.Context(), "shared")
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if sess.TurnCount != turns {
		t.Errorf("TurnCount = %d, want %d", sess.TurnCount, turns)
	}
	msgs, err := s.Messages(t.Context(), "shared")
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if len(msgs) != 2*turns {
		t.Errorf("%d messages, want %d", len(msgs), 2*turns)
	}
	stored, err := s.Turns(t.Context(), "shared")
	if err != nil {
		t.Fatalf("Turns: %v", err)
	}
	if len(stored) != turns {
		t.Errorf("%d turns stored, want %d", len(stored), turns)
	}
}

func TestTwoStoresWriteConcurrently(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		stores := []*Store{openStore(t, dsn), openStore(t, dsn)}
		const workers, steps = 8, 5
		var (
			mu      sync.Mutex
			numbers []int
			wg      sync.WaitGroup
		)
		for si, s := range stores {
			for w := range workers {
				wg.Go(func() {
					for i := range steps {
						n, err := writeLoad(t.Context(), s, fmt.Sprintf("store%d-worker%d-%d", si, w, i))
						if err != nil {
							t.Errorf("store %d worker %d: %v", si, w, err)
							return
						}
						mu.Lock()
						numbers = append(numbers, n)
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		checkSharedSession(t, stores[0], numbers, len(stores)*workers*steps)
	})
}

// helperProcessEnv, when set to a DSN, makes the test binary run
// runHelperProcess instead of the tests.
const helperProcessEnv = "TALARIA_MODELS_HELPER_DSN"

const helperSteps = 25

// runHelperProcess writes helperSteps conversation steps to the database in
// TALARIA_MODELS_HELPER_DSN and prints the turn numbers it got.
func runHelperProcess() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, os.Getenv(helperProcessEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	for i := range helperSteps {
		n, err := writeLoad(ctx, s, fmt.Sprintf("pid%d-%d", os.Getpid(), i))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(n)
	}
	return 0
}

func TestSQLiteProcessesWriteConcurrently(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	s := openStore(t, dsn)

	const processes = 2
	outputs := make([][]byte, processes)
	errs := make([]error, processes)
	var wg sync.WaitGroup
	for p := range processes {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperProcessEnv+"="+dsn)
			outputs[p], errs[p] = cmd.Output()
			var exit *exec.ExitError
			if errors.As(errs[p], &exit) {
				errs[p] = fmt.Errorf("%w: %s", errs[p], exit.Stderr)
			}
		})
	}
	var numbers []int
	for i := range helperSteps {
		n, err := writeLoad(t.Context(), s, fmt.Sprintf("parent-%d", i))
		if err != nil {
			t.Fatalf("parent step %d: %v", i, err)
		}
		numbers = append(numbers, n)
	}
	wg.Wait()
	for p := range processes {
		if errs[p] != nil {
			t.Fatalf("process %d: %v", p, errs[p])
		}
		for _, field := range strings.Fields(string(outputs[p])) {
			n, err := strconv.Atoi(field)
			if err != nil {
				t.Fatalf("process %d printed %q", p, field)
			}
			numbers = append(numbers, n)
		}
	}
	checkSharedSession(t, s, numbers, (processes+1)*helperSteps)
}
