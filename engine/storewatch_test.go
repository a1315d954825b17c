package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

func TestStoreTransition(t *testing.T) {
	gone := fmt.Errorf("%w: /h/talaria.db was removed", models.ErrStoreGone)
	down := fmt.Errorf("%w: connection refused", models.ErrUnreachable)
	tests := []struct {
		name    string
		prev    storeHealth
		err     error
		want    storeHealth
		wantMsg string
	}{
		{"ok stays ok", storeOK, nil, storeOK, ""},
		{"ok to unreachable", storeOK, down, storeUnreachable, "the store does not answer"},
		{"unreachable stays, said once", storeUnreachable, down, storeUnreachable, ""},
		{"unreachable recovers", storeUnreachable, nil, storeOK, "the store answers again"},
		{"ok to gone", storeOK, gone, storeGone, "was removed"},
		{"unreachable to gone", storeUnreachable, gone, storeGone, "was removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := storeTransition(tt.prev, tt.err)
			if got != tt.want {
				t.Errorf("health = %v, want %v", got, tt.want)
			}
			if (tt.wantMsg == "") != (msg == "") || !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message = %q, want one containing %q", msg, tt.wantMsg)
			}
		})
	}
}

// TestWatchStoreNoticesRemovedFile: the watcher of a Runtime on a real
// SQLite file returns a StoreGoneError naming the file soon after the file
// is removed, and stays quiet before.
func TestWatchStoreNoticesRemovedFile(t *testing.T) {
	for _, how := range []string{"remove", "replace"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "talaria.db")
			st, err := models.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var logs bytes.Buffer
			rt := &Runtime{Store: st, logger: slog.New(slog.NewTextHandler(&logs, nil))}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- rt.WatchStore(ctx, 50*time.Millisecond) }()

			time.Sleep(200 * time.Millisecond)
			select {
			case err := <-done:
				t.Fatalf("WatchStore returned %v before anything happened", err)
			default:
			}
			switch how {
			case "remove":
				err = os.Remove(path)
			case "replace":
				other := filepath.Join(dir, "other")
				if err = os.WriteFile(other, nil, 0o600); err == nil {
					err = os.Rename(other, path)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			err = <-done
			var gone *StoreGoneError
			if !errors.As(err, &gone) || !errors.Is(err, models.ErrStoreGone) {
				t.Fatalf("WatchStore = %v, want a StoreGoneError", err)
			}
			want := "the store " + path + " was removed or replaced under a running serve; stopping: restart serve to continue"
			if err.Error() != want {
				t.Errorf("message = %q, want %q", err.Error(), want)
			}
			if logs.Len() != 0 {
				t.Errorf("logged before the store went: %s", logs.String())
			}
		})
	}
}

// TestWatchStoreQuietWhileHealthy: ending ctx ends the watch with nil.
func TestWatchStoreQuietWhileHealthy(t *testing.T) {
	st, err := models.Open(t.Context(), filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	rt := &Runtime{Store: st, logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := rt.WatchStore(ctx, 20*time.Millisecond); err != nil {
		t.Errorf("WatchStore = %v, want nil when ctx ends", err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged about a healthy store: %s", logs.String())
	}
}
