package activities

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// TestBeginTurnPromptFailure: a new session's system prompt that cannot be
// built fails BeginTurn with a non-retryable prompt_failed error saying
// why (the same files would fail again on every retry); a store error
// keeps its retry policy.
func TestBeginTurnPromptFailure(t *testing.T) {
	ctx := t.Context()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := &Activities{Store: store, BuildPrompt: func(context.Context, string, string) (string, error) {
		return "", errors.New("project context: resolve \"w\": getwd: no such file or directory")
	}}
	_, err = a.BeginTurn(ctx, turnapi.BeginTurnInput{TurnID: "t1", SessionID: "s1", TurnNumber: 1, Model: "m",
		UserMessage: "hi", StartedAt: time.Now()})
	app, ok := err.(*temporal.ApplicationError)
	if !ok || !app.NonRetryable() || app.Type() != PromptFailedType {
		t.Fatalf("BeginTurn = %#v, want a non-retryable %s application error", err, PromptFailedType)
	}
	if want := "begin turn t1: build the system prompt: project context: resolve"; !strings.HasPrefix(app.Message(), want) {
		t.Errorf("message = %q, want it to start with %q", app.Message(), want)
	}

	// A store error is not a prompt failure.
	store.Close()
	_, err = a.BeginTurn(ctx, turnapi.BeginTurnInput{TurnID: "t2", SessionID: "s2", TurnNumber: 1, Model: "m",
		UserMessage: "hi", StartedAt: time.Now()})
	if err == nil {
		t.Fatal("BeginTurn on a closed store succeeded")
	}
	if app, ok := err.(*temporal.ApplicationError); ok && app.NonRetryable() {
		t.Errorf("a store error became non-retryable: %v", err)
	}
}

// TestBeginTurnOwner: a turn with an owner makes its new session the
// owner's; a session another owner holds fails the turn, for good, and
// keeps its owner; a turn without one (the operator's) may go on in any
// session.
func TestBeginTurnOwner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := &Activities{Store: store, BuildPrompt: func(context.Context, string, string) (string, error) { return "prompt", nil }}
	begin := func(turn, owner string) error {
		_, err := a.BeginTurn(ctx, turnapi.BeginTurnInput{TurnID: turn, SessionID: "chat", TurnNumber: 1, Model: "m",
			UserMessage: "hi", StartedAt: time.Now(), Owner: owner})
		return err
	}
	if err := begin("t1", "telegram:dm:5"); err != nil {
		t.Fatal(err)
	}
	err = begin("t2", "telegram:dm:6")
	app, ok := err.(*temporal.ApplicationError)
	if !ok || !app.NonRetryable() || app.Type() != NotOwnerType {
		t.Fatalf("another owner's turn: %#v, want a non-retryable %s application error", err, NotOwnerType)
	}
	if err := begin("t3", ""); err != nil {
		t.Fatalf("the operator's turn: %v", err)
	}
	if sess, err := store.Session(ctx, "chat"); err != nil || sess.Owner != "telegram:dm:5" {
		t.Fatalf("session: %+v %v, want it owned by telegram:dm:5", sess, err)
	}
}
