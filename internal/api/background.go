package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/talaria-agent/talaria/internal/cronjob"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/workflows"
)

// startBackground runs a request as one turn in a new session of its own
// (a GoalWorkflow run once) whose outcome goes to deliver (default local)
// when it ends, and returns that turn's id once it has started. With a
// key k, the goal's workflow id (from the session, the key's own when
// derived) makes Temporal start it once, and a retry gets its turn.
func (s *Server) startBackground(ctx context.Context, req turnRequest, deliver []string, k *keyed, derived bool) (string, error) {
	if err := s.checkTurnRequest(req); err != nil {
		return "", err
	}
	if len(deliver) == 0 {
		deliver = []string{engine.DefaultDelivery}
	}
	if err := cronjob.CheckDeliver(deliver); err != nil {
		return "", badParam("deliver", "invalid_deliver", "%s", oneLine(err.Error()))
	}
	if slices.Contains(deliver, engine.OriginDelivery) {
		return "", badParam("deliver", "invalid_deliver", "deliver origin: a run of the API has no chat of origin; name the target")
	}
	in := s.turnInput(req)
	// Nobody answers in its session: no questions, and commands that need
	// approval are refused.
	in.Tools, in.Approvals.Mode = engine.UnattendedTools(s.cfg, in.Tools), workflows.ApprovalDeny
	turnID := workflows.TurnWorkflowID(req.session, 1)
	err := s.rt.StartGoal(ctx, workflows.GoalInput{SessionID: req.session, Goal: req.input, Once: true, Turn: in, Deliver: deliver})
	if errors.Is(err, engine.ErrSessionInUse) && k != nil {
		switch id, kerr := s.keyedGoal(ctx, k, req, deliver, derived); {
		case kerr != nil:
			return "", kerr
		case id != "":
			turnID, err = id, nil // the request retried: its run
		}
	}
	if errors.Is(err, engine.ErrSessionInUse) {
		return "", errorf(http.StatusConflict, typeConflict, "session_in_use", "session %s already has a conversation; a background run needs a new one", req.session)
	}
	if err != nil {
		return "", fmt.Errorf("start a background run in session %s: %w", req.session, err)
	}
	if err := s.rt.WaitStarted(ctx, turnID, 30*time.Second); err != nil {
		return "", err
	}
	return turnID, nil
}
