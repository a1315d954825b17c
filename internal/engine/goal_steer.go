package engine

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/talaria-agent/talaria/workflows"
)

// steerGoal hands a steer to the goal running in a session, if one runs
// (its turns run under it, not under the coordinator). ok is false when no
// goal takes it: none runs, or it is ending; the coordinator then takes the
// steer. A goal that ended first answers with the session message the
// steer became (Delivery.RequestID, queued).
func (rt *Runtime) steerGoal(ctx context.Context, sessionID string, msg workflows.Message) (d workflows.Delivery, ok bool, err error) {
	h, err := rt.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflows.GoalWorkflowID(sessionID),
		UpdateID:     updateID(workflows.UpdateGoalSteer, msg.RequestID),
		UpdateName:   workflows.UpdateGoalSteer,
		Args:         []any{msg.Text},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var at workflows.GoalSteered
	if err == nil {
		err = h.Get(ctx, &at)
	}
	switch {
	case err == nil && at.TurnID != "":
		return workflows.Delivery{RequestID: msg.RequestID, Outcome: workflows.DeliverySteered, TurnID: at.TurnID}, true, nil
	case err == nil:
		return workflows.Delivery{RequestID: at.HandedOn, Outcome: workflows.DeliveryQueued}, true, nil
	case noGoalTakes(err):
		return d, false, nil
	}
	return d, true, fmt.Errorf("steer the goal of session %s: %w", sessionID, err)
}

// noGoalTakes tells the failures of a goal steer that mean no goal takes
// it: no goal workflow runs, it has ended, or it refused because it is
// ending.
func noGoalTakes(err error) bool {
	var notFound *serviceerror.NotFound
	var app *temporal.ApplicationError
	return errors.As(err, &notFound) || (errors.As(err, &app) && app.Type() == workflows.GoalEndingType)
}

// sendToSession is the SendToSession activity: it delivers a message a
// workflow hands on (a goal's steers left when it ends) to the session's
// coordinator; the request id makes a retry one message.
func (rt *Runtime) sendToSession(ctx context.Context, in workflows.SendToSessionInput) error {
	return rt.Send(ctx, in.SessionID, in.Message)
}

// registerGoalActivities registers what a goal needs of the worker beside
// the turn's activities: SendToSession.
func (rt *Runtime) registerGoalActivities(w worker.Worker) {
	w.RegisterActivityWithOptions(rt.sendToSession, activity.RegisterOptions{Name: workflows.SendToSessionName})
}
