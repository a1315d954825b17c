package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// PromptFailedType is the type of the non-retryable application error
// BeginTurn fails with when a new session's system prompt cannot be built.
const PromptFailedType = "prompt_failed"

// NotOwnerType is the type of the non-retryable application error
// BeginTurn fails with when the turn's owner is not its session's.
const NotOwnerType = "not_owner"

// BeginTurn creates the session when new, persists the user's message (once,
// however often it is retried) and records the turn as running.
func (a *Activities) BeginTurn(ctx context.Context, in turnapi.BeginTurnInput) (turnapi.BeginTurnResult, error) {
	if in.Workdir != "" {
		// Unattended turns (cron) work in a directory of their own.
		_ = os.MkdirAll(in.Workdir, 0o755)
	}
	worker := a.withWindow(ctx, a.workerModel(in.Model), in.CompactionRatio)
	in.Model = cmp.Or(in.Model, worker.Name)
	if in.Owner != "" {
		// A chat's session is the chat's from its first turn on.
		_, err := a.Store.EnsureOwnedSession(ctx, in.SessionID, in.Owner)
		if errors.Is(err, models.ErrOwned) {
			return turnapi.BeginTurnResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("begin turn %s: %v", in.TurnID, err), NotOwnerType, err)
		}
		if err != nil {
			return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
		}
	}
	if _, err := a.Store.EnsureSession(ctx, in.SessionID, in.Model); err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
	}
	// Turns numbered without a reservation (a goal's, a cron job's, a
	// sub-agent's) count too: the session's next reservation comes after.
	if err := a.Store.CountTurn(ctx, in.SessionID, in.TurnNumber); err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
	}
	if in.DelegatedFrom != "" {
		if err := a.Store.LinkTask(ctx, in.SessionID, in.DelegatedFrom); err != nil {
			return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
		}
	}
	// After a compaction the conversation goes on in the newest session of
	// the lineage.
	tip, err := a.Store.Tip(ctx, in.SessionID)
	if err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
	}
	grantScope := in.SessionID // approvals belong to the session the user names
	in.SessionID = tip
	sess, err := a.Store.Session(ctx, tip)
	if err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
	}
	if sess.SystemPrompt == "" {
		if err := a.storePrompt(ctx, in); err != nil {
			err = fmt.Errorf("begin turn %s: %w", in.TurnID, err)
			var build *promptBuildError
			if errors.As(err, &build) {
				// The prompt is built from files (unreadable ones are
				// skipped): what still fails would fail again, so the
				// turn fails now with the reason instead of retrying.
				return turnapi.BeginTurnResult{}, temporal.NewNonRetryableApplicationError(err.Error(), PromptFailedType, err)
			}
			return turnapi.BeginTurnResult{}, err
		}
	}
	rows, err := a.Store.AppendMessages(ctx, []models.Message{{
		SessionID: in.SessionID,
		TurnID:    in.TurnID,
		IdemKey:   userKey(in.TurnID),
		Role:      "user",
		Content:   in.UserMessage,
		Images:    in.Images,
	}})
	if err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: persist user message: %w", in.TurnID, err)
	}
	if err := a.Store.UpsertTurn(ctx, models.Turn{
		ID:        in.TurnID,
		SessionID: in.SessionID,
		Number:    in.TurnNumber,
		Model:     in.Model,
		Status:    "running",
		StartedAt: in.StartedAt,
	}); err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: record turn: %w", in.TurnID, err)
	}
	a.logger().InfoContext(ctx, "turn started", "session", in.SessionID, "turn", in.TurnID, "number", in.TurnNumber, "model", in.Model)
	providers := 0
	if list, err := a.providers(in.Model); err == nil {
		providers = len(list)
	}
	policy, err := a.TurnPolicy(ctx, turnapi.TurnPolicyInput{SessionID: grantScope})
	if err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
	}
	system, history, err := a.loadContext(ctx, tip)
	if err != nil {
		return turnapi.BeginTurnResult{}, fmt.Errorf("begin turn %s: %w", in.TurnID, err)
	}
	return turnapi.BeginTurnResult{UserMessageID: rows[0].ID, Providers: providers,
		Grants: policy.Grants, SessionID: tip, ApprovalPolicy: policy.ApprovalPolicy,
		ContextTokens: contextTokens(system, history, a.schemaChars(in.Tools)), Worker: reportedWorker(worker)}, nil
}

// TurnPolicy reports this worker's approval mode and the grants stored for
// the session and for every session: to BeginTurn, and to each continued
// run of a turn.
func (a *Activities) TurnPolicy(ctx context.Context, in turnapi.TurnPolicyInput) (turnapi.TurnPolicyResult, error) {
	session, always, err := a.Store.Grants(ctx, in.SessionID)
	if err != nil {
		return turnapi.TurnPolicyResult{}, fmt.Errorf("turn policy of %s: %w", in.SessionID, err)
	}
	return turnapi.TurnPolicyResult{ApprovalPolicy: a.approvalPolicy(), Grants: turnapi.Grants{Session: session, Always: always}}, nil
}

// approvalPolicy is the mode reported to turns: the configured one, ask when
// none is.
func (a *Activities) approvalPolicy() string {
	return cmp.Or(a.ApprovalPolicy, "ask")
}

// SaveGrant stores a session or always approval, so later turns (and, for
// always, later sessions) do not ask again for that kind of command.
func (a *Activities) SaveGrant(ctx context.Context, in turnapi.SaveGrantInput) error {
	scope := in.SessionID
	switch in.Choice {
	case turnapi.ChoiceAlways:
		scope = models.AlwaysScope
	case turnapi.ChoiceSession:
	default:
		return nil
	}
	return a.Store.AddGrant(ctx, scope, in.Rule)
}

// storePrompt builds and stores a new session's system prompt.
func (a *Activities) storePrompt(ctx context.Context, in turnapi.BeginTurnInput) error {
	text := a.SystemPrompt
	if a.BuildPrompt != nil {
		built, err := a.BuildPrompt(ctx, in.Model, in.Workdir)
		if err != nil {
			return &promptBuildError{err: err}
		}
		text = built
	}
	if text == "" {
		return nil
	}
	_, err := a.Store.SetSystemPromptOnce(ctx, in.SessionID, text)
	return err
}

// promptBuildError is a system prompt that could not be built.
type promptBuildError struct{ err error }

func (e *promptBuildError) Error() string { return "build the system prompt: " + e.err.Error() }

func (e *promptBuildError) Unwrap() error { return e.err }
